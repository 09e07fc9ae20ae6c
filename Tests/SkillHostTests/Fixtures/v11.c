/* Test fixture: a plugin using every ABI v1.1 field — capabilities, read_paths, an output schema (kept and
 * broken), the caller's context and log_with. */
#include "skill_sdk.h"

#include <stdio.h>
#include <string.h>

static const skill_host *host_record;

static int setup(const skill_host *host, void **state, char *error, size_t capacity) {
    (void)state; (void)error; (void)capacity;
    host_record = host;
    if (host->struct_size >= sizeof(skill_host) && host->log_with) host->log_with(host, SKILL_LOG_INFO, "ready");
    return 0;
}

static int count(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    (void)state;
    /* v1.0's context-free log, during a call: the host still knows who speaks. */
    if (host_record) host_record->log(SKILL_LOG_INFO, "counting");
    /* {"n": 3} as asked; {"n": "three"} breaks the output schema. */
    const char *result = strstr(args, "\"broken\":true") ? "{\"n\":\"three\"}" : "{\"n\":3}";
    api->set_result(call, result, strlen(result));
    return SKILL_OK;
}

static int context(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    (void)state; (void)args;
    const char *text = api->struct_size >= sizeof(skill_call_api) && api->context ? api->context(call) : NULL;
    if (!text) text = "null";
    api->set_result(call, text, strlen(text));
    return SKILL_OK;
}

#define ANY "{\"type\":\"object\"}"

static const skill_descriptor skills[] = {
    SKILL_JSON_OUTPUT("v11_count", "Count", "Returns a count.", ANY,
                      "{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"integer\"}},\"required\":[\"n\"]}",
                      SKILL_RISK_READ_ONLY, SKILL_IDEMPOTENT, count),
    SKILL_JSON("v11_context", "Context", "Returns the caller's context.", ANY, SKILL_RISK_READ_ONLY, 0, context),
};

static const char *const paths[] = {"~/models", "/opt/skill-data", NULL};

static int snapshot(void *state, const skill_snapshot_api *api, skill_snapshot *out) {
    static const char text[] = "{\"count\":3,\"recent\":[\"milk\"]}";
    (void)state;
    api->set(out, text, sizeof text - 1);
    return SKILL_OK;
}

SKILL_PLUGIN_EX("v11", "1.1.0", "ABI v1.1 fixture", skills, setup, NULL, NULL, SKILL_CAP_NETWORK | SKILL_CAP_READ_FS,
                paths, snapshot)
