#ifndef SKILLHOST_PROCESS_SUPPORT_H
#define SKILLHOST_PROCESS_SUPPORT_H

#include <stdint.h>
#include <sys/types.h>

/// The scheduling slice a worker process starts with, in nanoseconds (skillhost_spawn_worker): 0.1 ms, the
/// shortest Linux allows. Linux's EEVDF scheduler (6.12 and later) lets any task ask for a shorter slice than its
/// default (0.7–3 ms): it keeps the same share of the CPU, but when it wakes beside busy tasks it runs sooner —
/// what a worker does, in short bursts between waits (its start, each call). Beside two busy loops on two cores a
/// worker's start takes about a quarter less time with it (BENCHMARKS.md). Inherited by what the worker starts.
#define SKILLHOST_WORKER_SLICE 100000ULL

/// What skillhost_set_slice returns when it changed nothing (and, passed to it, changes nothing).
#define SKILLHOST_SLICE_UNCHANGED UINT64_MAX

/// Asks the kernel for a scheduling slice of `nanoseconds` for the calling thread (0: the default), keeping its
/// policy and nice value, and returns the slice it had (0: the default) for restoring it, or
/// SKILLHOST_SLICE_UNCHANGED when nothing changed (a policy without slices, a kernel without the call). Older
/// kernels accept the request and ignore it. [any thread; affects the caller and the tasks it starts afterwards]
uint64_t skillhost_set_slice(uint64_t nanoseconds);

/// Starts `path` with `argv` and `envp` (both NULL-terminated; `envp` NULL: this process's environment) as the leader of a new process group,
/// with its standard input, output and error connected to three new pipes. Every other descriptor is closed in the
/// child; signal dispositions are reset to their defaults except SIGPIPE, which stays ignored.
/// On success returns 0 and stores the child's pid and the host's ends of the pipes (close-on-exec): `to_child`
/// (write), `from_child` and `child_errors` (read). On failure returns an errno value and opens nothing.
/// [thread-safe]
int skillhost_spawn(const char *path, char *const argv[], char *const envp[], pid_t *pid, int *to_child, int *from_child,
                    int *child_errors);

/// `skillhost_spawn` for a worker process, plus its direct lane: two pipes, the child's descriptors 3 (requests,
/// read) and 4 (responses, write), for messages too long for the lane's shared memory, which is the child's
/// descriptor 6. Stores the host's ends (close-on-exec): `lane_to_child` (write), `lane_from_child` (read) and
/// `lane_memory` (the memfd; the host maps it and closes it). And `supervision`, the host's end of a socket that is
/// the child's descriptor 5, on which a confined worker hands over its metadata supervision (see
/// skillhost_metadata_supervise). On failure returns an errno value and opens nothing. [thread-safe]
int skillhost_spawn_worker(const char *path, char *const argv[], char *const envp[], pid_t *pid, int *to_child,
                           int *from_child, int *child_errors, int *lane_to_child, int *lane_from_child,
                           int *supervision, int *lane_memory);

/// Starts a worker template, `path` with `argv` and `envp` (as skillhost_spawn does, without pipes): its descriptor 0
/// is a SOCK_SEQPACKET socket whose other end is stored in `control` (close-on-exec), 1 and 2 are /dev/null. The
/// template (`skillhost_template_run`) forks workers on request (`skillhost_template_worker`) until `control` closes.
/// 0 or an errno value. [thread-safe]
int skillhost_spawn_template(const char *path, char *const argv[], char *const envp[], pid_t *pid, int *control);

/// In the host: asks the template behind `control` for a new worker that runs `launch` (`length` bytes, handed to
/// the template's entry as they are), with the channels skillhost_spawn_worker would give it, and waits up to
/// `timeout_ms` for its pid. The worker is this process's child (it is forked with CLONE_PARENT), the leader of a
/// new process group. Stores the pid and the host's ends like skillhost_spawn_worker. On failure returns an errno
/// value (ETIMEDOUT, EPIPE when the template is gone, EMSGSIZE when the launch is too long, EAGAIN when the
/// template had other threads) and opens nothing; after any failure but EMSGSIZE the socket is out of step and the
/// template must be discarded. Requests on one socket must not overlap. [thread-safe per socket]
int skillhost_template_worker(int control, const void *launch, size_t length, int timeout_ms, pid_t *pid,
                              int *to_child, int *from_child, int *child_errors, int *lane_to_child,
                              int *lane_from_child, int *supervision, int *lane_memory);

/// The threads of this process (the entries of /proc/self/task), -1 when they cannot be counted. [any thread]
int skillhost_thread_count(void);

/// Writes `title` over this process's command line (the `argc` strings of `argv` as `main` received them), as much
/// of it as fits in their space, so `ps` and /proc/<pid>/cmdline show it; the rest is cleared. Returns the bytes
/// written. For a worker forked from a template, whose command line would otherwise be the template's. A later call
/// with the same `argv` writes into the same space (the strings are gone by then). [main thread, before others read
/// the arguments]
int skillhost_set_title(char **argv, int argc, const char *title);

/// What a template's new worker runs: its launch (`length` bytes, valid for the worker's life). Must not return.
typedef void (*skillhost_template_entry)(const unsigned char *launch, size_t length);

/// In the template process (`skillhost worker --template`, single-threaded until now): serves the host's requests
/// on descriptor 0 from a thread of its own while the calling thread waits. For each, it forks a worker that
/// calls `entry` on that thread — a thread that ran no Swift code before, so no per-thread cache of the runtime
/// (the thread id its locks record) is inherited stale. Returns 0 in the template when the host closed the socket
/// (or an errno value when the thread cannot start); never returns in a worker. [main thread, once]
int skillhost_template_run(skillhost_template_entry entry);

/// In the host: takes ownership of a worker's supervision socket (`skillhost_spawn_worker`). The host's supervisor
/// thread, which holds no capability, reads one offer from it — the worker's filter listener and refusal memory
/// (passed with SCM_RIGHTS) and the paths the plugin may write — then closes it, and answers the worker's metadata
/// changes from then on, making them only beneath those paths. A worker that offers nothing simply closes its end.
/// 0 or an errno value (the socket is closed either way). [any thread]
int skillhost_metadata_supervise(int socket);

/// Before confinement's filter (and before Landlock, for the fork): makes the refusal memory and — unless the host
/// will supervise (a worker started with its supervision socket) — forks the supervisor. skillhost_confine calls it;
/// a worker may call it earlier, while it waits for its peek, to take it off its start. 0 or an errno value.
/// [single-threaded]
int skillhost_metadata_prepare(void);

/// In a worker: closes its supervision socket if confinement did not use it, before any plugin code runs.
void skillhost_metadata_close_host_channel(void);

/// Worker-side setup, called once at start before any plugin code runs: moves the protocol channel away from
/// descriptors 0 and 1 (returned in `protocol_in` / `protocol_out`), points 0 at /dev/null and 1 at standard error
/// (so whatever a plugin prints lands in the host's log, never in the protocol). The worker exits when the protocol
/// input closes, which is also what happens when the host dies. The lane (see `skillhost_spawn_worker`), when
/// descriptors 3 and 4 are open, is made close-on-exec and returned in `lane_in` / `lane_out` (else both are -1).
/// The lane's shared memory, when descriptor 6 is open, is mapped into `lane_shared` (NULL otherwise) and the
/// descriptor closed. Returns 0 or an errno value.
int skillhost_worker_setup(int *protocol_in, int *protocol_out, int *lane_in, int *lane_out, void **lane_shared);

/// Sets a soft and hard resource limit (RLIMIT_AS, RLIMIT_CPU, RLIMIT_NOFILE …) for this process; 0 or errno.
int skillhost_set_limit(int resource, unsigned long long value);

/// Sends `signal` to the process group `group`; 0 or errno.
int skillhost_kill_group(pid_t group, int signal);

/// A descriptor (close-on-exec) that becomes readable when process `pid` ends — the host's child, not yet reaped —
/// for waiting on its end beside other descriptors (pidfd_open). -1 with errno set when the kernel offers none
/// (before Linux 5.3, or a filter refuses it): the caller then waits another way. [any thread]
int skillhost_process_end_descriptor(pid_t pid);

/// Makes this process a child subreaper (PR_SET_CHILD_SUBREAPER): orphaned descendants — what a confined program
/// started and left behind, however it regrouped (setsid, setpgid) — become this process's children instead of
/// init's, so skillhost_kill_adopted can stop them. 0 or errno. [thread-safe]
int skillhost_become_subreaper(void);

/// Brackets the start of a child this process keeps: called before the child exists, then
/// skillhost_children_started with its pid (0 when none was started). Between the two no sweep runs, so a child
/// whose pid is not yet recorded is never taken for an orphan. The spawn functions here do it themselves.
/// [thread-safe; never nested on one thread]
void skillhost_children_starting(void);
void skillhost_children_started(pid_t pid);

/// Forgets `pid`, a recorded child this process has reaped. [thread-safe]
void skillhost_child_ended(pid_t pid);

/// Names the calling thread for the system (`PR_SET_NAME`: what ps, top and perf show, at most 15 bytes kept).
/// [thread-safe]
void skillhost_name_thread(const char *name);

/// Kills (SIGKILL) and reaps the children of this process — with `every_child` all of them (a worker ending),
/// else those it did not start through the functions here (the orphans it adopted as a subreaper; nothing unless
/// skillhost_become_subreaper succeeded) — round after round, as each killed child's own children come to this
/// process, until a round kills none (at most 1,024). Returns how many. Blocks while children are being started.
/// [thread-safe]
int skillhost_kill_adopted(int every_child);

/// `write` that never raises SIGPIPE in the process (the signal is blocked for this thread while writing, and the
/// one the write raised is taken): a peer that went away is EPIPE, not the end of a host that did not ignore
/// SIGPIPE. [thread-safe]
ssize_t skillhost_write_nosigpipe(int fd, const void *buffer, size_t length);

/** The Landlock ABI the kernel offers (0 when it has none or it is disabled). [any thread] */
int skillhost_landlock_abi(void);

/// The system calls the confinement filter was written for: numbers below this one (Linux 6.16's last, 467
/// open_tree_attr, on x86-64 and on the architectures that share the generic numbering from 424 on). A newer call
/// — 468 file_getattr and 469 file_setattr (Linux 6.17), whose files neither Landlock nor the metadata supervisor
/// checks, and any later one — fails with ENOSYS in a confined process, as on a kernel that lacks it, instead of
/// being allowed unexamined. Raise it only after reading what each call up to the new number can reach.
#define SKILLHOST_SYSCALLS_KNOWN 468

/** What a confined process may do (see skillhost_confine). Paths are absolute; ones that do not exist are skipped. */
struct skillhost_confinement {
    int network;        /**< sockets of any family, connect and bind; else only UNIX stream sockets, no connect */
    int exec;           /**< run programs and start processes; else threads only */
    int read_anywhere;  /**< read every file the user can */
    int write_anywhere; /**< write every file the user can (implies read_anywhere) */
    const char *const *execute_paths; /**< readable and executable (system folders, the plugin's copy) */
    int execute_count;
    const char *const *read_paths;    /**< readable */
    int read_count;
    const char *const *write_paths;   /**< readable and writable (its data directory, its temp directory) */
    int write_count;
    int maximum_abi;    /**< use at most this Landlock ABI (0: none — as on an older kernel); -1: the kernel's */
    int for_exec;       /**< the process will execve a program: blocked calls fail with EPERM, without the SIGSYS
                             record (a program's signal handlers do not survive execve) */
    int supervise_metadata; /**< whether metadata changes (mode, owner, times, extended attributes) are made beneath
                                 `write_paths` and refused elsewhere (else they fail with ENOSYS): by the host when
                                 this is a worker the host started with a supervision socket, else by a supervisor
                                 forked now; unused with `write_anywhere`, which allows them all */
};

/** The most paths skillhost_confine_open_ahead keeps. */
#define SKILLHOST_OPEN_AHEAD_MAX 256

/** Opens `paths` (O_PATH) for this process's next skillhost_confine, which uses each descriptor for the same path
    instead of opening it then (and closes whatever it did not use): a worker does it while its peek child works, so
    the opening is not on its start's path. A path's rule covers what it was when opened — moments before. Returns
    how many were kept (at most SKILLHOST_OPEN_AHEAD_MAX in all). [single-threaded, before skillhost_confine] */
int skillhost_confine_open_ahead(const char *const *paths, int count);

/** Gives up every capability for good (the bounding set, the ambient set, then effective, permitted and
    inheritable), as skillhost_confine does first; cheap when they are gone already (the first drop fails with
    EPERM). A worker calls it early, off its start's path. 0 or an errno value. [any thread; affects the calling
    thread's credentials — call it before others exist] */
int skillhost_drop_capabilities(void);

/** What skillhost_confine applied, as bits of its `applied` result. */
enum {
    SKILLHOST_CONFINED_FILES = 1 << 0,    /**< Landlock filesystem rules */
    SKILLHOST_CONFINED_TCP = 1 << 1,      /**< Landlock TCP bind/connect (ABI 4) */
    SKILLHOST_CONFINED_SCOPE = 1 << 2,    /**< Landlock signal and abstract-socket scoping (ABI 6) */
    SKILLHOST_CONFINED_SYSCALLS = 1 << 3, /**< the seccomp filter */
};

/** Confines the calling process and everything it starts, for good: PR_SET_NO_NEW_PRIVS, every capability dropped
    (bounding, ambient, effective, permitted and inheritable sets), then Landlock with the
    highest ABI the kernel offers (files as `spec` says; TCP unless `network`; signals and abstract UNIX sockets
    scoped to the process), then a seccomp filter. Calls the filter blocks fail with EPERM (clone3 with ENOSYS, so
    the C library falls back to clone) after a SIGSYS handler wrote "skillhost worker: blocked connect() to …" to
    standard error and recorded it for skillhost_take_blocked. Always blocked: ptrace, process_vm_*, io_uring_*,
    bpf, perf_event_open, mounts, namespaces, keyrings, kexec, userfaultfd, modules, open_by_handle_at, and
    replacing the SIGSYS handler. Without `network`: socket() other than UNIX stream, connect(), sendto() with an
    address. Without `exec`: execve, execveat, fork, vfork, clone without CLONE_THREAD. Unless `write_anywhere`:
    every call that changes a file's metadata goes to the supervisor (`supervise_metadata`), which makes it only
    beneath `write_paths`, never on a device and never adding set-user-ID or set-group-ID bits; a refusal is EPERM,
    recorded for skillhost_take_blocked as "chmod() of /path". A call through another ABI (i386, x32) is blocked.
    Returns 0 and sets `applied` (SKILLHOST_CONFINED_* bits; without Landlock only the filter), or an errno value
    when something could not be applied. [before any other thread exists — both bind only the calling thread and
    the threads it starts later; once] */
int skillhost_confine(const struct skillhost_confinement *spec, int *applied);

/** skillhost_confine in two steps, for a process that is confined before it knows every path it may read (a peek
    child forked ahead, which waits for the plugin's path): no new privileges, no capabilities and `spec`'s
    system-call filter — metadata changes fail with ENOSYS, as without a supervisor — now...
    [as skillhost_confine] */
int skillhost_confine_calls(const struct skillhost_confinement *spec, int *applied);

/** ...and Landlock with `spec`'s lists later (the same choices, with the paths known by then); adds its bits to
    `applied`. Nothing when the kernel has no Landlock. 0 or an errno value. [as skillhost_confine] */
int skillhost_confine_files(const struct skillhost_confinement *spec, int *applied);

/** Builds, ahead of a confinement whose lists are not known yet, the Landlock rules of `spec`'s paths (outside
    /proc) with the files they name now; the next skillhost_confine_files or skillhost_confine takes them when its
    choices are `spec`'s and its lists hold every prepared path in the same list, and each path still names the
    same file (else it builds every rule as without them). Nothing for a confinement that may read or write
    anywhere, or a kernel without Landlock. Holds one descriptor (the ruleset) until then. 0 or an errno value.
    [one thread of a process that is not confined yet, before the confinement it prepares] */
int skillhost_confine_files_prepare(const struct skillhost_confinement *spec);

/** Checks the prepared rules now, ahead of the confinement that takes them (while the process waits for something
    else): one stat a path, none when they were trusted (skillhost_confine_files_trust_prepared); the rules are given
    up when a path names another file than it did. The confinement then checks no more than its lists.
    [as skillhost_confine_files_prepare] */
void skillhost_confine_files_check_prepared(void);

/** Watches (inotify) what could make any of `paths` (outside /proc) name another file than it does now — each path,
    and every folder on the way to it, as written and as resolved — for skillhost_paths_changed. Returns the
    descriptor (close-on-exec; keep it: closing one that holds watches waits for a kernel grace period, up to
    milliseconds), or -1 with errno set. [any thread] */
int skillhost_paths_watch(const char *const *paths, int count);

/** Whether anything that could make a watched path name another file happened since the watch began or since the
    last call (it reads every event queued): 1, or 0 when nothing did. 1 too when the queue overflowed or cannot be
    read. [one thread at a time a descriptor] */
int skillhost_paths_changed(int fd);

/** Takes the prepared rules as checked, on the word of the host, which watched their paths from before they were
    prepared (skillhost_paths_watch) and saw nothing change. [as skillhost_confine_files_prepare] */
void skillhost_confine_files_trust_prepared(void);

/** Gives up the prepared rules (closes the ruleset): for a process that is not confined after all. Nothing when
    there are none. [as skillhost_confine_files_prepare] */
void skillhost_confine_files_discard_prepared(void);

/** Copies into `buffer` (NUL-terminated, at most `size` bytes) what the filter last blocked on the calling
    thread — "connect() to 127.0.0.1:8080", "execve() of /bin/sh" — and clears it. 1 when there was something,
    else 0. [the thread that made the blocked call] */
int skillhost_take_blocked(char *buffer, int size);

/** 1 when the filter blocked something on the calling thread since the last skillhost_take_blocked, else 0 (the
    check every call makes, without copying). [the thread that made the blocked call] */
int skillhost_blocked_pending(void);

enum { SKILLHOST_PEEK_REPORT_SIZE = 65536, SKILLHOST_PEEK_MAX_PATHS = 64 };

/** Compiles the seccomp filter `spec` calls for and keeps it, so a later skillhost_confine with the same network,
    exec and for_exec choices loads it without compiling (about half a millisecond). 0 or an errno value.
    [one thread at a time] */
int skillhost_seccomp_prepare(const struct skillhost_confinement *spec);

/** Copies the compiled filter for `spec` (compiling it first if needed) into `out`; returns its length in bytes,
    or -1 when it cannot be compiled or `size` is too small. The host compiles the filter once and hands it to
    every worker, which then need not compile it (skillhost_seccomp_import). [one thread at a time] */
int skillhost_seccomp_export(const struct skillhost_confinement *spec, unsigned char *out, int size);

/** Takes a filter skillhost_seccomp_export produced (in this binary, for the same network, exec and for_exec
    choices) as the compiled filter for `spec`. 0, or EINVAL when `length` cannot be a filter. */
int skillhost_seccomp_import(const struct skillhost_confinement *spec, const unsigned char *bytes, int length);

/** Starts learning what the plugin at `path` declares without letting its code do anything: a child process
    (fork) keeps only a report pipe open, confines itself with `confinement`, loads the plugin (its constructors run
    there), calls skill_plugin_entry and writes the name, the capabilities in decimal and each read path, each
    followed by a NUL. Sets the child's `pid` and the read end of the report pipe (`report_fd`); 0 or an errno value.
    [a process with one thread: it forks] */
int skillhost_peek_start(const char *path, const struct skillhost_confinement *confinement, pid_t *pid,
                         int *report_fd);

/** The peek child's work once it is confined: loads the plugin at `path`, calls skill_plugin_entry and writes the
    report skillhost_peek_start describes to descriptor 3, then exits (status 0; 4 when dlopen failed, 5 without an
    entry, 6 when the entry's record is not one, 7 when the report could not be written). [the peek child] */
_Noreturn void skillhost_peek_report(const char *path);

/** The folders of the files this process maps (from /proc/self/maps), except the file `skip`, each once and
    followed by a NUL, into `out`; returns the bytes used. */
int skillhost_mapped_folders(const char *skip, char *out, int out_size);

/** Reads the report of skillhost_peek_start into `out` (`out_size` should be SKILLHOST_PEEK_REPORT_SIZE), closes
    the pipe and kills the child. Returns 0 and sets `out_length`; ETIMEDOUT when the child took longer than
    `timeout_ms` (it is killed); ECHILD when it failed or crashed. A child that failed is reaped here; one that
    reported is reaped here if already gone, else by skillhost_peek_reap. */
int skillhost_peek_finish(pid_t pid, int report, int timeout_ms, char *out, int out_size, int *out_length);

/** Reaps `child`, a peek child just killed, now if it is gone, else later (skillhost_peek_reap). [any thread] */
void skillhost_peek_reap_later(pid_t child);

/** Reaps the peek child skillhost_peek_finish killed but could not reap at once, if it is gone now; does nothing
    when there is none (one load of an atomic). Call it from time to time after the peek (a worker does after each
    request it answers, off the answer's path). [any thread] */
void skillhost_peek_reap(void);

/** The CPU the calling thread runs on now (sched_getcpu: no system call on this kernel), -1 when unknown. The
    answer may be stale as soon as it is returned; use it to spread shared state, never for correctness. [any thread] */
int skillhost_current_cpu(void);

/** Tells the CPU the calling thread is busy-waiting (x86 `pause`, Arm `yield`): cheaper for the other hardware
    thread and the memory system than a bare loop; no system call. [any thread] */
static inline void skillhost_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

// MARK: The lane's shared mailbox (shared_lane.c)

#include <stddef.h>
#include <stdint.h>

/// The largest message that travels in the lane's shared memory; a longer one goes on the lane's pipe.
#define SKILLHOST_LANE_CAPACITY (64 * 1024)
/// Results of the lane's calls besides a length: the message is on the lane's pipe (read one line there); the host
/// woke its own waiter; the host closed the lane; the other side wrote a length out of bounds.
#define SKILLHOST_LANE_ON_PIPE (-1)
#define SKILLHOST_LANE_WOKEN (-2)
#define SKILLHOST_LANE_CLOSED (-3)
#define SKILLHOST_LANE_BROKEN (-4)

/// In the host: a new lane's shared memory (a memfd, close-on-exec) for one worker; the descriptor or -errno.
/// [thread-safe]
int skillhost_lane_create(void);
/// Maps a lane's memory (host: its memfd; worker: descriptor 6); NULL on failure. The descriptor may be closed
/// afterwards. [thread-safe]
void *skillhost_lane_map(int fd);
/// Unmaps it; no call may be using it. [any thread, once]
void skillhost_lane_unmap(void *lane);

/// Host, the one thread holding the lane: posts a request (copied; longer than SKILLHOST_LANE_CAPACITY: only
/// announced, and the caller writes it on the lane's pipe afterwards) and wakes the worker if it sleeps.
void skillhost_lane_post_request(void *lane, const uint8_t *bytes, size_t length);
/// Host, the one thread holding the lane: checks for up to `spin_ns`, then sleeps until the worker posts a message
/// or `skillhost_lane_wake_host` rings. Returns the message's length (copied into `into`, at most `capacity`),
/// SKILLHOST_LANE_ON_PIPE, SKILLHOST_LANE_WOKEN or SKILLHOST_LANE_BROKEN; each message is acknowledged, so the
/// worker may post the next. A calling thread that finds the worker's lane thread on its own CPU moves itself to
/// another CPU it may run on (its affinity narrowed for an instant, then given back as it was; at most once per
/// 10 ms per thread): beside busy jobs the two would otherwise take turns on one core, two context switches a call.
long skillhost_lane_next_response(void *lane, uint8_t *into, size_t capacity, uint64_t spin_ns);
/// How many times the calling thread moved off its worker's CPU (tests). [any thread]
long skillhost_lane_moves(void);
/// Host, any thread: wakes the thread waiting in skillhost_lane_next_response (it returns SKILLHOST_LANE_WOKEN).
void skillhost_lane_wake_host(void *lane);
/// Host, once, when the worker is gone or stopping: ends the worker's lane thread and any wait for an
/// acknowledgement.
void skillhost_lane_close(void *lane);

/// Worker, the lane's thread: checks for up to `spin_ns`, then sleeps until the host posts a request after `*seen`
/// (updated). Returns its length (copied into `into`, at most `capacity`), SKILLHOST_LANE_ON_PIPE,
/// SKILLHOST_LANE_CLOSED or SKILLHOST_LANE_BROKEN.
long skillhost_lane_next_request(void *lane, uint32_t *seen, uint8_t *into, size_t capacity, uint64_t spin_ns);
/// Worker, the lane's thread: waits until the host took the previous message, then posts this one (copied). 0, or
/// SKILLHOST_LANE_ON_PIPE when the message is too long for the mailbox (write it on the lane's pipe now), or
/// SKILLHOST_LANE_CLOSED.
int skillhost_lane_post_response(void *lane, const uint8_t *bytes, size_t length, uint64_t spin_ns);

/// Installs handlers for SIGINT and SIGTERM that write one byte to a pipe, and returns the pipe's read end (or -1):
/// a thread that reads it learns of the signal without anything unsafe running in the handler. Call once.
int skillhost_termination_pipe(void);

/// A readiness set (epoll, close-on-exec) for one thread that waits on many descriptors; -1 with errno set.
/// [any thread]
int skillhost_readiness_create(void);
/// Adds `fd` (made non-blocking: its reader reads until EAGAIN or reads once a wake-up) to be reported while it has
/// bytes, has ended or failed (level-triggered). 0, or -1 with errno set (`fd` then keeps its flags). [any thread]
int skillhost_readiness_add(int set, int fd);
/// Removes `fd` before it is closed. [any thread]
void skillhost_readiness_remove(int set, int fd);
/// Waits (no timeout) until descriptors of `set` are ready and stores up to `capacity` (at most 64) of them in
/// `ready`. Returns their count, or -1 with errno set (never EINTR). [the set's one waiting thread]
int skillhost_readiness_wait(int set, int *ready, int capacity);

#endif
