#define _GNU_SOURCE
#include "process_support.h"
#include "metadata.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <unistd.h>

extern char **environ;

static void close_pipes(int pipes[][2], int count) {
    for (int i = 0; i < count; i++) {
        close(pipes[i][0]);
        close(pipes[i][1]);
    }
}

/* Pipes 0-2 become the child's standard input, output and error; with `lanes`, pipes 3 and 4 its descriptors 3
   (read) and 4 (write). */
static int spawn_with(const char *path, char *const argv[], char *const envp[], pid_t *pid, int *to_child,
                      int *from_child, int *child_errors, int *lane_to_child, int *lane_from_child,
                      int *supervision, int *lane_memory, int lanes) {
    int pipes[6][2];
    int count = lanes ? 5 : 3;
    for (int i = 0; i < count; i++) {
        if (pipe2(pipes[i], O_CLOEXEC) != 0) {
            int saved = errno;
            close_pipes(pipes, i);
            return saved;
        }
    }
    /* A worker's descriptor 5: a socket on which it hands its metadata supervision to the host (descriptors and
       all), once, before any plugin code runs in it. */
    if (lanes) {
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pipes[5]) != 0) {
            int saved = errno;
            close_pipes(pipes, count);
            return saved;
        }
        count = 6;
    }
    /* A worker's descriptor 6: the lane's shared memory (shared_lane.c). */
    int memory = -1;
    if (lanes) {
        memory = skillhost_lane_create();
        if (memory < 0) {
            close_pipes(pipes, count);
            return -memory;
        }
    }
    int *in = pipes[0], *out = pipes[1], *err = pipes[2];
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attributes);
    posix_spawn_file_actions_adddup2(&actions, in[0], 0);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    posix_spawn_file_actions_adddup2(&actions, err[1], 2);
    if (lanes) {
        posix_spawn_file_actions_adddup2(&actions, pipes[3][0], 3);
        posix_spawn_file_actions_adddup2(&actions, pipes[4][1], 4);
        posix_spawn_file_actions_adddup2(&actions, pipes[5][1], 5);
        posix_spawn_file_actions_adddup2(&actions, memory, 6);
    }
    posix_spawn_file_actions_addclosefrom_np(&actions, lanes ? 7 : 3);
    sigset_t defaults, empty;
    sigfillset(&defaults);
    sigdelset(&defaults, SIGPIPE);
    sigemptyset(&empty);
    posix_spawnattr_setsigdefault(&attributes, &defaults);
    posix_spawnattr_setsigmask(&attributes, &empty);
    posix_spawnattr_setpgroup(&attributes, 0);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    int result = posix_spawn(pid, path, &actions, &attributes, argv, envp ? envp : environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    if (result != 0) {
        close_pipes(pipes, count);
        if (memory >= 0) close(memory);
        return result;
    }
    close(in[0]); close(out[1]); close(err[1]);
    *to_child = in[1];
    *from_child = out[0];
    *child_errors = err[0];
    if (lanes) {
        close(pipes[3][0]);
        *lane_to_child = pipes[3][1];
        *lane_from_child = pipes[4][0];
        close(pipes[4][1]);
        close(pipes[5][1]);
        *supervision = pipes[5][0];
        *lane_memory = memory;
    }
    return 0;
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

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>

int skillhost_become_subreaper(void) { return prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0 ? 0 : errno; }

void skillhost_name_thread(const char *name) { prctl(PR_SET_NAME, name, 0, 0, 0); }

/* The parent pid and the session id of `pid` from /proc/<pid>/stat ("pid (comm) state ppid pgrp session …");
   0, or -1 when it cannot be read. */
static int read_stat(pid_t pid, pid_t *parent, pid_t *session) {
    char path[64], buffer[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *file = fopen(path, "re");
    if (!file) return -1;
    size_t length = fread(buffer, 1, sizeof buffer - 1, file);
    fclose(file);
    buffer[length] = 0;
    /* comm may hold spaces and parentheses, so scan from the last ')'. */
    char *close_paren = strrchr(buffer, ')');
    int parent_id = -1, group = -1, session_id = -1;
    char state;
    if (!close_paren || sscanf(close_paren + 1, " %c %d %d %d", &state, &parent_id, &group, &session_id) != 4) return -1;
    *parent = (pid_t)parent_id;
    *session = (pid_t)session_id;
    return 0;
}

static int kill_child(pid_t pid, const pid_t *keep, int keep_count, int only_other_sessions, pid_t own_session) {
    for (int i = 0; i < keep_count; i++)
        if (keep[i] == pid) return 0;
    if (only_other_sessions && getsid(pid) == own_session) return 0;
    /* A child this process may not signal (a confined worker's metadata supervisor, outside its Landlock domain,
       which dies with it) is reaped if it already ended, never waited for. */
    if (kill(pid, SIGKILL) != 0) {
        waitpid(pid, NULL, WNOHANG);
        return 0;
    }
    waitpid(pid, NULL, 0);
    return 1;
}

/* The children of every thread of this process, from /proc/self/task/<tid>/children (readable in a confined
   worker, where /proc/<other pid> is not). -1 when the kernel lacks the file (CONFIG_PROC_CHILDREN). */
static int kill_listed_children(const pid_t *keep, int keep_count, int only_other_sessions, pid_t own_session) {
    DIR *tasks = opendir("/proc/self/task");
    if (!tasks) return -1;
    int killed = 0, listed = 0;
    struct dirent *entry;
    while ((entry = readdir(tasks)) != NULL) {
        if (entry->d_name[0] == '.') continue;
        char path[96];
        snprintf(path, sizeof path, "/proc/self/task/%s/children", entry->d_name);
        FILE *file = fopen(path, "re");
        if (!file) continue;
        listed = 1;
        int pid;
        while (fscanf(file, "%d", &pid) == 1)
            if (pid > 0) killed += kill_child((pid_t)pid, keep, keep_count, only_other_sessions, own_session);
        fclose(file);
    }
    closedir(tasks);
    return listed ? killed : -1;
}

int skillhost_kill_adopted(const pid_t *keep, int keep_count, int only_other_sessions) {
    pid_t self = getpid();
    pid_t own_session = getsid(0);
    int listed = kill_listed_children(keep, keep_count, only_other_sessions, own_session);
    if (listed >= 0) return listed;
    int killed = 0;
    DIR *proc = opendir("/proc");
    if (!proc) return 0;
    struct dirent *entry;
    while ((entry = readdir(proc)) != NULL) {
        char *end;
        long value = strtol(entry->d_name, &end, 10);
        if (*end != 0 || value <= 0) continue;
        pid_t pid = (pid_t)value, parent, session;
        if (read_stat(pid, &parent, &session) != 0 || parent != self) continue;
        killed += kill_child(pid, keep, keep_count, only_other_sessions, own_session);
    }
    closedir(proc);
    return killed;
}

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
    if (result < 0 && saved == EPIPE && !was_pending) {
        /* Take the SIGPIPE this write raised, so it is not delivered once the mask is restored. */
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
