/* Tries, one skill each, what a confined plugin must not do. Each skill fails with the C library's words when the
   kernel refuses ("open /x: Permission denied"), and answers {"done": true, ...} when it got through.
   The name, capabilities and read path are replaced by tests that build variants ("@NAME@", "@CAPS@",
   "@READ_PATHS@": quoted folders, each followed by a comma). */
#define _GNU_SOURCE
#include "skill_json.h"
#include "skill_sdk.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <spawn.h>
#include <sys/ptrace.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <termios.h>
#include <unistd.h>
#include <pthread.h>
#include <time.h>

extern char **environ;

#define OBJECT "{\"type\":\"object\"}"

static int fail(const skill_call_api *api, skill_call *call, const char *what) {
    char message[600];
    snprintf(message, sizeof message, "%s: %s", what, strerror(errno));
    api->set_error(call, message);
    return SKILL_ERR_FAILED;
}

static int done(const skill_call_api *api, skill_call *call, const char *extra) {
    char result[700];
    int length = snprintf(result, sizeof result, "{\"done\":true%s%s}", extra[0] ? "," : "", extra);
    api->set_result(call, result, (size_t)length);
    return SKILL_OK;
}

/* {"path": "..."}: reads the first bytes of a file. */
static int read_file(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    (void)state;
    char path[512], what[600], extra[160], content[64] = "";
    if (skill_json_get_string(args, "path", path, sizeof path) <= 0) return SKILL_ERR_INVALID_ARGS;
    snprintf(what, sizeof what, "open %s", path);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return fail(api, call, what);
    ssize_t n = read(fd, content, sizeof content - 1);
    close(fd);
    if (n < 0) return fail(api, call, what);
    content[n] = 0;
    for (char *c = content; *c; c++)
        if (*c == '"' || *c == '\\' || (unsigned char)*c < 32) *c = '_';
    snprintf(extra, sizeof extra, "\"content\":\"%s\"", content);
    return done(api, call, extra);
}

/* {"path": "..."}: appends a line to a file, creating it. */
static int write_file(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    (void)state;
    char path[512], what[600];
    if (skill_json_get_string(args, "path", path, sizeof path) <= 0) return SKILL_ERR_INVALID_ARGS;
    snprintf(what, sizeof what, "open %s for writing", path);
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd < 0) return fail(api, call, what);
    ssize_t n = write(fd, "escaped\n", 8);
    close(fd);
    if (n != 8) return fail(api, call, what);
    return done(api, call, "");
}

/* {"port": N}: connects over TCP to 127.0.0.1:N and reads one line. */
static int connect_tcp(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    (void)state;
    double port = 0;
    if (skill_json_get_number(args, "port", &port) != 0) return SKILL_ERR_INVALID_ARGS;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return fail(api, call, "socket");
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&address, sizeof address) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return fail(api, call, "connect");
    }
    char line[64] = "";
    ssize_t n = read(fd, line, sizeof line - 1);
    close(fd);
    line[n > 0 ? n : 0] = 0;
    line[strcspn(line, "\r\n\"\\")] = 0;
    char extra[100];
    snprintf(extra, sizeof extra, "\"read\":\"%s\"", line);
    return done(api, call, extra);
}

/* Binds a TCP socket to 127.0.0.1 on a port the kernel picks. */
static int bind_tcp(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    (void)state, (void)args;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return fail(api, call, "socket");
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons(0)};
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int bound = bind(fd, (struct sockaddr *)&address, sizeof address);
    int saved = errno;
    close(fd);
    errno = saved;
    return bound == 0 ? done(api, call, "") : fail(api, call, "bind");
}

/* {"pid": N} (0: the worker's parent, the host): sends SIGTERM. */
static int kill_process(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    (void)state;
    double pid = 0;
    skill_json_get_number(args, "pid", &pid);
    pid_t target = pid > 0 ? (pid_t)pid : getppid();
    char what[64];
    snprintf(what, sizeof what, "kill(%d)", (int)target);
    /* Signal 0 for the host, so a test that fails cannot kill its own runner; the kernel checks it all the same. */
    return kill(target, pid > 0 ? SIGTERM : 0) == 0 ? done(api, call, "") : fail(api, call, what);
}

static int trace_host(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    (void)state, (void)args;
    pid_t host = getppid();
    if (ptrace(PTRACE_ATTACH, host, NULL, NULL) != 0) return fail(api, call, "ptrace(PTRACE_ATTACH) of the host");
    ptrace(PTRACE_DETACH, host, NULL, NULL);
    return done(api, call, "");
}

static int run_shell(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    (void)state, (void)args;
    char *const argv[] = {"/bin/sh", "-c", "exit 0", NULL};
    execve("/bin/sh", argv, NULL);
    return fail(api, call, "execve /bin/sh"); /* only reached when it was refused */
}

/* Forks up to {"limit": N} children (default 5,000) that each sleep a second, and reports how many it started. */
static int fork_bomb(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    (void)state;
    double limit = 5000;
    skill_json_get_number(args, "limit", &limit);
    int started = 0;
    for (; started < (int)limit; started++) {
        pid_t child = fork();
        if (child < 0) break;
        if (child == 0) {
            sleep(1);
            _exit(0);
        }
    }
    int saved = errno;
    while (waitpid(-1, NULL, WNOHANG) > 0) {
    }
    if (started == 0) {
        errno = saved;
        return fail(api, call, "fork");
    }
    char extra[64];
    snprintf(extra, sizeof extra, "\"started\":%d", started);
    return done(api, call, extra);
}

/* {"pid": N}: reads another process's memory through /proc/N/mem. */
static int proc_mem(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    (void)state;
    double pid = 0;
    if (skill_json_get_number(args, "pid", &pid) != 0) return SKILL_ERR_INVALID_ARGS;
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/mem", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        char what[100];
        snprintf(what, sizeof what, "open %s", path);
        return fail(api, call, what);
    }
    close(fd);
    return done(api, call, "");
}

/* {"name": "..."}: whether an environment variable is set. */
static int read_env(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    (void)state;
    char name[128];
    if (skill_json_get_string(args, "name", name, sizeof name) <= 0) return SKILL_ERR_INVALID_ARGS;
    return done(api, call, getenv(name) ? "\"set\":true" : "\"set\":false");
}

/* {"pid_file": "..."}: starts a grandchild in a session of its own that sleeps 300 s and writes its pid. */
static int daemonize(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    (void)state;
    char path[512] = "";
    skill_json_get_string(args, "pid_file", path, sizeof path);
    int channel[2];
    if (pipe(channel) != 0) return fail(api, call, "pipe");
    pid_t child = fork();
    if (child < 0) return fail(api, call, "fork");
    if (child == 0) {
        setsid();
        pid_t grandchild = fork();
        if (grandchild == 0) {
            sleep(300);
            _exit(0);
        }
        (void)!write(channel[1], &grandchild, sizeof grandchild);
        _exit(0);
    }
    pid_t grandchild = -1;
    (void)!read(channel[0], &grandchild, sizeof grandchild);
    close(channel[0]);
    close(channel[1]);
    waitpid(child, NULL, 0);
    char extra[64];
    snprintf(extra, sizeof extra, "\"pid\":%d", (int)grandchild);
    return done(api, call, extra);
}

/* The effective capabilities of the process, as /proc/self/status gives them ("CapEff:\t000001ffffffffff"). */
static int capabilities(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    (void)state, (void)args;
    FILE *status = fopen("/proc/self/status", "re");
    if (!status) return fail(api, call, "open /proc/self/status");
    char line[256], value[64] = "";
    while (fgets(line, sizeof line, status))
        if (sscanf(line, "CapEff: %63s", value) == 1) break;
    fclose(status);
    char extra[100];
    snprintf(extra, sizeof extra, "\"effective\":\"%s\"", value);
    return done(api, call, extra);
}

/* System V shared memory: the worker shares the host's IPC namespace. */
static int shared_memory(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    (void)state, (void)args;
    int id = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
    if (id < 0) return fail(api, call, "shmget");
    shmctl(id, IPC_RMID, NULL);
    return done(api, call, "");
}

/* {"path": "..."}: a UNIX datagram to a socket file, from socket(AF_UNIX, SOCK_RAW) or, with "pair": true, from
   socketpair(AF_UNIX, SOCK_DGRAM), through sendmsg() (whose address a filter cannot read). */
static int unix_datagram(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    (void)state;
    char path[108];
    int pair = 0;
    if (skill_json_get_string(args, "path", path, sizeof path) <= 0) return SKILL_ERR_INVALID_ARGS;
    skill_json_get_bool(args, "pair", &pair);
    int fd = -1, fds[2];
    if (pair) {
        if (socketpair(AF_UNIX, SOCK_DGRAM, 0, fds) != 0) return fail(api, call, "socketpair");
        fd = fds[0];
        close(fds[1]);
    } else if ((fd = socket(AF_UNIX, SOCK_RAW, 0)) < 0) {
        return fail(api, call, "socket");
    }
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    snprintf(address.sun_path, sizeof address.sun_path, "%s", path);
    struct iovec data = {.iov_base = "hello", .iov_len = 5};
    struct msghdr message = {.msg_name = &address, .msg_namelen = sizeof address, .msg_iov = &data, .msg_iovlen = 1};
    ssize_t sent = sendmsg(fd, &message, 0);
    close(fd);
    if (sent < 0) return fail(api, call, "sendmsg");
    return done(api, call, "");
}

/* posix_spawn of /bin/true: the C library blocks every signal around its clone. */
static int spawn_program(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    (void)state, (void)args;
    pid_t child;
    char *argv[] = {"true", NULL};
    int error = posix_spawn(&child, "/bin/true", NULL, NULL, argv, environ);
    if (error != 0) {
        errno = error;
        return fail(api, call, "posix_spawn /bin/true");
    }
    waitpid(child, NULL, 0);
    return done(api, call, "");
}

/* A raw clone into a new user namespace (what a plugin granted exec might try). */
static int clone_namespace(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    (void)state, (void)args;
    long child = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);
    if (child < 0) return fail(api, call, "clone(CLONE_NEWUSER)");
    if (child == 0) _exit(0);
    waitpid((pid_t)child, NULL, 0);
    return done(api, call, "");
}

/* {"op": "...", "path": "...", "mode": N}: changes a file's metadata — mode, owner, times, an extended attribute —
   by path, by a descriptor opened for reading, or nofollow. */
static int change_metadata(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    (void)state;
    char op[32], path[512], what[600];
    double mode = 0644;
    if (skill_json_get_string(args, "op", op, sizeof op) <= 0) return SKILL_ERR_INVALID_ARGS;
    if (skill_json_get_string(args, "path", path, sizeof path) <= 0) return SKILL_ERR_INVALID_ARGS;
    skill_json_get_number(args, "mode", &mode);
    snprintf(what, sizeof what, "%s %s", op, path);
    int result, fd = -1;
    if (strncmp(op, "f", 1) == 0 && strcmp(op, "fchmodat_nofollow") != 0) {
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) return fail(api, call, what);
    }
    if (strcmp(op, "chmod") == 0) result = chmod(path, (mode_t)mode);
    else if (strcmp(op, "fchmod") == 0) result = fchmod(fd, (mode_t)mode);
    else if (strcmp(op, "fchmodat_nofollow") == 0) result = fchmodat(AT_FDCWD, path, (mode_t)mode, AT_SYMLINK_NOFOLLOW);
    else if (strcmp(op, "chown") == 0) result = chown(path, getuid(), getgid());
    else if (strcmp(op, "fchown") == 0) result = fchown(fd, getuid(), getgid());
    else if (strcmp(op, "utimensat") == 0) result = utimensat(AT_FDCWD, path, NULL, 0);
    else if (strcmp(op, "futimens") == 0) result = futimens(fd, NULL);
    else if (strcmp(op, "setxattr") == 0) result = setxattr(path, "user.skillhost", "x", 1, 0);
    else if (strcmp(op, "fsetxattr") == 0) result = fsetxattr(fd, "user.skillhost", "x", 1, 0);
    else if (strcmp(op, "removexattr") == 0) result = removexattr(path, "user.skillhost");
    else return SKILL_ERR_INVALID_ARGS;
    int saved = errno;
    if (fd >= 0) close(fd);
    errno = saved;
    if (result != 0) return fail(api, call, what);
    return done(api, call, "");
}

/* {"from": "...", "to": "...", "rename": true}: a hard link (or a rename) of a file into its own folder, where the
   supervisor would change its metadata. */
static int link_in(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    (void)state;
    char from[512], to[512], what[1100];
    int move = 0;
    if (skill_json_get_string(args, "from", from, sizeof from) <= 0) return SKILL_ERR_INVALID_ARGS;
    if (skill_json_get_string(args, "to", to, sizeof to) <= 0) return SKILL_ERR_INVALID_ARGS;
    skill_json_get_bool(args, "rename", &move);
    snprintf(what, sizeof what, "%s %s", move ? "rename" : "link", from);
    if ((move ? rename(from, to) : link(from, to)) != 0) return fail(api, call, what);
    return done(api, call, "");
}

/* {"path": "..."}: chmod through another ABI — i386's int 0x80 ("abi": "i386") or an x32 number ("x32"). */
static int other_abi(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    (void)state;
    char abi[16], path[512];
    if (skill_json_get_string(args, "abi", abi, sizeof abi) <= 0) return SKILL_ERR_INVALID_ARGS;
    if (skill_json_get_string(args, "path", path, sizeof path) <= 0) return SKILL_ERR_INVALID_ARGS;
#if defined(__x86_64__)
    long result;
    if (strcmp(abi, "i386") == 0) {
        /* The address must fit 32 bits for the i386 ABI: a static buffer in the low 4 GB is not guaranteed, so
           the call is what matters, not that the path arrives. */
        static char low[512];
        snprintf(low, sizeof low, "%s", path);
        __asm__ volatile("int $0x80" : "=a"(result) : "a"(15), "b"((long)low), "c"(0666L) : "memory");
    } else {
        __asm__ volatile("syscall" : "=a"(result) : "a"(90L | 0x40000000L), "D"(path), "S"(0666L) : "rcx", "r11", "memory");
    }
    if (result < 0) {
        errno = (int)-result;
        return fail(api, call, abi);
    }
    return done(api, call, "");
#else
    (void)abi, (void)path;
    errno = ENOSYS;
    return fail(api, call, "another ABI");
#endif
}

/* {"what": "...", "pid": N, "path": "..."}: reaches another process or a kernel object the worker shares with the
   host (the audit's rows): its limits, priority, affinity, scheduling, I/O priority and pages by id; every process
   at once; the SIGSYS handler through a signal number with stray high bits; files it may not read through inotify;
   a name others would connect to; another process's descriptors; POSIX queues; the keyrings; the terminal. */
static int reach(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    (void)state;
    char what[32], path[256] = "";
    double number = 0;
    if (skill_json_get_string(args, "what", what, sizeof what) <= 0) return SKILL_ERR_INVALID_ARGS;
    skill_json_get_string(args, "path", path, sizeof path);
    skill_json_get_number(args, "pid", &number);
    pid_t pid = (pid_t)number;
    long result = -1;
    if (strcmp(what, "prlimit") == 0) {
        struct rlimit limit = {0, 0};
        result = prlimit(pid, RLIMIT_NOFILE, &limit, NULL);
    } else if (strcmp(what, "setpriority") == 0) {
        result = setpriority(PRIO_PROCESS, (id_t)pid, 19);
    } else if (strcmp(what, "setpriority_user") == 0) {
        result = setpriority(PRIO_USER, getuid(), 19);
    } else if (strcmp(what, "affinity") == 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(0, &set);
        result = sched_setaffinity(pid, sizeof set, &set);
    } else if (strcmp(what, "scheduler") == 0) {
        struct sched_param parameter = {0};
        result = sched_setscheduler(pid, SCHED_IDLE, &parameter);
    } else if (strcmp(what, "ioprio") == 0) {
        result = syscall(SYS_ioprio_set, 1, pid, (3 << 13));
    } else if (strcmp(what, "migrate_pages") == 0) {
        unsigned long nodes = 1;
        result = syscall(SYS_migrate_pages, pid, 8 * sizeof nodes, &nodes, &nodes);
    } else if (strcmp(what, "kill_all") == 0) {
        result = kill(-1, 0);
    } else if (strcmp(what, "sigaction_high") == 0) {
        struct sigaction action = {0};
        action.sa_handler = SIG_DFL;
        result = syscall(SYS_rt_sigaction, (long)SIGSYS | (1L << 32), &action, NULL, 8);
    } else if (strcmp(what, "inotify") == 0) {
        int fd = inotify_init1(IN_CLOEXEC);
        result = fd < 0 ? -1 : inotify_add_watch(fd, path, IN_ALL_EVENTS);
    } else if (strcmp(what, "listen") == 0) {
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_un address = {.sun_family = AF_UNIX};
        size_t name = strnlen(path, sizeof address.sun_path - 1);
        memcpy(address.sun_path + 1, path, name);
        socklen_t length = (socklen_t)(sizeof(sa_family_t) + 1 + name);
        result = fd < 0 ? -1 : bind(fd, (struct sockaddr *)&address, length);
        if (result == 0) result = listen(fd, 1);
    } else if (strcmp(what, "pidfd_getfd") == 0) {
        long pidfd = syscall(SYS_pidfd_open, pid, 0);
        result = pidfd < 0 ? -1 : syscall(SYS_pidfd_getfd, pidfd, 0, 0);
    } else if (strcmp(what, "mq_open") == 0) {
        result = syscall(SYS_mq_open, path + (path[0] == '/'), O_RDWR, 0, NULL);
    } else if (strcmp(what, "keyctl") == 0) {
        result = syscall(SYS_keyctl, 0, -3, 0); /* KEYCTL_GET_KEYRING_ID of the session keyring */
    } else if (strcmp(what, "terminal") == 0) {
        int fd = open("/dev/tty", O_RDWR | O_CLOEXEC);
        char c = 'x';
        result = fd < 0 ? -1 : ioctl(fd, TIOCSTI, &c);
    } else {
        return SKILL_ERR_INVALID_ARGS;
    }
    if (result < 0) return fail(api, call, what);
    return done(api, call, "");
}

/* {"number": N, "path": "..."}: system call N with (AT_FDCWD, path, a 24-byte attribute block asking for the
   nodump flag, 24, 0) — file_setattr's arguments when N is 469 (Linux 6.17). */
static int raw_call(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    (void)state;
    double number = -1;
    char path[512], what[560];
    if (skill_json_get_number(args, "number", &number) != 0 || number < 0 || number > 4095 ||
        skill_json_get_string(args, "path", path, sizeof path) <= 0)
        return SKILL_ERR_INVALID_ARGS;
    unsigned long long attributes[3] = {0x80 /* FS_XFLAG_NODUMP */, 0, 0};
    snprintf(what, sizeof what, "system call %d on %s", (int)number, path);
    if (syscall((long)number, AT_FDCWD, path, attributes, sizeof attributes, 0) < 0) return fail(api, call, what);
    return done(api, call, "");
}

/* {"path": "..."}: opens a file for reading and sets its nodump flag with ioctl(FS_IOC_SETFLAGS). */
static int set_flags(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    (void)state;
    char path[512], what[560];
    if (skill_json_get_string(args, "path", path, sizeof path) <= 0) return SKILL_ERR_INVALID_ARGS;
    snprintf(what, sizeof what, "open %s", path);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return fail(api, call, what);
    long flags = 0x40; /* FS_NODUMP_FL */
    snprintf(what, sizeof what, "ioctl FS_IOC_SETFLAGS %s", path);
    int result = ioctl(fd, 0x40086602UL, &flags);
    int saved = errno;
    close(fd);
    errno = saved;
    if (result != 0) return fail(api, call, what);
    return done(api, call, "");
}

/* {"seconds": N}: eight threads call chmod on /etc/passwd (refused by the supervisor) in a loop for N seconds
   (at most 10); answers how many calls they made. */
static volatile int flood_stop;
static long flood_calls[8];
static void *flood_thread(void *slot) {
    long *calls = slot;
    while (!flood_stop) {
        chmod("/etc/passwd", 0644);
        (*calls)++;
    }
    return NULL;
}

static int metadata_flood(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    (void)state;
    double seconds = 1;
    skill_json_get_number(args, "seconds", &seconds);
    if (!(seconds > 0 && seconds <= 10)) return SKILL_ERR_INVALID_ARGS;
    pthread_t threads[8];
    flood_stop = 0;
    for (int i = 0; i < 8; i++) {
        flood_calls[i] = 0;
        if (pthread_create(&threads[i], NULL, flood_thread, &flood_calls[i]) != 0) return fail(api, call, "thread");
    }
    struct timespec pause = {(time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9)};
    nanosleep(&pause, NULL);
    flood_stop = 1;
    long total = 0;
    for (int i = 0; i < 8; i++) {
        pthread_join(threads[i], NULL);
        total += flood_calls[i];
    }
    char extra[64];
    snprintf(extra, sizeof extra, "\"calls\":%ld", total);
    return done(api, call, extra);
}

static const skill_descriptor skills[] = {
    SKILL_JSON("@NAME@_reach", "Reach", "Reaches another process or a shared kernel object.", OBJECT,
               SKILL_RISK_READ_ONLY, 0, reach),
    SKILL_JSON("@NAME@_metadata", "Metadata", "Changes a file's metadata.", OBJECT, SKILL_RISK_READ_ONLY, 0,
               change_metadata),
    SKILL_JSON("@NAME@_link", "Link", "Links or moves a file into its folder.", OBJECT, SKILL_RISK_READ_ONLY, 0,
               link_in),
    SKILL_JSON("@NAME@_other_abi", "Other ABI", "chmod through another ABI.", OBJECT, SKILL_RISK_READ_ONLY, 0,
               other_abi),
    SKILL_JSON("@NAME@_shm", "Shared memory", "Makes a System V segment.", OBJECT, SKILL_RISK_READ_ONLY, 0,
               shared_memory),
    SKILL_JSON("@NAME@_unix_datagram", "UNIX datagram", "Sends a datagram to a socket file.", OBJECT,
               SKILL_RISK_READ_ONLY, 0, unix_datagram),
    SKILL_JSON("@NAME@_spawn", "Spawn", "posix_spawn of /bin/true.", OBJECT, SKILL_RISK_READ_ONLY, 0, spawn_program),
    SKILL_JSON("@NAME@_clone_namespace", "Namespace", "Clones into a new user namespace.", OBJECT,
               SKILL_RISK_READ_ONLY, 0, clone_namespace),
    SKILL_JSON("@NAME@_capabilities", "Capabilities", "Reports its capabilities.", OBJECT, SKILL_RISK_READ_ONLY, 0,
               capabilities),
    SKILL_JSON("@NAME@_read", "Read", "Reads a file.", OBJECT, SKILL_RISK_READ_ONLY, 0, read_file),
    SKILL_JSON("@NAME@_set_flags", "Set flags", "Sets a file's nodump flag with ioctl.", OBJECT, SKILL_RISK_READ_ONLY,
               0, set_flags),
    SKILL_JSON("@NAME@_metadata_flood", "Metadata flood", "Floods the supervisor with chmod calls.", OBJECT,
               SKILL_RISK_READ_ONLY, 0, metadata_flood),
    SKILL_JSON("@NAME@_raw_call", "Raw call", "Makes a system call by number.", OBJECT, SKILL_RISK_READ_ONLY, 0,
               raw_call),
    SKILL_JSON("@NAME@_write", "Write", "Writes a file.", OBJECT, SKILL_RISK_READ_ONLY, 0, write_file),
    SKILL_JSON("@NAME@_connect", "Connect", "Connects to a loopback port.", OBJECT, SKILL_RISK_READ_ONLY, 0,
               connect_tcp),
    SKILL_JSON("@NAME@_bind", "Bind", "Binds a TCP port.", OBJECT, SKILL_RISK_READ_ONLY, 0, bind_tcp),
    SKILL_JSON("@NAME@_kill", "Kill", "Signals a process.", OBJECT, SKILL_RISK_READ_ONLY, 0, kill_process),
    SKILL_JSON("@NAME@_ptrace", "Trace", "Attaches to the host.", OBJECT, SKILL_RISK_READ_ONLY, 0, trace_host),
    SKILL_JSON("@NAME@_exec", "Exec", "Runs /bin/sh.", OBJECT, SKILL_RISK_READ_ONLY, 0, run_shell),
    SKILL_JSON("@NAME@_fork_bomb", "Fork bomb", "Forks many children.", OBJECT, SKILL_RISK_READ_ONLY, 0, fork_bomb),
    SKILL_JSON("@NAME@_proc_mem", "Memory", "Opens another process's memory.", OBJECT, SKILL_RISK_READ_ONLY, 0,
               proc_mem),
    SKILL_JSON("@NAME@_env", "Environment", "Reads a variable.", OBJECT, SKILL_RISK_READ_ONLY, 0, read_env),
    SKILL_JSON("@NAME@_daemon", "Daemon", "Starts a grandchild in its own session.", OBJECT, SKILL_RISK_READ_ONLY, 0,
               daemonize),
};

static const char *const read_paths[] = {@READ_PATHS@ NULL};

SKILL_PLUGIN_EX("@NAME@", "1.0.0", "Tries to escape its confinement", skills, NULL, NULL, NULL, @CAPS@, read_paths,
                NULL)
