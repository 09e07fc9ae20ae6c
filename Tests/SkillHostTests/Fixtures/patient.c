/* Test fixture: a call that waits ten minutes unless cancelled (its own deadline is ten minutes, so only a
   cancellation ends it early: a client that goes away must be noticed). */
#define _POSIX_C_SOURCE 200809L
#include "skill_sdk.h"
#include "skill_json.h"

#include <time.h>

static int wait_ms(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    double ms = 0;
    struct timespec tick = {0, 1000000};
    (void)state;
    skill_json_get_number(args, "ms", &ms);
    for (double waited = 0; waited < ms; waited += 1) {
        if (api->is_cancelled(call)) return SKILL_ERR_CANCELLED;
        nanosleep(&tick, NULL);
    }
    api->set_result(call, "\"done\"", 6);
    return SKILL_OK;
}

static const skill_descriptor skills[] = {
    {(uint32_t)sizeof(skill_descriptor), "patient", "Patient", "Waits ms milliseconds unless cancelled.",
     "{\"type\":\"object\",\"properties\":{\"ms\":{\"type\":\"number\"}}}", SKILL_RISK_READ_ONLY, 0, 600000u, wait_ms,
     NULL, NULL, NULL},
};

SKILL_PLUGIN("patient", "1.0.0", "A ten-minute call", skills)
