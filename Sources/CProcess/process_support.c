#define _GNU_SOURCE
#include "process_support.h"
#include "metadata.h"

#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <unistd.h>

extern char **environ;

int skillhost_current_cpu(void) { return sched_getcpu(); }

/* The kernel's sched_attr (sched_setattr(2)). */
struct skillhost_sched_attr {
    uint32_t size, policy;
    uint64_t flags;
    int32_t nice;
    uint32_t priority;
    uint64_t runtime, deadline, period;
    uint32_t util_min, util_max;
};

uint64_t skillhost_set_slice(uint64_t nanoseconds) {
    if (nanoseconds == SKILLHOST_SLICE_UNCHANGED) return SKILLHOST_SLICE_UNCHANGED;
    struct skillhost_sched_attr attributes;
    memset(&attributes, 0, sizeof attributes);
    if (syscall(SYS_sched_getattr, 0, &attributes, sizeof attributes, 0) != 0) return SKILLHOST_SLICE_UNCHANGED;
    /* Policy and nice are kept (set again as they are); other policies have no slice to ask for. */
    if (attributes.policy != SCHED_OTHER && attributes.policy != SCHED_BATCH) return SKILLHOST_SLICE_UNCHANGED;
    uint64_t previous = attributes.runtime;
    attributes.size = sizeof attributes;
    attributes.flags = 0;
    attributes.runtime = nanoseconds;
    return syscall(SYS_sched_setattr, 0, &attributes, 0) == 0 ? previous : SKILLHOST_SLICE_UNCHANGED;
}

static void close_pipes(int pipes[][2], int count) {
    for (int i = 0; i < count; i++) {
        close(pipes[i][0]);
        close(pipes[i][1]);
    }
}

/* A new worker's channels: pipes 0-2 become its standard input, output and error; with `lanes`, pipes 3 and 4 its
   descriptors 3 (read) and 4 (write), the socket pair 5 its descriptor 5 and `memory` its descriptor 6. */
struct channels {
    int pipes[6][2];
    int count;
    int memory;
};

static void close_channels(struct channels *c) {
    close_pipes(c->pipes, c->count);
    if (c->memory >= 0) close(c->memory);
}

/* 0 or an errno value (nothing left open). */
static int open_channels(struct channels *c, int lanes) {
    c->memory = -1;
    c->count = 0;
    int wanted = lanes ? 5 : 3;
    for (int i = 0; i < wanted; i++) {
        if (pipe2(c->pipes[i], O_CLOEXEC) != 0) {
            int saved = errno;
            close_channels(c);
            return saved;
        }
        c->count = i + 1;
    }
    if (!lanes) return 0;
    /* A worker's descriptor 5: a socket on which it hands its metadata supervision to the host (descriptors and
       all), once, before any plugin code runs in it. */
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, c->pipes[5]) != 0) {
        int saved = errno;
        close_channels(c);
        return saved;
    }
    c->count = 6;
    /* A worker's descriptor 6: the lane's shared memory (shared_lane.c). */
    c->memory = skillhost_lane_create();
    if (c->memory < 0) {
        int saved = -c->memory;
        c->memory = -1;
        close_channels(c);
        return saved;
    }
    return 0;
}

/* The child's ends, in the order of the descriptors they become (0 to 6); returns how many. */
static int child_ends(const struct channels *c, int ends[7]) {
    ends[0] = c->pipes[0][0];
    ends[1] = c->pipes[1][1];
    ends[2] = c->pipes[2][1];
    if (c->count < 6) return 3;
    ends[3] = c->pipes[3][0];
    ends[4] = c->pipes[4][1];
    ends[5] = c->pipes[5][1];
    ends[6] = c->memory;
    return 7;
}

/* Closes the child's ends (the child has its copies) and hands the host's ends to the caller. */
static void keep_host_ends(struct channels *c, int *to_child, int *from_child, int *child_errors, int *lane_to_child,
                           int *lane_from_child, int *supervision, int *lane_memory) {
    close(c->pipes[0][0]);
    close(c->pipes[1][1]);
    close(c->pipes[2][1]);
    *to_child = c->pipes[0][1];
    *from_child = c->pipes[1][0];
    *child_errors = c->pipes[2][0];
    if (c->count < 6) return;
    close(c->pipes[3][0]);
    close(c->pipes[4][1]);
    close(c->pipes[5][1]);
    *lane_to_child = c->pipes[3][1];
    *lane_from_child = c->pipes[4][0];
    *supervision = c->pipes[5][0];
    *lane_memory = c->memory;
}

/* posix_spawn runs its dup2 actions in order: a source whose number is one of the targets (0 to count - 1) would be
   overwritten by an earlier action before its own — and another thread may just have freed such a low number, which
   the next pipe or memfd then gets (a worker found a socket where its lane's memory belonged). Such sources are
   first copied above the targets; the copies go to `lifted` (`*lifted_count` of them), for the caller to close
   after the spawn. 0 or an errno value (then nothing is left open). */
static int lift_sources(int sources[], int count, int lifted[], int *lifted_count) {
    *lifted_count = 0;
    for (int i = 0; i < count; i++) {
        if (sources[i] >= count) continue;
        int copy = fcntl(sources[i], F_DUPFD_CLOEXEC, count);
        if (copy < 0) {
            int saved = errno;
            for (int k = 0; k < *lifted_count; k++) close(lifted[k]);
            *lifted_count = 0;
            return saved;
        }
        sources[i] = copy;
        lifted[(*lifted_count)++] = copy;
    }
    return 0;
}

/* A new process group's leader, default signal dispositions (SIGPIPE stays ignored), nothing blocked. */
static void leader_attributes(posix_spawnattr_t *attributes) {
    sigset_t defaults, empty;
    sigfillset(&defaults);
    sigdelset(&defaults, SIGPIPE);
    sigemptyset(&empty);
    posix_spawnattr_setsigdefault(attributes, &defaults);
    posix_spawnattr_setsigmask(attributes, &empty);
    posix_spawnattr_setpgroup(attributes, 0);
    posix_spawnattr_setflags(attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
}

static int spawn_with(const char *path, char *const argv[], char *const envp[], pid_t *pid, int *to_child,
                      int *from_child, int *child_errors, int *lane_to_child, int *lane_from_child,
                      int *supervision, int *lane_memory, int lanes) {
    struct channels c;
    int opened = open_channels(&c, lanes);
    if (opened != 0) return opened;
    int ends[7], lifted[7], lifted_count;
    int count = child_ends(&c, ends);
    int moved = lift_sources(ends, count, lifted, &lifted_count);
    if (moved != 0) {
        close_channels(&c);
        return moved;
    }
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attributes);
    for (int i = 0; i < count; i++) posix_spawn_file_actions_adddup2(&actions, ends[i], i);
    posix_spawn_file_actions_addclosefrom_np(&actions, count);
    leader_attributes(&attributes);
    /* A worker's work comes in short bursts between waits (its start, each call): it starts with a short slice,
       which the spawned process inherits from this thread; this thread gets its own back. */
    uint64_t slice = lanes ? skillhost_set_slice(SKILLHOST_WORKER_SLICE) : SKILLHOST_SLICE_UNCHANGED;
    skillhost_children_starting();
    int result = posix_spawn(pid, path, &actions, &attributes, argv, envp ? envp : environ);
    skillhost_children_started(result == 0 ? *pid : 0);
    skillhost_set_slice(slice);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    for (int k = 0; k < lifted_count; k++) close(lifted[k]);
    if (result != 0) {
        close_channels(&c);
        return result;
    }
    keep_host_ends(&c, to_child, from_child, child_errors, lane_to_child, lane_from_child, supervision, lane_memory);
    return 0;
}

int skillhost_spawn_template(const char *path, char *const argv[], char *const envp[], pid_t *pid, int *control) {
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) return errno;
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null < 0) {
        int saved = errno;
        close(pair[0]);
        close(pair[1]);
        return saved;
    }
    int sources[3] = {pair[1], null, null}, lifted[3], lifted_count;
    int moved = lift_sources(sources, 3, lifted, &lifted_count);
    if (moved != 0) {
        close(null);
        close(pair[0]);
        close(pair[1]);
        return moved;
    }
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attributes);
    for (int i = 0; i < 3; i++) posix_spawn_file_actions_adddup2(&actions, sources[i], i);
    posix_spawn_file_actions_addclosefrom_np(&actions, 3);
    leader_attributes(&attributes);
    skillhost_children_starting();
    int result = posix_spawn(pid, path, &actions, &attributes, argv, envp ? envp : environ);
    skillhost_children_started(result == 0 ? *pid : 0);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    for (int k = 0; k < lifted_count; k++) close(lifted[k]);
    close(null);
    close(pair[1]);
    if (result != 0) {
        close(pair[0]);
        return result;
    }
    *control = pair[0];
    return 0;
}

#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

static int template_worker(int control, const void *launch, size_t length, int timeout_ms, pid_t *pid,
                           int *to_child, int *from_child, int *child_errors, int *lane_to_child,
                           int *lane_from_child, int *supervision, int *lane_memory) {
    struct channels c;
    int opened = open_channels(&c, 1);
    if (opened != 0) return opened;
    int ends[7];
    child_ends(&c, ends);
    union {
        char buffer[CMSG_SPACE(sizeof ends)];
        struct cmsghdr align;
    } control_data;
    memset(&control_data, 0, sizeof control_data);
    struct iovec vector = {(void *)launch, length};
    struct msghdr message = {0};
    message.msg_iov = &vector;
    message.msg_iovlen = 1;
    message.msg_control = control_data.buffer;
    message.msg_controllen = sizeof control_data.buffer;
    struct cmsghdr *header = CMSG_FIRSTHDR(&message);
    header->cmsg_level = SOL_SOCKET;
    header->cmsg_type = SCM_RIGHTS;
    header->cmsg_len = CMSG_LEN(sizeof ends);
    memcpy(CMSG_DATA(header), ends, sizeof ends);
    ssize_t sent;
    do sent = sendmsg(control, &message, MSG_NOSIGNAL);
    while (sent < 0 && errno == EINTR);
    if (sent < 0 || (size_t)sent != length) {
        int saved = sent < 0 ? errno : EMSGSIZE;
        close_channels(&c);
        return saved;
    }
    /* The template answers with the new worker's pid (or a negative errno value) once it has forked. */
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    int32_t reply = 0;
    for (;;) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        long spent = (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
        if (spent >= timeout_ms) {
            close_channels(&c);
            return ETIMEDOUT;
        }
        struct pollfd wait = {control, POLLIN, 0};
        int ready = poll(&wait, 1, (int)(timeout_ms - spent));
        if (ready < 0 && errno != EINTR) {
            int saved = errno;
            close_channels(&c);
            return saved;
        }
        if (ready <= 0) continue;
        ssize_t got = recv(control, &reply, sizeof reply, 0);
        if (got < 0 && errno == EINTR) continue;
        if (got != (ssize_t)sizeof reply) {
            int saved = got < 0 ? errno : EPIPE;
            close_channels(&c);
            return saved;
        }
        break;
    }
    if (reply <= 0) {
        close_channels(&c);
        return reply < 0 ? -reply : EPROTO;
    }
    *pid = (pid_t)reply;
    keep_host_ends(&c, to_child, from_child, child_errors, lane_to_child, lane_from_child, supervision, lane_memory);
    return 0;
}

int skillhost_template_worker(int control, const void *launch, size_t length, int timeout_ms, pid_t *pid,
                              int *to_child, int *from_child, int *child_errors, int *lane_to_child,
                              int *lane_from_child, int *supervision, int *lane_memory) {
    /* The worker is this process's child from the template's clone on: no sweep may take it for an orphan before
       its pid is recorded. */
    skillhost_children_starting();
    int result = template_worker(control, launch, length, timeout_ms, pid, to_child, from_child, child_errors,
                                 lane_to_child, lane_from_child, supervision, lane_memory);
    skillhost_children_started(result == 0 ? *pid : 0);
    return result;
}

int skillhost_spawn(const char *path, char *const argv[], char *const envp[], pid_t *pid, int *to_child, int *from_child,
                    int *child_errors) {
    return spawn_with(path, argv, envp, pid, to_child, from_child, child_errors, NULL, NULL, NULL, NULL, 0);
}

int skillhost_spawn_worker(const char *path, char *const argv[], char *const envp[], pid_t *pid, int *to_child,
                           int *from_child, int *child_errors, int *lane_to_child, int *lane_from_child,
                           int *supervision, int *lane_memory) {
    return spawn_with(path, argv, envp, pid, to_child, from_child, child_errors, lane_to_child, lane_from_child,
                      supervision, lane_memory, 1);
}

int skillhost_worker_setup(int *protocol_in, int *protocol_out, int *lane_in, int *lane_out, void **lane_shared) {
    *lane_in = *lane_out = -1;
    *lane_shared = NULL;
    /* The lane's shared memory (descriptor 6), mapped before any plugin code runs; the descriptor is not kept. */
    if (fcntl(6, F_GETFD) >= 0) {
        *lane_shared = skillhost_lane_map(6);
        close(6);
    }
    /* The lane (descriptors 3 and 4) is there when the host started this worker with one; it is kept out of
       whatever the plugin executes. */
    if (fcntl(3, F_GETFD) >= 0 && fcntl(4, F_GETFD) >= 0) {
        if (fcntl(3, F_SETFD, FD_CLOEXEC) != 0 || fcntl(4, F_SETFD, FD_CLOEXEC) != 0) return errno;
        *lane_in = 3;
        *lane_out = 4;
    }
    /* The supervision channel (descriptor 5): kept for skillhost_confine, closed before any plugin code runs. */
    if (fcntl(5, F_GETFD) >= 0) {
        if (fcntl(5, F_SETFD, FD_CLOEXEC) != 0) return errno;
        skillhost_metadata_set_host_channel(5);
    }
    int in = fcntl(0, F_DUPFD_CLOEXEC, 3);
    int out = fcntl(1, F_DUPFD_CLOEXEC, 3);
    if (in < 0 || out < 0) return errno;
    int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null < 0) return errno;
    if (dup2(null, 0) < 0 || dup2(2, 1) < 0) return errno;
    close(null);
    *protocol_in = in;
    *protocol_out = out;
    return 0;
}

int skillhost_set_limit(int resource, unsigned long long value) {
    struct rlimit limit = {(rlim_t)value, (rlim_t)value};
    /* Lowering is always allowed; a value above the current hard limit is clamped to it. */
    struct rlimit current;
    if (getrlimit(resource, &current) == 0 && current.rlim_max != RLIM_INFINITY && limit.rlim_max > current.rlim_max) {
        limit.rlim_cur = limit.rlim_max = current.rlim_max;
    }
    return setrlimit(resource, &limit) == 0 ? 0 : errno;
}

int skillhost_kill_group(pid_t group, int signal) { return killpg(group, signal) == 0 ? 0 : errno; }

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
int skillhost_process_end_descriptor(pid_t pid) { return (int)syscall(SYS_pidfd_open, pid, 0); }

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>

void skillhost_name_thread(const char *name) { prctl(PR_SET_NAME, name, 0, 0, 0); }

#include <pthread.h>
#include <time.h>

ssize_t skillhost_write_nosigpipe(int fd, const void *buffer, size_t length) {
    sigset_t pipe_set, old, pending;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    sigpending(&pending);
    int was_pending = sigismember(&pending, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
    ssize_t result = write(fd, buffer, length);
    int saved = errno;
    /* Take the SIGPIPE this write raised, so it is not delivered once the mask is restored. Asked of the pending
       set, not of the result: a write that had moved some bytes when the reader left returns their count and
       still raises SIGPIPE. */
    sigset_t after;
    sigpending(&after);
    if (!was_pending && sigismember(&after, SIGPIPE)) {
        struct timespec zero = {0, 0};
        while (sigtimedwait(&pipe_set, NULL, &zero) < 0 && errno == EINTR) {
        }
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    errno = saved;
    return result;
}

static int termination_write_end = -1;

static void on_termination(int number) {
    (void)number;
    int saved = errno;
    char byte = 1;
    (void)!write(termination_write_end, &byte, 1);
    errno = saved;
}

int skillhost_termination_pipe(void) {
    int ends[2];
    if (pipe2(ends, O_CLOEXEC) != 0) return -1;
    termination_write_end = ends[1];
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_termination;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    sigaction(SIGINT, &action, NULL);
    sigaction(SIGTERM, &action, NULL);
    return ends[0];
}
