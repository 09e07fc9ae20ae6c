// Internal to CHTTP: the request and server records shared by the server (http_server.c) and the watch of
// suspended connections (http_watch.c).
#ifndef SKILLHOST_HTTP_INTERNAL_H
#define SKILLHOST_HTTP_INTERNAL_H

#include "http_server.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>

enum output { OUTPUT_NONE, OUTPUT_BUFFER, OUTPUT_STREAM };

struct skillhost_http_request {
    struct skillhost_http_server *server;
    struct MHD_Connection *connection;
    atomic_int references;
    pthread_mutex_t lock;
    // Input, written by the event thread before delivery.
    char method[16];
    char *path;
    char peer[INET6_ADDRSTRLEN];
    unsigned peer_port;
    uint8_t *body;
    size_t body_length;
    size_t body_capacity;
    int too_large;
    int listed;     // in server->streams (under streams_lock)
    int ambiguous;  // its length is said two ways (RFC 9112 §6.3): answered 400 and closed, its body never read
    int delivered;
    char *headers;
    size_t headers_length;
    size_t headers_capacity;
    void *tag;
    // Output, under `lock`.
    enum output output;
    int queued;          // the response was handed to libmicrohttpd
    unsigned status;
    char *response_headers;
    uint8_t *data;       // the buffered body, or the stream's unsent bytes
    size_t data_length;
    size_t data_start;
    int stream_ended;
    int finished;        // the application answered (respond / stream_end)
    int aborted;         // the client left, or the server stops
    int abort_reported;
    int suspended;
    int watch_slot;      // -1: not watched
};

struct watch_slot {
    struct skillhost_http_request *request;
    uint32_t generation;
};

struct skillhost_http_server {
    struct MHD_Daemon *daemon;
    struct skillhost_http_limits limits;
    skillhost_http_handler handler;
    skillhost_http_abort_handler on_abort;
    skillhost_http_tag_release release;
    void *context;
    // The watch: sockets of suspended connections, for the peer's close.
    int epoll;
    int wake;
    pthread_t watcher;
    pthread_mutex_t watch_lock;
    struct watch_slot *slots;
    int slot_count;
    atomic_size_t stream_unsent;  // bytes every stream's buffer holds, sent prefix included (bounded: http_output.c)
    atomic_int holders;           // 1 for the server itself + 1 per request: the memory goes with the last
    // The streams that hold output (http_output.c), for cutting the slowest readers; under streams_lock, taken
    // before no request's lock (a request's lock is only tried while it is held).
    pthread_mutex_t streams_lock;
    struct skillhost_http_request **streams;
    int stream_count;
    int stream_capacity;
    atomic_int stopping;  // the watcher ends
    atomic_int closing;   // no connection is suspended any more
    // Header deadlines (http_deadline.c): one entry per open connection; the list and the counts under
    // deadline_lock (an entry's own fields are atomics its event thread sets without the lock).
    pthread_mutex_t deadline_lock;
    pthread_cond_t deadline_wake;
    pthread_t deadline_thread;
    int deadline_started;
    int deadline_stop;
    struct header_deadline *deadlines;
    atomic_int connection_count;  // changed under deadline_lock, read without it by lingering
    unsigned long connections_started;  // in all (the accept thread's count of connections handed over but not
                                        // started is the difference to its own)
    // Lingering after answers (http_deadline.c): how often it began, and how often the next request came during it.
    atomic_ulong lingers;
    atomic_ulong lingers_paid;
    // Accepting (http_accept.c): the listening socket, in the watch's epoll; under accept_lock.
    int listener;
    uint16_t port;
    pthread_mutex_t accept_lock;
    int accept_stopped;
    unsigned long handed_over;    // connections given to libmicrohttpd, in all
    unsigned long started_seen;   // `connections_started` when accepting last looked
    uint64_t started_moved;       // when that count last moved (monotonic ns)
};

/// How long an event thread watches a connection after answering it, for the next request (see http_deadline.c).
#define SKILLHOST_HTTP_LINGER_NS 100000u

/// libmicrohttpd's connection notifications: each connection gets a header deadline while it is open.
void skillhost_http_connection_notify(void *argument, struct MHD_Connection *connection, void **socket_context,
                                      enum MHD_ConnectionNotificationCode code);

/// A request's headers are all in (the access handler's first call): its connection's deadline is off.
void skillhost_http_headers_complete(struct skillhost_http_server *server, struct MHD_Connection *connection);

/// A request is over: the connection's next request must bring its headers within the idle timeout.
void skillhost_http_request_done(struct skillhost_http_server *server, struct MHD_Connection *connection);

/// An answer was sent on `connection` (its request completed): watches it for the next request for a moment when
/// that is likely to pay (see http_deadline.c). [the connection's event thread]
void skillhost_http_linger(struct skillhost_http_server *server, struct MHD_Connection *connection);

/// CLOCK_MONOTONIC in nanoseconds: the one clock of the server's deadlines, pauses and lingering.
uint64_t skillhost_http_monotonic_ns(void);

/// The deadline thread's body: cuts connections past their deadline, and the slowest when room runs out.
void *skillhost_http_deadline_main(void *argument);

/// Drops one reference; the last frees the request (and releases its tag).
void skillhost_http_request_release(struct skillhost_http_request *request);

/// Suspends the connection until output arrives and watches its socket for the peer's close; returns 0 instead
/// (suspending nothing) once the server stops. Called with request->lock held.
int skillhost_http_suspend(struct skillhost_http_request *request);

/// Stops watching. Called with request->lock held.
void skillhost_http_unwatch(struct skillhost_http_request *request);

/// Marks the request abandoned; `*report` says whether to tell the application (once). Returns whether the
/// connection must be resumed by the caller after unlocking. Called with request->lock held.
int skillhost_http_abandon(struct skillhost_http_request *request, int *report);

/// The watch's epoll key of the listening socket (UINT64_MAX is stop's wake-up).
#define SKILLHOST_HTTP_LISTENER_EVENT (UINT64_MAX - 1)

/// Opens the listening socket on `address` (bound, listening, non-blocking) into `server->listener` and
/// `server->port`; on failure returns -1 with the system's reason in `error`.
int skillhost_http_listen(struct skillhost_http_server *server, const struct sockaddr *address,
                          socklen_t address_length, char *error, size_t error_length);

/// Adds the listening socket to the watch's epoll (once the daemon runs). Returns epoll_ctl's result.
int skillhost_http_accept_begin(struct skillhost_http_server *server);

/// How long accepting pauses when the server is full (rechecked then), and when descriptors or memory ran out.
#define SKILLHOST_HTTP_FULL_PAUSE_MS 50
#define SKILLHOST_HTTP_RESOURCE_PAUSE_MS 100

/// The listening socket is readable: accepts a bounded batch and hands each connection to libmicrohttpd. Returns
/// 0, or the milliseconds accepting paused for (the server is full, or descriptors or memory ran out): the
/// listening socket is out of the watch until the caller resumes it. [watch thread]
int skillhost_http_accept_ready(struct skillhost_http_server *server);

/// Accepting again after a pause. [watch thread]
void skillhost_http_accept_resume(struct skillhost_http_server *server);

/// Stops accepting for good and closes the listening socket; waits for a batch in progress. [thread-safe]
void skillhost_http_accept_stop(struct skillhost_http_server *server);

/// The watch thread's body.
void *skillhost_http_watcher_main(void *argument);

// Takes a released stream off the server's list (http_output.c).
void skillhost_http_unlist_stream(struct skillhost_http_request *request);

// Drops one hold on the server's memory (the server's own at stop, a request's when it is freed); the last frees
// it (http_output.c).
void skillhost_http_server_release(struct skillhost_http_server *server);

// Frees a stream's buffer and takes its bytes off the server's total. Called with request->lock held.
void skillhost_http_drop_stream_data(struct skillhost_http_request *request);

#endif
