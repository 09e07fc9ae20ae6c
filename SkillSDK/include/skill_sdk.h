/*
 * skill_sdk.h — the SkillSDK ABI, version 1.
 *
 * This one header is the whole contract between the skillhost process and a skill plugin (a shared library).
 * A plugin exports exactly one function, skill_plugin_entry(), which returns a description of the plugin and its
 * skills. Everything else (calling back into the host, reporting progress, results and errors) goes through
 * tables of function pointers that the host hands to the plugin.
 *
 * Rules:
 *  1. One exported symbol, and it is a function. Build with -fvisibility=hidden; mark the entry with SKILL_EXPORT
 *     (the SKILL_PLUGIN macros below do it for you).
 *  2. Versioning. SKILL_ABI_MAJOR must equal the host's; the plugin's SKILL_ABI_MINOR must be <= the host's.
 *     Every struct starts with uint32_t struct_size and only ever grows at the end. A reader checks struct_size
 *     before touching a field that a later minor version added.
 *  3. No ownership crosses the boundary. Strings in descriptors are owned by the plugin and must stay valid
 *     until deinit returns (string literals are ideal). Everything the plugin hands to a host callback is copied
 *     before the callback returns. The host frees plugin memory only through free_string, and only for strings
 *     that typed skills return.
 *  4. Every function below carries a thread tag:
 *       [load-thread]  called by the host's loader, never concurrently with any other call into the plugin;
 *       [thread-safe]  may be called from many threads at once;
 *       [call-thread]  may only be called from inside the invoke() that received the skill_call (or the typed
 *                      function that received the skill_error), on any thread, until it returns.
 *  5. Errors are values with words: every failure carries a sentence a person can act on.
 *
 * Minimal plugin (build: cc -shared -fPIC -fvisibility=hidden -I SkillSDK/include hello.c -o hello.so):
 *
 *     #include "skill_sdk.h"
 *     static double add(double a, double b) { return a + b; }
 *     static const skill_descriptor skills[] = {
 *         SKILL_TYPED("add", "Add", "Adds two numbers.", "double add(double a, double b)", add),
 *     };
 *     SKILL_PLUGIN("hello", "1.0.0", "Example skills", skills)
 *
 * skill_call_api ends with skill_id(), so one invoke function can serve several skills (the Swift helper relies
 * on it); it is part of v1.0.
 */
#ifndef SKILL_SDK_H
#define SKILL_SDK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** ABI version implemented by this header. */
#define SKILL_ABI_MAJOR 1
#define SKILL_ABI_MINOR 4

/** Marks the plugin's entry point as exported (plugins build with -fvisibility=hidden). */
#if defined(_WIN32)
#define SKILL_VISIBLE __declspec(dllexport)
#else
#define SKILL_VISIBLE __attribute__((visibility("default")))
#endif
#ifdef __cplusplus
#define SKILL_EXPORT extern "C" SKILL_VISIBLE
#else
#define SKILL_EXPORT SKILL_VISIBLE
#endif

/** Status codes returned by skill_invoke_fn and init. */
enum {
    SKILL_OK = 0,               /**< success; the result is what set_result received (null if never called) */
    SKILL_ERR_INVALID_ARGS = 1, /**< the arguments were unusable; set_error says which and why */
    SKILL_ERR_FAILED = 2,       /**< the skill ran and failed; set_error says why */
    SKILL_ERR_CANCELLED = 3,    /**< the skill noticed is_cancelled() and stopped early */
    SKILL_ERR_UNAVAILABLE = 4   /**< the skill cannot run now (missing resource, service down) */
};

/** What a call can change. The host asks the user before mutating and destructive calls. */
enum {
    SKILL_RISK_READ_ONLY = 0,   /**< reads only; safe to run without asking */
    SKILL_RISK_MUTATING = 1,    /**< changes state that can be changed back (ideally with set_undo) */
    SKILL_RISK_DESTRUCTIVE = 2  /**< deletes or overwrites something that cannot simply be restored */
};

/** Skill flags (bit set). */
enum {
    SKILL_IDEMPOTENT = 1 << 0,  /**< repeating the call with the same arguments changes nothing more */
    SKILL_OPEN_WORLD = 1 << 1,  /**< talks to the world outside this machine (network, other users) */
    SKILL_SERIAL = 1 << 2       /**< the host must not run two invocations of this skill at once */
};

/** What a plugin's code needs beyond computing (skill_plugin.capabilities, since 1.1). 0 — the default, and what
    every v1.0 plugin gets — is none of these: the plugin may read system libraries and data (/usr, /lib*, /etc,
    zoneinfo), read and write its data_dir and a private temporary directory, and nothing else. A v1.0 plugin with
    a SKILL_OPEN_WORLD skill counts as having SKILL_CAP_NETWORK. */
enum {
    SKILL_CAP_NETWORK = 1 << 0,  /**< open sockets (TCP/UDP), resolve names */
    SKILL_CAP_READ_FS = 1 << 1,  /**< read files anywhere the user can (read-only) */
    SKILL_CAP_WRITE_FS = 1 << 2, /**< write outside its data_dir (implies SKILL_CAP_READ_FS) */
    SKILL_CAP_EXEC = 1 << 3      /**< run other programs */
};

/** Log levels for skill_host.log and skill_call_api.log. */
enum { SKILL_LOG_DEBUG = 0, SKILL_LOG_INFO = 1, SKILL_LOG_WARNING = 2, SKILL_LOG_ERROR = 3 };

/** Opaque per-invocation record owned by the host. Valid from the start of invoke until invoke returns. */
typedef struct skill_call skill_call;

/**
 * Host callbacks available during an invocation. The table is owned by the host and valid until the plugin is
 * unloaded. Every function is [call-thread]: call it only with the skill_call given to the running invoke, and
 * only until that invoke returns. All strings passed in are copied before the function returns; NULL strings are
 * treated as empty.
 */
typedef struct skill_call_api {
    uint32_t struct_size;
    /** Non-zero once the caller gave up (timeout or cancellation). Cheap: poll it in loops and return
        SKILL_ERR_CANCELLED. */
    int (*is_cancelled)(skill_call *call);
    /** Reports progress; total <= 0 means unknown. message may be NULL. */
    void (*report_progress)(skill_call *call, double done, double total, const char *message);
    /** Writes one line to the host's log, attributed to this call. level is a SKILL_LOG_* value. */
    void (*log)(skill_call *call, int level, const char *message);
    /** Sets the result: UTF-8 JSON, or plain text (anything that does not parse as JSON is a string — except text
        starting with '{' or '[', which must be valid JSON). The last call wins. data is copied and need not be
        NUL-terminated; length is in bytes. A result that is not UTF-8, is broken JSON or is longer than the
        host's limit (16 MB by default) turns the call into an error. */
    void (*set_result)(skill_call *call, const char *data, size_t length);
    /** Sets the error sentence shown to the user/model when invoke returns a non-zero status. Last call wins. */
    void (*set_error)(skill_call *call, const char *message);
    /** A mutating skill names the call that reverses this one: skill_id with args_json (a JSON object). */
    void (*set_undo)(skill_call *call, const char *skill_id, const char *args_json);
    /** The id of the skill being invoked (host-owned, valid until invoke returns). */
    const char *(*skill_id)(skill_call *call);
    /** Since 1.1 (check struct_size before using it). The caller's context as a JSON object, host-owned, valid
        until invoke returns: {"locale": "de_CH", "language": "de", "time_zone": "Europe/Zurich",
        "now": "2026-12-01T09:00:00+01:00", "client": "shell"}. Use it instead of guessing. May be NULL in a host
        that does not provide it. */
    const char *(*context)(skill_call *call);
} skill_call_api;

/**
 * Invokes a JSON skill. [thread-safe] unless the skill sets SKILL_SERIAL.
 *
 * state: what init stored (NULL without init). api: host callbacks, see skill_call_api. call: opaque record for
 * those callbacks. args_json: the arguments as a UTF-8 JSON object, already validated against the skill's
 * input_schema (defaults filled in); owned by the host, valid until invoke returns.
 * Returns SKILL_OK or a SKILL_ERR_* code; on error, call set_error with a sentence first.
 */
typedef int (*skill_invoke_fn)(void *state, const skill_call_api *api, skill_call *call, const char *args_json);

/** Who may call a skill (skill_descriptor.audience, since 1.4). 0 — the default — is both. */
enum {
    SKILL_AUDIENCE_MODEL = 1 << 0, /**< offered to models (an agent's, an MCP client's) */
    SKILL_AUDIENCE_VIEW = 1 << 1   /**< callable from the plugin's own views (an MCP App), through the host */
};

/** View flags (skill_view.flags, since 1.4). */
enum {
    SKILL_VIEW_PREFERS_BORDER = 1 << 0 /**< the host draws a border around it */
};

/**
 * Since 1.4: a view — an MCP App: a small HTML page a host shows where a skill's result is (any MCP host that renders
 * apps, through `skillhost mcp`, as the resource ui://PLUGIN/NAME). Owned by the plugin;
 * every string must stay valid until deinit returns. A view is static: the host copies it at load and pins it with
 * the plugin's definition. Whatever it shows of the person's data arrives through the host's bridge (the call's
 * arguments and result, and the skills it calls — each an ordinary call: rules, confirmations, records), never baked
 * into the page.
 */
typedef struct skill_view {
    uint32_t struct_size;    /**< sizeof(skill_view) */
    const char *name;        /**< ^[a-z][a-z0-9_-]{0,63}$, unique in the plugin */
    const char *title;       /**< short, for people; may be NULL (the name is shown) */
    /** The page: a whole UTF-8 HTML document, at most 512 KB, with its script and styles inside (the host lets it load
        nothing else unless `csp` says so). */
    const char *html;
    /** Optional JSON object: the origins the page may reach, as MCP Apps declare them — {"connectDomains": [...],
        "resourceDomains": [...], "frameDomains": [...], "baseUriDomains": [...]}, each at most 32 origins such as
        "https://api.example.com" (a host may start with "*." for its subdomains). NULL: none (the host's restrictive
        policy: no fetch, script or style from anywhere). */
    const char *csp;
    /** Optional JSON object: what the page may use, as MCP Apps declare it — any of {"camera": {}, "microphone": {},
        "geolocation": {}, "clipboardWrite": {}}. NULL: none. */
    const char *permissions;
    uint32_t flags; /**< SKILL_VIEW_PREFERS_BORDER */
} skill_view;

/**
 * Describes one skill. Owned by the plugin; every string must stay valid until deinit returns.
 *
 * A JSON skill sets invoke and input_schema. A typed skill sets signature and function and leaves invoke NULL:
 * signature is "RETURN NAME(TYPE NAME, ...)" where TYPE is bool, int32, int64, double or string (const char *,
 * host-owned, valid during the call) and RETURN is one of those or void. The host generates the JSON Schema from
 * the signature (every argument required); a declared input_schema must agree with it. Typed functions are
 * [thread-safe], short and pure; they cannot see cancellation. A returned string is copied by the host and then
 * released with skill_plugin.free_string when the plugin provides it (otherwise it must be static storage).
 * Since 1.2 a typed function may fail: a last parameter "error NAME" (not an argument: absent from the schema)
 * receives a skill_error * to report through with skill_fail, as in
 * "int64 days_between(string from, string to, error error)".
 */
typedef struct skill_descriptor {
    uint32_t struct_size;     /**< sizeof(skill_descriptor) */
    const char *id;           /**< ^[a-z][a-z0-9_]{0,63}$, unique across everything loaded */
    const char *title;        /**< short, for people; may be NULL (the id is shown) */
    const char *description;  /**< for the model: what it does, when to use it, side effects */
    const char *input_schema; /**< JSON Schema with "type":"object"; required for JSON skills */
    uint32_t risk;            /**< SKILL_RISK_* */
    uint32_t flags;           /**< SKILL_IDEMPOTENT | SKILL_OPEN_WORLD | SKILL_SERIAL */
    uint32_t timeout_ms;      /**< 0 = host default (10 s) */
    skill_invoke_fn invoke;   /**< JSON skill; NULL for a typed skill */
    const char *signature;    /**< typed skill, e.g. "double celsius_to_fahrenheit(double celsius)" */
    void (*function)(void);   /**< typed skill: the C function, called through libffi */
    /** Since 1.1, optional: JSON Schema of the result. Checked at load; every result is validated against it (a
        mismatch turns the call into an error naming the path); MCP clients get it as outputSchema. */
    const char *output_schema;
    /** Since 1.3, optional: how a result reads as a sentence, for people (the offline router's answer), e.g.
        "{args.expression} = {result}" or "Added note {id}: {title}". A slot names a member of the result object
        ({total}, {owner.name}), the whole result ({result}) or an argument ({args.NAME}), optionally through one
        filter: time, date, place, offset, count, plural:WORD (docs/write-a-skill.md). At most 512 bytes and 16
        slots, not empty; checked at load, and pinned with the rest of the definition. A result missing a slot's
        value is shown the router's own way; a failure never goes through it. NULL: none. */
    const char *answer;
    /** Since 1.4, optional: the name of one of the plugin's views (skill_plugin.views) that shows this skill's
        results; checked at load. NULL: none. */
    const char *view;
    /** Since 1.4: SKILL_AUDIENCE_* bits, who may call it; 0 means both. A skill only for views (a list's refresh, a
        form's submit) is never offered to a model; a skill only for models cannot be called from a view. */
    uint32_t audience;
} skill_descriptor;

/**
 * Since 1.2: how a typed skill fails. A typed function whose signature ends with a parameter of type "error"
 * receives a pointer to this record as its last C argument. [call-thread] Owned by the host, valid until the
 * function returns; the host sets struct_size, a code of 0 and an empty message before each call. The function
 * reports a failure with skill_fail and then returns: once code is non-zero the host ignores what the function
 * returned and the call fails with the message. A function returning a string then returns NULL or a string it
 * owns (released with free_string, never read).
 */
typedef struct skill_error {
    uint32_t struct_size; /**< sizeof(skill_error), set by the host */
    int32_t code;         /**< 0: the call succeeded; else SKILL_ERR_* (SKILL_ERR_INVALID_ARGS: the caller's fault) */
    char message[512];    /**< a NUL-terminated UTF-8 sentence: what is wrong and how to fix it */
} skill_error;

/** [call-thread] Reports that a typed call failed. code is a SKILL_ERR_* value — SKILL_ERR_INVALID_ARGS when the
    arguments are unusable (`call` exits 3), SKILL_ERR_FAILED otherwise (0 counts as SKILL_ERR_FAILED); message is
    copied, cut to 511 bytes at a UTF-8 character's start. A NULL error is ignored. The last report wins. */
#if defined(__cplusplus) || (defined(__STDC_VERSION__) && __STDC_VERSION__ >= 199901L)
#define SKILL_INLINE static inline
#elif defined(__GNUC__)
#define SKILL_INLINE static __inline__ __attribute__((unused))
#else
#define SKILL_INLINE static
#endif
SKILL_INLINE void skill_fail(skill_error *error, int code, const char *message) {
    size_t length = 0, capacity = sizeof error->message - 1, i;
    if (!error) return;
    error->code = code ? code : SKILL_ERR_FAILED;
    if (!message) message = "";
    while (message[length] && length < capacity) length++;
    /* Cut: step back to the start of a UTF-8 character (a continuation byte is 10xxxxxx, whether char is signed
       or not). */
    if (message[length])
        while (length > 0 && (message[length] & 0xC0) == 0x80) length--;
    for (i = 0; i < length; i++) error->message[i] = message[i];
    error->message[length] = '\0';
}

/** Handed to init. Owned by the host; valid until deinit returns. */
typedef struct skill_host {
    uint32_t struct_size;
    uint16_t abi_major, abi_minor; /**< the host's ABI version */
    const char *host_name;         /**< "skillhost" */
    const char *host_version;      /**< e.g. "0.1.0" */
    const char *data_dir;          /**< private, writable directory for this plugin, created by the host */
    /** [thread-safe, any thread — the plugin's own too] Writes one line to the host's log, attributed to this
        plugin (each plugin receives a function of its own). level is a SKILL_LOG_* value; message is copied. */
    void (*log)(int level, const char *message);
    /** Since 1.1 (check struct_size). [thread-safe] Like log, but names the plugin that speaks: pass the host
        pointer init received. */
    void (*log_with)(const struct skill_host *host, int level, const char *message);
} skill_host;

/** Opaque record for skill_plugin.snapshot (since 1.1). */
typedef struct skill_snapshot skill_snapshot;

/** Host callbacks for skill_plugin.snapshot (since 1.1). Owned by the host; valid while snapshot runs. */
typedef struct skill_snapshot_api {
    uint32_t struct_size;
    /** Sets the snapshot: a UTF-8 JSON object, copied (need not be NUL-terminated). The last call wins. */
    void (*set)(skill_snapshot *out, const char *json, size_t length);
} skill_snapshot_api;

/** Describes a plugin. Owned by the plugin; valid until the plugin is unloaded. */
typedef struct skill_plugin {
    uint32_t struct_size;           /**< sizeof(skill_plugin) */
    uint16_t abi_major, abi_minor;  /**< SKILL_ABI_MAJOR, SKILL_ABI_MINOR */
    const char *name;               /**< [a-z0-9_-]{1,48}, unique among loaded plugins */
    const char *version;            /**< shown to users, e.g. "1.2.0" */
    const char *description;        /**< optional, one line */
    uint32_t skill_count;
    const skill_descriptor *skills; /**< skill_count descriptors */
    /**
     * Optional. [load-thread] Called once after validation, before any invoke. Store per-plugin state in *state
     * (passed to invoke and deinit). On failure write a sentence into error (capacity error_capacity, always
     * NUL-terminate) and return non-zero: the plugin is then rejected and deinit is not called.
     */
    int (*init)(const skill_host *host, void **state, char *error, size_t error_capacity);
    /** Optional. [load-thread] Called once when the plugin is unloaded, after every invoke has returned or been
        abandoned. */
    void (*deinit)(void *state);
    /** Optional. [thread-safe] Frees a string returned by a typed skill. */
    void (*free_string)(char *s);
    /** Since 1.1: SKILL_CAP_* bits, what the plugin's code needs beyond computing (0: nothing). */
    uint32_t capabilities;
    /** Since 1.1, optional, NULL-terminated: extra folders readable without SKILL_CAP_READ_FS (a model
        directory, say). Absolute, or starting with "~/" for the user's home. */
    const char *const *read_paths;
    /** Since 1.1, optional. [thread-safe] The plugin's current state as a small JSON object for the agent — what
        a model should know before acting, e.g. {"notes": 3, "recent": ["milk"]} — set with api->set. Returns
        SKILL_OK or an error code. Keep it short: the host trims it to a budget. */
    int (*snapshot)(void *state, const skill_snapshot_api *api, skill_snapshot *out);
    /** Since 1.4, optional: the plugin's views (at most 16), which its skills name in skill_descriptor.view. */
    uint32_t view_count;
    const skill_view *views;
} skill_plugin;

/** The one symbol a plugin exports. [load-thread] Returns a pointer valid until the plugin is unloaded, or NULL
    if the plugin cannot describe itself (the host rejects it). */
typedef const skill_plugin *(*skill_plugin_entry_fn)(void);
#define SKILL_PLUGIN_ENTRY_SYMBOL "skill_plugin_entry"

/* ---- Convenience macros ------------------------------------------------------------------------------------- */

/** A JSON skill descriptor (timeout: host default). */
#define SKILL_JSON(id, title, description, input_schema, risk, flags, invoke_fn)                                    \
    SKILL_JSON_OUTPUT(id, title, description, input_schema, NULL, risk, flags, invoke_fn)

/** A JSON skill descriptor that declares the JSON Schema of its result (since 1.1). */
#define SKILL_JSON_OUTPUT(id, title, description, input_schema, output_schema, risk, flags, invoke_fn)              \
    { (uint32_t)sizeof(skill_descriptor), (id), (title), (description), (input_schema), (uint32_t)(risk),         \
      (uint32_t)(flags), 0u, (invoke_fn), NULL, NULL, (output_schema), NULL, NULL, 0u }

/** A typed, read-only, idempotent skill descriptor; the schema is generated from the signature. */
#define SKILL_TYPED(id, title, description, signature, fn)                                                          \
    { (uint32_t)sizeof(skill_descriptor), (id), (title), (description), NULL, (uint32_t)SKILL_RISK_READ_ONLY,     \
      (uint32_t)SKILL_IDEMPOTENT, 0u, NULL, (signature), (void (*)(void))(fn), NULL, NULL, NULL, 0u }

/** A typed skill with a declared input schema (adds descriptions, enums, bounds); it must agree with the
    signature: the same properties, compatible types, all required. */
#define SKILL_TYPED_SCHEMA(id, title, description, input_schema, signature, fn)                                     \
    { (uint32_t)sizeof(skill_descriptor), (id), (title), (description), (input_schema),                           \
      (uint32_t)SKILL_RISK_READ_ONLY, (uint32_t)SKILL_IDEMPOTENT, 0u, NULL, (signature), (void (*)(void))(fn), NULL, \
      NULL, NULL, 0u }

/** A JSON skill descriptor with every field but the timeout (since 1.3): the result's schema (or NULL) and how a
    result reads as a sentence (or NULL). */
#define SKILL_JSON_ANSWER(id, title, description, input_schema, output_schema, answer, risk, flags, invoke_fn)       \
    { (uint32_t)sizeof(skill_descriptor), (id), (title), (description), (input_schema), (uint32_t)(risk),         \
      (uint32_t)(flags), 0u, (invoke_fn), NULL, NULL, (output_schema), (answer), NULL, 0u }

/** A typed, read-only, idempotent skill descriptor with how its result reads as a sentence (since 1.3), such as
    "{args.date1} to {args.date2} is {result} days". */
#define SKILL_TYPED_ANSWER(id, title, description, signature, fn, answer)                                           \
    { (uint32_t)sizeof(skill_descriptor), (id), (title), (description), NULL, (uint32_t)SKILL_RISK_READ_ONLY,     \
      (uint32_t)SKILL_IDEMPOTENT, 0u, NULL, (signature), (void (*)(void))(fn), NULL, (answer), NULL, 0u }

/** A JSON skill descriptor with a view (since 1.4): every field but the timeout, then the name of the plugin's view
    that shows its results (or NULL) and who may call it (SKILL_AUDIENCE_* bits; 0: both). */
#define SKILL_JSON_VIEW(id, title, description, input_schema, output_schema, answer, risk, flags, invoke_fn, view,     \
                        audience)                                                                                   \
    { (uint32_t)sizeof(skill_descriptor), (id), (title), (description), (input_schema), (uint32_t)(risk),         \
      (uint32_t)(flags), 0u, (invoke_fn), NULL, NULL, (output_schema), (answer), (view), (uint32_t)(audience) }

/** A view (since 1.4): its name, title, page, and the CSP and permissions JSON (or NULL). */
#define SKILL_VIEW(name, title, html, csp, permissions, flags)                                                      \
    { (uint32_t)sizeof(skill_view), (name), (title), (html), (csp), (permissions), (uint32_t)(flags) }

/** Number of elements of a static array. */
#define SKILL_COUNT(array) ((uint32_t)(sizeof(array) / sizeof((array)[0])))

/** Defines and exports skill_plugin_entry with every field (since 1.1): capabilities (SKILL_CAP_* bits, 0 for
    none), read_paths (a NULL-terminated array of folders, or NULL) and snapshot (or NULL). */
#define SKILL_PLUGIN_EX(name, version, description, skills_array, init_fn, deinit_fn, free_string_fn, caps,          \
                        read_paths_array, snapshot_fn)                                                              \
    SKILL_EXPORT const skill_plugin *skill_plugin_entry(void) {                                                    \
        static const skill_plugin plugin = { (uint32_t)sizeof(skill_plugin), SKILL_ABI_MAJOR, SKILL_ABI_MINOR,    \
                                             (name), (version), (description), SKILL_COUNT(skills_array),          \
                                             (skills_array), (init_fn), (deinit_fn), (free_string_fn),             \
                                             (uint32_t)(caps), (read_paths_array), (snapshot_fn), 0u, NULL };      \
        return &plugin;                                                                                            \
    }

/** Defines and exports skill_plugin_entry with every field (since 1.4): SKILL_PLUGIN_EX's, then the plugin's views
    (a static array of SKILL_VIEW records). */
#define SKILL_PLUGIN_VIEWS(name, version, description, skills_array, init_fn, deinit_fn, free_string_fn, caps,       \
                           read_paths_array, snapshot_fn, views_array)                                              \
    SKILL_EXPORT const skill_plugin *skill_plugin_entry(void) {                                                    \
        static const skill_plugin plugin = { (uint32_t)sizeof(skill_plugin), SKILL_ABI_MAJOR, SKILL_ABI_MINOR,    \
                                             (name), (version), (description), SKILL_COUNT(skills_array),          \
                                             (skills_array), (init_fn), (deinit_fn), (free_string_fn),             \
                                             (uint32_t)(caps), (read_paths_array), (snapshot_fn),                  \
                                             SKILL_COUNT(views_array), (views_array) };                            \
        return &plugin;                                                                                            \
    }

/** Defines and exports skill_plugin_entry for a plugin with init, deinit and free_string (each may be NULL). */
#define SKILL_PLUGIN_FULL(name, version, description, skills_array, init_fn, deinit_fn, free_string_fn)             \
    SKILL_PLUGIN_EX(name, version, description, skills_array, init_fn, deinit_fn, free_string_fn, 0u, NULL, NULL)

/** Defines and exports skill_plugin_entry for a plugin without init, deinit or free_string. */
#define SKILL_PLUGIN(name, version, description, skills_array)                                                      \
    SKILL_PLUGIN_FULL(name, version, description, skills_array, NULL, NULL, NULL)

#ifdef __cplusplus
}
#endif

#endif /* SKILL_SDK_H */
