/* The plugin: opened, its records read as they are (the host judges them), init, snapshot, deinit. The records are
   read exactly as far as the host's validator would read them in its own process: fields a later minor version
   added only when struct_size says they exist, nothing after a header the host rejects. */
#define _GNU_SOURCE
#include "worker.h"

#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The v1.0 sizes (DescriptorValidator.minimumPluginSize / minimumDescriptorSize) and the limits it applies. */
enum {
    MINIMUM_PLUGIN_SIZE = 72,
    MINIMUM_DESCRIPTOR_SIZE = 80,
    MAXIMUM_SKILLS = 4096,
    MAXIMUM_READ_PATHS = 64,
    MAXIMUM_VIEWS = 16,
    /* A v1.4 skill_view up to its flags (DescriptorValidator.minimumViewSize). */
    MINIMUM_VIEW_SIZE = (int)(offsetof(skill_view, flags) + sizeof(uint32_t)),
    MAXIMUM_VIEW_SIZE = 1024
};

/* A view record's size the host reads (ViewValidator.isReadableSize): at least the 1.4 record, at most
   MAXIMUM_VIEW_SIZE, a multiple of 8. */
static int readable_view_size(uint32_t size) {
    return size >= MINIMUM_VIEW_SIZE && size <= MAXIMUM_VIEW_SIZE && size % 8 == 0;
}

#define HAS(size, type, field) ((size_t)(size) >= offsetof(type, field) + sizeof(((type *)0)->field))

/* `text` with every `from` replaced by `to` (allocated). */
static char *replace_all(const char *text, const char *from, const char *to) {
    struct text out = {0};
    size_t from_length = strlen(from);
    const char *p = text, *found;
    while (from_length && (found = strstr(p, from))) {
        text_bytes(&out, p, (size_t)(found - p));
        text_cstring(&out, to);
        p = found + from_length;
    }
    text_cstring(&out, p);
    return out.failed ? strdup(text) : out.bytes;
}

const char *plugin_open(void) {
    /* dlopen's reason; "" when the entry is missing. */
    static char failure[2048];
    const char *base = strrchr(worker.file, '/') ? strrchr(worker.file, '/') + 1 : worker.file;
    worker.handle = dlopen(worker.copy, RTLD_NOW | RTLD_LOCAL);
    if (!worker.handle) {
        /* The private copy's path (or its name alone) means nothing to the author: their file's name. */
        const char *reason = dlerror();
        const char *copy_base = strrchr(worker.copy, '/') ? strrchr(worker.copy, '/') + 1 : worker.copy;
        char *named = replace_all(reason ? reason : "unknown dlopen error", worker.copy, base);
        char *shown = replace_all(named, copy_base, base);
        snprintf(failure, sizeof failure, "%s", shown);
        free(named);
        free(shown);
        return failure;
    }
    skill_plugin_entry_fn entry = (skill_plugin_entry_fn)dlsym(worker.handle, SKILL_PLUGIN_ENTRY_SYMBOL);
    if (!entry) return "";
    worker.plugin = entry();
    return NULL;
}

static void member(struct text *out, const char *name, int first) {
    if (!first) text_bytes(out, ",", 1);
    text_bytes(out, "\"", 1);
    text_cstring(out, name);
    text_bytes(out, "\":", 2);
}

static void string_member(struct text *out, const char *name, const char *value) {
    member(out, name, 0);
    text_json_cstring(out, value, WORKER_STRING_LIMIT);
}

static void number_member(struct text *out, const char *name, long long value) {
    member(out, name, 0);
    text_int(out, value);
}

static void flag_member(struct text *out, const char *name, int value) {
    member(out, name, 0);
    text_cstring(out, value ? "true" : "false");
}

static void describe_skill(struct text *out, const unsigned char *raw, uint32_t size) {
    skill_descriptor d = {0};
    memcpy(&d, raw, MINIMUM_DESCRIPTOR_SIZE);
    text_cstring(out, "{");
    member(out, "struct_size", 1);
    text_int(out, size);
    if (size >= MINIMUM_DESCRIPTOR_SIZE) {
        string_member(out, "id", d.id);
        string_member(out, "title", d.title);
        string_member(out, "description", d.description);
        string_member(out, "input_schema", d.input_schema);
        number_member(out, "risk", d.risk);
        number_member(out, "flags", d.flags);
        number_member(out, "timeout_ms", d.timeout_ms);
        flag_member(out, "invoke", d.invoke != NULL);
        string_member(out, "signature", d.signature);
        flag_member(out, "function", d.function != NULL);
        if (HAS(size, skill_descriptor, output_schema)) {
            const char *schema;
            memcpy(&schema, raw + offsetof(skill_descriptor, output_schema), sizeof schema);
            string_member(out, "output_schema", schema);
        }
        if (HAS(size, skill_descriptor, answer)) {
            const char *answer;
            memcpy(&answer, raw + offsetof(skill_descriptor, answer), sizeof answer);
            string_member(out, "answer", answer);
        }
        if (HAS(size, skill_descriptor, audience)) {
            const char *view;
            uint32_t audience;
            memcpy(&view, raw + offsetof(skill_descriptor, view), sizeof view);
            memcpy(&audience, raw + offsetof(skill_descriptor, audience), sizeof audience);
            string_member(out, "view", view);
            number_member(out, "audience", audience);
        }
    }
    text_cstring(out, "}");
}

/* The plugin's views (since 1.4), read as the host's validator reads them: none past the limit, the stride the first
   one's struct_size, a record of another size only by its size. */
static void describe_views(struct text *out, const unsigned char *raw, uint32_t plugin_size) {
    if (!HAS(plugin_size, skill_plugin, views)) return;
    uint32_t count;
    const unsigned char *first;
    memcpy(&count, raw + offsetof(skill_plugin, view_count), sizeof count);
    memcpy(&first, raw + offsetof(skill_plugin, views), sizeof first);
    text_cstring(out, ",\"view_count\":");
    text_int(out, count);
    text_cstring(out, ",\"views\":[");
    if (count > 0 && count <= MAXIMUM_VIEWS && first) {
        uint32_t stride;
        memcpy(&stride, first, sizeof stride);
        uint32_t shown = readable_view_size(stride) ? count : 1;
        for (uint32_t i = 0; i < shown; i++) {
            const unsigned char *record = first + (size_t)i * stride;
            uint32_t size;
            memcpy(&size, record, sizeof size);
            if (i) text_cstring(out, ",");
            text_cstring(out, "{");
            member(out, "struct_size", 1);
            text_int(out, size);
            if (readable_view_size(size) && (i == 0 || size == stride)) {
                skill_view v = {0};
                memcpy(&v, record, MINIMUM_VIEW_SIZE);
                string_member(out, "name", v.name);
                string_member(out, "title", v.title);
                string_member(out, "html", v.html);
                string_member(out, "csp", v.csp);
                string_member(out, "permissions", v.permissions);
                number_member(out, "flags", v.flags);
                /* The host refuses a view whose text is not UTF-8, as it does reading the record itself: the
                   replacement characters of the report would otherwise make another page than the host reads. */
                /* Each within the host's limit for it plus one byte, as the host reads it (a longer text is refused
                   for its length, and not judged here). */
                const char *texts[] = {v.name, v.title, v.html, v.csp, v.permissions};
                const size_t limits[] = {256, 201, 512 * 1024 + 1, 16 * 1024 + 1, 16 * 1024 + 1};
                int valid = 1;
                for (size_t t = 0; t < sizeof texts / sizeof texts[0]; t++) {
                    if (!texts[t]) continue;
                    size_t length = strnlen(texts[t], limits[t]);
                    if (length < limits[t] && !text_is_utf8(texts[t], length)) valid = 0;
                }
                flag_member(out, "utf8", valid);
            }
            text_cstring(out, "}");
        }
    }
    text_cstring(out, "]");
}

void plugin_describe(struct text *out) {
    const skill_plugin *p = worker.plugin;
    if (!p) {
        text_cstring(out, "{\"entry_returned_null\":true}");
        return;
    }
    const unsigned char *raw = (const unsigned char *)p;
    skill_plugin v1 = {0};
    memcpy(&v1, raw, 8); /* struct_size and the ABI version: every version has them */
    text_cstring(out, "{\"plugin\":{");
    member(out, "struct_size", 1);
    text_int(out, v1.struct_size);
    number_member(out, "abi_major", v1.abi_major);
    number_member(out, "abi_minor", v1.abi_minor);
    if (v1.struct_size < MINIMUM_PLUGIN_SIZE || v1.abi_major != SKILL_ABI_MAJOR) {
        text_cstring(out, "},\"descriptors\":[]}");
        return;
    }
    memcpy(&v1, raw, MINIMUM_PLUGIN_SIZE);
    string_member(out, "name", v1.name);
    string_member(out, "version", v1.version);
    string_member(out, "description", v1.description);
    number_member(out, "skill_count", v1.skill_count);
    flag_member(out, "skills", v1.skills != NULL);
    flag_member(out, "init", v1.init != NULL);
    flag_member(out, "deinit", v1.deinit != NULL);
    flag_member(out, "free_string", v1.free_string != NULL);
    if (HAS(v1.struct_size, skill_plugin, capabilities)) {
        uint32_t bits;
        memcpy(&bits, raw + offsetof(skill_plugin, capabilities), sizeof bits);
        number_member(out, "capabilities", bits);
    }
    if (HAS(v1.struct_size, skill_plugin, read_paths)) {
        const char *const *list;
        memcpy(&list, raw + offsetof(skill_plugin, read_paths), sizeof list);
        if (list) {
            member(out, "read_paths", 0);
            text_cstring(out, "[");
            /* One more than the host accepts, so it can say there are too many. */
            for (int i = 0; list[i] && i <= MAXIMUM_READ_PATHS; i++) {
                if (i) text_cstring(out, ",");
                text_json_cstring(out, list[i], WORKER_STRING_LIMIT);
            }
            text_cstring(out, "]");
        }
    }
    if (HAS(v1.struct_size, skill_plugin, snapshot)) {
        int (*snapshot)(void *, const skill_snapshot_api *, skill_snapshot *);
        memcpy(&snapshot, raw + offsetof(skill_plugin, snapshot), sizeof snapshot);
        flag_member(out, "snapshot", snapshot != NULL);
    }
    describe_views(out, raw, v1.struct_size);
    text_cstring(out, "},\"descriptors\":[");
    if (v1.skill_count > 0 && v1.skill_count <= MAXIMUM_SKILLS && v1.skills) {
        const unsigned char *first = (const unsigned char *)v1.skills;
        uint32_t stride;
        memcpy(&stride, first, sizeof stride);
        /* The array's stride is the size the plugin was compiled with (its first descriptor's struct_size). */
        uint32_t count = stride >= MINIMUM_DESCRIPTOR_SIZE ? v1.skill_count : 1;
        for (uint32_t i = 0; i < count; i++) {
            const unsigned char *raw_skill = first + (size_t)i * stride;
            uint32_t size;
            memcpy(&size, raw_skill, sizeof size);
            if (i) text_cstring(out, ",");
            if (i > 0 && size != stride) { /* the host reports it and reads no further */
                text_cstring(out, "{\"struct_size\":");
                text_int(out, size);
                text_cstring(out, "}");
                continue;
            }
            describe_skill(out, raw_skill, size);
            /* A record longer than the host could ever read is refused by it: stop reading here. */
            if (out->length > worker.result_limit * 2) break;
        }
    }
    text_cstring(out, "]}");
}

const skill_descriptor *plugin_skill(const char *id) {
    const skill_plugin *p = worker.plugin;
    if (!p || !p->skills) return NULL;
    const unsigned char *first = (const unsigned char *)p->skills;
    uint32_t stride;
    memcpy(&stride, first, sizeof stride);
    for (uint32_t i = 0; i < p->skill_count; i++) {
        const skill_descriptor *d = (const skill_descriptor *)(first + (size_t)i * stride);
        if (d->id && strcmp(d->id, id) == 0) return d;
    }
    return NULL;
}

// MARK: init, log, snapshot, deinit

static void host_log(int level, const char *message) { worker_log(level, NULL, message); }

static void host_log_with(const skill_host *host, int level, const char *message) {
    (void)host;
    worker_log(level, NULL, message);
}

static skill_host host_record = {
    .struct_size = sizeof(skill_host), .abi_major = SKILL_ABI_MAJOR, .abi_minor = SKILL_ABI_MINOR,
    .host_name = "skillhost", .host_version = "0.1.0", .log = host_log, .log_with = host_log_with};

char *plugin_init(const char *directory) {
    worker.name = strndup(worker.plugin->name ? worker.plugin->name : "", 64);
    host_record.data_dir = strdup(directory);
    if (!worker.name || !host_record.data_dir) worker_fail("out of memory for the plugin's name");
    if (mkdir(directory, 0700) != 0 && errno != EEXIST) {
        struct text out = {0};
        char reason[256];
        snprintf(reason, sizeof reason, "cannot create the data directory %s: %s", directory, strerror(errno));
        text_cstring(&out, "{\"problem\":");
        text_json_cstring(&out, reason, sizeof reason);
        text_cstring(&out, "}");
        return out.bytes;
    }
    if (worker.plugin->init) {
        char error[1024] = {0};
        int code = worker.plugin->init(&host_record, &worker.state, error, sizeof error - 1);
        if (code != 0) {
            struct text out = {0};
            text_cstring(&out, "{\"init_failed\":");
            text_int(&out, code);
            text_cstring(&out, ",\"message\":");
            text_json_cstring(&out, error, sizeof error);
            text_cstring(&out, "}");
            return out.bytes;
        }
    }
    worker.initialised = 1;
    return NULL;
}

struct snapshot_box {
    char *bytes;
    size_t length;
    int set;
    pthread_mutex_t lock;
};

static void snapshot_set(skill_snapshot *out, const char *json, size_t length) {
    struct snapshot_box *box = (struct snapshot_box *)out;
    /* Over the host's limit it is refused anyway: only its size is kept. */
    char *copy = length <= worker.result_limit ? malloc(length ? length : 1) : NULL;
    if (copy && length) memcpy(copy, json, length);
    pthread_mutex_lock(&box->lock);
    free(box->bytes);
    box->bytes = copy;
    box->length = length;
    box->set = 1;
    pthread_mutex_unlock(&box->lock);
}

static const skill_snapshot_api snapshot_api = {.struct_size = sizeof(skill_snapshot_api), .set = snapshot_set};

void plugin_snapshot(struct text *out) {
    const skill_plugin *p = worker.plugin;
    int (*function)(void *, const skill_snapshot_api *, skill_snapshot *) = NULL;
    if (HAS(p->struct_size, skill_plugin, snapshot)) function = p->snapshot;
    if (!function) {
        text_cstring(out, "null");
        return;
    }
    struct snapshot_box box = {.lock = PTHREAD_MUTEX_INITIALIZER};
    atomic_fetch_add(&worker.running, 1);
    int code = function(worker.state, &snapshot_api, (skill_snapshot *)&box);
    atomic_fetch_sub(&worker.running, 1);
    pthread_mutex_lock(&box.lock);
    text_cstring(out, "{\"code\":");
    text_int(out, code);
    if (box.set) {
        number_member(out, "size", (long long)box.length);
        if (box.bytes) {
            member(out, "bytes", 0);
            text_json_string(out, box.bytes, box.length);
        }
    }
    text_cstring(out, "}");
    free(box.bytes);
    pthread_mutex_unlock(&box.lock);
}

void plugin_deinit(void) {
    if (!worker.initialised || atomic_load(&worker.running) > 0) return;
    worker.initialised = 0;
    if (worker.plugin->deinit) worker.plugin->deinit(worker.state);
}
