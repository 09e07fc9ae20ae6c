/* Who supervises a confined process's metadata changes, and how the listener gets there.
   - A worker: the host. The host starts it with a socket as its descriptor 5; once confined, the worker sends the
     filter's listener and its refusal memory (SCM_RIGHTS) with the paths the plugin may write, and closes the
     socket — before any plugin code runs in it, and without waiting: the host's supervisor thread reads the one
     offer, closes its end, and answers from then on. No process is forked for it.
   - A sandboxed program (skillhost's sandbox role, which then becomes the program): a supervisor process forked
     before Landlock and the filter, which receives the listener and the paths over a socket pair. */
#define _GNU_SOURCE
#include "metadata.h"
#include "process_support.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

enum { MAX_ROOTS = 64, MAX_ROOTS_BYTES = 1 << 20 };

/* ------------------------------------------------------------------------------------- the confined side */

static struct skillhost_refusals *refusals; /* mapped for good: the refusal table this process reads */
static int refusals_fd = -1;                /* until it is handed over with the listener */
static int channel = -1;                    /* to a forked supervisor, until the listener is handed over */
static int host_channel = -1;               /* to the host (a worker's descriptor 5), until it is used or closed */

void skillhost_metadata_set_host_channel(int fd) { host_channel = fd; }

void skillhost_metadata_close_host_channel(void) {
    if (host_channel >= 0) close(host_channel);
    host_channel = -1;
}

/* Canonical roots from NUL-separated paths (those that exist). */
static int resolve_roots(const char *paths, size_t length, char ***roots) {
    *roots = calloc(MAX_ROOTS, sizeof **roots);
    int count = 0;
    for (const char *path = paths; *roots && path < paths + length && count < MAX_ROOTS; path += strlen(path) + 1) {
        char *resolved = realpath(path, NULL);
        if (resolved != NULL) (*roots)[count++] = resolved;
    }
    return count;
}

static void free_roots(char **roots, int count) {
    for (int i = 0; i < count; i++) free(roots[i]);
    free(roots);
}

static int read_all(int fd, void *buffer, size_t length) {
    size_t got = 0;
    while (got < length) {
        ssize_t n = read(fd, (char *)buffer + got, length - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        got += (size_t)n;
    }
    return 0;
}

/* A forked supervisor's life: only the channel (as descriptor 3) and standard error stay open; no capability, no
   new privileges, a session of its own (the host, which adopts it if the program goes first, reaps it with the
   program's other orphans); it ends when the program does (its pidfd) or every confined task is gone. */
static void supervise(int socket, pid_t program) {
    if (dup2(socket, 3) < 0) _exit(1);
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null >= 0) {
        dup2(null, 0);
        dup2(null, 1);
    }
    close_range(4, ~0U, 0);
    prctl(PR_SET_NAME, "skillhost-meta", 0, 0, 0);
    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    skillhost_drop_capabilities();
    setsid();
    int pidfd = (int)syscall(SYS_pidfd_open, program, 0);
    uint32_t length;
    struct iovec data = {.iov_base = &length, .iov_len = sizeof length};
    union {
        struct cmsghdr header;
        char space[CMSG_SPACE(sizeof(int))];
    } control;
    struct msghdr message = {.msg_iov = &data, .msg_iovlen = 1, .msg_control = control.space,
                             .msg_controllen = sizeof control.space};
    ssize_t n;
    do n = recvmsg(3, &message, MSG_CMSG_CLOEXEC | MSG_WAITALL);
    while (n < 0 && errno == EINTR);
    struct cmsghdr *header = CMSG_FIRSTHDR(&message);
    if (n != (ssize_t)sizeof length || header == NULL || header->cmsg_type != SCM_RIGHTS || length > MAX_ROOTS_BYTES)
        _exit(0);
    struct skillhost_supervised supervised = {.refusals = refusals, .log_to_stderr = 1};
    memcpy(&supervised.listener, CMSG_DATA(header), sizeof supervised.listener);
    char *paths = malloc((size_t)length + 1);
    if (paths == NULL || read_all(3, paths, length) != 0) _exit(0);
    paths[length] = 0;
    supervised.root_count = resolve_roots(paths, length, &supervised.roots);
    close(3);
    for (;;) {
        struct pollfd wait[2] = {{.fd = supervised.listener, .events = POLLIN}, {.fd = pidfd, .events = POLLIN}};
        if (poll(wait, pidfd >= 0 ? 2 : 1, -1) < 0) {
            if (errno == EINTR) continue;
            _exit(0);
        }
        if (wait[0].revents & (POLLHUP | POLLERR | POLLNVAL)) _exit(0);
        if (pidfd >= 0 && wait[1].revents) _exit(0);
        if ((wait[0].revents & POLLIN) && skillhost_metadata_answer(&supervised) != 0) _exit(0);
    }
}

int skillhost_metadata_prepare(void) {
    /* Made already (early, while a worker waited for its peek). */
    if (host_channel >= 0 ? refusals_fd >= 0 : channel >= 0) return 0;
    if (host_channel >= 0) {
        /* Sealed at its size: the host maps it, and a later ftruncate must not turn its writes into SIGBUS. */
        int fd = (int)syscall(SYS_memfd_create, "skillhost-refusals", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        if (fd < 0) return errno;
        if (ftruncate(fd, sizeof *refusals) != 0 ||
            fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
            int saved = errno;
            close(fd);
            return saved;
        }
        void *shared = mmap(NULL, sizeof *refusals, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (shared == MAP_FAILED) {
            int saved = errno;
            close(fd);
            return saved;
        }
        refusals = shared;
        refusals_fd = fd;
        return 0;
    }
    void *shared = mmap(NULL, sizeof *refusals, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shared == MAP_FAILED) return errno;
    refusals = shared;
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) return errno;
    pid_t program = getpid();
    pid_t child = fork();
    if (child < 0) {
        int saved = errno;
        close(pair[0]);
        close(pair[1]);
        return saved;
    }
    if (child == 0) supervise(pair[1], program);
    close(pair[1]);
    channel = pair[0];
    /* Where Yama restricts ptrace to descendants, the supervisor (a child) may read this process's requests. */
    prctl(PR_SET_PTRACER, child, 0, 0, 0);
    return 0;
}

static char *join(const char *const *paths, int count, size_t *length) {
    *length = 0;
    for (int i = 0; i < count; i++) *length += strlen(paths[i]) + 1;
    char *joined = malloc(*length + 1);
    if (joined == NULL) return NULL;
    size_t used = 0;
    for (int i = 0; i < count; i++) {
        size_t size = strlen(paths[i]) + 1;
        memcpy(joined + used, paths[i], size);
        used += size;
    }
    return joined;
}

/* Sends the length of `paths`, `descriptors` (SCM_RIGHTS) with it, then `paths`. 0 or an errno value. */
static int send_offer(int socket, const int *descriptors, int count, const char *paths, size_t length) {
    uint32_t header = (uint32_t)length;
    struct iovec data = {.iov_base = &header, .iov_len = sizeof header};
    union {
        struct cmsghdr header;
        char space[CMSG_SPACE(2 * sizeof(int))];
    } control;
    memset(&control, 0, sizeof control);
    struct msghdr message = {.msg_iov = &data, .msg_iovlen = 1, .msg_control = control.space,
                             .msg_controllen = CMSG_SPACE((size_t)count * sizeof(int))};
    struct cmsghdr *cmsg = CMSG_FIRSTHDR(&message);
    cmsg->cmsg_level = SOL_SOCKET;
    cmsg->cmsg_type = SCM_RIGHTS;
    cmsg->cmsg_len = CMSG_LEN((size_t)count * sizeof(int));
    memcpy(CMSG_DATA(cmsg), descriptors, (size_t)count * sizeof(int));
    if (sendmsg(socket, &message, MSG_NOSIGNAL) != (ssize_t)sizeof header) return EIO;
    for (size_t sent = 0; sent < length;) {
        ssize_t n = send(socket, paths + sent, length - sent, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return EIO;
        sent += (size_t)n;
    }
    return 0;
}

int skillhost_metadata_hand_over(int listener, const char *const *write_paths, int count) {
    size_t length;
    char *paths = join(write_paths, count, &length);
    int result = paths == NULL || length > MAX_ROOTS_BYTES ? ENOMEM : 0;
    if (result == 0 && host_channel >= 0) {
        int descriptors[2] = {listener, refusals_fd};
        result = send_offer(host_channel, descriptors, 2, paths, length);
        skillhost_metadata_close_host_channel();
    } else if (result == 0) {
        result = send_offer(channel, &listener, 1, paths, length);
    }
    free(paths);
    close(listener);
    if (refusals_fd >= 0) close(refusals_fd);
    refusals_fd = -1;
    if (channel >= 0) close(channel);
    channel = -1;
    return result;
}

int skillhost_metadata_refusal(char *buffer, size_t size, int take) {
    if (refusals == NULL || __atomic_load_n(&refusals->pending, __ATOMIC_ACQUIRE) <= 0) return 0;
    int tid = (int)gettid();
    for (int i = 0; i < SKILLHOST_REFUSAL_SLOTS; i++) {
        if (__atomic_load_n(&refusals->slot[i].tid, __ATOMIC_ACQUIRE) != tid) continue;
        if (buffer != NULL && size > 0) {
            refusals->slot[i].text[sizeof refusals->slot[i].text - 1] = 0;
            snprintf(buffer, size, "%s", refusals->slot[i].text);
        }
        if (take) {
            __atomic_store_n(&refusals->slot[i].tid, 0, __ATOMIC_RELEASE);
            __atomic_sub_fetch(&refusals->pending, 1, __ATOMIC_ACQ_REL);
        }
        return 1;
    }
    return 0;
}

/* ------------------------------------------------------------------------------------------ the host side */

static pthread_once_t thread_once = PTHREAD_ONCE_INIT;
static int events = -1; /* the supervisor thread's epoll */

/* What one worker may make the supervisor thread do: SKILLHOST_METADATA_RATE requests a second on average, in
   bursts of at most SKILLHOST_METADATA_BURST. A worker past it rests — its listener out of the epoll set, its
   threads' calls waiting in the kernel — until it has one request's worth again; the others are served as before.
   Unbounded, one plugin's threads calling chmod in a loop kept the thread busy a whole core (3.97 s of CPU in 4 s). */
enum { SKILLHOST_METADATA_RATE = 5000, SKILLHOST_METADATA_BURST = 1000 };

/* What the supervisor thread watches: a worker's offer still to come, or its listener. */
struct watched {
    int is_listener;
    int fd;
    struct skillhost_supervised supervised;
    /* The listener's budget: requests it may still make now, as of `refilled_ns`. */
    double tokens;
    uint64_t refilled_ns;
    /* While resting: until when, and the next resting listener. */
    int resting;
    uint64_t rests_until_ns;
    struct watched *next_resting;
};

static uint64_t monotonic_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

/* The listeners resting, in no order (a handful at most: each is a worker flooding the thread). */
static struct watched *resting;

static void stop_resting(struct watched *watched) {
    for (struct watched **link = &resting; *link; link = &(*link)->next_resting) {
        if (*link == watched) {
            *link = watched->next_resting;
            break;
        }
    }
    watched->resting = 0;
    watched->next_resting = NULL;
}

/* Whether `watched` may make one more request now (taken from its budget); if not, it rests until it may. */
static int within_budget(struct watched *watched, uint64_t now) {
    double refill = (double)(now - watched->refilled_ns) * SKILLHOST_METADATA_RATE / 1e9;
    watched->tokens = watched->tokens + refill > SKILLHOST_METADATA_BURST ? SKILLHOST_METADATA_BURST
                                                                           : watched->tokens + refill;
    watched->refilled_ns = now;
    if (watched->tokens >= 1) {
        watched->tokens -= 1;
        return 1;
    }
    struct epoll_event quiet = {.events = 0, .data.ptr = watched}; /* only a hang-up is still reported */
    epoll_ctl(events, EPOLL_CTL_MOD, watched->fd, &quiet);
    watched->resting = 1;
    watched->rests_until_ns = now + (uint64_t)((1 - watched->tokens) * 1e9 / SKILLHOST_METADATA_RATE) + 1;
    watched->next_resting = resting;
    resting = watched;
    return 0;
}

/* Serves again the listeners whose rest is over; the milliseconds until the next one's is (-1: none rests). */
static int wake_rested(uint64_t now) {
    int timeout = -1;
    for (struct watched **link = &resting; *link;) {
        struct watched *watched = *link;
        if (watched->rests_until_ns <= now) {
            *link = watched->next_resting;
            watched->resting = 0;
            watched->next_resting = NULL;
            struct epoll_event event = {.events = EPOLLIN, .data.ptr = watched};
            epoll_ctl(events, EPOLL_CTL_MOD, watched->fd, &event);
            continue;
        }
        uint64_t left_ms = (watched->rests_until_ns - now + 999999) / 1000000;
        if (timeout < 0 || left_ms < (uint64_t)timeout) timeout = (int)left_ms;
        link = &watched->next_resting;
    }
    return timeout;
}

static void forget(struct watched *watched) {
    if (watched->resting) stop_resting(watched);
    epoll_ctl(events, EPOLL_CTL_DEL, watched->fd, NULL);
    close(watched->fd);
    if (watched->is_listener) {
        if (watched->supervised.refusals != NULL) munmap(watched->supervised.refusals, sizeof *refusals);
        free_roots(watched->supervised.roots, watched->supervised.root_count);
    }
    free(watched);
}

/* Reads a worker's one offer from its socket and starts answering its listener. Whatever happens, the socket is
   closed: a second offer (which could only be the plugin's) is never read. */
static void take_offer(struct watched *channel_entry) {
    int socket = channel_entry->fd;
    uint32_t length = 0;
    struct iovec data = {.iov_base = &length, .iov_len = sizeof length};
    union {
        struct cmsghdr header;
        char space[CMSG_SPACE(2 * sizeof(int))];
    } control;
    struct msghdr message = {.msg_iov = &data, .msg_iovlen = 1, .msg_control = control.space,
                             .msg_controllen = sizeof control.space};
    ssize_t n;
    do n = recvmsg(socket, &message, MSG_CMSG_CLOEXEC | MSG_WAITALL);
    while (n < 0 && errno == EINTR);
    int descriptors[2] = {-1, -1};
    struct cmsghdr *header = CMSG_FIRSTHDR(&message);
    if (header != NULL && header->cmsg_level == SOL_SOCKET && header->cmsg_type == SCM_RIGHTS) {
        size_t count = (header->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        memcpy(descriptors, CMSG_DATA(header), (count < 2 ? count : 2) * sizeof(int));
    }
    int valid = n == (ssize_t)sizeof length && descriptors[0] >= 0 && descriptors[1] >= 0 &&
                !(message.msg_flags & MSG_CTRUNC) && length <= MAX_ROOTS_BYTES;
    char *paths = valid ? malloc((size_t)length + 1) : NULL;
    if (paths != NULL && read_all(socket, paths, length) != 0) valid = 0;
    forget(channel_entry);
    struct skillhost_refusals *shared = MAP_FAILED;
    if (valid) {
        /* Its memory only once sealed at its size: the worker cannot shrink it under the host's writes. */
        struct stat status;
        int seals = fcntl(descriptors[1], F_GET_SEALS);
        if (seals >= 0 && (seals & (F_SEAL_SHRINK | F_SEAL_SEAL)) == (F_SEAL_SHRINK | F_SEAL_SEAL) &&
            fstat(descriptors[1], &status) == 0 && status.st_size >= (off_t)sizeof *shared)
            shared = mmap(NULL, sizeof *shared, PROT_READ | PROT_WRITE, MAP_SHARED, descriptors[1], 0);
    }
    if (descriptors[1] >= 0) close(descriptors[1]);
    struct watched *watched = shared != MAP_FAILED && paths != NULL ? calloc(1, sizeof *watched) : NULL;
    if (watched == NULL) {
        if (descriptors[0] >= 0) close(descriptors[0]);
        if (shared != MAP_FAILED) munmap(shared, sizeof *shared);
        free(paths);
        return;
    }
    paths[length] = 0;
    watched->is_listener = 1;
    watched->tokens = SKILLHOST_METADATA_BURST;
    watched->refilled_ns = monotonic_ns();
    watched->fd = descriptors[0];
    watched->supervised.listener = descriptors[0];
    watched->supervised.refusals = shared;
    watched->supervised.root_count = resolve_roots(paths, length, &watched->supervised.roots);
    free(paths);
    struct epoll_event event = {.events = EPOLLIN, .data.ptr = watched};
    if (epoll_ctl(events, EPOLL_CTL_ADD, watched->fd, &event) != 0) forget(watched);
}

/* The host's supervisor thread: holds no capability (capabilities are per thread), takes each worker's offer and
   answers its requests, and forgets a worker once its listener hangs up (every task of it gone). */
static void *supervisor_thread(void *unused) {
    (void)unused;
    skillhost_name_thread("skillhost-meta");
    skillhost_drop_capabilities();
    struct epoll_event ready[16];
    for (;;) {
        int count = epoll_wait(events, ready, 16, wake_rested(monotonic_ns()));
        if (count < 0 && errno != EINTR) return NULL;
        uint64_t now = monotonic_ns();
        for (int i = 0; i < count; i++) {
            struct watched *watched = ready[i].data.ptr;
            if (!watched->is_listener) take_offer(watched);
            else if (ready[i].events & (EPOLLHUP | EPOLLERR)) forget(watched);
            else if (!watched->resting && within_budget(watched, now) &&
                     skillhost_metadata_answer(&watched->supervised) != 0)
                forget(watched);
        }
    }
}

static void start_thread(void) {
    events = epoll_create1(EPOLL_CLOEXEC);
    if (events < 0) return;
    pthread_t thread;
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
    /* Every signal blocked: the host's handlers are for its other threads. */
    sigset_t all, saved;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &saved);
    if (pthread_create(&thread, &attributes, supervisor_thread, NULL) != 0) {
        close(events);
        events = -1;
    }
    pthread_sigmask(SIG_SETMASK, &saved, NULL);
    pthread_attr_destroy(&attributes);
}

int skillhost_metadata_supervise(int socket) {
    pthread_once(&thread_once, start_thread);
    struct watched *watched = events >= 0 ? calloc(1, sizeof *watched) : NULL;
    if (watched == NULL) {
        close(socket);
        return events < 0 ? EAGAIN : ENOMEM;
    }
    /* A worker that stalls mid-offer does not hold the thread for long. */
    struct timeval limit = {2, 0};
    setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
    watched->fd = socket;
    struct epoll_event event = {.events = EPOLLIN, .data.ptr = watched};
    if (epoll_ctl(events, EPOLL_CTL_ADD, socket, &event) != 0) {
        int saved = errno;
        free(watched);
        close(socket);
        return saved;
    }
    return 0;
}
