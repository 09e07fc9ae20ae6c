/* Two skill descriptors 113 bytes apart (struct_size 113): the second sits at an address no compiler would give it.
 * The host must read it without trapping (and judge it by its rules), in process as in a worker. */
#include "skill_sdk.h"

#include <string.h>

static int echo(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    (void)state;
    api->set_result(call, args, strlen(args));
    return SKILL_OK;
}

static const skill_descriptor templates[] = {
    SKILL_JSON("odd_one", "One", "The first.", "{\"type\":\"object\"}", SKILL_RISK_READ_ONLY, 0, echo),
    SKILL_JSON("odd_two", "Two", "The second.", "{\"type\":\"object\"}", SKILL_RISK_READ_ONLY, 0, echo),
};
static unsigned char records[2 * 113 + 16];

SKILL_EXPORT const skill_plugin *skill_plugin_entry(void) {
    static skill_plugin plugin = {(uint32_t)sizeof(skill_plugin), SKILL_ABI_MAJOR, SKILL_ABI_MINOR, "odd", "1.0.0",
                                  "odd strides", 2, NULL, NULL, NULL, NULL, 0u, NULL, NULL, 0u, NULL};
    for (int i = 0; i < 2; i++) {
        skill_descriptor copy = templates[i];
        copy.struct_size = 113;
        memcpy(records + i * 113, &copy, sizeof copy < 113 ? sizeof copy : 113);
    }
    plugin.skills = (const skill_descriptor *)(const void *)records;
    return &plugin;
}
