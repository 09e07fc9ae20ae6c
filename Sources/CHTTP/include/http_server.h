#ifndef SKILLHOST_HTTP_SERVER_H
#define SKILLHOST_HTTP_SERVER_H

#include <stddef.h>
#include <stdint.h>

/// A small HTTP/1.1 server over libmicrohttpd (an epoll thread pool with suspend/resume; connections accepted by
/// one thread of the server's and spread over the event threads): every request is
/// delivered once, with its whole body, to one handler; the answer may come later and from any thread — a
/// buffered response, or a stream (chunked, written as the data arrives). A client that goes away while its
/// request waits is reported once, so the work behind it can be cancelled.

typedef struct skillhost_http_server skillhost_http_server;
typedef struct skillhost_http_request skillhost_http_request;

/// Called on a server thread once a request's body is complete. Everything of `skillhost_http_request` may be read
/// here; afterwards only the output functions may be used. The handler must answer the request exactly once —
/// `skillhost_http_respond`, or `skillhost_http_stream_begin` … `skillhost_http_stream_end` — now or later, from any
/// thread; until then the connection waits (suspended, no thread held).
typedef void (*skillhost_http_handler)(void *context, skillhost_http_request *request);

/// Called at most once per request, when its client disconnects (or the server stops) before the request was
/// answered or its stream ended; `tag` is what `skillhost_http_set_tag` stored. The request must still be answered
/// (the answer is then dropped). May run on any thread, concurrently with the request's own output calls.
typedef void (*skillhost_http_abort_handler)(void *context, void *tag);

/// Called once when a request is freed, with its tag (if any): release what the tag holds.
typedef void (*skillhost_http_tag_release)(void *tag);

/// What bounds one server. Zeros mean the defaults given.
struct skillhost_http_limits {
    size_t maximum_body;             ///< bytes of request body; more is answered 413 (default 4 MiB)
    size_t maximum_header_bytes;     ///< per-connection memory for the request line and headers; more is 431 (16 KiB)
    unsigned idle_timeout_seconds;   ///< a connection silent this long (a slow client) is closed (30)
    unsigned maximum_connections;    ///< connections at once (1024)
    unsigned connections_per_address; ///< connections at once from one client address (256)
    unsigned threads;                ///< event threads (2)
    size_t maximum_stream_backlog;   ///< bytes a stream may hold unsent before its client counts as gone (16 MiB)
    unsigned header_timeout_seconds; ///< a new connection's request line and headers must be in within this, however
                                     ///< slowly they trickle (10); later requests on it within the idle timeout
    unsigned reserved_connections;   ///< connections kept free for new clients: beyond maximum_connections less
                                     ///< this, the oldest connections still sending headers are cut (64)
};

/// Starts a server on `address` (an IPv4 or IPv6 literal) and `port` (0: any free port). With `tls_certificate`
/// and `tls_key` (PEM text, both or neither) it speaks HTTPS. On failure returns NULL and writes one sentence to
/// `error`. [thread-safe]
skillhost_http_server *skillhost_http_start(const char *address, uint16_t port,
                                            const struct skillhost_http_limits *limits, const char *tls_certificate,
                                            const char *tls_key, skillhost_http_handler handler,
                                            skillhost_http_abort_handler on_abort, skillhost_http_tag_release release,
                                            void *context, char *error, size_t error_length);

/// The port the server listens on.
uint16_t skillhost_http_port(const skillhost_http_server *server);

/// How many answers an event thread lingered after (watched the connection for the next request instead of going
/// back to sleep: a client calling back to back, few connections open), and in how many of those the next request
/// came. [thread-safe]
void skillhost_http_linger_counts(const skillhost_http_server *server, unsigned long *lingered, unsigned long *paid);

/// Bytes all streams together hold unsent (at most four streams' backlog, plus what streams that keep up hold).
/// [any thread]
size_t skillhost_http_stream_unsent(const skillhost_http_server *server);

/// Stops accepting, ends every waiting request (its abort handler runs) and stops the server once the handler
/// calls in progress have returned. Requests answered after this are dropped. The server is freed.
void skillhost_http_stop(skillhost_http_server *server);

/// The request's method ("POST"), path ("/mcp", without the query) and client address ("127.0.0.1"). [handler]
const char *skillhost_http_method(const skillhost_http_request *request);
const char *skillhost_http_path(const skillhost_http_request *request);
const char *skillhost_http_peer(const skillhost_http_request *request);
/// The client's port (0 when not known). [the handler's thread, while the request is held]
unsigned skillhost_http_peer_port(const skillhost_http_request *request);

/// Every request header as "name: value\n" lines, names in lower case, in the order received. [handler]
const char *skillhost_http_headers(skillhost_http_request *request, size_t *length);

/// The request body (not NUL-terminated). [handler]
const uint8_t *skillhost_http_body(const skillhost_http_request *request, size_t *length);

/// Stores an opaque pointer handed to the abort handler and to the release function. [handler]
void skillhost_http_set_tag(skillhost_http_request *request, void *tag);

/// Answers with `status`, `headers` ("Name: value\n" lines, may be NULL) and `body` (copied). After this the
/// request must not be used. Returns 0, or -1 when the client is already gone. [any thread, once]
int skillhost_http_respond(skillhost_http_request *request, unsigned status, const char *headers, const void *body,
                           size_t length);

/// Starts a streamed answer (chunked). Returns 0, or -1 when the client is already gone. [any thread, once]
int skillhost_http_stream_begin(skillhost_http_request *request, unsigned status, const char *headers);

/// Queues bytes on a started stream; they are sent as the client takes them. Returns 0, or -1 when the client is
/// gone or has left more than the backlog limit unread (the stream then ends). [any thread]
int skillhost_http_stream_write(skillhost_http_request *request, const void *data, size_t length);

/// Ends a started stream once its queued bytes are sent. After this the request must not be used. [any thread,
/// once]
void skillhost_http_stream_end(skillhost_http_request *request);

#endif

/// SHA-256 of `length` bytes into `digest` (32 bytes), through GnuTLS. Returns 0 or -1. [thread-safe]
int skillhost_sha256(const void *data, size_t length, uint8_t digest[32]);

/// HMAC-SHA-256 of `data` with `key` into `mac` (32 bytes), through GnuTLS. Returns 0 or -1. [thread-safe]
int skillhost_hmac_sha256(const void *key, size_t key_length, const void *data, size_t length, uint8_t mac[32]);

/// Fills `buffer` with `length` bytes from the system's cryptographic random source. Returns 0 or -1.
/// [thread-safe]
int skillhost_random_bytes(void *buffer, size_t length);

/// Compares two buffers of `length` bytes in time that does not depend on where they differ. 1 when equal.
int skillhost_equal_constant_time(const void *first, const void *second, size_t length);
