/* The worker's start and its main channel: arguments, channels, the plugin opened, requests read and dispatched. */
#define _GNU_SOURCE
#include "worker.h"
#include "process_support.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

struct worker worker = {.out_lock = PTHREAD_MUTEX_INITIALIZER, .in = -1, .out = -1, .lane_in = -1, .lane_out = -1};

/* Why the plugin did not open (NULL: it did); `describe` answers it. */
static const char *open_failure;

_Noreturn void worker_fail(const char *message) {
    dprintf(2, "skillhost worker: %s\n", message);
    skillhost_kill_adopted(1);
    _exit(70);
}

static void send_on(int fd, const struct text *line) {
    struct text copy = {0};
    /* One write per message: the line and its newline together, never interleaved with another thread's. */
    text_bytes(&copy, line->bytes, line->length);
    text_bytes(&copy, "\n", 1);
    if (copy.failed) worker_fail("out of memory for a message to the host");
    pthread_mutex_lock(&worker.out_lock);
    size_t done = 0;
    while (done < copy.length) {
        ssize_t n = skillhost_write_nosigpipe(fd, copy.bytes + done, copy.length - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        done += (size_t)n;
    }
    pthread_mutex_unlock(&worker.out_lock);
    text_free(&copy);
}

/* Set on the lane's thread: what it sends goes on the lane. */
_Thread_local int on_lane;

int worker_send(const struct text *line) {
    if (line->failed) worker_fail("out of memory for a message to the host");
    if (on_lane) {
        int posted = skillhost_lane_post_response(worker.lane_memory, (const uint8_t *)line->bytes, line->length,
                                                  50000);
        if (posted == SKILLHOST_LANE_CLOSED) return -1;
        if (posted == SKILLHOST_LANE_ON_PIPE) {
            /* Only the lane's thread writes this pipe: the lock is the main channel's, which is harmless. */
            send_on(worker.lane_out, line);
        }
        return 0;
    }
    send_on(worker.out, line);
    return 0;
}

void worker_notify(const char *method, const struct text *params) {
    struct text line = {0};
    text_cstring(&line, "{\"jsonrpc\":\"2.0\",\"method\":\"");
    text_cstring(&line, method);
    text_cstring(&line, "\",\"params\":");
    text_bytes(&line, params->bytes, params->length);
    text_cstring(&line, "}");
    worker_send(&line);
    text_free(&line);
}

void worker_log(int level, const char *prefix, const char *message) {
    struct text params = {0}, body = {0};
    if (prefix) {
        text_cstring(&body, prefix);
        text_cstring(&body, ": ");
    }
    if (message) text_bytes(&body, message, strnlen(message, WORKER_STRING_LIMIT));
    text_cstring(&params, "{\"level\":");
    text_int(&params, level < 0 ? 0 : level > 3 ? 3 : level);
    text_cstring(&params, ",\"source\":");
    text_json_cstring(&params, worker.name ? worker.name : "", 64);
    text_cstring(&params, ",\"message\":");
    text_json_string(&params, body.bytes ? body.bytes : "", body.length);
    text_cstring(&params, "}");
    worker_notify("log", &params);
    text_free(&params);
    text_free(&body);
}

void worker_answer_head(struct text *line, const long long *id) {
    text_cstring(line, "{\"jsonrpc\":\"2.0\",\"id\":");
    if (id) text_int(line, *id);
    else text_cstring(line, "null");
}

/* Answers request `id` with `result` (a JSON value's text). */
static void respond(long long id, const char *result, size_t length) {
    struct text line = {0};
    worker_answer_head(&line, &id);
    text_cstring(&line, ",\"result\":");
    text_bytes(&line, result, length);
    text_cstring(&line, "}");
    worker_send(&line);
    text_free(&line);
}

/* Answers request `id` with `{"<key>": "<reason>"}`. */
static void respond_failure(long long id, const char *key, const char *reason) {
    struct text out = {0};
    text_cstring(&out, "{\"");
    text_cstring(&out, key);
    text_cstring(&out, "\":");
    text_json_cstring(&out, reason, WORKER_STRING_LIMIT);
    text_cstring(&out, "}");
    respond(id, out.bytes, out.length);
    text_free(&out);
}

/* Answers request `id` with the plugin's records (plugin_describe), how this process is confined first in the same
   object; or why the plugin did not open: dlopen's own words (the private copy named as the user's file), or no
   entry at all. */
static void respond_records(long long id) {
    struct text out = {0};
    if (open_failure) {
        text_cstring(&out, *open_failure ? "{\"dlopen_failed\":" : "{\"missing_entry\":true");
        if (*open_failure) text_json_cstring(&out, open_failure, WORKER_STRING_LIMIT);
        text_cstring(&out, "}");
    } else {
        if (confinement_applied() >= 0) {
            text_cstring(&out, "{\"applied\":");
            text_int(&out, confinement_applied());
            text_cstring(&out, ",");
        }
        size_t records = out.length;
        plugin_describe(&out);
        /* One object: the records' opening brace goes. */
        if (records) memmove(out.bytes + records, out.bytes + records + 1, out.length - records - 1), out.length--;
    }
    respond(id, out.bytes, out.length);
    text_free(&out);
}

void open_plugin(void) {
    /* Nothing of the plugin's may write to the host's supervisor (confinement handed it what it needs). */
    skillhost_metadata_close_host_channel();
    open_failure = plugin_open();
    if (worker.lane_memory && lane_start() != 0) worker_fail("cannot start the lane's thread");
}

void respond_error(const long long *id, int code, const char *message) {
    struct text line = {0};
    worker_answer_head(&line, id);
    text_cstring(&line, ",\"error\":{\"code\":");
    text_int(&line, code);
    text_cstring(&line, ",\"message\":");
    text_json_cstring(&line, message, WORKER_STRING_LIMIT);
    text_cstring(&line, "}}");
    worker_send(&line);
    text_free(&line);
}

struct invoke_job {
    long long id;
    char *skill, *arguments, *context;
    int typed; /* `arguments` are the host's conversion for a typed skill */
};

static void *invoke_thread(void *argument) {
    struct invoke_job *job = argument;
    call_run(job->id, job->skill, job->arguments, job->context, 0, job->typed);
    free(job->skill);
    free(job->arguments);
    free(job->context);
    free(job);
    return NULL;
}

/* An `invoke` on the main channel runs on a thread of its own, so a slow call never delays the next request. */
static void start_invoke(long long id, const char *params, const char *end) {
    const char *value, *value_end;
    struct invoke_job *job = calloc(1, sizeof *job);
    if (!job) worker_fail("out of memory for a call");
    job->id = id;
    if (json_member(params, end, "skill", &value, &value_end) == 0) job->skill = json_string(value, value_end);
    if (!job->skill) {
        free(job);
        respond_error(&id, -32602, "invoke needs a skill");
        return;
    }
    job->typed = json_member(params, end, "typed", &value, &value_end) == 0;
    if (job->typed || json_member(params, end, "arguments", &value, &value_end) == 0)
        job->arguments = strndup(value, (size_t)(value_end - value));
    else job->arguments = strdup("{}");
    if (json_member(params, end, "context", &value, &value_end) == 0) job->context = json_string(value, value_end);
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setstacksize(&attributes, 8 << 20);
    pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
    pthread_t thread;
    int failed = !job->arguments || pthread_create(&thread, &attributes, invoke_thread, job) != 0;
    pthread_attr_destroy(&attributes);
    if (failed) {
        respond_error(&id, -32603, "the worker cannot start a thread for the call");
        free(job->skill);
        free(job->arguments);
        free(job->context);
        free(job);
    }
}

void handle_line(const char *line, size_t length) {
    const char *end = line + length, *value, *value_end;
    if (!json_skip(line, end, 600)) {
        respond_error(NULL, -32700, "not a JSON-RPC message");
        return;
    }
    char *method = json_member(line, end, "method", &value, &value_end) == 0 ? json_string(value, value_end) : NULL;
    if (!method) return; /* a response or something else not meant for the worker */
    const char *params = "{}", *params_end = params + 2;
    if (json_member(line, end, "params", &value, &value_end) == 0) params = value, params_end = value_end;
    long long id;
    int has_id = json_member(line, end, "id", &value, &value_end) == 0;
    if (!has_id) {
        if (strcmp(method, "cancel") == 0 && json_member(params, params_end, "id", &value, &value_end) == 0 &&
            json_integer(value, value_end, &id) == 0)
            call_cancel(id);
        free(method);
        return;
    }
    if (json_integer(value, value_end, &id) != 0) {
        respond_error(NULL, -32600, "request ids are integers");
        free(method);
        return;
    }
    if (strcmp(method, "invoke") == 0) {
        if (!worker.initialised) respond_error(&id, -32001, "the plugin is not loaded");
        else start_invoke(id, params, params_end);
    } else if (strcmp(method, "declaration") == 0) {
        struct text out = {0};
        if (!confinement_pending()) {
            respond_error(&id, -32600, "declaration comes first, when the worker peeks");
        } else {
            confinement_declaration(&out);
            respond(id, out.bytes, out.length);
        }
        text_free(&out);
    } else if (strcmp(method, "confine") == 0) {
        const char *refusal = confinement_apply(params, params_end);
        if (refusal) {
            respond_error(&id, -32602, refusal);
        } else if (confinement_failure()) {
            respond_failure(id, "confine_failed", confinement_failure());
        } else {
            open_plugin();
            respond_records(id);
        }
    } else if (confinement_pending()) {
        respond_error(&id, -32600, "the worker waits for its confinement (declaration, then confine)");
    } else if (confinement_failure() && strcmp(method, "describe") == 0) {
        respond_failure(id, "confine_failed", confinement_failure());
    } else if (strcmp(method, "describe") == 0) {
        respond_records(id);
    } else if (strcmp(method, "init") == 0) {
        char *directory = json_member(params, params_end, "data_dir", &value, &value_end) == 0
                              ? json_string(value, value_end) : NULL;
        if (!worker.plugin || !directory || worker.initialised) {
            respond_error(&id, -32602, "init needs data_dir, once, for an opened plugin");
        } else {
            char *failure = plugin_init(directory);
            if (failure) respond(id, failure, strlen(failure));
            else respond(id, "{}", 2);
            free(failure);
        }
        free(directory);
    } else if (strcmp(method, "snapshot") == 0) {
        struct text out = {0};
        if (worker.initialised) plugin_snapshot(&out);
        else text_cstring(&out, "null");
        respond(id, out.bytes, out.length);
        text_free(&out);
    } else {
        char message[160];
        snprintf(message, sizeof message, "unknown method %.100s", method);
        respond_error(&id, -32601, message);
    }
    free(method);
}

void worker_check_channel(void) {
    if (fcntl(worker.in, F_GETFD) >= 0) return;
    char message[200];
    snprintf(message, sizeof message,
             "the plugin closed the protocol channel (descriptor %d); a plugin must not close descriptors it did "
             "not open",
             worker.in);
    worker_fail(message);
}

/* The host closed the channel: deinit the plugin (unless calls are still inside it), stop its children, exit. */
static _Noreturn void shut_down(void) {
    worker_check_channel();
    plugin_deinit();
    skillhost_kill_adopted(1);
    _exit(0);
}

void serve(int fd, size_t limit, const char *pending, size_t pending_length) {
    size_t capacity = 64 * 1024, filled = pending_length, scanned = 0;
    while (capacity < pending_length) capacity *= 2;
    char *buffer = malloc(capacity);
    if (!buffer) worker_fail("out of memory for the protocol's input");
    if (pending_length) memcpy(buffer, pending, pending_length);
    int discarding = 0; /* inside a line longer than `limit` */
    for (;;) {
        char *newline = memchr(buffer + scanned, '\n', filled - scanned);
        if (newline) {
            size_t length = (size_t)(newline - buffer);
            if (discarding) respond_error(NULL, -32600, "request line too long");
            else handle_line(buffer, length);
            skillhost_peek_reap(); /* off the answer's path */
            discarding = 0;
            filled -= length + 1;
            memmove(buffer, newline + 1, filled);
            scanned = 0;
            continue;
        }
        scanned = filled;
        if (filled > limit) { /* keep reading to the line's end, without keeping it */
            discarding = 1;
            filled = scanned = 0;
        }
        if (filled == capacity) {
            char *grown = realloc(buffer, capacity * 2);
            if (!grown) worker_fail("out of memory for the protocol's input");
            buffer = grown;
            capacity *= 2;
        }
        ssize_t n = read(fd, buffer + filled, capacity - filled);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        filled += (size_t)n;
    }
    free(buffer);
}

static void apply_limit(int resource, const char *value, const char *name) {
    if (!value) return;
    int result = skillhost_set_limit(resource, strtoull(value, NULL, 10));
    if (result != 0) {
        char message[200];
        snprintf(message, sizeof message, "cannot limit %s to %s: %s", name, value, strerror(result));
        worker_fail(message);
    }
}

/* The longest launch a spare accepts (its arguments, with the confinement's lists). */
#define LAUNCH_LIMIT (1u << 20)

/* A spare's launch: one line from the host, a JSON array of the arguments this worker would have been started
   with. Stores them (NULL-terminated, never freed) and what the host sent after the line (for `serve`); returns
   their count. Exits quietly when the host closes the channel first (it gave the spare up), fails on a line that
   is not one. */
static int read_launch(int fd, char ***arguments, char **rest, size_t *rest_length) {
    size_t capacity = 16 * 1024, filled = 0;
    char *buffer = malloc(capacity), *newline = NULL;
    if (!buffer) worker_fail("out of memory for the launch");
    while (!newline) {
        if (filled == capacity) {
            if (capacity >= LAUNCH_LIMIT) worker_fail("the launch is too long");
            char *grown = realloc(buffer, capacity *= 2);
            if (!grown) worker_fail("out of memory for the launch");
            buffer = grown;
        }
        ssize_t n = read(fd, buffer + filled, capacity - filled);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) _exit(0);
        newline = memchr(buffer + filled, '\n', (size_t)n);
        filled += (size_t)n;
    }
    const char *cursor = buffer, *end = newline, *item, *item_end;
    while (cursor < end && *cursor != '[') cursor++;
    size_t count = 0, slots = 32;
    char **list = malloc(slots * sizeof *list);
    int step;
    while (list && (step = json_next_element(&cursor, end, &item, &item_end)) == 1) {
        if (count + 1 == slots) {
            char **grown = realloc(list, (slots *= 2) * sizeof *list);
            if (!grown) worker_fail("out of memory for the launch");
            list = grown;
        }
        if (!(list[count++] = json_string(item, item_end))) worker_fail("the launch is not a list of strings");
    }
    if (!list || step != 0) worker_fail("the launch is not a list of strings");
    list[count] = NULL;
    *arguments = list;
    *rest = newline + 1;
    *rest_length = filled - (size_t)(newline + 1 - buffer);
    return (int)count;
}

int main(int argc, char **argv) {
    const char *limit_as = NULL, *limit_cpu = NULL, *limit_files = NULL, *result_limit = NULL;
    const char *final = NULL, *peek = NULL, *filter = NULL, *preload = NULL, *temporary = NULL;
    int prepared_unchanged = 0;
    /* `--spare`: started ahead of need; the arguments come as the first line of the protocol (see protocol.md). */
    int filtered = argc >= 4 && strcmp(argv[2], "--filter") == 0;
    int prepared = argc == 6 && filtered && strcmp(argv[4], "--prepare") == 0;
    int spare = (argc == 2 || (argc == 4 && filtered) || prepared) && strcmp(argv[1], "--spare") == 0;
    /* A host that left, or a standby child that died, is EPIPE: the worker ends when its input ends, not by a
       signal it was handed (a host that does not ignore SIGPIPE, as a test process, passes its default on). */
    signal(SIGPIPE, SIG_IGN);
    int setup = skillhost_worker_setup(&worker.in, &worker.out, &worker.lane_in, &worker.lane_out,
                                       &worker.lane_memory);
    if (setup != 0) {
        char message[160];
        snprintf(message, sizeof message, "cannot set up the protocol channel: %s", strerror(setup));
        worker_fail(message);
    }
    char **arguments = argv + 1, *pending = NULL;
    size_t pending_length = 0;
    /* A spare given the host's filter peeks in a child it starts now (standby.c), titled as the spare is (the
       title is written over the arguments, so they are copied first). */
    if (spare && filtered) {
        char *filter_hex = strdup(argv[3]), *lists = prepared ? strdup(argv[5]) : NULL;
        skillhost_set_title(argv, argc, "skillhost-worker --spare");
        if (filter_hex && (lists || !prepared)) confinement_standby(filter_hex, lists);
        free(filter_hex);
        free(lists);
    }
    int count = spare ? read_launch(worker.in, &arguments, &pending, &pending_length) : argc - 1;
    for (int i = 0; i + 1 < count; i += 2) {
        const char *key = arguments[i], *value = arguments[i + 1];
        if (strcmp(key, "--file") == 0) worker.file = value;
        else if (strcmp(key, "--copy") == 0) worker.copy = value;
        else if (strcmp(key, "--data-dir") == 0) worker.data_dir = value;
        else if (strcmp(key, "--max-result-bytes") == 0) result_limit = value;
        else if (strcmp(key, "--limit-as") == 0) limit_as = value;
        else if (strcmp(key, "--limit-cpu") == 0) limit_cpu = value;
        else if (strcmp(key, "--limit-files") == 0) limit_files = value;
        else if (strcmp(key, "--confinement") == 0) final = value;
        else if (strcmp(key, "--peek") == 0) peek = value;
        else if (strcmp(key, "--filter") == 0) filter = value;
        else if (strcmp(key, "--preload") == 0) preload = value;
        else if (strcmp(key, "--tmpdir") == 0) temporary = value;
        else if (strcmp(key, "--prepared") == 0) prepared_unchanged = strcmp(value, "unchanged") == 0;
    }
    if (!worker.file || !worker.copy || !worker.data_dir || !result_limit || count % 2 != 0)
        worker_fail("usage: skillhost-worker --file F --copy C --data-dir D --max-result-bytes N [--limit-as N] "
                    "[--limit-cpu N] [--limit-files N] [--preload LIB] [--confinement SPEC | --peek SPEC] "
                    "[--filter HEX] [--tmpdir D] [--prepared unchanged], or skillhost-worker --spare");
    if (temporary && setenv("TMPDIR", temporary, 1) != 0) worker_fail("cannot set TMPDIR");
    worker.result_limit = strtoull(result_limit, NULL, 10);
    if (worker.lane_in >= 0 && !worker.lane_memory) worker_fail("cannot map the lane's shared memory");
    /* Orphans of the plugin's children (setsid) become the worker's, so it can stop them when it ends. */
    skillhost_become_subreaper();
    apply_limit(RLIMIT_AS, limit_as, "address space");
    apply_limit(RLIMIT_CPU, limit_cpu, "CPU time");
    apply_limit(RLIMIT_NOFILE, limit_files, "open files");
    /* The Swift runtime for a plugin built by swiftc, loaded once here so the peek child inherits it (a failure is
       the plugin's own load's to report). */
    if (preload) dlopen(preload, RTLD_NOW | RTLD_GLOBAL);
    struct confinement_launch launch = {final,     peek,        filter,    preload,           limit_as,
                                        limit_cpu, limit_files, temporary, prepared_unchanged};
    confinement_start(&launch);
    /* `ps` shows which plugin a worker runs (its long command line is overwritten: keep what is still needed). */
    worker.file = strdup(worker.file);
    worker.copy = strdup(worker.copy);
    worker.data_dir = strdup(worker.data_dir);
    if (!worker.file || !worker.copy || !worker.data_dir) worker_fail("out of memory for the arguments");
    const char *base = strrchr(worker.file, '/');
    char title[160];
    snprintf(title, sizeof title, "skillhost worker %s", base ? base + 1 : worker.file);
    skillhost_set_title(argv, argc, title);
    /* A worker that peeks opens the plugin once the host sent its confinement (`confine`). */
    if (!confinement_pending() && !confinement_failure()) open_plugin();
    /* A line is at most twice the result limit plus a megabyte (WorkerProtocol.maximumLine). */
    serve(worker.in, worker.result_limit * 2 + (1u << 20), pending, pending_length);
    shut_down();
}

