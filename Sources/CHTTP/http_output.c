// A request's side of the application: what it may read in the handler, and the answer it gives — now or later,
// from any thread — which resumes a waiting connection.

#define _GNU_SOURCE
#include "http_internal.h"

#include <stdlib.h>
#include <string.h>

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

// Ends a suspension (and its watch) so new output is sent; returns whether the caller must resume the connection
// after unlocking. Called with request->lock held.
static int take_suspension(skillhost_http_request *request) {
    if (!request->suspended) return 0;
    request->suspended = 0;
    skillhost_http_unwatch(request);
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
    if (request->aborted || request->output != OUTPUT_STREAM || request->stream_ended) {
        pthread_mutex_unlock(&request->lock);
        return -1;
    }
    size_t pending = request->data_length - request->data_start;
    if (pending + length > request->server->limits.maximum_stream_backlog) {
        int report = 0;
        int resume = skillhost_http_abandon(request, &report);  // the application is told by this call's result, not the handler
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
