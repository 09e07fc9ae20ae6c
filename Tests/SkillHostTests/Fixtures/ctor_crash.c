/* Test fixture: a constructor that crashes when the library is loaded. */
#include "skill_sdk.h"

#include <stdint.h>

__attribute__((constructor)) static void explode(void) { *(volatile int *)(uintptr_t)8 = 1; }

static int ok(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    (void)state, (void)args;
    api->set_result(call, "1", 1);
    return SKILL_OK;
}

static const skill_descriptor skills[] = {
    SKILL_JSON("ctor_ok", "OK", "Never reachable.", "{\"type\":\"object\"}", SKILL_RISK_READ_ONLY, 0, ok),
};

SKILL_PLUGIN("ctor_crash", "1.0.0", "Crashes in its constructor", skills)
