/* Landlock for a confined process: the ruleset its lists make (files, TCP, signal and abstract-socket scoping), the
   paths opened ahead of it (skillhost_confine_open_ahead) and a ruleset built ahead of it
   (skillhost_confine_files_prepare). confine.c applies it, before the system-call filter. */
#define _GNU_SOURCE
#include "process_support.h"
#include "confine_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Declared here: Debian's kernel headers (linux-libc-dev 6.1) stop at Landlock ABI 2. */
struct confine_ruleset_attr {
    __u64 handled_access_fs;
    __u64 handled_access_net;
    __u64 scoped;
};
struct confine_path_beneath {
    __u64 allowed_access;
    __s32 parent_fd;
} __attribute__((packed));

enum {
    FS_EXECUTE = 1ULL << 0,
    FS_WRITE_FILE = 1ULL << 1,
    FS_READ_FILE = 1ULL << 2,
    FS_READ_DIR = 1ULL << 3,
    FS_MAKE_CHAR = 1ULL << 6,
    FS_MAKE_BLOCK = 1ULL << 11,
    FS_TRUNCATE = 1ULL << 14,
    FS_IOCTL_DEV = 1ULL << 15,
    NET_BIND_TCP = 1ULL << 0,
    NET_CONNECT_TCP = 1ULL << 1,
    SCOPE_ABSTRACT_UNIX = 1ULL << 0,
    SCOPE_SIGNAL = 1ULL << 1,
};

#ifndef LANDLOCK_CREATE_RULESET_VERSION
#define LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#endif

int skillhost_landlock_abi(void) {
    long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
    return abi < 0 ? 0 : (int)abi;
}

/* Every filesystem right each ABI knows (ABI 1: bits 0–12, 2: REFER, 3: TRUNCATE, 5: IOCTL_DEV). */
static __u64 fs_rights(int abi) {
    __u64 rights = (1ULL << 13) - 1;
    if (abi >= 2) rights |= 1ULL << 13;
    if (abi >= 3) rights |= FS_TRUNCATE;
    if (abi >= 5) rights |= FS_IOCTL_DEV;
    return rights;
}

/* The rights that apply to a file (not a directory): a rule on a file with directory rights is EINVAL. */
static __u64 file_rights(__u64 rights) {
    return rights & (FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV);
}

/* Paths opened ahead (skillhost_confine_open_ahead), for this process's next confinement: each `fd` an O_PATH
   descriptor (-1 once used), `directory` whether it is one. */
static struct {
    char *path;
    int fd, directory;
} opened[SKILLHOST_OPEN_AHEAD_MAX];
static int opened_count, opened_next;

/* This process's own /proc directory (O_PATH), for the paths under /proc/self, and the process it was opened in (a
   forked child opens its own). */
static int own_proc = -1;
static pid_t own_proc_owner;

/* An O_PATH descriptor of `path`; one under /proc/self is opened beneath the process's /proc directory, looked up
   once (resolving /proc/self again for each path costs about 4 µs a path). */
static int open_o_path(const char *path) {
    if (strncmp(path, "/proc/self/", 11) == 0 && path[11] && !strchr(path + 11, '/')) {
        pid_t pid = getpid();
        if (own_proc < 0 || own_proc_owner != pid) {
            own_proc = open("/proc/self", O_PATH | O_DIRECTORY | O_CLOEXEC);
            own_proc_owner = pid;
        }
        if (own_proc >= 0) return openat(own_proc, path + 11, O_PATH | O_CLOEXEC);
    }
    return open(path, O_PATH | O_CLOEXEC);
}

/* An O_PATH descriptor of `path` and whether it is a directory: opened ahead (and so handed over), or now. -1 when
   it does not exist. */
static int open_path(const char *path, int *directory) {
    /* The lists come in the order they were opened ahead in: the search starts after the last one found. */
    for (int n = 0; n < opened_count; n++) {
        int i = (opened_next + n) % opened_count;
        if (opened[i].path && strcmp(opened[i].path, path) == 0) {
            int fd = opened[i].fd;
            *directory = opened[i].directory;
            opened[i].fd = -1;
            free(opened[i].path);
            opened[i].path = NULL;
            opened_next = i + 1;
            return fd;
        }
    }
    int fd = open_o_path(path);
    struct stat status;
    *directory = fd >= 0 && fstat(fd, &status) == 0 && S_ISDIR(status.st_mode);
    return fd;
}

static int prepared_here(void);
static int prepared_holds(const char *path);

int skillhost_confine_open_ahead(const char *const *paths, int count) {
    /* At most half the descriptors the process may have (a worker's limit may be low), and only paths that opened:
       any other is opened again when it is needed, as without this. */
    struct rlimit limit;
    long most = getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY ? (long)limit.rlim_cur / 2
                                                                                            : 1L << 20;
    int added = 0;
    int prepared_too = prepared_here();
    for (int i = 0; i < count && opened_count < SKILLHOST_OPEN_AHEAD_MAX; i++) {
        if (prepared_too && prepared_holds(paths[i])) continue; /* its rule is there already */
        int fd = open_o_path(paths[i]);
        if (fd < 0) continue;
        char *copy = fd < most ? strdup(paths[i]) : NULL;
        if (!copy) {
            close(fd);
            break;
        }
        struct stat status;
        opened[opened_count].path = copy;
        opened[opened_count].fd = fd;
        opened[opened_count].directory = fstat(fd, &status) == 0 && S_ISDIR(status.st_mode);
        opened_count++;
        added++;
    }
    return added;
}

/* Closes what was opened ahead and not used. */
void skillhost_landlock_forget_opened(void) {
    for (int i = 0; i < opened_count; i++) {
        if (opened[i].fd >= 0) close(opened[i].fd);
        free(opened[i].path);
    }
    opened_count = opened_next = 0;
    if (own_proc >= 0 && own_proc_owner == getpid()) close(own_proc);
    own_proc = -1;
}

/* Adds a rule for `path`; a path that does not exist is skipped (0). */
static int allow_path(int ruleset, const char *path, __u64 rights) {
    int directory;
    int fd = open_path(path, &directory);
    if (fd < 0) return 0;
    if (!directory) rights = file_rights(rights);
    struct confine_path_beneath rule = {.allowed_access = rights, .parent_fd = fd};
    int result = syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0) == 0 ? 0 : errno;
    close(fd);
    return result;
}

/* Adds a rule for each of `count` paths, but those `covered` marks (a prepared ruleset has them). */
static int allow_all(int ruleset, const char *const *paths, int count, __u64 rights, const char *covered) {
    for (int i = 0; i < count; i++) {
        if (covered && covered[i]) continue;
        int result = allow_path(ruleset, paths[i], rights);
        if (result != 0) return result;
    }
    return 0;
}

int skillhost_landlock_effective_abi(const struct skillhost_confinement *spec) {
    int abi = skillhost_landlock_abi();
    return spec->maximum_abi >= 0 && abi > spec->maximum_abi ? spec->maximum_abi : abi;
}

/* The ruleset's handled rights for `spec`: every filesystem right `abi` knows, TCP unless it may use the network,
   scoping where the kernel has it. */
static size_t ruleset_attributes(const struct skillhost_confinement *spec, int abi, struct confine_ruleset_attr *attr) {
    *attr = (struct confine_ruleset_attr){.handled_access_fs = fs_rights(abi)};
    size_t size = sizeof(__u64);
    if (abi >= 4 && !spec->network) {
        attr->handled_access_net = NET_BIND_TCP | NET_CONNECT_TCP;
        size = 2 * sizeof(__u64);
    }
    if (abi >= 6) {
        attr->scoped = SCOPE_ABSTRACT_UNIX | SCOPE_SIGNAL;
        size = sizeof *attr;
    }
    return size;
}

/* The three lists of a confinement and the rights each grants. Never device nodes, even where it may write: a
   block device of its own would be the whole disk. */
struct path_list {
    const char *const *paths;
    int count;
    __u64 rights;
};

static void path_lists(const struct skillhost_confinement *spec, int abi, struct path_list lists[3]) {
    __u64 all = fs_rights(abi) & ~(FS_MAKE_CHAR | FS_MAKE_BLOCK), read = FS_READ_FILE | FS_READ_DIR;
    lists[0] = (struct path_list){spec->execute_paths, spec->execute_count, read | FS_EXECUTE};
    lists[1] = (struct path_list){spec->read_paths, spec->read_count, read};
    lists[2] = (struct path_list){spec->write_paths, spec->write_count, all & ~FS_EXECUTE};
}

/* A ruleset built ahead: its rules, each path with the list it came from and the file it named then. */
struct prepared_rule {
    char *path;
    int list;
    dev_t device;
    ino_t inode;
};
static struct {
    int ruleset; /* -1: none */
    int abi, network;
    int checked; /* every path was found to name its file still (skillhost_confine_files_check_prepared) */
    pid_t owner; /* the process that built it: a forked child does not share it (its rules would be the parent's) */
    struct prepared_rule *rules;
    int count;
} prepared = {.ruleset = -1};

/* The prepared ruleset, when this process built it; a copy inherited through fork is closed here. */
static int prepared_here(void) {
    if (prepared.ruleset >= 0 && prepared.owner != getpid()) skillhost_confine_files_discard_prepared();
    return prepared.ruleset >= 0;
}

/* Whether the prepared ruleset holds a rule for `path` (the caller asked prepared_here). */
static int prepared_holds(const char *path) {
    for (int i = 0; prepared.ruleset >= 0 && i < prepared.count; i++)
        if (strcmp(prepared.rules[i].path, path) == 0) return 1;
    return 0;
}

static int still_names_its_file(const struct prepared_rule *rule) {
    struct stat status;
    return stat(rule->path, &status) == 0 && status.st_dev == rule->device && status.st_ino == rule->inode;
}

void skillhost_confine_files_trust_prepared(void) {
    if (prepared_here()) prepared.checked = 1;
}

void skillhost_confine_files_check_prepared(void) {
    if (!prepared_here() || prepared.checked) return;
    for (int i = 0; prepared.ruleset >= 0 && i < prepared.count; i++)
        if (!still_names_its_file(&prepared.rules[i])) skillhost_confine_files_discard_prepared();
    if (prepared.ruleset >= 0) prepared.checked = 1;
}

void skillhost_confine_files_discard_prepared(void) {
    if (prepared.ruleset >= 0) close(prepared.ruleset);
    for (int i = 0; i < prepared.count; i++) free(prepared.rules[i].path);
    free(prepared.rules);
    prepared.rules = NULL;
    prepared.count = 0;
    prepared.ruleset = -1;
    prepared.checked = 0;
}

int skillhost_confine_files_prepare(const struct skillhost_confinement *spec) {
    skillhost_confine_files_discard_prepared();
    int abi = skillhost_landlock_effective_abi(spec);
    /* Everywhere-rules are one rule on "/": nothing to gain. */
    if (abi < 1 || spec->read_anywhere || spec->write_anywhere) return 0;
    struct confine_ruleset_attr attr;
    size_t size = ruleset_attributes(spec, abi, &attr);
    long ruleset = syscall(SYS_landlock_create_ruleset, &attr, size, 0);
    if (ruleset < 0) return errno;
    struct path_list lists[3];
    path_lists(spec, abi, lists);
    int total = lists[0].count + lists[1].count + lists[2].count;
    prepared.ruleset = (int)ruleset;
    prepared.owner = getpid();
    prepared.abi = abi;
    prepared.network = spec->network;
    prepared.rules = calloc((size_t)(total > 0 ? total : 1), sizeof *prepared.rules);
    if (!prepared.rules) {
        skillhost_confine_files_discard_prepared();
        return ENOMEM;
    }
    for (int list = 0; list < 3; list++) {
        for (int i = 0; i < lists[list].count; i++) {
            const char *path = lists[list].paths[i];
            /* Not /proc: an entry of the process's own directory is made anew when it is looked up again, so a
               rule on the one seen now may not hold for the next (they are cheap to add with the launch). */
            if (strncmp(path, "/proc/", 6) == 0) continue;
            int fd = open(path, O_PATH | O_CLOEXEC);
            if (fd < 0) continue; /* added with the launch if it exists by then */
            struct stat status;
            int result = fstat(fd, &status) == 0 ? 0 : errno;
            char *copy = result == 0 ? strdup(path) : NULL;
            if (result == 0 && !copy) result = ENOMEM;
            if (result == 0) {
                __u64 rights = S_ISDIR(status.st_mode) ? lists[list].rights : file_rights(lists[list].rights);
                struct confine_path_beneath rule = {.allowed_access = rights, .parent_fd = fd};
                if (syscall(SYS_landlock_add_rule, prepared.ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0) != 0)
                    result = errno;
            }
            close(fd);
            if (result != 0) {
                free(copy);
                skillhost_confine_files_discard_prepared();
                return result;
            }
            prepared.rules[prepared.count++] =
                (struct prepared_rule){copy, list, status.st_dev, status.st_ino};
        }
    }
    return 0;
}

/* The prepared ruleset, when it fits `spec`: made with the same choices, each of its rules one `spec` makes too (in
   the same list), and each path still naming the file it named then (the host's word that its watch saw nothing
   change, prepared_watch.c, else one stat a path, against the open, add and close a rule costs; a file replaced
   since — a library upgraded, /etc/resolv.conf rewritten — does not match).
   Marks in `covered` (one flag per path of the three lists, in order) what it holds. -1 when none fits; the
   prepared ruleset is given up either way. */
static int take_prepared(const struct skillhost_confinement *spec, int abi, const struct path_list lists[3],
                         char *covered) {
    int ruleset = -1;
    if (prepared_here() && prepared.abi == abi && prepared.network == spec->network && !spec->read_anywhere &&
        !spec->write_anywhere) {
        int offsets[3] = {0, lists[0].count, lists[0].count + lists[1].count}, next[3] = {0, 0, 0}, fits = 1;
        for (int r = 0; r < prepared.count && fits; r++) {
            const struct prepared_rule *rule = &prepared.rules[r];
            const struct path_list *list = &lists[rule->list];
            /* The lists come in the order they were prepared in: the search starts after the last one found. */
            int found = -1;
            for (int n = 0; n < list->count && found < 0; n++) {
                int i = (next[rule->list] + n) % list->count;
                if (!covered[offsets[rule->list] + i] && strcmp(list->paths[i], rule->path) == 0) found = i;
            }
            fits = found >= 0 && (prepared.checked || still_names_its_file(rule));
            if (fits) {
                covered[offsets[rule->list] + found] = 1;
                next[rule->list] = found + 1;
            }
        }
        if (fits) {
            ruleset = prepared.ruleset;
            prepared.ruleset = -1;
        } else {
            memset(covered, 0, (size_t)(lists[0].count + lists[1].count + lists[2].count));
        }
    }
    skillhost_confine_files_discard_prepared();
    return ruleset;
}

int skillhost_landlock_apply(const struct skillhost_confinement *spec, int abi, int *applied) {
    struct confine_ruleset_attr attr;
    size_t size = ruleset_attributes(spec, abi, &attr);
    struct path_list lists[3];
    path_lists(spec, abi, lists);
    int total = lists[0].count + lists[1].count + lists[2].count;
    char *covered = calloc((size_t)(total > 0 ? total : 1), 1);
    if (!covered) {
        skillhost_confine_files_discard_prepared();
        return ENOMEM;
    }
    int fd = take_prepared(spec, abi, lists, covered);
    if (fd < 0) {
        long ruleset = syscall(SYS_landlock_create_ruleset, &attr, size, 0);
        if (ruleset < 0) {
            free(covered);
            return errno;
        }
        fd = (int)ruleset;
    }
    __u64 read = FS_READ_FILE | FS_READ_DIR;
    int result = 0;
    if (spec->write_anywhere) {
        result = allow_path(fd, "/", lists[2].rights | FS_EXECUTE);
    } else {
        if (spec->read_anywhere) result = allow_path(fd, "/", read);
        for (int list = 0, offset = 0; list < 3 && result == 0; offset += lists[list].count, list++)
            result = allow_all(fd, lists[list].paths, lists[list].count, lists[list].rights, covered + offset);
    }
    free(covered);
    /* A program the plugin may run must also be executable where it lives (the system folders above are). */
    if (result == 0 && spec->write_anywhere == 0 && spec->read_anywhere && spec->exec)
        result = allow_path(fd, "/", read | FS_EXECUTE);
    if (result == 0 && syscall(SYS_landlock_restrict_self, fd, 0) != 0) result = errno;
    close(fd);
    if (result == 0) {
        *applied |= SKILLHOST_CONFINED_FILES;
        if (attr.handled_access_net) *applied |= SKILLHOST_CONFINED_TCP;
        if (attr.scoped) *applied |= SKILLHOST_CONFINED_SCOPE;
    }
    return result;
}
