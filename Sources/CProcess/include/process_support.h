#ifndef SKILLHOST_PROCESS_SUPPORT_H
#define SKILLHOST_PROCESS_SUPPORT_H

#include <sys/types.h>

/// Starts `path` with `argv` and `envp` (both NULL-terminated; `envp` NULL: this process's environment) as the leader of a new process group,
/// with its standard input, output and error connected to three new pipes. Every other descriptor is closed in the
/// child; signal dispositions are reset to their defaults except SIGPIPE, which stays ignored.
/// On success returns 0 and stores the child's pid and the host's ends of the pipes (close-on-exec): `to_child`
/// (write), `from_child` and `child_errors` (read). On failure returns an errno value and opens nothing.
/// [thread-safe]
int skillhost_spawn(const char *path, char *const argv[], char *const envp[], pid_t *pid, int *to_child, int *from_child,
                    int *child_errors);

/// Worker-side setup, called once at start before any plugin code runs: moves the protocol channel away from
/// descriptors 0 and 1 (returned in `protocol_in` / `protocol_out`), points 0 at /dev/null and 1 at standard error
/// (so whatever a plugin prints lands in the host's log, never in the protocol). The worker exits when the protocol
/// input closes, which is also what happens when the host dies. Returns 0 or an errno value.
int skillhost_worker_setup(int *protocol_in, int *protocol_out);

/// Sets a soft and hard resource limit (RLIMIT_AS, RLIMIT_CPU, RLIMIT_NOFILE …) for this process; 0 or errno.
int skillhost_set_limit(int resource, unsigned long long value);

/// Sends `signal` to the process group `group`; 0 or errno.
int skillhost_kill_group(pid_t group, int signal);

/// Makes this process a child subreaper (PR_SET_CHILD_SUBREAPER): orphaned descendants — a plugin's child that
/// left its process group with setsid(), whose parent died — become this process's children instead of init's,
/// so they can be found and stopped. 0 or errno. [thread-safe]
int skillhost_become_subreaper(void);

/// Kills (SIGKILL) and reaps the children of this process that are not among the `keep_count` pids in `keep`
/// (and, with `only_other_sessions`, only those in a session other than this process's: what a subreaper adopted
/// from plugins that left with setsid()). Returns how many. [thread-safe]
int skillhost_kill_adopted(const pid_t *keep, int keep_count, int only_other_sessions);

/// `write` that never raises SIGPIPE in the process (the signal is blocked for this thread while writing, and the
/// one the write raised is taken): a peer that went away is EPIPE, not the end of a host that did not ignore
/// SIGPIPE. [thread-safe]
ssize_t skillhost_write_nosigpipe(int fd, const void *buffer, size_t length);

/** The Landlock ABI the kernel offers (0 when it has none or it is disabled). [any thread] */
int skillhost_landlock_abi(void);

/** Sets PR_SET_NO_NEW_PRIVS, then confines the calling process and everything it starts with a Landlock ruleset
    that scopes signals and abstract UNIX sockets (ABI 6): it can no longer signal, or connect to an abstract
    socket of, any process outside its domain — the host above all. Files and the network are not restricted by
    it. 0, ENOSYS when the kernel's Landlock is older than ABI 6, or another errno. Call before any plugin code
    runs, in the worker. [binds the calling thread and the threads it starts later; once] */
int skillhost_scope_signals_and_sockets(void);

#endif
