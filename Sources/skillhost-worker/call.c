/* A skill's call: the skill_call_api a JSON skill reports through (a typed skill's call is typed.c's), and the
   answer — the plugin's status, result, error and undo as they are; the host turns them into an outcome
   (Skill.outcome's rules). */
#define _GNU_SOURCE
#include "worker.h"
#include "process_support.h"

#include <stdlib.h>
#include <string.h>

struct skill_call {
    long long id;
    const char *skill;
    const char *context;
    atomic_int cancelled;
    pthread_mutex_t lock; /* the plugin may report from threads of its own */
    char *result;
    size_t result_length;
    int has_result;
    size_t oversized; /* set instead of `result` when it was over the limit */
    char *error;
    char *undo_skill, *undo_arguments;
    struct skill_call *next; /* in `running` */
};

/* Calls in flight, for `cancel`; and cancels that came before their call (a lane call's cancel travels on the main
   channel), the oldest forgotten first. */
static pthread_mutex_t calls_lock = PTHREAD_MUTEX_INITIALIZER;
static struct skill_call *running;
enum { EARLY = 64 };
static long long early[EARLY];
static int early_count;

void call_cancel(long long id) {
    pthread_mutex_lock(&calls_lock);
    struct skill_call *call = running;
    while (call && call->id != id) call = call->next;
    if (call) {
        atomic_store(&call->cancelled, 1);
    } else {
        if (early_count == EARLY) memmove(early, early + 1, sizeof early - sizeof early[0]), early_count--;
        early[early_count++] = id;
    }
    pthread_mutex_unlock(&calls_lock);
}

static void enter(struct skill_call *call) {
    pthread_mutex_lock(&calls_lock);
    for (int i = 0; i < early_count; i++) {
        if (early[i] == call->id) {
            atomic_store(&call->cancelled, 1);
            memmove(early + i, early + i + 1, (size_t)(early_count - i - 1) * sizeof early[0]);
            early_count--;
            break;
        }
    }
    call->next = running;
    running = call;
    pthread_mutex_unlock(&calls_lock);
}

static void leave(struct skill_call *call) {
    pthread_mutex_lock(&calls_lock);
    struct skill_call **link = &running;
    while (*link && *link != call) link = &(*link)->next;
    if (*link) *link = call->next;
    pthread_mutex_unlock(&calls_lock);
}

// MARK: skill_call_api

static int api_is_cancelled(skill_call *call) { return call && atomic_load(&call->cancelled); }

static void api_report_progress(skill_call *call, double done, double total, const char *message) {
    if (!call) return;
    struct text params = {0};
    text_cstring(&params, "{\"id\":");
    text_int(&params, call->id);
    text_cstring(&params, ",\"done\":");
    text_double(&params, done);
    if (total > 0) {
        text_cstring(&params, ",\"total\":");
        text_double(&params, total);
    }
    if (message) {
        text_cstring(&params, ",\"message\":");
        text_json_cstring(&params, message, WORKER_STRING_LIMIT);
    }
    text_cstring(&params, "}");
    worker_notify("progress", &params);
    text_free(&params);
}

static void api_log(skill_call *call, int level, const char *message) {
    if (call) worker_log(level, call->skill, message);
}

static void api_set_result(skill_call *call, const char *data, size_t length) {
    if (!call) return;
    char *copy = NULL;
    if (length <= worker.result_limit) {
        copy = malloc(length + 1);
        if (!copy) worker_fail("out of memory for a call's result");
        if (length) memcpy(copy, data, length);
        copy[length] = 0;
    }
    pthread_mutex_lock(&call->lock);
    free(call->result);
    call->result = copy;
    call->result_length = copy ? length : 0;
    call->oversized = copy ? 0 : length;
    call->has_result = copy != NULL;
    pthread_mutex_unlock(&call->lock);
}

static void replace(struct skill_call *call, char **slot, const char *value) {
    char *copy = strndup(value ? value : "", WORKER_STRING_LIMIT);
    pthread_mutex_lock(&call->lock);
    free(*slot);
    *slot = copy;
    pthread_mutex_unlock(&call->lock);
}

static void api_set_error(skill_call *call, const char *message) {
    if (call) replace(call, &call->error, message);
}

static void api_set_undo(skill_call *call, const char *skill_id, const char *args_json) {
    if (!call) return;
    /* Reported as set: the host reads the arguments (and ignores them, with a warning, when not an object). */
    replace(call, &call->undo_skill, skill_id);
    replace(call, &call->undo_arguments, args_json);
}

static const char *api_skill_id(skill_call *call) { return call ? call->skill : NULL; }

static const char *api_context(skill_call *call) { return call ? call->context : NULL; }

static const skill_call_api api = {
    .struct_size = sizeof(skill_call_api), .is_cancelled = api_is_cancelled, .report_progress = api_report_progress,
    .log = api_log, .set_result = api_set_result, .set_error = api_set_error, .set_undo = api_set_undo,
    .skill_id = api_skill_id, .context = api_context};

// MARK: The call

static void hex_member(struct text *out, const char *bytes, size_t length) {
    static const char digits[] = "0123456789abcdef";
    text_cstring(out, ",\"result_hex\":\"");
    for (size_t i = 0; i < length; i++) {
        char pair[2] = {digits[(unsigned char)bytes[i] >> 4], digits[bytes[i] & 15]};
        text_bytes(out, pair, 2);
    }
    text_cstring(out, "\"");
}

/* A typed skill's call: its C result, a returned string taken as the call's result (and given back to the plugin). */
static int run_typed(const skill_descriptor *descriptor, const char *arguments, struct skill_call *call,
                     uint64_t *returned) {
    char returns = 'v';
    int reported = 0;
    char *error = typed_invoke(descriptor, arguments, strlen(arguments), &returns, returned, &reported);
    if (error) {
        call->error = error;
        if (reported && returns == 's') { /* what a failed function returned is not the result; give it back */
            char *text;
            memcpy(&text, returned, sizeof text);
            if (text && worker.plugin->free_string) worker.plugin->free_string(text);
        }
        *returned = 0;
        return reported ? reported : SKILL_ERR_FAILED;
    }
    if (returns == 's') {
        char *text;
        memcpy(&text, returned, sizeof text);
        *returned = 0;
        if (text) {
            api_set_result(call, text, strlen(text));
            if (worker.plugin->free_string) worker.plugin->free_string(text);
        }
    }
    return SKILL_OK;
}

void call_run(long long id, const char *skill, const char *arguments, const char *context, int lane, int typed) {
    struct skill_call call = {.id = id, .skill = skill, .context = context, .lock = PTHREAD_MUTEX_INITIALIZER};
    const skill_descriptor *descriptor = plugin_skill(skill);
    int code;
    uint64_t returned = 0;
    enter(&call);
    if (!descriptor || (typed ? !descriptor->function : !descriptor->invoke)) {
        code = -1;
        struct text message = {0};
        text_cstring(&message, skill);
        text_cstring(&message, typed ? " is not a typed skill of this plugin" : " is not a JSON skill of this plugin");
        text_cstring(&message, "; the host sent a call its description does not allow");
        call.error = message.bytes;
    } else if (typed) {
        code = run_typed(descriptor, arguments, &call, &returned);
    } else {
        atomic_fetch_add(&worker.running, 1);
        code = descriptor->invoke(worker.state, &api, &call, arguments);
        atomic_fetch_sub(&worker.running, 1);
    }
    leave(&call);
    /* What the filter blocked during the call, for the host's explanation of a failure (ConfinementMessages). */
    char blocked[256];
    int was_blocked = skillhost_blocked_pending() && skillhost_take_blocked(blocked, sizeof blocked) == 1;
    pthread_mutex_lock(&call.lock);
    struct text line = {0};
    if (lane && !typed && code == SKILL_OK && call.has_result && !call.undo_skill &&
        !memchr(call.result, '\n', call.result_length) && text_is_utf8(call.result, call.result_length)) {
        text_cstring(&line, "R");
        text_int(&line, id);
        text_cstring(&line, "\t");
        text_bytes(&line, call.result, call.result_length);
    } else {
        worker_answer_head(&line, &id);
        text_cstring(&line, ",\"result\":{\"raw\":{\"code\":");
        text_int(&line, code);
        if (typed && code == SKILL_OK) {
            text_cstring(&line, ",\"returned\":");
            text_int(&line, (long long)returned);
        }
        if (call.has_result) {
            if (text_is_utf8(call.result, call.result_length)) {
                text_cstring(&line, ",\"result\":");
                text_json_string(&line, call.result, call.result_length);
            } else {
                hex_member(&line, call.result, call.result_length);
            }
        }
        if (call.oversized) {
            text_cstring(&line, ",\"oversized\":");
            text_int(&line, (long long)call.oversized);
        }
        if (call.error) {
            text_cstring(&line, ",\"error\":");
            text_json_cstring(&line, call.error, WORKER_STRING_LIMIT);
        }
        if (call.undo_skill) {
            text_cstring(&line, ",\"undo\":{\"skill\":");
            text_json_cstring(&line, call.undo_skill, WORKER_STRING_LIMIT);
            text_cstring(&line, ",\"arguments\":");
            text_json_cstring(&line, call.undo_arguments, WORKER_STRING_LIMIT);
            text_cstring(&line, "}");
        }
        if (was_blocked) {
            text_cstring(&line, ",\"blocked\":");
            text_json_cstring(&line, blocked, sizeof blocked);
        }
        text_cstring(&line, "}}}");
    }
    pthread_mutex_unlock(&call.lock);
    worker_send(&line);
    text_free(&line);
    free(call.result);
    free(call.error);
    free(call.undo_skill);
    free(call.undo_arguments);
}
