/* Confinement of a worker process: Landlock (files, TCP, signal and abstract-socket scoping: landlock.c) and a
   seccomp filter (libseccomp) whose blocked calls fail with an errno and leave a record saying what was blocked
   (blocked.c). */
#define _GNU_SOURCE
#include "process_support.h"
#include "confine_internal.h"
#include "metadata.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <ucontext.h>
#include <unistd.h>

/* SCMP_ACT_TRAP while the SIGSYS handler is in place (a worker); SCMP_ACT_ERRNO(EPERM) for a program that will
   execve (its handlers are reset, so a trap would kill it). */
static uint32_t blocked_action = SCMP_ACT_TRAP;

static int trap(scmp_filter_ctx filter, const char *name, unsigned count, const struct scmp_arg_cmp *conditions) {
    int number = seccomp_syscall_resolve_name(name);
    if (number == __NR_SCMP_ERROR) return 0; /* not a call of this architecture */
    skillhost_note_trapped(number, name);
    /* Without a filter, only the names are noted (a filter compiled elsewhere was imported). */
    return filter ? -seccomp_rule_add_array(filter, blocked_action, number, count, conditions) : 0;
}

static int trap_always(scmp_filter_ctx filter, const char *name) { return trap(filter, name, 0, NULL); }

static int trap_when(scmp_filter_ctx filter, const char *name, struct scmp_arg_cmp condition) {
    return trap(filter, name, 1, &condition);
}

/* What no plugin ever needs: other processes' memory, kernel attack surface, namespaces and mounts. */
static const char *const always_blocked[] = {
    "ptrace", "process_vm_readv", "process_vm_writev", "io_uring_setup", "io_uring_enter", "io_uring_register",
    "bpf", "perf_event_open", "mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen",
    "fsconfig", "fsmount", "fspick", "mount_setattr", "unshare", "setns", "keyctl", "add_key", "request_key",
    "kexec_load", "kexec_file_load", "userfaultfd", "open_by_handle_at", "name_to_handle_at", "init_module",
    "finit_module", "delete_module", "swapon", "swapoff", "reboot", "acct", "quotactl", "iopl", "ioperm",
    "syslog", "lookup_dcookie", "vhangup",
    /* System V IPC: the worker shares the host's IPC namespace, so a key reaches other processes' segments, queues
       and semaphores. POSIX shared memory (files in /dev/shm) is governed by the file rules instead. */
    "shmget", "shmat", "shmdt", "shmctl", "msgget", "msgsnd", "msgrcv", "msgctl", "semget", "semop", "semtimedop",
    "semctl",
    /* Another process's descriptors and memory advice (refused by Landlock's ptrace rule too, but not without
       Landlock), and fanotify, which watches files Landlock does not let it read. */
    "pidfd_getfd", "process_madvise", "fanotify_init", "fanotify_mark",
};

/* Calls that act on another process by its id, which Landlock does not check: its limits (prlimit64 could set
   the host's open-file limit to 0), priority, CPU affinity, scheduling, I/O priority and memory placement. Each
   is allowed on the caller itself (id 0) only; compared on the whole 64-bit argument, so an id with stray high
   bits is refused too. */
static int add_process_rules(scmp_filter_ctx filter) {
    static const char *const by_first[] = {"sched_setaffinity", "sched_setscheduler", "sched_setparam",
                                           "sched_setattr", "migrate_pages", "move_pages"};
    int result = 0;
    for (size_t i = 0; i < sizeof by_first / sizeof by_first[0] && result == 0; i++)
        result = trap_when(filter, by_first[i], SCMP_A0(SCMP_CMP_NE, 0));
    if (result == 0) {
        struct scmp_arg_cmp setting[] = {SCMP_A0(SCMP_CMP_NE, 0), SCMP_A2(SCMP_CMP_NE, 0)};
        result = trap(filter, "prlimit64", 2, setting); /* reading another's limits stays allowed */
    }
    /* setpriority(PRIO_PROCESS, 0, …) and ioprio_set(IOPRIO_WHO_PROCESS, 0, …) only: a group or a user is more
       than the caller. */
    if (result == 0) result = trap_when(filter, "setpriority", SCMP_A0(SCMP_CMP_NE, 0));
    if (result == 0) result = trap_when(filter, "setpriority", SCMP_A1(SCMP_CMP_NE, 0));
    if (result == 0) result = trap_when(filter, "ioprio_set", SCMP_A0(SCMP_CMP_NE, 1));
    if (result == 0) result = trap_when(filter, "ioprio_set", SCMP_A1(SCMP_CMP_NE, 0));
    /* kill(-1, …) signals every process the caller may signal; Landlock's scoping (ABI 6) limits that to the
       worker's own, but older kernels would not. The kernel reads the id as 32 bits: so does the rule. */
    if (result == 0) result = trap_when(filter, "kill", SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffULL, 0xffffffffULL));
    return result;
}

/* Adds the rules `spec` calls for. 0 or an errno value. */
static int add_rules(scmp_filter_ctx filter, const struct skillhost_confinement *spec) {
    int result = 0;
    for (size_t i = 0; i < sizeof always_blocked / sizeof always_blocked[0] && result == 0; i++)
        result = trap_always(filter, always_blocked[i]);
    /* The handler that reports blocked calls stays in place (the kernel reads the signal number as 32 bits: a
       SIGSYS with stray high bits is SIGSYS too). */
    if (result == 0 && !spec->for_exec)
        result = trap_when(filter, "rt_sigaction", SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffULL, SIGSYS));
    if (result == 0) result = add_process_rules(filter);
    /* inotify watches files by path, which Landlock does not check: without reading everything, a plugin could
       learn the names and activity of files it may not read. */
    if (result == 0 && !spec->read_anywhere && !spec->write_anywhere) result = trap_always(filter, "inotify_add_watch");
    for (size_t i = 0; i < skillhost_namespace_flag_count && result == 0; i++)
        result = trap_when(filter, "clone",
                           SCMP_A0(SCMP_CMP_MASKED_EQ, skillhost_namespace_flags[i], skillhost_namespace_flags[i]));
    /* clone3 passes its flags in memory a filter cannot read: it reports ENOSYS and the C library falls back to
       clone, whose flags the rules see. */
    if (result == 0) {
        int number = seccomp_syscall_resolve_name("clone3");
        if (number != __NR_SCMP_ERROR && filter) result = -seccomp_rule_add(filter, SCMP_ACT_ERRNO(ENOSYS), number, 0);
    }
    /* Metadata (mode, owner, times, extended attributes), which Landlock does not cover: every form goes to the
       supervisor, which allows it only beneath what the process may write (metadata.c). Without a supervisor
       listening (the peek child) the calls fail with ENOSYS. */
    for (int i = 0; i < skillhost_metadata_count && result == 0 && !spec->write_anywhere; i++) {
        if (filter) result = -seccomp_rule_add(filter, SCMP_ACT_NOTIFY, skillhost_metadata_numbers[i], 0);
    }
    /* The same flags through ioctl, which works on a descriptor opened only for reading and which Landlock checks
       for devices alone: FS_IOC_SETFLAGS (and its 32-bit form) and FS_IOC_FSSETXATTR (append-only, immutable,
       nodump, noatime…). Compared as the kernel reads the command: 32 bits. */
    static const unsigned long flag_setters[] = {0x40086602UL, 0x40046602UL, 0x401c5820UL};
    for (size_t i = 0; i < sizeof flag_setters / sizeof flag_setters[0] && result == 0 && !spec->write_anywhere; i++)
        result = trap_when(filter, "ioctl", SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffULL, flag_setters[i]));
    if (result == 0 && !spec->network) {
        /* Only UNIX stream sockets (for socketpair-style use), and none of them connects anywhere. A datagram
           socket — SOCK_DGRAM, or SOCK_RAW, which the kernel makes one for AF_UNIX — could send to any socket
           file with sendmsg(), whose address a filter cannot read: none is made, by socket() or socketpair(). */
        result = trap_when(filter, "socket", SCMP_A0(SCMP_CMP_NE, AF_UNIX));
        if (result == 0) result = trap_when(filter, "socket", SCMP_A1(SCMP_CMP_MASKED_EQ, 0xf, SOCK_DGRAM));
        if (result == 0) result = trap_when(filter, "socket", SCMP_A1(SCMP_CMP_MASKED_EQ, 0xf, SOCK_RAW));
        if (result == 0) result = trap_when(filter, "socketpair", SCMP_A1(SCMP_CMP_MASKED_EQ, 0xf, SOCK_DGRAM));
        if (result == 0) result = trap_when(filter, "socketpair", SCMP_A1(SCMP_CMP_MASKED_EQ, 0xf, SOCK_RAW));
        if (result == 0) result = trap_always(filter, "connect");
        /* No listening socket either: an abstract name (or a socket file in its folders) another program would
           connect to, believing it reached the service that usually has that name. */
        if (result == 0) result = trap_always(filter, "bind");
        if (result == 0) result = trap_always(filter, "listen");
        if (result == 0) result = trap_when(filter, "sendto", SCMP_A4(SCMP_CMP_NE, 0));
    }
    if (result == 0 && !spec->exec) {
        /* No programs and no processes: threads only (clone with CLONE_THREAD). The C library's posix_spawn and
           system() clone with CLONE_VFORK while every signal is blocked, where a trap could not be delivered and
           would kill the worker: that clone fails with EPERM instead. */
        result = trap_always(filter, "execve");
        if (result == 0) result = trap_always(filter, "execveat");
        if (result == 0) result = trap_always(filter, "fork");
        if (result == 0) result = trap_always(filter, "vfork");
        if (result == 0)
            result = trap_when(filter, "clone", SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD | CLONE_VFORK, 0));
        if (result == 0) {
            int number = seccomp_syscall_resolve_name("clone");
            if (number != __NR_SCMP_ERROR && filter)
                result = -seccomp_rule_add(filter, SCMP_ACT_ERRNO(EPERM), number, 1,
                                           SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD | CLONE_VFORK, CLONE_VFORK));
        }
    }
    return result;
}

#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#endif

#ifdef NATIVE_ARCH
/* Put before libseccomp's program: a native call numbered SKILLHOST_SYSCALLS_KNOWN or above fails with ENOSYS (a
   call the rules were not written for, however new). An x32 call (bit 30) goes on to libseccomp's program, which
   blocks every other ABI. */
static const struct sock_filter newer_calls[] = {
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_ARCH, 0, 4),
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
    BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 2, 0),
    BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, SKILLHOST_SYSCALLS_KNOWN, 0, 1),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)),
};
enum { NEWER_CALLS_LENGTH = sizeof newer_calls / sizeof newer_calls[0] };
#else
enum { NEWER_CALLS_LENGTH = 0 };
#endif

/* The last compiled filter, for the choices it was compiled for: compiling costs about half a millisecond, and a
   worker compiles the filter its plugin most likely gets while the peeking child runs. */
static struct {
    int valid, network, exec, for_exec, write_anywhere, read_anywhere;
    struct sock_filter *program;
    unsigned short length;
} compiled;

static int matches(const struct skillhost_confinement *spec) {
    return compiled.valid && compiled.network == !!spec->network && compiled.exec == !!spec->exec &&
           compiled.for_exec == !!spec->for_exec && compiled.write_anywhere == !!spec->write_anywhere &&
           compiled.read_anywhere == !!spec->read_anywhere;
}

int skillhost_seccomp_prepare(const struct skillhost_confinement *spec) {
    if (matches(spec)) return 0;
    blocked_action = spec->for_exec ? SCMP_ACT_ERRNO(EPERM) : SCMP_ACT_TRAP;
    scmp_filter_ctx filter = seccomp_init(SCMP_ACT_ALLOW);
    if (!filter) return ENOMEM;
    /* A call through another ABI (int 0x80's i386 numbers, x32's) names none of the calls the rules compare: it is
       blocked like them, not left to kill the thread (libseccomp's default). */
    int result = -seccomp_attr_set(filter, SCMP_FLTATR_ACT_BADARCH, blocked_action);
    /* A binary tree of system-call numbers: the kernel runs the filter for each number once when it is loaded (to
       cache the calls it always allows), and a tree keeps that in proportion to the rules' depth, not their count. */
    if (result == 0) result = -seccomp_attr_set(filter, SCMP_FLTATR_CTL_OPTIMIZE, 2);
    if (result == 0) result = add_rules(filter, spec);
    int fd = -1;
    if (result == 0) {
        fd = memfd_create("skillhost-seccomp", MFD_CLOEXEC);
        if (fd < 0) result = errno;
    }
    if (result == 0) result = -seccomp_export_bpf(filter, fd);
    seccomp_release(filter);
    if (result == 0) {
        off_t size = lseek(fd, 0, SEEK_END);
        size_t prefix = NEWER_CALLS_LENGTH * sizeof(struct sock_filter);
        struct sock_filter *program =
            size > 0 && size <= (65535 - NEWER_CALLS_LENGTH) * (off_t)sizeof *program ? malloc(prefix + (size_t)size)
                                                                                     : NULL;
        if (!program || pread(fd, program + NEWER_CALLS_LENGTH, (size_t)size, 0) != size) {
            free(program);
            result = EIO;
        } else {
#ifdef NATIVE_ARCH
            memcpy(program, newer_calls, prefix);
#endif
            free(compiled.program);
            compiled.program = program;
            compiled.length = (unsigned short)(NEWER_CALLS_LENGTH + size / (off_t)sizeof *program);
            compiled.network = !!spec->network;
            compiled.exec = !!spec->exec;
            compiled.for_exec = !!spec->for_exec;
            compiled.write_anywhere = !!spec->write_anywhere;
            compiled.read_anywhere = !!spec->read_anywhere;
            compiled.valid = 1;
        }
    }
    if (fd >= 0) close(fd);
    return result;
}

int skillhost_seccomp_export(const struct skillhost_confinement *spec, unsigned char *out, int size) {
    if (skillhost_seccomp_prepare(spec) != 0) return -1;
    int length = (int)(compiled.length * sizeof *compiled.program);
    if (length > size) return -1;
    memcpy(out, compiled.program, (size_t)length);
    return length;
}

int skillhost_seccomp_import(const struct skillhost_confinement *spec, const unsigned char *bytes, int length) {
    if (length <= 0 || length % (int)sizeof(struct sock_filter) != 0 || length > 65535 * (int)sizeof(struct sock_filter))
        return EINVAL;
    struct sock_filter *program = malloc((size_t)length);
    if (!program) return ENOMEM;
    memcpy(program, bytes, (size_t)length);
    free(compiled.program);
    compiled.program = program;
    compiled.length = (unsigned short)(length / (int)sizeof *program);
    compiled.network = !!spec->network;
    compiled.exec = !!spec->exec;
    compiled.for_exec = !!spec->for_exec;
    compiled.write_anywhere = !!spec->write_anywhere;
    compiled.read_anywhere = !!spec->read_anywhere;
    compiled.valid = 1;
    add_rules(NULL, spec); /* the names of the trapped calls, for the SIGSYS record */
    return 0;
}

static int apply_seccomp(const struct skillhost_confinement *spec, int supervised) {
    int result = skillhost_seccomp_prepare(spec);
    if (result != 0) return result;
    if (!spec->for_exec) {
        struct sigaction action;
        memset(&action, 0, sizeof action);
        action.sa_sigaction = skillhost_on_blocked;
        action.sa_flags = SA_SIGINFO;
        sigemptyset(&action.sa_mask);
        if (sigaction(SIGSYS, &action, NULL) != 0) return errno;
        sigset_t sys;
        sigemptyset(&sys);
        sigaddset(&sys, SIGSYS);
        pthread_sigmask(SIG_UNBLOCK, &sys, NULL);
    }
    struct sock_fprog program = {.len = compiled.length, .filter = compiled.program};
    /* SPEC_ALLOW: the kernel would otherwise turn on the speculative-store-bypass mitigation for the process on
       some configurations; it guards a process against itself, and here the only other code is the host's. */
    if (supervised) {
        long listener = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
                                SECCOMP_FILTER_FLAG_SPEC_ALLOW | SECCOMP_FILTER_FLAG_NEW_LISTENER, &program);
        if (listener >= 0) return skillhost_metadata_hand_over((int)listener, spec->write_paths, spec->write_count);
    }
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_SPEC_ALLOW, &program) == 0) return 0;
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program, 0, 0) == 0 ? 0 : errno;
}

/* Gives up every capability, for good: a worker started by root is then a process of uid 0 that the kernel
   checks like any other (no raising its limits, setting the clock, loading modules or reconfiguring the network),
   and a program it starts gains none either (the bounding set is empty and no_new_privs is set). */
int skillhost_drop_capabilities(void) {
    /* One call a capability: dropping one already gone succeeds, EINVAL is past the last this kernel knows, and
       EPERM (no CAP_SETPCAP) holds for every one alike (none can be dropped, then or before). */
    for (int cap = 0; cap <= 63; cap++) {
        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == 0) continue;
        if (errno == EINVAL || errno == EPERM) break;
        return errno;
    }
    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
    struct __user_cap_header_struct header = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    struct __user_cap_data_struct data[2];
    memset(data, 0, sizeof data);
    return syscall(SYS_capset, &header, data) == 0 ? 0 : errno;
}

static int confine(const struct skillhost_confinement *spec, int *applied);

int skillhost_confine(const struct skillhost_confinement *spec, int *applied) {
    int result = confine(spec, applied);
    /* Whatever happened, nothing opened or prepared ahead stays open for the plugin's code. */
    skillhost_landlock_forget_opened();
    skillhost_confine_files_discard_prepared();
    return result;
}

int skillhost_confine_calls(const struct skillhost_confinement *spec, int *applied) {
    *applied = 0;
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return errno;
    int result = skillhost_drop_capabilities();
    if (result == 0) result = apply_seccomp(spec, 0);
    if (result == 0) *applied |= SKILLHOST_CONFINED_SYSCALLS;
    return result;
}

int skillhost_confine_files(const struct skillhost_confinement *spec, int *applied) {
    int abi = skillhost_landlock_effective_abi(spec);
    int result = abi >= 1 ? skillhost_landlock_apply(spec, abi, applied) : 0;
    skillhost_landlock_forget_opened();
    skillhost_confine_files_discard_prepared();
    return result;
}

static int confine(const struct skillhost_confinement *spec, int *applied) {
    *applied = 0;
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return errno;
    int dropped = skillhost_drop_capabilities();
    if (dropped != 0) return dropped;
    /* The supervisor of metadata changes: the host takes the listener later; a forked one starts now, after the
       capabilities went (it holds none either), before Landlock and the filter (it resolves paths the process
       cannot reach, to refuse them by name). Without one the calls fail with ENOSYS; the process still runs. */
    int supervised = spec->supervise_metadata && !spec->write_anywhere &&
                     skillhost_metadata_prepare() == 0;
    int abi = skillhost_landlock_effective_abi(spec);
    if (abi >= 1) {
        int result = skillhost_landlock_apply(spec, abi, applied);
        if (result != 0) return result;
    }
    int result = apply_seccomp(spec, supervised);
    if (result != 0) return result;
    *applied |= SKILLHOST_CONFINED_SYSCALLS;
    return 0;
}
