// A request's side of the application: what it may read in the handler, and the answer it gives — now or later,
// from any thread — which resumes a waiting connection.

#define _GNU_SOURCE
#include "http_internal.h"

#include <stdlib.h>
#include <string.h>

const char *skillhost_http_method(const skillhost_http_request *request) { return request->method; }
const char *skillhost_http_path(const skillhost_http_request *request) { return request->path; }
const char *skillhost_http_peer(const skillhost_http_request *request) { return request->peer; }
unsigned skillhost_http_peer_port(const skillhost_http_request *request) { return request->peer_port; }

const char *skillhost_http_headers(skillhost_http_request *request, size_t *length) {
    *length = request->headers_length;
    return request->headers != NULL ? request->headers : "";
}

const uint8_t *skillhost_http_body(const skillhost_http_request *request, size_t *length) {
    *length = request->body_length;
    return request->body;
}

void skillhost_http_set_tag(skillhost_http_request *request, void *tag) { request->tag = tag; }

// Ends a suspension (and its watch) so new output is sent; returns whether the caller must resume the connection
// after unlocking. Called with request->lock held.
static int take_suspension(skillhost_http_request *request) {
    if (!request->suspended) return 0;
    request->suspended = 0;
    skillhost_http_unwatch(request);
    return 1;
}

// Puts a stream on the server's list (a stream that cannot be listed is simply never cut for the total).
static void list_stream(skillhost_http_request *request) {
    struct skillhost_http_server *server = request->server;
    pthread_mutex_lock(&server->streams_lock);
    if (server->stream_count == server->stream_capacity) {
        int capacity = server->stream_capacity == 0 ? 16 : server->stream_capacity * 2;
        void *grown = realloc(server->streams, (size_t)capacity * sizeof *server->streams);
        if (grown != NULL) {
            server->streams = grown;
            server->stream_capacity = capacity;
        }
    }
    if (server->stream_count < server->stream_capacity) {
        server->streams[server->stream_count++] = request;
        request->listed = 1;
    }
    pthread_mutex_unlock(&server->streams_lock);
}

void skillhost_http_server_release(struct skillhost_http_server *server) {
    if (atomic_fetch_sub(&server->holders, 1) != 1) return;
    pthread_mutex_destroy(&server->streams_lock);
    free(server->streams);
    free(server);
}

void skillhost_http_drop_stream_data(skillhost_http_request *request) {
    if (request->data_length > 0) atomic_fetch_sub(&request->server->stream_unsent, request->data_length);
    free(request->data);
    request->data = NULL;
    request->data_length = request->data_start = 0;
}

void skillhost_http_unlist_stream(skillhost_http_request *request) {
    struct skillhost_http_server *server = request->server;
    pthread_mutex_lock(&server->streams_lock);
    for (int index = 0; index < server->stream_count; index++) {
        if (server->streams[index] != request) continue;
        server->streams[index] = server->streams[--server->stream_count];
        break;
    }
    request->listed = 0;
    pthread_mutex_unlock(&server->streams_lock);
}

// What a stream may hold before it can be cut for the total (one that keeps up holds next to nothing).
static const size_t cuttable = 256u << 10;

// Tells the application a cut stream ended, on a thread of its own: the cut happens inside another stream's write,
// which may hold the application's own locks (the browser's session lock: its abort handler took it again and
// crashed the server). Holds a reference to the request until the report is made.
static void *report_cut(void *argument) {
    skillhost_http_request *request = argument;
    request->server->on_abort(request->server->context, request->tag);
    skillhost_http_request_release(request);
    return NULL;
}

// While all streams' buffers together hold more than `total`, cuts the stream that holds most (more than
// `cuttable`): it ends, its bytes are freed at once, the application is told (on another thread). Returns whether
// the total is back under the bound. Called with no request's lock held; another stream's lock is only tried (a
// stream busy on another thread is passed over), so no order of locks can deadlock.
static int cut_slowest(struct skillhost_http_server *server, size_t total) {
    while (atomic_load(&server->stream_unsent) > total) {
        skillhost_http_request *slowest = NULL;
        size_t most = cuttable;
        pthread_mutex_lock(&server->streams_lock);
        for (int index = 0; index < server->stream_count; index++) {
            skillhost_http_request *candidate = server->streams[index];
            if (pthread_mutex_trylock(&candidate->lock) != 0) continue;
            if (candidate->data_length > most) {
                most = candidate->data_length;
                slowest = candidate;
            }
            pthread_mutex_unlock(&candidate->lock);
        }
        // Kept while it is cut below — only if it is still alive: a request whose last reference went is being
        // released (its release waits for streams_lock to take it off the list, then frees it), and is left alone.
        if (slowest != NULL) {
            int held = atomic_load(&slowest->references);
            while (held > 0 && !atomic_compare_exchange_weak(&slowest->references, &held, held + 1)) {}
            if (held == 0) slowest = NULL;
        }
        pthread_mutex_unlock(&server->streams_lock);
        if (slowest == NULL) return 0;
        int report = 0;
        pthread_mutex_lock(&slowest->lock);
        // Looked at again under its lock: a stream that drained meanwhile, or a total another writer's cut brought
        // under the bound, is not cut.
        if (slowest->data_length <= cuttable || atomic_load(&server->stream_unsent) <= total) {
            pthread_mutex_unlock(&slowest->lock);
            skillhost_http_request_release(slowest);
            continue;
        }
        int resume = slowest->aborted ? 0 : skillhost_http_abandon(slowest, &report);
        skillhost_http_drop_stream_data(slowest);
        pthread_mutex_unlock(&slowest->lock);
        if (resume) MHD_resume_connection(slowest->connection);
        pthread_t thread;
        pthread_attr_t attributes;
        pthread_attr_init(&attributes);
        pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
        if (!report || pthread_create(&thread, &attributes, report_cut, slowest) != 0) {
            skillhost_http_request_release(slowest);
        }
        pthread_attr_destroy(&attributes);
    }
    return 1;
}

// Records output; resumes the connection when it waits. Returns -1 when the client is gone.
static int deliver(skillhost_http_request *request, unsigned status, const char *headers, const void *body,
                   size_t length, enum output output, int finishing) {
    pthread_mutex_lock(&request->lock);
    if (request->aborted || request->output != OUTPUT_NONE) {
        int release = finishing && !request->finished;
        if (finishing) request->finished = 1;
        pthread_mutex_unlock(&request->lock);
        if (release) skillhost_http_request_release(request);
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
    int resume = take_suspension(request);
    pthread_mutex_unlock(&request->lock);
    if (output == OUTPUT_STREAM) list_stream(request);
    if (resume) MHD_resume_connection(request->connection);
    if (finishing) skillhost_http_request_release(request);
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
    // Gone (also: the server stopped) — nothing of the server is read.
    if (request->aborted || request->output != OUTPUT_STREAM || request->stream_ended) {
        pthread_mutex_unlock(&request->lock);
        return -1;
    }
    struct skillhost_http_server *server = request->server;
    size_t limit = server->limits.maximum_stream_backlog;
    pthread_mutex_unlock(&request->lock);
    // Bounded for all streams together too: past four streams' backlog in all (what their buffers hold), the
    // streams holding most are cut (256 streams a client opened and never read grew the server by 2 GB). The server
    // is alive here: a listed stream holds its memory.
    int room = 1;
    if (atomic_load(&server->stream_unsent) + length > 4 * limit) room = cut_slowest(server, 4 * limit);
    pthread_mutex_lock(&request->lock);
    if (request->aborted || request->output != OUTPUT_STREAM || request->stream_ended) {
        pthread_mutex_unlock(&request->lock);
        return -1;
    }
    size_t pending = request->data_length - request->data_start;
    // Past its own limit, or past the total with nothing else to cut and more than a small buffer of its own, this
    // stream's client counts as gone: the stream ends and its bytes go at once.
    if (pending + length > limit || (!room && request->data_length + length > cuttable)) {
        int report = 0;
        int resume = skillhost_http_abandon(request, &report);  // the application is told by this call's result, not the handler
        skillhost_http_drop_stream_data(request);
        pthread_mutex_unlock(&request->lock);
        if (resume) MHD_resume_connection(request->connection);
        return -1;
    }
    if (request->data_start > 0 && request->data_start == request->data_length) {
        skillhost_http_drop_stream_data(request);
    }
    uint8_t *grown = realloc(request->data, request->data_length + length);
    if (grown == NULL) {
        pthread_mutex_unlock(&request->lock);
        return -1;
    }
    request->data = grown;
    memcpy(request->data + request->data_length, data, length);
    request->data_length += length;
    atomic_fetch_add(&server->stream_unsent, length);
    int resume = take_suspension(request);
    pthread_mutex_unlock(&request->lock);
    if (resume) MHD_resume_connection(request->connection);
    return 0;
}

void skillhost_http_stream_end(skillhost_http_request *request) {
    pthread_mutex_lock(&request->lock);
    int was_finished = request->finished;
    request->stream_ended = 1;
    request->finished = 1;
    int resume = take_suspension(request);
    pthread_mutex_unlock(&request->lock);
    if (resume) MHD_resume_connection(request->connection);
    if (!was_finished) skillhost_http_request_release(request);
}
