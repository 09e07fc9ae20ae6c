// Slow clients: libmicrohttpd's idle timeout is reset by every byte, so a client that trickles a header byte a
// second holds its connection for ever, and a thousand such clients lock everyone out. Here every connection has
// a deadline to complete its request's headers — `header_timeout_seconds` from its accept for the first request,
// the idle timeout from the previous answer for the next ones on a kept-alive connection — and a thread cuts
// (shutdown) the ones past it four times a second. When the connections reach the limit less a reserve, the
// oldest still sending headers (for over a second) are cut too, so a new client always finds room.
//
// A connection's record lives from libmicrohttpd's "started" notification to its "closed" one (which comes before
// the socket is closed); the list is changed and walked under `deadline_lock`, so the cutter never touches a socket
// that is closed or reused. The record's wait (waiting, since, limit) is set by the connection's event thread twice
// a request without the lock (atomics: the time first, then `waiting` with release order), so the two event threads
// and the cutter do not pass one lock back and forth on every call. The cutter may see a wait that has just ended
// or begun; either way it compares that wait's own start and limit, so it never cuts a connection within its time.
//
// Lingering: waking an event thread that sleeps costs more than the whole answer on an idle virtual machine (its CPU
// halts; 25-55 us to come back), and a client calling tools back to back sends its next request within tens of
// microseconds of reading an answer. So after an answer the event thread watches that connection for up to
// `SKILLHOST_HTTP_LINGER_NS` before it goes back to sleep in libmicrohttpd's wait — only when it is likely to pay and
// to cost nobody: the connection's previous request came within that time of the answer before it, and no more
// connections are open than there are event threads (so no other connection waits behind the watch). A client that
// pauses longer stops the lingering after one; the CPU spent is at most that bound per answer.

#define _GNU_SOURCE
#include "http_internal.h"

#include <errno.h>
#include <stdatomic.h>
#include <poll.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

struct header_deadline {
    struct header_deadline *previous, *next;
    int descriptor;
    atomic_int waiting;         // headers not complete yet
    atomic_int cut;             // shut down already
    _Atomic uint64_t since_ns;  // when the wait began (monotonic)
    _Atomic uint64_t limit_ns;  // how long it may last
    // Lingering, touched only by the event thread that serves the connection.
    uint64_t answered_ns;  // when its last answer was sent (0: none yet)
    int follows_closely;   // its last request came within the linger of the answer before it
};

// Tells the CPU this thread busy-waits (as CProcess's `skillhost_cpu_relax`, which CHTTP does not depend on).
static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

uint64_t skillhost_http_monotonic_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

void skillhost_http_connection_notify(void *argument, struct MHD_Connection *connection, void **socket_context,
                                      enum MHD_ConnectionNotificationCode code) {
    struct skillhost_http_server *server = argument;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        struct header_deadline *entry = calloc(1, sizeof *entry);
        if (entry == NULL) return;  // unbounded by this guard; libmicrohttpd's limits still hold
        const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
        entry->descriptor = info != NULL ? info->connect_fd : -1;
        atomic_init(&entry->since_ns, skillhost_http_monotonic_ns());
        atomic_init(&entry->limit_ns, (uint64_t)server->limits.header_timeout_seconds * 1000000000u);
        atomic_init(&entry->waiting, 1);
        pthread_mutex_lock(&server->deadline_lock);
        entry->next = server->deadlines;
        if (server->deadlines != NULL) server->deadlines->previous = entry;
        server->deadlines = entry;
        server->connection_count++;
        server->connections_started++;
        pthread_mutex_unlock(&server->deadline_lock);
        *socket_context = entry;
    } else if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
        struct header_deadline *entry = *socket_context;
        if (entry == NULL) return;
        pthread_mutex_lock(&server->deadline_lock);
        if (entry->previous != NULL) entry->previous->next = entry->next;
        else server->deadlines = entry->next;
        if (entry->next != NULL) entry->next->previous = entry->previous;
        server->connection_count--;
        pthread_mutex_unlock(&server->deadline_lock);
        *socket_context = NULL;
        free(entry);
    }
}

static struct header_deadline *entry_of(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info != NULL ? info->socket_context : NULL;
}

void skillhost_http_headers_complete(struct skillhost_http_server *server, struct MHD_Connection *connection) {
    (void)server;
    struct header_deadline *entry = entry_of(connection);
    if (entry == NULL) return;
    atomic_store_explicit(&entry->waiting, 0, memory_order_release);
    if (entry->answered_ns != 0)
        entry->follows_closely = skillhost_http_monotonic_ns() - entry->answered_ns <= SKILLHOST_HTTP_LINGER_NS;
}

void skillhost_http_request_done(struct skillhost_http_server *server, struct MHD_Connection *connection) {
    struct header_deadline *entry = entry_of(connection);
    if (entry == NULL) return;
    atomic_store_explicit(&entry->since_ns, skillhost_http_monotonic_ns(), memory_order_relaxed);
    atomic_store_explicit(&entry->limit_ns, (uint64_t)server->limits.idle_timeout_seconds * 1000000000u,
                          memory_order_relaxed);
    atomic_store_explicit(&entry->waiting, 1, memory_order_release);
}

void skillhost_http_linger(struct skillhost_http_server *server, struct MHD_Connection *connection) {
    struct header_deadline *entry = entry_of(connection);
    if (entry == NULL) return;
    uint64_t start = skillhost_http_monotonic_ns();
    entry->answered_ns = start;
    if (!entry->follows_closely || atomic_load(&server->closing)) return;
    int alone = atomic_load_explicit(&server->connection_count, memory_order_relaxed) <= (int)server->limits.threads &&
                !atomic_load_explicit(&entry->cut, memory_order_relaxed);
    if (!alone) return;
    atomic_fetch_add(&server->lingers, 1);
    struct pollfd watched = {.fd = entry->descriptor, .events = POLLIN | POLLRDHUP};
    do {
        // A few microseconds at most of the CPU told it busy-waits, then a look, and the CPU offered to others.
        for (int burst = 0; burst < 64; burst++) cpu_relax();
        watched.revents = 0;
        if (poll(&watched, 1, 0) != 0) {
            if (watched.revents & POLLIN) atomic_fetch_add(&server->lingers_paid, 1);
            return;
        }
        sched_yield();
    } while (skillhost_http_monotonic_ns() - start < SKILLHOST_HTTP_LINGER_NS);
}

// Shuts a connection's socket down: libmicrohttpd sees it end and closes it (and says so, so its entry goes).
static void cut(struct header_deadline *entry) {
    if (atomic_load(&entry->cut) || entry->descriptor < 0) return;
    atomic_store(&entry->cut, 1);
    (void)shutdown(entry->descriptor, SHUT_RDWR);
}

// How long the connection has been waiting for headers at `now` (0: it is not waiting); `limit` gets its limit.
static uint64_t waited(struct header_deadline *entry, uint64_t now, uint64_t *limit) {
    if (!atomic_load_explicit(&entry->waiting, memory_order_acquire) || atomic_load(&entry->cut)) return 0;
    uint64_t since = atomic_load_explicit(&entry->since_ns, memory_order_relaxed);
    *limit = atomic_load_explicit(&entry->limit_ns, memory_order_relaxed);
    return now > since ? now - since : 0;
}

static void sweep(struct skillhost_http_server *server) {
    uint64_t now = skillhost_http_monotonic_ns();
    pthread_mutex_lock(&server->deadline_lock);
    int open = 0;
    for (struct header_deadline *entry = server->deadlines; entry != NULL; entry = entry->next) {
        uint64_t limit = 0;
        if (waited(entry, now, &limit) > limit) cut(entry);
        if (!atomic_load(&entry->cut)) open++;
    }
    // Room for new clients: beyond the limit less a reserve, the slowest senders of headers go first.
    int room = (int)server->limits.maximum_connections - (int)server->limits.reserved_connections;
    while (open > room) {
        struct header_deadline *oldest = NULL;
        uint64_t longest = 0;
        for (struct header_deadline *entry = server->deadlines; entry != NULL; entry = entry->next) {
            uint64_t limit = 0, wait = waited(entry, now, &limit);
            if (wait < 1000000000u || wait <= longest) continue;
            oldest = entry;
            longest = wait;
        }
        if (oldest == NULL) break;
        cut(oldest);
        open--;
    }
    pthread_mutex_unlock(&server->deadline_lock);
}

void *skillhost_http_deadline_main(void *argument) {
    struct skillhost_http_server *server = argument;
    pthread_setname_np(pthread_self(), "skillhost.http-deadline");
    pthread_mutex_lock(&server->deadline_lock);
    while (!server->deadline_stop) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 250 * 1000 * 1000;
        if (until.tv_nsec >= 1000 * 1000 * 1000) {
            until.tv_sec += 1;
            until.tv_nsec -= 1000 * 1000 * 1000;
        }
        (void)pthread_cond_timedwait(&server->deadline_wake, &server->deadline_lock, &until);
        if (server->deadline_stop) break;
        pthread_mutex_unlock(&server->deadline_lock);
        sweep(server);
        pthread_mutex_lock(&server->deadline_lock);
    }
    pthread_mutex_unlock(&server->deadline_lock);
    return NULL;
}
