#ifndef SKILLHOST_HTTP_CLIENT_H
#define SKILLHOST_HTTP_CLIENT_H

#include <stddef.h>

/// One HTTP request over libcurl's easy interface, run to its end on the calling thread, with backpressure: the
/// response body is handed over chunk by chunk, and once `window` bytes were handed over and not yet reported
/// consumed, reading from the socket pauses until the consumer catches up (or stops the transfer). So a server that
/// sends without end costs at most the window in this layer, however slowly its reader goes.
///
/// Threads: `skillhost_http_transfer_perform` blocks its thread (never run it on a cooperative pool);
/// `skillhost_http_transfer_consumed` and `skillhost_http_transfer_stop` may be called from any thread, at any
/// time until the transfer is freed. Redirects are not followed (the caller decides). No cookies, no cache, no
/// credentials of libcurl's own; proxies from the usual environment variables, as libcurl reads them; certificate
/// authorities from SSL_CERT_FILE / SSL_CERT_DIR when set, else the system's.

typedef struct skillhost_http_transfer skillhost_http_transfer;

/// How a transfer ended.
enum skillhost_http_result {
    SKILLHOST_HTTP_COMPLETE = 0,      ///< the whole response was delivered
    SKILLHOST_HTTP_STOPPED = 1,       ///< a callback said stop, or `skillhost_http_transfer_stop` was called
    SKILLHOST_HTTP_IDLE_TIMEOUT = 2,  ///< nothing arrived (and nothing was waiting for the consumer) for too long
    SKILLHOST_HTTP_CANNOT_CONNECT = 3,///< connection refused or unreachable
    SKILLHOST_HTTP_UNKNOWN_HOST = 4,  ///< the name did not resolve
    SKILLHOST_HTTP_CONNECTION_LOST = 5,///< the connection broke or closed before the response was complete
    SKILLHOST_HTTP_FAILED = 6,        ///< anything else; `error` holds libcurl's sentence
};

/// Callbacks, all on the thread inside `skillhost_http_transfer_perform`, with the `context` given to it.
struct skillhost_http_callbacks {
    void *context;
    /// One response header, `name` and `value` trimmed (not NUL-terminated); only the final response's (interim
    /// 1xx responses are skipped). Return nonzero to stop.
    int (*header)(void *context, const char *name, size_t name_length, const char *value, size_t value_length);
    /// The final response's head is complete. Return nonzero to stop (for example a redirect the caller follows
    /// itself, or a Content-Length it will not read).
    int (*head)(void *context, int status);
    /// A chunk of the body (at most 16 KiB; the bytes are valid only during the call). Return nonzero to stop.
    int (*body)(void *context, const char *data, size_t length);
};

/// A transfer whose body reading pauses while more than `window` bytes are handed over and not consumed.
/// NULL when out of memory. [any thread]
skillhost_http_transfer *skillhost_http_transfer_new(size_t window);

/// Runs the request to its end. `headers` are `count` full lines ("Name: value"); `body` (may be NULL) is sent
/// with `method`; `connect_timeout_ms` bounds connecting, `idle_timeout_ms` the time without a byte arriving
/// (time spent waiting for the consumer does not count). On failure `error` (of `error_size`, may be 0) gets a
/// sentence. Call at most once per transfer. [blocks the calling thread]
int skillhost_http_transfer_perform(skillhost_http_transfer *transfer, const char *url, const char *method,
                                    const char *const *headers, size_t count, const void *body, size_t body_length,
                                    long connect_timeout_ms, long idle_timeout_ms,
                                    const struct skillhost_http_callbacks *callbacks, char *error,
                                    size_t error_size);

/// The consumer took `bytes` of what `body` handed over: reading may go on. [any thread]
void skillhost_http_transfer_consumed(skillhost_http_transfer *transfer, size_t bytes);

/// Ends the transfer as soon as possible (a waiting body callback returns at once, a quiet connection within
/// about a second); `perform` then returns `SKILLHOST_HTTP_STOPPED`. [any thread]
void skillhost_http_transfer_stop(skillhost_http_transfer *transfer);

/// Frees the transfer. Only once `perform` returned (or was never called) and no thread calls the other
/// functions any more.
void skillhost_http_transfer_free(skillhost_http_transfer *transfer);

#endif
