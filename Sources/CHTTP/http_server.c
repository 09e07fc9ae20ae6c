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
#include "http_server.h"

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
    uint8_t *body;
    size_t body_length;
    size_t body_capacity;
    int too_large;
    int delivered;
    char *headers;
    size_t headers_length;
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
    atomic_int stopping;  // the watcher ends
    atomic_int closing;   // no connection is suspended any more
};

static void request_release(struct skillhost_http_request *request) {
    if (atomic_fetch_sub(&request->references, 1) != 1) return;
    if (request->tag != NULL && request->server->release != NULL) request->server->release(request->tag);
    pthread_mutex_destroy(&request->lock);
    free(request->path);
    free(request->body);
    free(request->headers);
    free(request->response_headers);
    free(request->data);
    free(request);
}

// Watches the request's socket for the peer's close. Called with request->lock held, after suspending.
static void watch(struct skillhost_http_request *request) {
    struct skillhost_http_server *server = request->server;
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(request->connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    int descriptor = info != NULL ? info->connect_fd : -1;
    pthread_mutex_lock(&server->watch_lock);
    int slot = -1;
    for (int index = 0; index < server->slot_count; index++) {
        if (server->slots[index].request == NULL) {
            slot = index;
            break;
        }
    }
    if (slot < 0) {
        int count = server->slot_count == 0 ? 64 : server->slot_count * 2;
        struct watch_slot *grown = realloc(server->slots, (size_t)count * sizeof *grown);
        if (grown == NULL) {
            pthread_mutex_unlock(&server->watch_lock);
            return;  // unwatched: a disconnect is then noticed when the answer is written
        }
        memset(grown + server->slot_count, 0, (size_t)(count - server->slot_count) * sizeof *grown);
        slot = server->slot_count;
        server->slots = grown;
        server->slot_count = count;
    }
    struct watch_slot *entry = &server->slots[slot];
    entry->generation++;
    struct epoll_event event = {.events = EPOLLRDHUP | EPOLLONESHOT,
                                .data.u64 = ((uint64_t)entry->generation << 32) | (uint32_t)slot};
    // Recorded even when epoll refuses the socket: the table is also how stop finds every suspended connection.
    if (descriptor >= 0) (void)epoll_ctl(server->epoll, EPOLL_CTL_ADD, descriptor, &event);
    entry->request = request;
    atomic_fetch_add(&request->references, 1);
    request->watch_slot = slot;
    pthread_mutex_unlock(&server->watch_lock);
}

// Stops watching. Called with request->lock held (another reference is held, so the release never frees).
static void unwatch(struct skillhost_http_request *request) {
    struct skillhost_http_server *server = request->server;
    if (request->watch_slot < 0) return;
    pthread_mutex_lock(&server->watch_lock);
    struct watch_slot *entry = &server->slots[request->watch_slot];
    int owned = entry->request == request;
    if (owned) {
        entry->request = NULL;
        const union MHD_ConnectionInfo *info =
            MHD_get_connection_info(request->connection, MHD_CONNECTION_INFO_CONNECTION_FD);
        if (info != NULL) epoll_ctl(server->epoll, EPOLL_CTL_DEL, info->connect_fd, NULL);
    }
    request->watch_slot = -1;
    pthread_mutex_unlock(&server->watch_lock);
    if (owned) request_release(request);
}

// Suspends the connection until output arrives; returns 0 instead (and suspends nothing) once the server stops.
// Called with request->lock held.
static int suspend(struct skillhost_http_request *request) {
    if (atomic_load(&request->server->closing)) return 0;
    MHD_suspend_connection(request->connection);
    request->suspended = 1;
    watch(request);
    return 1;
}

// Marks the request as abandoned and tells the application once. Returns whether the connection must be resumed
// (by the caller, after unlocking). Called with request->lock held.
static int abandon(struct skillhost_http_request *request, int *report) {
    request->aborted = 1;
    *report = !request->abort_reported && !request->finished && request->delivered;
    if (*report) request->abort_reported = 1;
    if (!request->suspended) return 0;
    request->suspended = 0;
    unwatch(request);
    return 1;
}

static void *watcher_main(void *argument) {
    struct skillhost_http_server *server = argument;
    struct epoll_event events[32];
    while (!atomic_load(&server->stopping)) {
        int count = epoll_wait(server->epoll, events, 32, -1);
        for (int index = 0; index < count; index++) {
            if (events[index].data.u64 == UINT64_MAX) continue;  // the wake-up of stop
            uint32_t slot = (uint32_t)events[index].data.u64;
            uint32_t generation = (uint32_t)(events[index].data.u64 >> 32);
            pthread_mutex_lock(&server->watch_lock);
            struct skillhost_http_request *request = NULL;
            if ((int)slot < server->slot_count && server->slots[slot].generation == generation) {
                request = server->slots[slot].request;
                if (request != NULL) {
                    server->slots[slot].request = NULL;  // its reference passes to this thread
                    const union MHD_ConnectionInfo *info =
                        MHD_get_connection_info(request->connection, MHD_CONNECTION_INFO_CONNECTION_FD);
                    if (info != NULL) epoll_ctl(server->epoll, EPOLL_CTL_DEL, info->connect_fd, NULL);
                }
            }
            pthread_mutex_unlock(&server->watch_lock);
            if (request == NULL) continue;
            pthread_mutex_lock(&request->lock);
            int report = 0, resume = 0;
            if (request->watch_slot == (int)slot) request->watch_slot = -1;
            if (request->suspended) resume = abandon(request, &report);
            pthread_mutex_unlock(&request->lock);
            if (report) server->on_abort(server->context, request->tag);
            if (resume) MHD_resume_connection(request->connection);
            request_release(request);
        }
        if (count < 0 && errno != EINTR) break;
    }
    return NULL;
}

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
        if (request->data_start == request->data_length) request->data_start = request->data_length = 0;
        result = (ssize_t)count;
    } else if (request->aborted) {
        result = MHD_CONTENT_READER_END_WITH_ERROR;
    } else if (request->stream_ended) {
        result = MHD_CONTENT_READER_END_OF_STREAM;
    } else if (suspend(request)) {
        result = 0;
    } else {
        int report = 0;
        (void)abandon(request, &report);
        pthread_mutex_unlock(&request->lock);
        if (report) request->server->on_abort(request->server->context, request->tag);
        return MHD_CONTENT_READER_END_WITH_ERROR;
    }
    pthread_mutex_unlock(&request->lock);
    return result;
}

static void stream_free(void *argument) { request_release(argument); }

// Hands the answer to libmicrohttpd. Called on the event thread in the access handler, with request->lock held.
static enum MHD_Result queue_output(struct skillhost_http_request *request) {
    struct MHD_Response *response;
    if (request->output == OUTPUT_BUFFER) {
        response = MHD_create_response_from_buffer(request->data_length, request->data, MHD_RESPMEM_MUST_COPY);
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

static enum MHD_Result collect_header(void *argument, enum MHD_ValueKind kind, const char *key, const char *value) {
    (void)kind;
    struct skillhost_http_request *request = argument;
    size_t key_length = strlen(key), value_length = value != NULL ? strlen(value) : 0;
    size_t needed = request->headers_length + key_length + value_length + 4;
    char *grown = realloc(request->headers, needed);
    if (grown == NULL) return MHD_NO;
    request->headers = grown;
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

static enum MHD_Result on_access(void *argument, struct MHD_Connection *connection, const char *url,
                                 const char *method, const char *version, const char *upload, size_t *upload_size,
                                 void **state) {
    (void)version;
    struct skillhost_http_server *server = argument;
    struct skillhost_http_request *request = *state;
    if (request == NULL) {
        request = calloc(1, sizeof *request);
        if (request == NULL) return MHD_NO;
        request->server = server;
        request->connection = connection;
        atomic_init(&request->references, 1);
        pthread_mutex_init(&request->lock, NULL);
        request->watch_slot = -1;
        snprintf(request->method, sizeof request->method, "%s", method);
        const char *query = strchr(url, '?');
        size_t path_length = query != NULL ? (size_t)(query - url) : strlen(url);
        request->path = strndup(url, path_length);
        const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
        if (info != NULL && info->client_addr != NULL) {
            const struct sockaddr *address = info->client_addr;
            if (address->sa_family == AF_INET)
                inet_ntop(AF_INET, &((const struct sockaddr_in *)address)->sin_addr, request->peer,
                          sizeof request->peer);
            else if (address->sa_family == AF_INET6)
                inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)address)->sin6_addr, request->peer,
                          sizeof request->peer);
        }
        const char *declared = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, "Content-Length");
        if (declared != NULL && strtoull(declared, NULL, 10) > server->limits.maximum_body) request->too_large = 1;
        *state = request;
        if (request->path == NULL) return MHD_NO;
        return MHD_YES;
    }
    if (*upload_size != 0) {
        if (!request->too_large) {
            size_t needed = request->body_length + *upload_size;
            if (needed > server->limits.maximum_body) {
                request->too_large = 1;
                free(request->body);
                request->body = NULL;
                request->body_length = request->body_capacity = 0;
            } else {
                if (needed > request->body_capacity) {
                    size_t capacity = request->body_capacity == 0 ? 4096 : request->body_capacity;
                    while (capacity < needed) capacity *= 2;
                    uint8_t *grown = realloc(request->body, capacity);
                    if (grown == NULL) return MHD_NO;
                    request->body = grown;
                    request->body_capacity = capacity;
                }
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
        if (!suspend(request)) {
            int report = 0;
            (void)abandon(request, &report);
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
    (void)connection;
    struct skillhost_http_server *server = argument;
    struct skillhost_http_request *request = *state;
    if (request == NULL) return;
    *state = NULL;
    int report = 0;
    pthread_mutex_lock(&request->lock);
    if (code != MHD_REQUEST_TERMINATED_COMPLETED_OK || !request->finished) (void)abandon(request, &report);
    pthread_mutex_unlock(&request->lock);
    if (report) server->on_abort(server->context, request->tag);
    request_release(request);
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
    (void)storage_length;
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
    if (server->limits.maximum_header_bytes == 0) server->limits.maximum_header_bytes = 32u << 10;
    if (server->limits.idle_timeout_seconds == 0) server->limits.idle_timeout_seconds = 30;
    if (server->limits.maximum_connections == 0) server->limits.maximum_connections = 1024;
    if (server->limits.connections_per_address == 0) server->limits.connections_per_address = 256;
    if (server->limits.threads == 0) server->limits.threads = 2;
    if (server->limits.maximum_stream_backlog == 0) server->limits.maximum_stream_backlog = 16u << 20;
    server->handler = handler;
    server->on_abort = on_abort;
    server->release = release;
    server->context = context;
    pthread_mutex_init(&server->watch_lock, NULL);
    server->epoll = epoll_create1(EPOLL_CLOEXEC);
    server->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    struct epoll_event wake_event = {.events = EPOLLIN, .data.u64 = UINT64_MAX};
    if (server->epoll < 0 || server->wake < 0 ||
        epoll_ctl(server->epoll, EPOLL_CTL_ADD, server->wake, &wake_event) != 0 ||
        pthread_create(&server->watcher, NULL, watcher_main, server) != 0) {
        snprintf(error, error_length, "could not start the connection watcher: %s", strerror(errno));
        if (server->epoll >= 0) close(server->epoll);
        if (server->wake >= 0) close(server->wake);
        free(server);
        return NULL;
    }
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | family_flag;
    if (tls_certificate != NULL) flags |= MHD_USE_TLS;
    struct MHD_OptionItem options[16];
    int count = 0;
    options[count++] = (struct MHD_OptionItem){MHD_OPTION_SOCK_ADDR, 0, &storage};
    options[count++] = (struct MHD_OptionItem){MHD_OPTION_THREAD_POOL_SIZE, server->limits.threads, NULL};
    options[count++] =
        (struct MHD_OptionItem){MHD_OPTION_CONNECTION_MEMORY_LIMIT, (intptr_t)server->limits.maximum_header_bytes, NULL};
    options[count++] =
        (struct MHD_OptionItem){MHD_OPTION_CONNECTION_TIMEOUT, server->limits.idle_timeout_seconds, NULL};
    options[count++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_LIMIT, server->limits.maximum_connections, NULL};
    options[count++] =
        (struct MHD_OptionItem){MHD_OPTION_PER_IP_CONNECTION_LIMIT, server->limits.connections_per_address, NULL};
    options[count++] = (struct MHD_OptionItem){MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)on_completed, server};
    options[count++] = (struct MHD_OptionItem){MHD_OPTION_LISTEN_BACKLOG_SIZE, 1024, NULL};
    if (tls_certificate != NULL) {
        options[count++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_CERT, 0, (void *)tls_certificate};
        options[count++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)tls_key};
    }
    options[count++] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
    server->daemon = MHD_start_daemon(flags, port, NULL, NULL, on_access, server, MHD_OPTION_ARRAY, options,
                                      MHD_OPTION_END);
    if (server->daemon == NULL) {
        int saved = errno;
        snprintf(error, error_length, "could not listen on %s port %u: %s", address, (unsigned)port,
                 saved != 0 ? strerror(saved) : "the HTTP library refused the settings");
        atomic_store(&server->stopping, 1);
        uint64_t one = 1;
        (void)!write(server->wake, &one, sizeof one);
        pthread_join(server->watcher, NULL);
        close(server->epoll);
        close(server->wake);
        free(server);
        return NULL;
    }
    return server;
}

uint16_t skillhost_http_port(const skillhost_http_server *server) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(server->daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info != NULL ? info->port : 0;
}

void skillhost_http_stop(skillhost_http_server *server) {
    MHD_quiesce_daemon(server->daemon);
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
            int report = 0, resume = request->suspended ? abandon(request, &report) : 0;
            pthread_mutex_unlock(&request->lock);
            if (report) server->on_abort(server->context, request->tag);
            if (resume) MHD_resume_connection(request->connection);
            request_release(request);
        }
        free(waiting);
        if (found == 0) break;
    }
    MHD_stop_daemon(server->daemon);
    atomic_store(&server->stopping, 1);
    uint64_t one = 1;
    (void)!write(server->wake, &one, sizeof one);
    pthread_join(server->watcher, NULL);
    close(server->epoll);
    close(server->wake);
    free(server->slots);
    pthread_mutex_destroy(&server->watch_lock);
    free(server);
}

const char *skillhost_http_method(const skillhost_http_request *request) { return request->method; }
const char *skillhost_http_path(const skillhost_http_request *request) { return request->path; }
const char *skillhost_http_peer(const skillhost_http_request *request) { return request->peer; }

const char *skillhost_http_headers(skillhost_http_request *request, size_t *length) {
    *length = request->headers_length;
    return request->headers != NULL ? request->headers : "";
}

const uint8_t *skillhost_http_body(const skillhost_http_request *request, size_t *length) {
    *length = request->body_length;
    return request->body;
}

void skillhost_http_set_tag(skillhost_http_request *request, void *tag) { request->tag = tag; }

// Records output; resumes the connection when it waits. Returns -1 when the client is gone.
static int deliver(skillhost_http_request *request, unsigned status, const char *headers, const void *body,
                   size_t length, enum output output, int finishing) {
    pthread_mutex_lock(&request->lock);
    if (request->aborted || request->output != OUTPUT_NONE) {
        int release = finishing && !request->finished;
        if (finishing) request->finished = 1;
        pthread_mutex_unlock(&request->lock);
        if (release) request_release(request);
        return -1;
    }
    request->status = status;
    request->response_headers = headers != NULL ? strdup(headers) : NULL;
    if (length > 0) {
        request->data = malloc(length);
        if (request->data != NULL) {
            memcpy(request->data, body, length);
            request->data_length = length;
        }
    }
    request->output = output;
    if (finishing) request->finished = 1;
    int resume = request->suspended;
    if (resume) {
        request->suspended = 0;
        unwatch(request);
    }
    pthread_mutex_unlock(&request->lock);
    if (resume) MHD_resume_connection(request->connection);
    if (finishing) request_release(request);
    return 0;
}

int skillhost_http_respond(skillhost_http_request *request, unsigned status, const char *headers, const void *body,
                           size_t length) {
    return deliver(request, status, headers, body, length, OUTPUT_BUFFER, 1);
}

int skillhost_http_stream_begin(skillhost_http_request *request, unsigned status, const char *headers) {
    return deliver(request, status, headers, NULL, 0, OUTPUT_STREAM, 0);
}

int skillhost_http_stream_write(skillhost_http_request *request, const void *data, size_t length) {
    pthread_mutex_lock(&request->lock);
    if (request->aborted || request->output != OUTPUT_STREAM || request->stream_ended) {
        pthread_mutex_unlock(&request->lock);
        return -1;
    }
    size_t pending = request->data_length - request->data_start;
    if (pending + length > request->server->limits.maximum_stream_backlog) {
        int report = 0;
        int resume = abandon(request, &report);  // the application is told by this call's result, not the handler
        pthread_mutex_unlock(&request->lock);
        if (resume) MHD_resume_connection(request->connection);
        return -1;
    }
    if (request->data_start > 0 && request->data_start == request->data_length) {
        request->data_start = request->data_length = 0;
    }
    uint8_t *grown = realloc(request->data, request->data_length + length);
    if (grown == NULL) {
        pthread_mutex_unlock(&request->lock);
        return -1;
    }
    request->data = grown;
    memcpy(request->data + request->data_length, data, length);
    request->data_length += length;
    int resume = request->suspended;
    if (resume) {
        request->suspended = 0;
        unwatch(request);
    }
    pthread_mutex_unlock(&request->lock);
    if (resume) MHD_resume_connection(request->connection);
    return 0;
}

void skillhost_http_stream_end(skillhost_http_request *request) {
    pthread_mutex_lock(&request->lock);
    int was_finished = request->finished;
    request->stream_ended = 1;
    request->finished = 1;
    int resume = request->suspended;
    if (resume) {
        request->suspended = 0;
        unwatch(request);
    }
    pthread_mutex_unlock(&request->lock);
    if (resume) MHD_resume_connection(request->connection);
    if (!was_finished) request_release(request);
}
