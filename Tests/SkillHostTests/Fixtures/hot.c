/* Test fixture for hot reload: compiled with -DVERSION=n. From version 3 on, skill "hot_extra" replaces
   "hot_old". */
#define _POSIX_C_SOURCE 200809L
#include "skill_json.h"
#include "skill_sdk.h"

#include <stdio.h>
#include <time.h>

#define STR2(x) #x
#define STR(x) STR2(x)

static int32_t hot_version(void) { return VERSION; }

/* Sleeps "ms" milliseconds in 1 ms steps (stopping when cancelled), then returns the version. */
static int hot_slow(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    double ms = 0, waited = 0;
    char out[16];
    struct timespec step = {0, 1000000};
    (void)state;
    skill_json_get_number(args, "ms", &ms);
    while (waited < ms) {
        if (api->is_cancelled(call)) {
            api->set_error(call, "stopped");
            return SKILL_ERR_CANCELLED;
        }
        nanosleep(&step, NULL);
        waited += 1;
    }
    api->set_result(call, out, (size_t)snprintf(out, sizeof out, "%d", VERSION));
    return SKILL_OK;
}

static int hot_extra(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    (void)state;
    (void)args;
    api->set_result(call, "\"extra\"", 7);
    return SKILL_OK;
}

#define OBJ "{\"type\":\"object\"}"
static const skill_descriptor skills[] = {
    SKILL_TYPED("hot_version", "Version", "The version.", "int32 hot_version()", hot_version),
    SKILL_JSON("hot_slow", "Slow", "Sleeps, then returns the version.", OBJ, 0, 0, hot_slow),
#if VERSION >= 3
    SKILL_JSON("hot_extra", "Extra", "Added in version 3.", OBJ, 0, 0, hot_extra),
#else
    SKILL_JSON("hot_old", "Old", "Dropped in version 3.", OBJ, 0, 0, hot_extra),
#endif
};

SKILL_PLUGIN("hot", "1." STR(VERSION), "hot reload fixture", skills)
