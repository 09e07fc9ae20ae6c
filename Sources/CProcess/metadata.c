/* Metadata changes by a confined process: the supervision itself. Landlock does not cover a file's mode, owner,
   times or extended attributes, so the filter hands every such call to a supervisor (SECCOMP_RET_USER_NOTIF) —
   a thread of the host, or for a sandboxed program a process forked before it confined itself (metadata_start.c)
   — which holds no capability and makes the change only when the object lies beneath what the caller may write
   and is not a device, and refuses it with EPERM otherwise. It resolves the object itself (from the caller's own
   descriptors and working folder, through /proc) and acts on what it resolved, never on a path a second time, so
   neither the caller's memory nor a symlink swapped meanwhile can point it elsewhere. */
#define _GNU_SOURCE
#include "metadata.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>
#include <utime.h>

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif
#ifndef SYS_setxattrat
#define SYS_setxattrat 463
#endif
#ifndef SYS_removexattrat
#define SYS_removexattrat 466
#endif

const char *const skillhost_metadata_names[] = {
#ifdef SYS_chmod
    "chmod", "chown", "lchown", "utime", "utimes", "futimesat",
#endif
    "fchmod", "fchmodat", "fchmodat2", "fchown", "fchownat", "utimensat", "setxattr", "lsetxattr", "fsetxattr",
    "removexattr", "lremovexattr", "fremovexattr", "setxattrat", "removexattrat",
};
const int skillhost_metadata_numbers[] = {
#ifdef SYS_chmod
    SYS_chmod, SYS_chown, SYS_lchown, SYS_utime, SYS_utimes, SYS_futimesat,
#endif
    SYS_fchmod, SYS_fchmodat, SYS_fchmodat2, SYS_fchown, SYS_fchownat, SYS_utimensat, SYS_setxattr,
    SYS_lsetxattr, SYS_fsetxattr, SYS_removexattr, SYS_lremovexattr, SYS_fremovexattr, SYS_setxattrat,
    SYS_removexattrat,
};
const int skillhost_metadata_count = sizeof skillhost_metadata_numbers / sizeof skillhost_metadata_numbers[0];

static const char *name_of(int number) {
    for (int i = 0; i < skillhost_metadata_count; i++)
        if (skillhost_metadata_numbers[i] == number) return skillhost_metadata_names[i];
    return "a metadata call";
}

/* ---------------------------------------------------------------------------------------------- the request */

enum operation { CHMOD, CHOWN, TIMES, SET_XATTR, REMOVE_XATTR, XATTR_ARGS };
enum times_kind { TIMESPEC, TIMEVAL, UTIMBUF };

struct request {
    enum operation op;
    int fd_form;        /* the object is descriptor `fd` itself */
    int fd;             /* the object (fd form) or the folder a relative path starts from */
    uint64_t path;      /* address of the path (path form) */
    int nofollow, empty_path;
    unsigned long mode, uid, gid;
    enum times_kind times_kind;
    uint64_t times;     /* address, 0 for "now" */
    uint64_t name, value, args;
    size_t size;
    int xattr_flags;
};

static void decode(const struct seccomp_data *data, struct request *r) {
    const __u64 *a = data->args;
    memset(r, 0, sizeof *r);
    int n = data->nr;
#ifdef SYS_chmod
    if (n == SYS_chmod) *r = (struct request){.op = CHMOD, .fd = AT_FDCWD, .path = a[0], .mode = a[1]};
    else if (n == SYS_chown || n == SYS_lchown)
        *r = (struct request){.op = CHOWN, .fd = AT_FDCWD, .path = a[0], .uid = a[1], .gid = a[2],
                              .nofollow = n == SYS_lchown};
    else if (n == SYS_utime) *r = (struct request){.op = TIMES, .fd = AT_FDCWD, .path = a[0], .times = a[1],
                                                   .times_kind = UTIMBUF};
    else if (n == SYS_utimes) *r = (struct request){.op = TIMES, .fd = AT_FDCWD, .path = a[0], .times = a[1],
                                                    .times_kind = TIMEVAL};
    else if (n == SYS_futimesat) *r = (struct request){.op = TIMES, .fd = (int)a[0], .path = a[1], .times = a[2],
                                                       .times_kind = TIMEVAL};
    else
#endif
    if (n == SYS_fchmod) *r = (struct request){.op = CHMOD, .fd_form = 1, .fd = (int)a[0], .mode = a[1]};
    else if (n == SYS_fchmodat) *r = (struct request){.op = CHMOD, .fd = (int)a[0], .path = a[1], .mode = a[2]};
    else if (n == SYS_fchmodat2)
        *r = (struct request){.op = CHMOD, .fd = (int)a[0], .path = a[1], .mode = a[2],
                              .nofollow = (a[3] & AT_SYMLINK_NOFOLLOW) != 0, .empty_path = (a[3] & AT_EMPTY_PATH) != 0};
    else if (n == SYS_fchown)
        *r = (struct request){.op = CHOWN, .fd_form = 1, .fd = (int)a[0], .uid = a[1], .gid = a[2]};
    else if (n == SYS_fchownat)
        *r = (struct request){.op = CHOWN, .fd = (int)a[0], .path = a[1], .uid = a[2], .gid = a[3],
                              .nofollow = (a[4] & AT_SYMLINK_NOFOLLOW) != 0, .empty_path = (a[4] & AT_EMPTY_PATH) != 0};
    else if (n == SYS_utimensat)
        *r = (struct request){.op = TIMES, .fd_form = a[1] == 0, .fd = (int)a[0], .path = a[1], .times = a[2],
                              .times_kind = TIMESPEC, .nofollow = (a[3] & AT_SYMLINK_NOFOLLOW) != 0,
                              .empty_path = (a[3] & AT_EMPTY_PATH) != 0};
    else if (n == SYS_setxattr || n == SYS_lsetxattr)
        *r = (struct request){.op = SET_XATTR, .fd = AT_FDCWD, .path = a[0], .name = a[1], .value = a[2],
                              .size = a[3], .xattr_flags = (int)a[4], .nofollow = n == SYS_lsetxattr};
    else if (n == SYS_fsetxattr)
        *r = (struct request){.op = SET_XATTR, .fd_form = 1, .fd = (int)a[0], .name = a[1], .value = a[2],
                              .size = a[3], .xattr_flags = (int)a[4]};
    else if (n == SYS_removexattr || n == SYS_lremovexattr)
        *r = (struct request){.op = REMOVE_XATTR, .fd = AT_FDCWD, .path = a[0], .name = a[1],
                              .nofollow = n == SYS_lremovexattr};
    else if (n == SYS_fremovexattr)
        *r = (struct request){.op = REMOVE_XATTR, .fd_form = 1, .fd = (int)a[0], .name = a[1]};
    else if (n == SYS_setxattrat)
        *r = (struct request){.op = XATTR_ARGS, .fd = (int)a[0], .path = a[1], .name = a[3], .args = a[4],
                              .size = a[5], .nofollow = (a[2] & AT_SYMLINK_NOFOLLOW) != 0,
                              .empty_path = (a[2] & AT_EMPTY_PATH) != 0};
    else if (n == SYS_removexattrat)
        *r = (struct request){.op = REMOVE_XATTR, .fd = (int)a[0], .path = a[1], .name = a[3],
                              .nofollow = (a[2] & AT_SYMLINK_NOFOLLOW) != 0, .empty_path = (a[2] & AT_EMPTY_PATH) != 0};
}

/* ----------------------------------------------------------------------------------------- the supervisor */

/* Reads `length` bytes at `address` of the caller. 0 or an errno value. */
static int read_memory(int memory, uint64_t address, void *buffer, size_t length) {
    size_t got = 0;
    while (got < length) {
        ssize_t n = pread(memory, (char *)buffer + got, length - got, (off_t)(address + got));
        if (n <= 0) return EFAULT;
        got += (size_t)n;
    }
    return 0;
}

/* Reads a NUL-terminated string of the caller, a page at a time (a string may end just before an unmapped page). */
static int read_string(int memory, uint64_t address, char *buffer, size_t size) {
    size_t got = 0;
    while (got + 1 < size) {
        size_t chunk = 4096 - (size_t)((address + got) % 4096);
        if (chunk > size - 1 - got) chunk = size - 1 - got;
        ssize_t n = pread(memory, buffer + got, chunk, (off_t)(address + got));
        if (n <= 0) return EFAULT;
        if (memchr(buffer + got, 0, (size_t)n) != NULL) return 0;
        got += (size_t)n;
    }
    return ENAMETOOLONG;
}

/* Whether `path` (canonical) lies beneath one of the roots the caller may write. */
static int beneath_roots(const struct skillhost_supervised *supervised, const char *path) {
    for (int i = 0; i < supervised->root_count; i++) {
        const char *root = supervised->roots[i];
        size_t length = strlen(root);
        if (strncmp(path, root, length) == 0 && (path[length] == 0 || path[length] == '/' || strcmp(root, "/") == 0))
            return 1;
    }
    return 0;
}

/* Notes a refusal for the caller's thread, in memory the caller shares (and may scribble on: every index taken
   from it is bounded here). */
static void record(const struct skillhost_supervised *supervised, int tid, const char *call, const char *what) {
    struct skillhost_refusals *refusals = supervised->refusals;
    if (refusals != NULL) {
        /* This thread's slot, else a free one (one more pending), else the next in turn (still as many). */
        int index = -1, fresh = 0;
        for (int i = 0; i < SKILLHOST_REFUSAL_SLOTS && index < 0; i++)
            if (__atomic_load_n(&refusals->slot[i].tid, __ATOMIC_ACQUIRE) == tid) index = i;
        for (int i = 0; i < SKILLHOST_REFUSAL_SLOTS && index < 0; i++)
            if (__atomic_load_n(&refusals->slot[i].tid, __ATOMIC_ACQUIRE) == 0) index = i, fresh = 1;
        if (index < 0) {
            unsigned next = __atomic_fetch_add(&refusals->next, 1U, __ATOMIC_RELAXED);
            index = (int)(next % SKILLHOST_REFUSAL_SLOTS);
        }
        __atomic_store_n(&refusals->slot[index].tid, -1, __ATOMIC_RELEASE);
        snprintf(refusals->slot[index].text, sizeof refusals->slot[index].text, "%s() of %s", call, what);
        __atomic_store_n(&refusals->slot[index].tid, tid, __ATOMIC_RELEASE);
        if (fresh) __atomic_add_fetch(&refusals->pending, 1, __ATOMIC_ACQ_REL);
    }
    if (!supervised->log_to_stderr) return;
    char line[400];
    int length = snprintf(line, sizeof line, "skillhost worker: blocked %s() of %s\n", call, what);
    if (length > 0) (void)!write(2, line, (size_t)length < sizeof line ? (size_t)length : sizeof line - 1);
}

/* What open_object answers for a path into another process's /proc entries (never an errno value). */
enum { NOT_THE_CALLERS = -100000 };

/* `path` with repeated slashes and "." components dropped (".." is kept, not resolved), into `out`: how /proc is
   recognised however it is spelt. Returns whether a component is "..". */
static int tidy(const char *path, char *out, size_t size) {
    size_t used = 0;
    int parent = 0;
    const char *at = path;
    if (*at == '/' && used + 1 < size) out[used++] = '/';
    while (*at) {
        while (*at == '/') at++;
        const char *end = strchr(at, '/');
        size_t length = end ? (size_t)(end - at) : strlen(at);
        if (length == 0) break;
        if (!(length == 1 && at[0] == '.')) {
            if (length == 2 && at[0] == '.' && at[1] == '.') parent = 1;
            if (used > 0 && out[used - 1] != '/' && used + 1 < size) out[used++] = '/';
            for (size_t i = 0; i < length && used + 1 < size; i++) out[used++] = at[i];
        }
        at += length;
    }
    out[used] = 0;
    return parent;
}

/* Whether `path` is exactly one of the caller's own descriptors: /proc/self/fd/N or /proc/thread-self/fd/N. */
static int names_own_descriptor(const char *path) {
    char tidied[PATH_MAX];
    if (tidy(path, tidied, sizeof tidied)) return 0;
    const char *digits = strncmp(tidied, "/proc/self/fd/", 14) == 0          ? tidied + 14
                         : strncmp(tidied, "/proc/thread-self/fd/", 21) == 0 ? tidied + 21
                                                                             : NULL;
    if (digits == NULL || *digits == 0) return 0;
    for (; *digits; digits++)
        if (*digits < '0' || *digits > '9') return 0;
    return 1;
}

/* Opens the object a request names, as the caller sees it (its descriptors and working folder, through /proc).
   A descriptor, -errno, or NOT_THE_CALLERS. */
static int open_object(pid_t tid, int memory, const struct request *r, char *shown, size_t shown_size) {
    char link[64];
    if (r->fd_form) {
        snprintf(link, sizeof link, "/proc/%d/fd/%d", tid, r->fd);
        snprintf(shown, shown_size, "descriptor %d", r->fd);
        int object = open(link, O_PATH | O_CLOEXEC);
        return object >= 0 ? object : -EBADF;
    }
    char path[PATH_MAX];
    int failed = read_string(memory, r->path, path, sizeof path);
    if (failed) return -failed;
    snprintf(shown, shown_size, "%s", path);
    if (r->fd == AT_FDCWD) snprintf(link, sizeof link, "/proc/%d/cwd", tid);
    else snprintf(link, sizeof link, "/proc/%d/fd/%d", tid, r->fd);
    int base = path[0] == '/' ? -1 : open(link, O_PATH | O_CLOEXEC);
    if (path[0] != '/' && base < 0) return -EBADF;
    int object;
    if (path[0] == 0) {
        object = r->empty_path ? base : -ENOENT;
        base = -1;
    } else {
        /* /proc/self means the caller here, not this process (the C library's lchmod goes through
           /proc/self/fd/N); whatever the path reaches, the object is checked where it lies. */
        const char *resolved = path;
        char translated[PATH_MAX + 32], tidied[PATH_MAX];
        int parent = tidy(path, tidied, sizeof tidied);
        int own = (strncmp(tidied, "/proc/self/", 11) == 0 || strncmp(tidied, "/proc/thread-self/", 18) == 0) &&
                  !parent;
        if (own) {
            snprintf(translated, sizeof translated, "/proc/%d/%s", tid, strchr(tidied + 6, '/') + 1);
            resolved = translated;
        } else if (strncmp(tidied, "/proc/", 6) == 0 || strcmp(tidied, "/proc") == 0 ||
                   (parent && strstr(tidied, "proc") != NULL)) {
            /* Another process's entries (its descriptors, its working folder), however spelt, are not the
               caller's to name: this process could open them where the caller cannot. */
            if (base >= 0) close(base);
            return NOT_THE_CALLERS;
        }
        object = openat(base >= 0 ? base : AT_FDCWD, resolved, O_PATH | O_CLOEXEC | (r->nofollow ? O_NOFOLLOW : 0));
        if (object < 0) object = -errno;
    }
    if (base >= 0) close(base);
    return object;
}

/* Handles one request; the result the call returns (0 or -errno). */
static long handle(const struct skillhost_supervised *supervised, const struct seccomp_notif *notification) {
    int listener = supervised->listener;
    struct request r;
    decode(&notification->data, &r);
    const char *call = name_of(notification->data.nr);
    pid_t tid = (pid_t)notification->pid;
    char file[64];
    snprintf(file, sizeof file, "/proc/%d/mem", tid);
    int memory = open(file, O_RDONLY | O_CLOEXEC);
    if (memory < 0) {
        record(supervised, tid, call, "a file (skillhost cannot read the caller's request)");
        return -EPERM;
    }
    char shown[PATH_MAX + 32];
    int object = open_object(tid, memory, &r, shown, sizeof shown);
    /* Everything read from the caller must still be the request's: the caller has not died and been replaced. */
    uint64_t id = notification->id;
    if (ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) != 0) {
        if (object >= 0) close(object);
        close(memory);
        return -EPERM;
    }
    if (object == NOT_THE_CALLERS) {
        record(supervised, tid, call, shown);
        close(memory);
        return -EPERM;
    }
    if (object < 0) {
        close(memory);
        return object;
    }
    long result = 0;
    char where[PATH_MAX + 32], proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", object);
    ssize_t length = readlink(proc, where, sizeof where - 1);
    where[length > 0 ? length : 0] = 0;
    /* A refusal names what the caller asked for: its path as given, or the file its own descriptor holds (which it
       opened, and can read back itself; the C library's lchmod names one as /proc/self/fd/N) — never where a path
       led (another process's files, through a link). */
    int own_descriptor = r.fd_form || names_own_descriptor(shown);
    const char *named = own_descriptor && where[0] == '/' ? where : shown;
    struct stat status;
    if (fstat(object, &status) != 0) {
        result = -errno;
    } else if (S_ISCHR(status.st_mode) || S_ISBLK(status.st_mode)) {
        /* A device: even /dev/null's mode is the whole system's. */
        char what[PATH_MAX + 64];
        snprintf(what, sizeof what, "the device %s", named);
        record(supervised, tid, call, what);
        result = -EPERM;
    } else if (where[0] != '/' || strstr(where, " (deleted)") != NULL || !beneath_roots(supervised, where)) {
        record(supervised, tid, call, named);
        result = -EPERM;
    } else if (r.op == CHMOD) {
        if (r.mode & (S_ISUID | S_ISGID)) {
            char what[PATH_MAX + 64];
            snprintf(what, sizeof what, "%s with the set-user-ID or set-group-ID bit", named);
            record(supervised, tid, call, what);
            result = -EPERM;
        } else if (S_ISLNK(status.st_mode)) {
            result = -EOPNOTSUPP;
        } else {
            result = chmod(proc, (mode_t)(r.mode & 07777)) == 0 ? 0 : -errno;
        }
    } else if (r.op == CHOWN) {
        result = fchownat(object, "", (uid_t)r.uid, (gid_t)r.gid, AT_EMPTY_PATH) == 0 ? 0 : -errno;
    } else if (r.op == TIMES) {
        struct timespec times[2];
        int now = r.times == 0;
        if (!now && r.times_kind == TIMESPEC) {
            result = -read_memory(memory, r.times, times, sizeof times);
        } else if (!now && r.times_kind == TIMEVAL) {
            struct timeval values[2];
            result = -read_memory(memory, r.times, values, sizeof values);
            for (int i = 0; i < 2; i++) times[i] = (struct timespec){values[i].tv_sec, values[i].tv_usec * 1000};
        } else if (!now) {
            struct utimbuf value;
            result = -read_memory(memory, r.times, &value, sizeof value);
            times[0] = (struct timespec){value.actime, 0};
            times[1] = (struct timespec){value.modtime, 0};
        }
        if (result == 0 && S_ISLNK(status.st_mode)) result = -EPERM;
        if (result == 0) result = utimensat(AT_FDCWD, proc, now ? NULL : times, 0) == 0 ? 0 : -errno;
    } else {
        char name[XATTR_NAME_MAX + 1];
        static char value[XATTR_SIZE_MAX];
        int failed = read_string(memory, r.name, name, sizeof name);
        if (failed) result = failed == ENAMETOOLONG ? -ERANGE : -failed;
        if (result == 0 && r.op == XATTR_ARGS) {
            struct {
                uint64_t value;
                uint32_t size, flags;
            } args = {0, 0, 0};
            if (r.size < sizeof args) result = -EINVAL;
            else result = -read_memory(memory, r.args, &args, sizeof args);
            r.value = args.value;
            r.size = args.size;
            r.xattr_flags = (int)args.flags;
            r.op = SET_XATTR;
        }
        if (result == 0 && S_ISLNK(status.st_mode)) result = -EPERM;
        if (result == 0 && r.op == SET_XATTR) {
            if (r.size > sizeof value) result = -E2BIG;
            else if (r.size > 0) result = -read_memory(memory, r.value, value, r.size);
            if (result == 0) result = setxattr(proc, name, value, r.size, r.xattr_flags) == 0 ? 0 : -errno;
        } else if (result == 0) {
            result = removexattr(proc, name) == 0 ? 0 : -errno;
        }
    }
    close(object);
    close(memory);
    return result;
}

int skillhost_metadata_answer(const struct skillhost_supervised *supervised) {
    static __thread struct seccomp_notif *notification;
    static __thread struct seccomp_notif_resp *response;
    static __thread struct seccomp_notif_sizes sizes;
    if (notification == NULL) {
        if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) != 0) return -1;
        notification = calloc(1, sizes.seccomp_notif > sizeof *notification ? sizes.seccomp_notif : sizeof *notification);
        response = calloc(1, sizes.seccomp_notif_resp > sizeof *response ? sizes.seccomp_notif_resp : sizeof *response);
        if (notification == NULL || response == NULL) return -1;
    }
    memset(notification, 0, sizes.seccomp_notif);
    if (ioctl(supervised->listener, SECCOMP_IOCTL_NOTIF_RECV, notification) != 0)
        return errno == EINTR || errno == ENOENT ? 0 : -1;
    long result = handle(supervised, notification);
    memset(response, 0, sizes.seccomp_notif_resp);
    response->id = notification->id;
    response->error = (int)(result < 0 ? result : 0);
    response->val = 0;
    (void)ioctl(supervised->listener, SECCOMP_IOCTL_NOTIF_SEND, response); /* ENOENT: the caller went away */
    return 0;
}
