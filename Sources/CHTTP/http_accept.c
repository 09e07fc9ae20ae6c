// Accepting connections: the server's own listening socket, watched by the watch thread (http_watch.c), which
// accepts and hands each connection to libmicrohttpd with MHD_add_connection. libmicrohttpd's event threads would
// accept for themselves, but whichever thread wakes first takes a whole burst: 32 clients connecting at once came
// out 11 and 21, and the thread with 21 ran near a full core while the other idled. Handed over, a connection goes
// to the event thread its descriptor number picks (libmicrohttpd's rule); a closed connection's number is the next
// one given out, so each thread keeps its share as clients come and go.
//
// The connection limit is this file's, not libmicrohttpd's: in the libmicrohttpd this runs on (0.9.75), a
// connection handed to an event thread that has just reached its limit returns with a lock held, and that thread
// never runs again (fixed upstream in 67061d5). libmicrohttpd is given a limit it never reaches; here a connection
// is accepted only while those open and those handed over but not started are below the maximum.

#define _GNU_SOURCE
#include "http_internal.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

int skillhost_http_listen(struct skillhost_http_server *server, const struct sockaddr *address,
                          socklen_t address_length, char *error, size_t error_length) {
    int descriptor = socket(address->sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    int one = 1;
    int ok = descriptor >= 0 && setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) == 0 &&
             (address->sa_family != AF_INET6 ||
              setsockopt(descriptor, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one) == 0) &&
             bind(descriptor, address, address_length) == 0 && listen(descriptor, 1024) == 0;
    struct sockaddr_storage bound;
    socklen_t bound_length = sizeof bound;
    ok = ok && getsockname(descriptor, (struct sockaddr *)&bound, &bound_length) == 0;
    if (!ok) {
        snprintf(error, error_length, "%s", strerror(errno));
        if (descriptor >= 0) close(descriptor);
        return -1;
    }
    server->port = ntohs(bound.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&bound)->sin6_port
                                                      : ((struct sockaddr_in *)&bound)->sin_port);
    server->listener = descriptor;
    return 0;
}

int skillhost_http_accept_begin(struct skillhost_http_server *server) {
    struct epoll_event event = {.events = EPOLLIN, .data.u64 = SKILLHOST_HTTP_LISTENER_EVENT};
    return epoll_ctl(server->epoll, EPOLL_CTL_ADD, server->listener, &event);
}

// Connections open now and how many have started in all (libmicrohttpd's notifications, kept in http_deadline.c).
static void connection_counts(struct skillhost_http_server *server, int *open, unsigned long *started) {
    pthread_mutex_lock(&server->deadline_lock);
    *open = server->connection_count;
    *started = server->connections_started;
    pthread_mutex_unlock(&server->deadline_lock);
}

int skillhost_http_accept_ready(struct skillhost_http_server *server) {
    pthread_mutex_lock(&server->accept_lock);
    int pause = 0;
    int open;
    unsigned long started;
    connection_counts(server, &open, &started);
    // Handed over but not started yet (its event thread has not taken it): counted as open. One libmicrohttpd
    // dropped without starting it (out of memory) would count for ever, so a count that has not moved for a
    // second is forgotten.
    uint64_t now = skillhost_http_monotonic_ns();
    if (started != server->started_seen) {
        server->started_seen = started;
        server->started_moved = now;
    } else if (server->handed_over > started && now - server->started_moved > 1000000000u) {
        server->handed_over = started;
    }
    int pending = server->handed_over > started ? (int)(server->handed_over - started) : 0;
    // A bounded batch: the watch thread also notices clients that leave.
    for (int count = 0; count < 64 && !server->accept_stopped; count++) {
        // Full: new clients wait in the listen queue (as they would for libmicrohttpd's own accepting) until the
        // deadline thread or a leaving client makes room, instead of being accepted only to be closed.
        if (open + pending >= (int)server->limits.maximum_connections) {
            pause = SKILLHOST_HTTP_FULL_PAUSE_MS;
            break;
        }
        struct sockaddr_storage peer;
        socklen_t peer_length = sizeof peer;
        int descriptor = accept4(server->listener, (struct sockaddr *)&peer, &peer_length,
                                 SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (descriptor < 0) {
            if (errno == EINTR || errno == ECONNABORTED) continue;
            // Out of descriptors or memory: the pending connection stays queued; accepting pauses a moment
            // instead of spinning on a socket that stays readable.
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
                pause = SKILLHOST_HTTP_RESOURCE_PAUSE_MS;
            }
            break;
        }
        // Refused at once (over the limit per address): libmicrohttpd has closed the descriptor.
        if (MHD_add_connection(server->daemon, descriptor, (struct sockaddr *)&peer, peer_length) == MHD_YES) {
            server->handed_over++;
            pending++;
        }
    }
    if (pause != 0) (void)epoll_ctl(server->epoll, EPOLL_CTL_DEL, server->listener, NULL);
    pthread_mutex_unlock(&server->accept_lock);
    return pause;
}

void skillhost_http_accept_resume(struct skillhost_http_server *server) {
    pthread_mutex_lock(&server->accept_lock);
    if (!server->accept_stopped) (void)skillhost_http_accept_begin(server);
    pthread_mutex_unlock(&server->accept_lock);
}

void skillhost_http_accept_stop(struct skillhost_http_server *server) {
    pthread_mutex_lock(&server->accept_lock);
    if (!server->accept_stopped && server->listener >= 0) {
        server->accept_stopped = 1;
        (void)epoll_ctl(server->epoll, EPOLL_CTL_DEL, server->listener, NULL);
        close(server->listener);
        server->listener = -1;
    }
    pthread_mutex_unlock(&server->accept_lock);
}
