/* The direct lane's thread: one call at a time from the shared memory (or the lane's pipe, for one too long for it),
   run here and answered on the lane. A call is `C<id>\t<skill>\t<context's length>\t<context><arguments>`
   (LaneInvoke), or the same with `T` and the host's conversion for a typed skill instead of the arguments; anything
   else on the lane is a JSON-RPC line. */
#define _GNU_SOURCE
#include "worker.h"
#include "process_support.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

extern _Thread_local int on_lane;

/* Reads one line from the lane's pipe into `buffer` (grown as needed, at most `limit`); its length, or -1 at the
   end or when the line is longer than `limit`. */
static long read_pipe_line(char **buffer, size_t *capacity, size_t limit) {
    size_t filled = 0;
    for (;;) {
        if (filled == *capacity) {
            if (*capacity >= limit) return -1;
            char *grown = realloc(*buffer, *capacity * 2);
            if (!grown) return -1;
            *buffer = grown;
            *capacity *= 2;
        }
        /* Byte by byte up to the newline: the host writes exactly one line per announcement. */
        ssize_t n = read(worker.lane_in, *buffer + filled, 1);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        if ((*buffer)[filled] == '\n') return (long)filled;
        filled++;
    }
}

/* The field up to the next tab at `*p` (before `end`), NUL-terminated in place; NULL when there is no tab. */
static char *field(char **p, char *end) {
    char *tab = memchr(*p, '\t', (size_t)(end - *p));
    if (!tab) return NULL;
    *tab = 0;
    char *start = *p;
    *p = tab + 1;
    return start;
}

static void run_lane_call(char *bytes, size_t length) {
    char *p = bytes + 1, *end = bytes + length;
    char *id_text = field(&p, end), *skill = id_text ? field(&p, end) : NULL;
    char *length_text = skill ? field(&p, end) : NULL;
    char *stop;
    long long id = id_text ? strtoll(id_text, &stop, 10) : 0;
    long long context_length = length_text ? strtoll(length_text, NULL, 10) : -1;
    if (!length_text || *stop || context_length < 0 || context_length > end - p) {
        respond_error(NULL, -32600, "a broken call on the lane");
        return;
    }
    char *context = strndup(p, (size_t)context_length);
    char *arguments = strndup(p + context_length, (size_t)(end - p - context_length));
    if (!context || !arguments) worker_fail("out of memory for a call");
    /* Blank arguments are an empty object (Invoker.orEmptyObject). */
    const char *given = arguments + strspn(arguments, " \t\r\n");
    call_run(id, skill, *given ? arguments : "{}", context_length ? context : NULL, 1, bytes[0] == 'T');
    free(context);
    free(arguments);
}

static void *lane_thread(void *unused) {
    (void)unused;
    prctl(PR_SET_NAME, "skillhost.lane");
    on_lane = 1;
    size_t limit = worker.result_limit * 2 + (1u << 20), capacity = SKILLHOST_LANE_CAPACITY + 1;
    char *buffer = malloc(capacity);
    if (!buffer) worker_fail("out of memory for the lane");
    uint32_t seen = 0;
    for (;;) {
        long count = skillhost_lane_next_request(worker.lane_memory, &seen, (uint8_t *)buffer, capacity, 50000);
        if (count == SKILLHOST_LANE_ON_PIPE) count = read_pipe_line(&buffer, &capacity, limit);
        if (count == SKILLHOST_LANE_CLOSED || count < 0) break;
        if (count > 0 && (buffer[0] == 'C' || buffer[0] == 'T')) run_lane_call(buffer, (size_t)count);
        else handle_line(buffer, (size_t)count);
        /* A plugin that closed the protocol channel is stopped after this call. */
        worker_check_channel();
    }
    free(buffer);
    return NULL;
}

int lane_start(void) {
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setstacksize(&attributes, 8 << 20);
    pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
    pthread_t thread;
    int result = pthread_create(&thread, &attributes, lane_thread, NULL);
    pthread_attr_destroy(&attributes);
    return result;
}
