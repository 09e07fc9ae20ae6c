/* Test fixture: init never returns. */
#include "skill_sdk.h"

#include <unistd.h>

static int hang(const skill_host *host, void **state, char *error, size_t capacity) {
    (void)host, (void)state, (void)error, (void)capacity;
    for (;;) pause();
    return 0;
}

static int ok(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    (void)state, (void)args;
    api->set_result(call, "1", 1);
    return SKILL_OK;
}

static const skill_descriptor skills[] = {
    SKILL_JSON("hang_ok", "OK", "Never reachable.", "{\"type\":\"object\"}", SKILL_RISK_READ_ONLY, 0, ok),
};

SKILL_PLUGIN_FULL("init_hang", "1.0.0", "Hangs in init", skills, hang, NULL, NULL)
