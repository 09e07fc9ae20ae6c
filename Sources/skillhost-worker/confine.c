/* Confinement, applied before any of the plugin's code runs in this process: at the start with the host's final
   lists (`--confinement`: the host knows what this copy declares, from an earlier worker), or after a peek — a
   confined child loads the plugin and reports its declaration (`--peek`, answered to the host's `declaration`), the
   host weighs it against the user's rules and sends the lists (`confine`). Which lists, and what they mean to the
   user, is the host's (ConfinementRules); this file only applies them. */
#define _GNU_SOURCE
#include "worker.h"
#include "process_support.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct {
    int state;   /* enum below */
    pid_t child; /* the peek child, -1 when it could not start */
    int report;  /* its report pipe */
    int applied; /* SKILLHOST_CONFINED_* bits */
    int threads; /* counted as the peek starts: nothing that could start one runs here before `confine` */
    char failure[200];
} confinement = {.child = -1, .report = -1};

enum { UNCONFINED, PEEKING, DECLARED, CONFINED, FAILED };

/* A JSON array of strings (`value` to `end`) as a NULL-terminated list (never freed: a worker confines itself
   once). */
static int read_list(const char *value, const char *value_end, const char *const **list, int *count) {
    const char *item, *item_end;
    if (!value) return -1;
    size_t capacity = 16;
    const char **items = malloc(capacity * sizeof *items);
    int found = 0, step;
    const char *cursor = value;
    while (items && (step = json_next_element(&cursor, value_end, &item, &item_end)) == 1) {
        if ((size_t)found + 1 == capacity) {
            const char **grown = realloc(items, (capacity *= 2) * sizeof *items);
            if (!grown) break;
            items = grown;
        }
        if (!(items[found++] = json_string(item, item_end))) return -1;
    }
    if (!items || step != 0) return -1;
    items[found] = NULL;
    *list = items;
    *count = found;
    return 0;
}

static int read_flag(const char *value, const char *value_end, int *flag) {
    long long number;
    if (!value || json_integer(value, value_end, &number) != 0) return -1;
    *flag = (int)number;
    return 0;
}

/* The host's `ConfinementSpec` JSON as skillhost_confine takes it, read in one walk over its members; 0, or -1 when
   it is not one. */
static int read_spec(const char *p, const char *end, struct skillhost_confinement *spec) {
    enum { NETWORK, EXEC, READ_ANYWHERE, WRITE_ANYWHERE, MAXIMUM_ABI, EXECUTE, READ, WRITE, COUNT };
    static const char *const keys[COUNT] = {"network",     "exec",    "read_anywhere", "write_anywhere",
                                            "maximum_abi", "execute", "read",          "write"};
    const char *values[COUNT], *ends[COUNT];
    memset(spec, 0, sizeof *spec);
    spec->supervise_metadata = 1;
    if (json_members(p, end, COUNT, keys, values, ends) != 0) return -1;
    if (read_flag(values[NETWORK], ends[NETWORK], &spec->network) ||
        read_flag(values[EXEC], ends[EXEC], &spec->exec) ||
        read_flag(values[READ_ANYWHERE], ends[READ_ANYWHERE], &spec->read_anywhere) ||
        read_flag(values[WRITE_ANYWHERE], ends[WRITE_ANYWHERE], &spec->write_anywhere) ||
        read_flag(values[MAXIMUM_ABI], ends[MAXIMUM_ABI], &spec->maximum_abi))
        return -1;
    if (read_list(values[EXECUTE], ends[EXECUTE], &spec->execute_paths, &spec->execute_count) ||
        read_list(values[READ], ends[READ], &spec->read_paths, &spec->read_count) ||
        read_list(values[WRITE], ends[WRITE], &spec->write_paths, &spec->write_count))
        return -1;
    return 0;
}

static int digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

int confinement_read_spec(const char *text, struct skillhost_confinement *spec) {
    return read_spec(text, text + strlen(text), spec);
}

/* The filter imported last (a spare's, which its launch most likely carries again). */
static const char *imported;

/* The filter the host compiled for a plugin that declares nothing (`--filter`, hex): taken as this worker's, so
   neither the peek child nor this process compiles it again. */
static void import_filter(const char *hex) {
    if (hex && imported && strcmp(hex, imported) == 0) return;
    free((void *)imported);
    imported = hex ? strdup(hex) : NULL;
    size_t length = hex ? strlen(hex) / 2 : 0;
    unsigned char *bytes = length ? malloc(length) : NULL;
    if (!bytes) return;
    for (size_t i = 0; i < length; i++) {
        int high = digit(hex[2 * i]), low = digit(hex[2 * i + 1]);
        if (high < 0 || low < 0) {
            free(bytes);
            return;
        }
        bytes[i] = (unsigned char)(high << 4 | low);
    }
    struct skillhost_confinement nothing = {0};
    skillhost_seccomp_import(&nothing, bytes, (int)length);
    free(bytes);
}

static void confine_now(const struct skillhost_confinement *spec, int threads) {
    int result = threads == 1 ? skillhost_confine(spec, &confinement.applied) : EBUSY;
    if (result == 0) {
        confinement.state = CONFINED;
    } else {
        confinement.state = FAILED;
        if (threads != 1)
            snprintf(confinement.failure, sizeof confinement.failure,
                     "cannot confine the plugin: the worker already runs %d threads", threads);
        else
            snprintf(confinement.failure, sizeof confinement.failure, "cannot confine the plugin: %s",
                     strerror(result));
    }
}

void confinement_standby(const char *filter, const char *prepare) {
    import_filter(filter);
    struct skillhost_confinement lists;
    int readable = prepare && confinement_read_spec(prepare, &lists) == 0;
    standby_start(filter, readable ? &lists : NULL);
    /* The same rules for this process's own confinement, whose lists hold the peek's (and the plugin's own). A
       failure leaves nothing prepared: the rules are then built as without. */
    if (readable) (void)skillhost_confine_files_prepare(&lists);
}

void confinement_start(const struct confinement_launch *launch) {
    const char *final = launch->final, *peek = launch->peek;
    if (!final && !peek) {
        standby_abandon();
        skillhost_confine_files_discard_prepared();
        return;
    }
    import_filter(launch->filter);
    /* The host watched the prepared rules' paths from before this spare started (WorkerSpares): no stat of each. */
    if (launch->prepared_unchanged) skillhost_confine_files_trust_prepared();
    struct skillhost_confinement spec;
    if (final) {
        standby_abandon();
        if (read_spec(final, final + strlen(final), &spec) != 0) worker_fail("--confinement is not a confinement");
        confine_now(&spec, skillhost_thread_count());
        return;
    }
    if (read_spec(peek, peek + strlen(peek), &spec) != 0) worker_fail("--peek is not a confinement");
    /* The standby child loaded the filter of a plugin that declares nothing: only a peek with those choices. */
    int declares_nothing = !spec.network && !spec.exec && !spec.read_anywhere && !spec.write_anywhere;
    if (!declares_nothing) standby_abandon();
    if (standby_take(launch, &confinement.child, &confinement.report) != 0 &&
        skillhost_peek_start(worker.copy, &spec, &confinement.child, &confinement.report) != 0)
        confinement.child = -1;
    confinement.state = PEEKING;
    /* While the peek child works: the capabilities go (for root, one system call and a new set of credentials
       each: about 0.1 ms), the refusal memory for the host's metadata supervision, the check of the rules a spare
       prepared, and the other paths of the peek's lists opened for this process's own confinement (the final lists
       hold them, and a few more). A failure to drop is skillhost_confine's to report, which drops them again. */
    skillhost_drop_capabilities();
    confinement.threads = skillhost_thread_count();
    skillhost_metadata_prepare();
    skillhost_confine_files_check_prepared();
    skillhost_confine_open_ahead(spec.execute_paths, spec.execute_count);
    skillhost_confine_open_ahead(spec.read_paths, spec.read_count);
    skillhost_confine_open_ahead(spec.write_paths, spec.write_count);
}

int confinement_pending(void) { return confinement.state == PEEKING || confinement.state == DECLARED; }

const char *confinement_failure(void) { return confinement.state == FAILED ? confinement.failure : NULL; }

int confinement_applied(void) { return confinement.state == CONFINED ? confinement.applied : -1; }

void confinement_declaration(struct text *out) {
    char report[SKILLHOST_PEEK_REPORT_SIZE];
    int length = 0;
    int peeked = confinement.state == PEEKING && confinement.child > 0 &&
                 skillhost_peek_finish(confinement.child, confinement.report, 60000, report, sizeof report,
                                       &length) == 0;
    if (confinement.state == PEEKING) confinement.state = DECLARED;
    /* name, capabilities, then the read paths, each NUL-terminated. */
    const char *fields[2 + 66] = {0};
    int count = 0;
    for (int at = 0; peeked && at < length && count < 68; at += (int)strlen(report + at) + 1)
        fields[count++] = report + at;
    if (count < 2) {
        text_cstring(out, "null");
        return;
    }
    text_cstring(out, "{\"name\":");
    text_json_cstring(out, fields[0], 64);
    text_cstring(out, ",\"capabilities\":");
    text_int(out, strtoll(fields[1], NULL, 10));
    text_cstring(out, ",\"read_paths\":[");
    for (int i = 2; i < count; i++) {
        if (i > 2) text_cstring(out, ",");
        text_json_cstring(out, fields[i], 4096);
    }
    text_cstring(out, "]}");
}

const char *confinement_apply(const char *params, const char *end) {
    struct skillhost_confinement spec;
    if (confinement.state != DECLARED) return "confine comes once, after declaration";
    if (read_spec(params, end, &spec) != 0) return "confine needs a confinement";
    confine_now(&spec, confinement.threads);
    return NULL;
}
