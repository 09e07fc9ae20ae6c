/* A plugin with views (ABI 1.4): a board shown by board_show, refreshed by a skill only its view may call, and a
 * skill only models may call. Compiled as it is for the good case; each -D flag below breaks one rule, for the
 * sentences `check` gives. */
#include "skill_sdk.h"

#include <string.h>

static int answer(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    (void)state;
    (void)args;
    api->set_result(call, "{\"items\":[\"a\",\"b\"]}", 19);
    return SKILL_OK;
}

#define EMPTY "{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false}"

#ifdef MISSING_VIEW
#define SHOWN_IN "nowhere"
#else
#define SHOWN_IN "board"
#endif
#ifdef BAD_AUDIENCE
#define MODEL_ONLY 4u
#else
#define MODEL_ONLY SKILL_AUDIENCE_MODEL
#endif

static const skill_descriptor skills[] = {
    SKILL_JSON_VIEW("board_show", "Show the board", "Shows the board's items.", EMPTY, NULL, NULL,
                    SKILL_RISK_READ_ONLY, SKILL_IDEMPOTENT, answer, SHOWN_IN, 0u),
    SKILL_JSON_VIEW("board_refresh", "Refresh the board", "Reads the items again, for the board's view.", EMPTY, NULL,
                    NULL, SKILL_RISK_READ_ONLY, SKILL_IDEMPOTENT, answer, NULL, SKILL_AUDIENCE_VIEW),
    SKILL_JSON_VIEW("board_model", "Summarise the board", "Says what the board holds, for models.", EMPTY, NULL, NULL,
                    SKILL_RISK_READ_ONLY, SKILL_IDEMPOTENT, answer, NULL, MODEL_ONLY),
};

#if defined(BAD_CSP)
#define CSP "{\"connectDomains\":[\"https://api.example.com; script-src 'unsafe-inline'\"]}"
#elif defined(STAR_CSP)
#define CSP "{\"resourceDomains\":[\"*\"]}"
#elif defined(ODD_CSP)
#define CSP "{\"scriptDomains\":[\"https://cdn.example.com\"]}"
#else
#define CSP "{\"connectDomains\":[\"https://api.example.com\"],\"resourceDomains\":[\"https://*.example.com\"]}"
#endif
#ifdef BAD_PERMISSIONS
#define PERMISSIONS "{\"usb\":{}}"
#else
#define PERMISSIONS "{\"clipboardWrite\":{}}"
#endif
#ifdef BAD_NAME
#define NAME "Board!"
#else
#define NAME "board"
#endif

#ifdef BAD_UTF8
static char page[600 * 1024] = "<!doctype html><title>Board</title><p>caf\xe2\x82</p>";
#else
static char page[600 * 1024] = "<!doctype html><title>Board</title><ul id=items></ul>";
#endif

static skill_view views[] = {
    SKILL_VIEW(NAME, "Board", page, CSP, PERMISSIONS, SKILL_VIEW_PREFERS_BORDER),
};

#ifdef RESERVED_NAME
/* The name of skillhost's own skill folders' tools: a plugin of it would be taken for them. */
#define PLUGIN_NAME "skills"
#else
#define PLUGIN_NAME "board"
#endif

SKILL_EXPORT const skill_plugin *skill_plugin_entry(void) {
    static const skill_plugin plugin = {(uint32_t)sizeof(skill_plugin), SKILL_ABI_MAJOR, SKILL_ABI_MINOR, PLUGIN_NAME,
                                        "1.0.0", "A board with a view", SKILL_COUNT(skills), skills, NULL, NULL, NULL,
                                        0u, NULL, NULL, SKILL_COUNT(views), views};
#ifdef ODD_SIZE
    /* A record size no compiler makes of a skill_view. */
    views[0].struct_size = 60;
#endif
#ifdef BIG_PAGE
    /* A page longer than the host takes. */
    size_t start = strlen(page);
    memset(page + start, 'x', sizeof page - start - 1);
#endif
    return &plugin;
}
