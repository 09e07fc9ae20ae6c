// The watch of suspended connections: libmicrohttpd does not notice a client that leaves while its connection is
// suspended, so each suspended socket is registered with one epoll instance for EPOLLRDHUP; the watch thread
// abandons the request (its abort handler runs) and resumes the connection, which libmicrohttpd then closes.
// The watch table is also how stopping finds every suspended connection. The same thread accepts new connections
// (http_accept.c).

#define _GNU_SOURCE
#include "http_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

void skillhost_http_request_release(struct skillhost_http_request *request) {
    if (atomic_fetch_sub(&request->references, 1) != 1) return;
    if (request->tag != NULL && request->server->release != NULL) request->server->release(request->tag);
    // A stream's bytes leave the server's total with it, and it leaves the list of streams.
    if (request->output == OUTPUT_STREAM) {
        pthread_mutex_lock(&request->lock);
        skillhost_http_drop_stream_data(request);
        pthread_mutex_unlock(&request->lock);
    }
    if (request->listed) skillhost_http_unlist_stream(request);
    struct skillhost_http_server *server = request->server;
    pthread_mutex_destroy(&request->lock);
    free(request->path);
    free(request->body);
    free(request->headers);
    free(request->response_headers);
    free(request->data);
    free(request);
    // Its hold on the server's memory goes last: nothing of the server is touched after this (also after stop).
    skillhost_http_server_release(server);
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
void skillhost_http_unwatch(struct skillhost_http_request *request) {
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
    if (owned) skillhost_http_request_release(request);
}

// Suspends the connection until output arrives; returns 0 instead (and suspends nothing) once the server stops.
// Called with request->lock held.
int skillhost_http_suspend(struct skillhost_http_request *request) {
    if (atomic_load(&request->server->closing)) return 0;
    MHD_suspend_connection(request->connection);
    request->suspended = 1;
    watch(request);
    return 1;
}

// Marks the request as abandoned and tells the application once. Returns whether the connection must be resumed
// (by the caller, after unlocking). Called with request->lock held.
int skillhost_http_abandon(struct skillhost_http_request *request, int *report) {
    request->aborted = 1;
    *report = !request->abort_reported && !request->finished && request->delivered;
    if (*report) request->abort_reported = 1;
    if (!request->suspended) return 0;
    request->suspended = 0;
    skillhost_http_unwatch(request);
    return 1;
}

void *skillhost_http_watcher_main(void *argument) {
    struct skillhost_http_server *server = argument;
    struct epoll_event events[32];
    uint64_t paused_until = 0;  // while accepting pauses (see http_accept.c): when it resumes, in monotonic ns
    while (!atomic_load(&server->stopping)) {
        int timeout = -1;
        if (paused_until != 0) {
            uint64_t now = skillhost_http_monotonic_ns();
            if (now >= paused_until) {
                paused_until = 0;
                skillhost_http_accept_resume(server);
            } else {
                timeout = (int)((paused_until - now) / 1000000u) + 1;
            }
        }
        int count = epoll_wait(server->epoll, events, 32, timeout);
        for (int index = 0; index < count; index++) {
            if (events[index].data.u64 == UINT64_MAX) continue;  // the wake-up of stop
            if (events[index].data.u64 == SKILLHOST_HTTP_LISTENER_EVENT) {
                int pause = skillhost_http_accept_ready(server);
                if (pause != 0) paused_until = skillhost_http_monotonic_ns() + (uint64_t)pause * 1000000u;
                continue;
            }
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
            if (request->suspended) resume = skillhost_http_abandon(request, &report);
            pthread_mutex_unlock(&request->lock);
            if (report) server->on_abort(server->context, request->tag);
            if (resume) MHD_resume_connection(request->connection);
            skillhost_http_request_release(request);
        }
        if (count < 0 && errno != EINTR) break;
    }
    return NULL;
}

