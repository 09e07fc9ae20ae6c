// The HTTP server behind `skillhost mcp --http`: libmicrohttpd does the parsing, keep-alive, chunking, timeouts
// and TLS; this file adds the one thing it leaves to the application — answering later, from another thread —
// and notices a client that leaves while its request waits (libmicrohttpd does not watch suspended connections).
//
// A request's life: created by the first access-handler call, body collected (bounded), delivered once to the
// handler, then answered. While nothing is ready to send the connection is suspended and its socket watched by
// one epoll thread for the peer's close (EPOLLRDHUP); output calls resume it. A request is reference-counted:
// one reference for libmicrohttpd (dropped when it reports the request completed), one for the application
// (dropped by respond / stream_end), one for a streamed response, one for each watch.

#define _GNU_SOURCE
#include "http_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

static void add_headers(struct MHD_Response *response, const char *headers) {
    if (headers == NULL) return;
    const char *line = headers;
    while (*line != '\0') {
        const char *end = strchr(line, '\n');
        size_t length = end != NULL ? (size_t)(end - line) : strlen(line);
        const char *colon = memchr(line, ':', length);
        if (colon != NULL) {
            char name[128], value[4096];
            size_t name_length = (size_t)(colon - line);
            const char *value_start = colon + 1;
            while (value_start < line + length && *value_start == ' ') value_start++;
            size_t value_length = (size_t)(line + length - value_start);
            if (name_length < sizeof name && value_length < sizeof value) {
                memcpy(name, line, name_length);
                name[name_length] = '\0';
                memcpy(value, value_start, value_length);
                value[value_length] = '\0';
                MHD_add_response_header(response, name, value);
            }
        }
        if (end == NULL) break;
        line = end + 1;
    }
}

static ssize_t stream_read(void *argument, uint64_t position, char *buffer, size_t maximum) {
    (void)position;
    struct skillhost_http_request *request = argument;
    pthread_mutex_lock(&request->lock);
    ssize_t result;
    if (request->data_length > request->data_start) {
        size_t count = request->data_length - request->data_start;
        if (count > maximum) count = maximum;
        memcpy(buffer, request->data + request->data_start, count);
        request->data_start += count;
        if (request->data_start == request->data_length) {
            // Drained: the buffer goes (it counted whole, sent bytes included, as it held them).
            skillhost_http_drop_stream_data(request);
        } else if (request->data_start >= (64u << 10) && request->data_start * 2 >= request->data_length) {
            // More than half sent: what is left moves to the front and the buffer shrinks to it.
            size_t left = request->data_length - request->data_start;
            memmove(request->data, request->data + request->data_start, left);
            uint8_t *shrunk = realloc(request->data, left);
            if (shrunk != NULL) request->data = shrunk;
            atomic_fetch_sub(&request->server->stream_unsent, request->data_start);
            request->data_length = left;
            request->data_start = 0;
        }
        result = (ssize_t)count;
    } else if (request->aborted) {
        result = MHD_CONTENT_READER_END_WITH_ERROR;
    } else if (request->stream_ended) {
        result = MHD_CONTENT_READER_END_OF_STREAM;
    } else if (skillhost_http_suspend(request)) {
        result = 0;
    } else {
        int report = 0;
        (void)skillhost_http_abandon(request, &report);
        pthread_mutex_unlock(&request->lock);
        if (report) request->server->on_abort(request->server->context, request->tag);
        return MHD_CONTENT_READER_END_WITH_ERROR;
    }
    pthread_mutex_unlock(&request->lock);
    return result;
}

static void stream_free(void *argument) { skillhost_http_request_release(argument); }

// Hands the answer to libmicrohttpd. Called on the event thread in the access handler, with request->lock held.
static enum MHD_Result queue_output(struct skillhost_http_request *request) {
    struct MHD_Response *response;
    if (request->output == OUTPUT_BUFFER) {
        // The body goes to libmicrohttpd as it is (it frees it with the response): no second copy of every answer.
        response = MHD_create_response_from_buffer_with_free_callback(request->data_length, request->data, free);
        if (response != NULL) {
            request->data = NULL;
            request->data_length = 0;
        }
    } else {
        response = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16384, stream_read, request, stream_free);
        if (response != NULL) atomic_fetch_add(&request->references, 1);
    }
    if (response == NULL) return MHD_NO;
    add_headers(response, request->response_headers);
    enum MHD_Result result = MHD_queue_response(request->connection, request->status, response);
    MHD_destroy_response(response);
    request->queued = 1;
    return result;
}

static enum MHD_Result simple_answer(struct MHD_Connection *connection, unsigned status, const char *text) {
    struct MHD_Response *response =
        MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_PERSISTENT);
    if (response == NULL) return MHD_NO;
    MHD_add_response_header(response, "Content-Type", "application/json");
    MHD_add_response_header(response, "Connection", "close");
    enum MHD_Result result = MHD_queue_response(connection, status, response);
    MHD_destroy_response(response);
    return result;
}

// Makes room for `needed` bytes (not 0) in `buffer` of `*capacity` (0: none yet), doubling from `initial`: one
// allocation for a usual request, not one per piece. Returns the buffer (moved, perhaps), or NULL when out of
// memory (then `buffer` and `*capacity` are as they were).
static void *reserve(void *buffer, size_t *capacity, size_t needed, size_t initial) {
    if (needed <= *capacity) return buffer;
    size_t grown_capacity = *capacity == 0 ? initial : *capacity;
    while (grown_capacity < needed) grown_capacity *= 2;
    void *grown = realloc(buffer, grown_capacity);
    if (grown != NULL) *capacity = grown_capacity;
    return grown;
}

static enum MHD_Result collect_header(void *argument, enum MHD_ValueKind kind, const char *key, const char *value) {
    (void)kind;
    struct skillhost_http_request *request = argument;
    size_t key_length = strlen(key), value_length = value != NULL ? strlen(value) : 0;
    size_t needed = request->headers_length + key_length + value_length + 4;
    char *headers = reserve(request->headers, &request->headers_capacity, needed, 1024);
    if (headers == NULL) return MHD_NO;
    request->headers = headers;
    char *out = request->headers + request->headers_length;
    for (size_t index = 0; index < key_length; index++) {
        char c = key[index];
        out[index] = (c >= 'A' && c <= 'Z') ? (char)(c + 32) : c;
    }
    out += key_length;
    *out++ = ':';
    *out++ = ' ';
    if (value_length > 0) memcpy(out, value, value_length);
    out += value_length;
    *out++ = '\n';
    *out = '\0';
    request->headers_length = needed - 1;
    return MHD_YES;
}

// What the headers say about the request's length, gathered by `audit_header`.
struct length_audit {
    int lengths;         // Content-Length headers
    char first[32];      // the first one's value
    int differing;       // one says another length than the first, or is not a number
    int transfers;       // Transfer-Encoding headers
    int not_chunked;     // one says other than exactly "chunked" (the only coding this server reads)
    int bad_name;        // a name that is not a token (a space before the colon, a control character)
};

static int is_token_char(unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr("!#$%&'*+-.^_`|~", c);
}

static enum MHD_Result audit_header(void *argument, enum MHD_ValueKind kind, const char *key, const char *value) {
    (void)kind;
    struct length_audit *audit = argument;
    if (key == NULL || key[0] == '\0') {
        audit->bad_name = 1;
        return MHD_YES;
    }
    for (const unsigned char *c = (const unsigned char *)key; *c != '\0'; c++)
        if (!is_token_char(*c)) audit->bad_name = 1;
    if (value == NULL) value = "";
    if (strcasecmp(key, "Content-Length") == 0) {
        size_t length = strlen(value);
        int digits = length > 0 && length < sizeof audit->first && strspn(value, "0123456789") == length;
        if (!digits) audit->differing = 1;
        if (audit->lengths++ == 0) {
            if (digits) memcpy(audit->first, value, length + 1);
        } else if (strcmp(audit->first, value) != 0) {
            audit->differing = 1;
        }
    } else if (strcasecmp(key, "Transfer-Encoding") == 0) {
        audit->transfers++;
        if (strcasecmp(value, "chunked") != 0) audit->not_chunked = 1;
    }
    return MHD_YES;
}

// Whether the request's length is said in more than one way, or in one this server does not read: two
// Content-Lengths that differ, Content-Length with Transfer-Encoding, a coding other than "chunked", a header name
// that is not a token ("Transfer-Encoding : chunked"). A server and a proxy in front of it could then split the
// stream into different requests (request smuggling); RFC 9112 §6.3 says to answer 400 and close.
static int length_is_ambiguous(struct MHD_Connection *connection) {
    struct length_audit audit = {0};
    MHD_get_connection_values(connection, MHD_HEADER_KIND, audit_header, &audit);
    return audit.bad_name || audit.differing || audit.transfers > 1 || audit.not_chunked ||
           (audit.transfers > 0 && audit.lengths > 0);
}

static enum MHD_Result on_access(void *argument, struct MHD_Connection *connection, const char *url,
                                 const char *method, const char *version, const char *upload, size_t *upload_size,
                                 void **state) {
    (void)version;
    struct skillhost_http_server *server = argument;
    struct skillhost_http_request *request = *state;
    if (request == NULL) {
        skillhost_http_headers_complete(server, connection);
        request = calloc(1, sizeof *request);
        if (request == NULL) return MHD_NO;
        atomic_fetch_add(&server->holders, 1);  // every request keeps the server's memory until it is freed
        request->server = server;
        request->connection = connection;
        atomic_init(&request->references, 1);
        pthread_mutex_init(&request->lock, NULL);
        request->watch_slot = -1;
        // A bounded copy (calloc wrote the terminator); snprintf's formatting was a visible share of a call.
        memcpy(request->method, method, strnlen(method, sizeof request->method - 1));
        const char *query = strchr(url, '?');
        size_t path_length = query != NULL ? (size_t)(query - url) : strlen(url);
        request->path = strndup(url, path_length);
        const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
        if (info != NULL && info->client_addr != NULL) {
            const struct sockaddr *address = info->client_addr;
            if (address->sa_family == AF_INET) {
                inet_ntop(AF_INET, &((const struct sockaddr_in *)address)->sin_addr, request->peer,
                          sizeof request->peer);
                request->peer_port = ntohs(((const struct sockaddr_in *)address)->sin_port);
            } else if (address->sa_family == AF_INET6) {
                inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)address)->sin6_addr, request->peer,
                          sizeof request->peer);
                request->peer_port = ntohs(((const struct sockaddr_in6 *)address)->sin6_port);
            }
        }
        const char *declared = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, "Content-Length");
        if (declared != NULL && strtoull(declared, NULL, 10) > server->limits.maximum_body) request->too_large = 1;
        *state = request;
        if (request->path == NULL) return MHD_NO;
        if (length_is_ambiguous(connection)) {
            // Answered at once, before any of the body is read (a coding this server does not read never ends).
            request->ambiguous = 1;
            request->delivered = 1;
            request->finished = 1;
            return simple_answer(connection, MHD_HTTP_BAD_REQUEST,
                                 "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":"
                                 "\"Invalid request: its length is given twice or in two ways (Content-Length, "
                                 "Transfer-Encoding); send one\"}}");
        }
        return MHD_YES;
    }
    if (*upload_size != 0) {
        if (!request->too_large && !request->ambiguous) {
            size_t needed = request->body_length + *upload_size;
            if (needed > server->limits.maximum_body) {
                request->too_large = 1;
                free(request->body);
                request->body = NULL;
                request->body_length = request->body_capacity = 0;
            } else {
                uint8_t *body = reserve(request->body, &request->body_capacity, needed, 4096);
                if (body == NULL) return MHD_NO;
                request->body = body;
                memcpy(request->body + request->body_length, upload, *upload_size);
                request->body_length = needed;
            }
        }
        *upload_size = 0;
        return MHD_YES;
    }
    if (!request->delivered) {
        if (request->too_large) {
            request->delivered = 1;
            request->finished = 1;
            return simple_answer(connection, MHD_HTTP_CONTENT_TOO_LARGE,
                                 "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":"
                                 "\"Invalid request: the request body is larger than this server accepts\"}}");
        }
        MHD_get_connection_values(connection, MHD_HEADER_KIND, collect_header, request);
        request->delivered = 1;
        atomic_fetch_add(&request->references, 1);  // the application's, dropped when it answers
        server->handler(server->context, request);
        free(request->headers);
        request->headers = NULL;
        request->headers_capacity = 0;
        free(request->body);
        request->body = NULL;
    }
    pthread_mutex_lock(&request->lock);
    enum MHD_Result result = MHD_YES;
    if (request->aborted) {
        result = MHD_NO;
    } else if (request->queued) {
        // Resumed again after the answer was queued: nothing to do.
    } else if (request->output == OUTPUT_NONE) {
        if (!skillhost_http_suspend(request)) {
            int report = 0;
            (void)skillhost_http_abandon(request, &report);
            pthread_mutex_unlock(&request->lock);
            if (report) server->on_abort(server->context, request->tag);
            return MHD_NO;
        }
    } else {
        result = queue_output(request);
    }
    pthread_mutex_unlock(&request->lock);
    return result;
}

static void on_completed(void *argument, struct MHD_Connection *connection, void **state,
                         enum MHD_RequestTerminationCode code) {
    struct skillhost_http_server *server = argument;
    skillhost_http_request_done(server, connection);
    struct skillhost_http_request *request = *state;
    if (request == NULL) return;
    *state = NULL;
    int report = 0;
    pthread_mutex_lock(&request->lock);
    if (code != MHD_REQUEST_TERMINATED_COMPLETED_OK || !request->finished) (void)skillhost_http_abandon(request, &report);
    pthread_mutex_unlock(&request->lock);
    if (report) server->on_abort(server->context, request->tag);
    skillhost_http_request_release(request);
    if (code == MHD_REQUEST_TERMINATED_COMPLETED_OK) skillhost_http_linger(server, connection);
}

// Ends the watch thread and closes its descriptors.
static void stop_watcher(struct skillhost_http_server *server) {
    atomic_store(&server->stopping, 1);
    uint64_t one = 1;
    (void)!write(server->wake, &one, sizeof one);
    pthread_join(server->watcher, NULL);
    close(server->epoll);
    close(server->wake);
}

skillhost_http_server *skillhost_http_start(const char *address, uint16_t port,
                                            const struct skillhost_http_limits *limits, const char *tls_certificate,
                                            const char *tls_key, skillhost_http_handler handler,
                                            skillhost_http_abort_handler on_abort, skillhost_http_tag_release release,
                                            void *context, char *error, size_t error_length) {
    struct sockaddr_storage storage;
    memset(&storage, 0, sizeof storage);
    socklen_t storage_length;
    unsigned family_flag = 0;
    struct sockaddr_in *ipv4 = (struct sockaddr_in *)&storage;
    struct sockaddr_in6 *ipv6 = (struct sockaddr_in6 *)&storage;
    if (inet_pton(AF_INET, address, &ipv4->sin_addr) == 1) {
        ipv4->sin_family = AF_INET;
        ipv4->sin_port = htons(port);
        storage_length = sizeof *ipv4;
    } else if (inet_pton(AF_INET6, address, &ipv6->sin6_addr) == 1) {
        ipv6->sin6_family = AF_INET6;
        ipv6->sin6_port = htons(port);
        storage_length = sizeof *ipv6;
        family_flag = MHD_USE_IPv6;
    } else {
        snprintf(error, error_length, "%s is not an IP address; give one like 127.0.0.1 or ::1", address);
        return NULL;
    }
    if ((tls_certificate == NULL) != (tls_key == NULL)) {
        snprintf(error, error_length, "HTTPS needs both a certificate and its key");
        return NULL;
    }
    struct skillhost_http_server *server = calloc(1, sizeof *server);
    if (server == NULL) {
        snprintf(error, error_length, "out of memory");
        return NULL;
    }
    server->limits = *limits;
    if (server->limits.maximum_body == 0) server->limits.maximum_body = 4u << 20;
    if (server->limits.maximum_header_bytes == 0) server->limits.maximum_header_bytes = 16u << 10;
    if (server->limits.idle_timeout_seconds == 0) server->limits.idle_timeout_seconds = 30;
    if (server->limits.maximum_connections == 0) server->limits.maximum_connections = 1024;
    if (server->limits.connections_per_address == 0) server->limits.connections_per_address = 256;
    if (server->limits.threads == 0) server->limits.threads = 2;
    if (server->limits.maximum_stream_backlog == 0) server->limits.maximum_stream_backlog = 16u << 20;
    if (server->limits.header_timeout_seconds == 0) server->limits.header_timeout_seconds = 10;
    if (server->limits.reserved_connections == 0) server->limits.reserved_connections = 64;
    if (server->limits.reserved_connections >= server->limits.maximum_connections)
        server->limits.reserved_connections = server->limits.maximum_connections / 2;
    pthread_mutex_init(&server->deadline_lock, NULL);
    pthread_cond_init(&server->deadline_wake, NULL);
    server->handler = handler;
    server->on_abort = on_abort;
    server->release = release;
    server->context = context;
    pthread_mutex_init(&server->watch_lock, NULL);
    pthread_mutex_init(&server->streams_lock, NULL);
    atomic_init(&server->holders, 1);
    pthread_mutex_init(&server->accept_lock, NULL);
    server->listener = -1;
    char reason[256];
    if (skillhost_http_listen(server, (struct sockaddr *)&storage, storage_length, reason, sizeof reason) != 0) {
        snprintf(error, error_length, "could not listen on %s port %u: %s", address, (unsigned)port, reason);
        free(server);
        return NULL;
    }
    server->epoll = epoll_create1(EPOLL_CLOEXEC);
    server->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    struct epoll_event wake_event = {.events = EPOLLIN, .data.u64 = UINT64_MAX};
    if (server->epoll < 0 || server->wake < 0 ||
        epoll_ctl(server->epoll, EPOLL_CTL_ADD, server->wake, &wake_event) != 0 ||
        pthread_create(&server->watcher, NULL, skillhost_http_watcher_main, server) != 0) {
        snprintf(error, error_length, "could not start the connection watcher: %s", strerror(errno));
        close(server->listener);
        if (server->epoll >= 0) close(server->epoll);
        if (server->wake >= 0) close(server->wake);
        free(server);
        return NULL;
    }
    // The listening socket is this file's (http_accept.c): connections come in through MHD_add_connection.
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME |
                     MHD_USE_NO_LISTEN_SOCKET | family_flag;
    if (tls_certificate != NULL) flags |= MHD_USE_TLS;
    struct MHD_OptionItem options[16];
    int count = 0;
    options[count++] = (struct MHD_OptionItem){MHD_OPTION_THREAD_POOL_SIZE, server->limits.threads, NULL};
    options[count++] =
        (struct MHD_OptionItem){MHD_OPTION_CONNECTION_MEMORY_LIMIT, (intptr_t)server->limits.maximum_header_bytes, NULL};
    options[count++] =
        (struct MHD_OptionItem){MHD_OPTION_CONNECTION_TIMEOUT, server->limits.idle_timeout_seconds, NULL};
    // Never reached: the limit is kept by accepting (http_accept.c), since reaching libmicrohttpd's stalls a thread.
    options[count++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_LIMIT, 1u << 30, NULL};
    options[count++] =
        (struct MHD_OptionItem){MHD_OPTION_PER_IP_CONNECTION_LIMIT, server->limits.connections_per_address, NULL};
    options[count++] = (struct MHD_OptionItem){MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)on_completed, server};
    options[count++] =
        (struct MHD_OptionItem){MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)skillhost_http_connection_notify, server};
    if (tls_certificate != NULL) {
        options[count++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_CERT, 0, (void *)tls_certificate};
        options[count++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)tls_key};
    }
    options[count++] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
    server->daemon = MHD_start_daemon(flags, port, NULL, NULL, on_access, server, MHD_OPTION_ARRAY, options,
                                      MHD_OPTION_END);
    if (server->daemon == NULL) {
        int saved = errno;
        snprintf(error, error_length, "could not serve on %s port %u: %s", address, (unsigned)port,
                 saved != 0 ? strerror(saved) : "the HTTP library refused the settings");
        skillhost_http_accept_stop(server);
        stop_watcher(server);
        free(server);
        return NULL;
    }
    if (skillhost_http_accept_begin(server) != 0) {
        snprintf(error, error_length, "could not watch the listening socket on %s port %u: %s", address,
                 (unsigned)port, strerror(errno));
        skillhost_http_accept_stop(server);
        MHD_stop_daemon(server->daemon);
        stop_watcher(server);
        free(server);
        return NULL;
    }
    server->deadline_started =
        pthread_create(&server->deadline_thread, NULL, skillhost_http_deadline_main, server) == 0;
    return server;
}

uint16_t skillhost_http_port(const skillhost_http_server *server) { return server->port; }

void skillhost_http_linger_counts(const skillhost_http_server *server, unsigned long *lingered, unsigned long *paid) {
    *lingered = atomic_load(&server->lingers);
    *paid = atomic_load(&server->lingers_paid);
}

void skillhost_http_stop(skillhost_http_server *server) {
    skillhost_http_accept_stop(server);
    atomic_store(&server->closing, 1);
    // Every suspended connection is resumed (libmicrohttpd requires it before stopping) and its request abandoned;
    // none is suspended after `closing`, so the scan repeats until it finds none.
    for (;;) {
        pthread_mutex_lock(&server->watch_lock);
        int count = server->slot_count;
        struct skillhost_http_request **waiting = calloc((size_t)(count > 0 ? count : 1), sizeof *waiting);
        int found = 0;
        for (int index = 0; waiting != NULL && index < count; index++) {
            struct skillhost_http_request *request = server->slots[index].request;
            if (request == NULL) continue;
            atomic_fetch_add(&request->references, 1);
            waiting[found++] = request;
        }
        pthread_mutex_unlock(&server->watch_lock);
        for (int index = 0; index < found; index++) {
            struct skillhost_http_request *request = waiting[index];
            pthread_mutex_lock(&request->lock);
            int report = 0, resume = request->suspended ? skillhost_http_abandon(request, &report) : 0;
            pthread_mutex_unlock(&request->lock);
            if (report) server->on_abort(server->context, request->tag);
            if (resume) MHD_resume_connection(request->connection);
            skillhost_http_request_release(request);
        }
        free(waiting);
        if (found == 0) break;
    }
    if (server->deadline_started) {
        pthread_mutex_lock(&server->deadline_lock);
        server->deadline_stop = 1;
        pthread_cond_signal(&server->deadline_wake);
        pthread_mutex_unlock(&server->deadline_lock);
        pthread_join(server->deadline_thread, NULL);
    }
    MHD_stop_daemon(server->daemon);
    stop_watcher(server);
    free(server->slots);
    pthread_mutex_destroy(&server->watch_lock);
    pthread_mutex_destroy(&server->accept_lock);
    pthread_mutex_destroy(&server->deadline_lock);
    pthread_cond_destroy(&server->deadline_wake);
    // Requests still held by the application keep the server's memory (the streams' list, its lock, the total,
    // the release callback) until they are freed.
    skillhost_http_server_release(server);
}


size_t skillhost_http_stream_unsent(const skillhost_http_server *server) {
    return atomic_load(&((struct skillhost_http_server *)server)->stream_unsent);
}
