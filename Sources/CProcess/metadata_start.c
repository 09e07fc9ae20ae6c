/* Who supervises a confined process's metadata changes, and how the listener gets there.
   - A worker: the host. The worker installs its filter with a listener, sends the listener's and the refusal
     memory's descriptor numbers to the host over its protocol (before any plugin code runs in it), the host takes
     both with pidfd_getfd and adds the listener to its supervisor thread, then marks the shared memory adopted;
     the worker closes its copies. No process is forked for it.
   - A sandboxed program (skillhost's sandbox role, which then becomes the program): a supervisor process forked
     before Landlock and the filter, which receives the listener and the paths over a socket pair. */
#define _GNU_SOURCE
#include "metadata.h"
#include "process_support.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
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
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

enum { MAX_ROOTS = 64, MAX_ROOTS_BYTES = 1 << 20 };

/* ------------------------------------------------------------------------------------- the confined side */

static struct skillhost_refusals *refusals; /* mapped for good: the refusal table this process reads */
static int refusals_fd = -1;                /* until the host took it */
static int pending_listener = -1;           /* until the host took it */
static char *pending_roots;                 /* NUL-separated */
static size_t pending_length;
static int channel = -1;                    /* to a forked supervisor, until the listener is handed over */

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

int skillhost_metadata_prepare(int mode) {
    if (mode == SKILLHOST_SUPERVISE_HOST) {
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

int skillhost_metadata_hand_over(int listener, const char *const *write_paths, int count) {
    size_t length;
    char *paths = join(write_paths, count, &length);
    if (paths == NULL || length > MAX_ROOTS_BYTES) {
        free(paths);
        close(listener);
        return ENOMEM;
    }
    if (channel < 0) { /* the host takes it */
        pending_listener = listener;
        pending_roots = paths;
        pending_length = length;
        return 0;
    }
    uint32_t header = (uint32_t)length;
    struct iovec data = {.iov_base = &header, .iov_len = sizeof header};
    union {
        struct cmsghdr header;
        char space[CMSG_SPACE(sizeof(int))];
    } control;
    memset(&control, 0, sizeof control);
    struct msghdr message = {.msg_iov = &data, .msg_iovlen = 1, .msg_control = control.space,
                             .msg_controllen = sizeof control.space};
    struct cmsghdr *cmsg = CMSG_FIRSTHDR(&message);
    cmsg->cmsg_level = SOL_SOCKET;
    cmsg->cmsg_type = SCM_RIGHTS;
    cmsg->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(cmsg), &listener, sizeof listener);
    int result = sendmsg(channel, &message, MSG_NOSIGNAL) == (ssize_t)sizeof header ? 0 : EIO;
    for (size_t sent = 0; result == 0 && sent < length;) {
        ssize_t n = send(channel, paths + sent, length - sent, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) result = EIO;
        else sent += (size_t)n;
    }
    free(paths);
    close(listener);
    close(channel);
    channel = -1;
    return result;
}

int skillhost_metadata_pending(int *listener, int *refusals_descriptor, char *roots, int size) {
    if (pending_listener < 0 || refusals_fd < 0 || size <= 0) return -1;
    *listener = pending_listener;
    *refusals_descriptor = refusals_fd;
    size_t length = pending_length < (size_t)size ? pending_length : (size_t)size;
    memcpy(roots, pending_roots, length);
    return (int)length;
}

int skillhost_metadata_await_adoption(int timeout_ms) {
    int result = ETIMEDOUT;
    if (refusals != NULL) {
        struct timespec deadline, now;
        clock_gettime(CLOCK_MONOTONIC, &deadline);
        deadline.tv_sec += timeout_ms / 1000;
        deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
        if (deadline.tv_nsec >= 1000000000) deadline.tv_sec++, deadline.tv_nsec -= 1000000000;
        while (__atomic_load_n(&refusals->adopted, __ATOMIC_ACQUIRE) == 0) {
            clock_gettime(CLOCK_MONOTONIC, &now);
            long left_ms = (deadline.tv_sec - now.tv_sec) * 1000 + (deadline.tv_nsec - now.tv_nsec) / 1000000;
            if (left_ms <= 0) break;
            struct timespec wait = {left_ms / 1000, (left_ms % 1000) * 1000000};
            /* Shared (not private) futex: the host wakes it through its own mapping. */
            syscall(SYS_futex, &refusals->adopted, FUTEX_WAIT, 0, &wait, NULL, 0);
        }
        if (__atomic_load_n(&refusals->adopted, __ATOMIC_ACQUIRE) != 0) result = 0;
    }
    if (pending_listener >= 0) close(pending_listener);
    if (refusals_fd >= 0) close(refusals_fd);
    pending_listener = refusals_fd = -1;
    free(pending_roots);
    pending_roots = NULL;
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

static void release(struct skillhost_supervised *supervised) {
    epoll_ctl(events, EPOLL_CTL_DEL, supervised->listener, NULL);
    close(supervised->listener);
    if (supervised->refusals != NULL) munmap(supervised->refusals, sizeof *supervised->refusals);
    free_roots(supervised->roots, supervised->root_count);
    free(supervised);
}

/* The host's supervisor thread: holds no capability (capabilities are per thread), answers every worker's
   requests, and forgets a worker once its listener hangs up (every task of it gone). */
static void *supervisor_thread(void *unused) {
    (void)unused;
    skillhost_name_thread("skillhost-meta");
    skillhost_drop_capabilities();
    struct epoll_event ready[16];
    for (;;) {
        int count = epoll_wait(events, ready, 16, -1);
        if (count < 0 && errno != EINTR) return NULL;
        for (int i = 0; i < count; i++) {
            struct skillhost_supervised *supervised = ready[i].data.ptr;
            if (ready[i].events & (EPOLLHUP | EPOLLERR) || skillhost_metadata_answer(supervised) != 0) release(supervised);
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

int skillhost_metadata_host_supported(void) {
    /* pidfd_getfd (Linux 5.6): EBADF for a bad pidfd where it exists. */
    return syscall(SYS_pidfd_getfd, -1, 0, 0) < 0 && errno == EBADF;
}

int skillhost_metadata_adopt(int worker, int listener_number, int refusals_number, const char *roots, int length) {
    if (length < 0 || length > MAX_ROOTS_BYTES) return EINVAL;
    pthread_once(&thread_once, start_thread);
    if (events < 0) return EAGAIN;
    int pidfd = (int)syscall(SYS_pidfd_open, worker, 0);
    if (pidfd < 0) return errno;
    int listener = (int)syscall(SYS_pidfd_getfd, pidfd, listener_number, 0);
    int memory = listener < 0 ? -1 : (int)syscall(SYS_pidfd_getfd, pidfd, refusals_number, 0);
    int result = listener < 0 || memory < 0 ? errno : 0;
    close(pidfd);
    struct skillhost_refusals *shared = MAP_FAILED;
    if (result == 0) {
        /* Its memory only once sealed at its size: the worker cannot shrink it under the host's writes. */
        struct stat status;
        int seals = fcntl(memory, F_GET_SEALS);
        if (seals < 0 || (seals & (F_SEAL_SHRINK | F_SEAL_SEAL)) != (F_SEAL_SHRINK | F_SEAL_SEAL) ||
            fstat(memory, &status) != 0 || status.st_size < (off_t)sizeof *shared)
            result = EINVAL;
        else
            shared = mmap(NULL, sizeof *shared, PROT_READ | PROT_WRITE, MAP_SHARED, memory, 0);
        if (result == 0 && shared == MAP_FAILED) result = errno;
    }
    if (memory >= 0) close(memory);
    struct skillhost_supervised *supervised = result == 0 ? calloc(1, sizeof *supervised) : NULL;
    if (result == 0 && supervised == NULL) result = ENOMEM;
    if (result != 0) {
        if (listener >= 0) close(listener);
        if (shared != MAP_FAILED) munmap(shared, sizeof *shared);
        return result;
    }
    char *paths = malloc((size_t)length + 1);
    if (paths != NULL) {
        memcpy(paths, roots, (size_t)length);
        paths[length] = 0;
        supervised->root_count = resolve_roots(paths, (size_t)length, &supervised->roots);
        free(paths);
    }
    supervised->listener = listener;
    supervised->refusals = shared;
    /* Marked before the thread sees it: from then on the thread alone may release it. */
    __atomic_store_n(&shared->adopted, 1, __ATOMIC_RELEASE);
    syscall(SYS_futex, &shared->adopted, FUTEX_WAKE, 1, NULL, NULL, 0);
    struct epoll_event event = {.events = EPOLLIN, .data.ptr = supervised};
    if (epoll_ctl(events, EPOLL_CTL_ADD, listener, &event) != 0) {
        result = errno;
        release(supervised);
        return result;
    }
    return 0;
}
