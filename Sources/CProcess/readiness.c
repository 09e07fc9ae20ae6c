/* A thin epoll for Swift (its Glibc module leaves sys/epoll.h out): one thread of the host waits on many pipes. */
#define _GNU_SOURCE
#include "process_support.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/epoll.h>

int skillhost_readiness_create(void) { return epoll_create1(EPOLL_CLOEXEC); }

int skillhost_readiness_add(int set, int fd) {
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) return -1;
    struct epoll_event event = {.events = EPOLLIN, .data.fd = fd};
    if (epoll_ctl(set, EPOLL_CTL_ADD, fd, &event) == 0) return 0;
    int error = errno;
    (void)fcntl(fd, F_SETFL, flags);
    errno = error;
    return -1;
}

void skillhost_readiness_remove(int set, int fd) { (void)epoll_ctl(set, EPOLL_CTL_DEL, fd, NULL); }

int skillhost_readiness_wait(int set, int *ready, int capacity) {
    struct epoll_event events[64];
    if (capacity > 64) capacity = 64;
    int count;
    do count = epoll_wait(set, events, capacity, -1);
    while (count < 0 && errno == EINTR);
    for (int i = 0; i < count; i++) ready[i] = events[i].data.fd;
    return count;
}
