/* The record of what the filter blocked: a SIGSYS handler that names the call (and what it was aimed at) on
   standard error and for the call's error, async-signal-safe. */
#define _GNU_SOURCE
#include "confine_internal.h"
#include "metadata.h"
#include "process_support.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/audit.h>
#include <netinet/in.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <ucontext.h>
#include <unistd.h>

/* What the last blocked call on this thread was, for the worker to put into the call's error. Written by the
   SIGSYS handler (async-signal-safe: plain stores and snprintf-free formatting below), read by
   skillhost_take_blocked on the same thread. */
static __thread char blocked_text[256];

/* The names of the system calls the filter traps, by number, so the handler can name them without a lookup. */
enum { MAX_TRAPPED = 128 };
static struct {
    int number;
    const char *name;
} trapped[MAX_TRAPPED];
static int trapped_count;

void skillhost_note_trapped(int number, const char *name) {
    if (trapped_count >= MAX_TRAPPED) return;
    for (int i = 0; i < trapped_count; i++)
        if (trapped[i].number == number) return;
    trapped[trapped_count].number = number;
    trapped[trapped_count].name = name;
    trapped_count++;
}

static const char *trapped_name(int number) {
    for (int i = 0; i < trapped_count; i++)
        if (trapped[i].number == number) return trapped[i].name;
    return "a system call";
}

/* Appends text to a fixed buffer, truncating; async-signal-safe. */
static size_t append(char *buffer, size_t used, size_t size, const char *text) {
    while (*text && used + 1 < size) buffer[used++] = *text++;
    buffer[used] = 0;
    return used;
}

static size_t append_number(char *buffer, size_t used, size_t size, unsigned long value) {
    char digits[24];
    int count = 0;
    do {
        digits[count++] = (char)('0' + value % 10);
        value /= 10;
    } while (value && count < 23);
    while (count > 0 && used + 1 < size) buffer[used++] = digits[--count];
    buffer[used] = 0;
    return used;
}

/* " to 127.0.0.1:8080", " to /run/x.sock", " to @name" for a socket address the plugin passed. */
static size_t append_address(char *buffer, size_t used, size_t size, const struct sockaddr *address) {
    if (!address) return used;
    char text[INET6_ADDRSTRLEN + 1] = "";
    switch (address->sa_family) {
    case AF_INET:
    case AF_INET6: {
        /* " to 127.0.0.1:8080" or " to [::1]:8080". */
        int v6 = address->sa_family == AF_INET6;
        const void *host = v6 ? (const void *)&((const struct sockaddr_in6 *)address)->sin6_addr
                              : (const void *)&((const struct sockaddr_in *)address)->sin_addr;
        unsigned port = ntohs(v6 ? ((const struct sockaddr_in6 *)address)->sin6_port
                                 : ((const struct sockaddr_in *)address)->sin_port);
        inet_ntop(address->sa_family, host, text, sizeof text);
        used = append(buffer, used, size, v6 ? " to [" : " to ");
        used = append(buffer, used, size, text);
        used = append(buffer, used, size, v6 ? "]:" : ":");
        return append_number(buffer, used, size, port);
    }
    case AF_UNIX: {
        const struct sockaddr_un *un = (const struct sockaddr_un *)address;
        char path[sizeof un->sun_path + 1];
        memcpy(path, un->sun_path, sizeof un->sun_path);
        path[sizeof un->sun_path] = 0;
        used = append(buffer, used, size, " to ");
        if (path[0] == 0) {
            used = append(buffer, used, size, "@");
            return append(buffer, used, size, path + 1);
        }
        return append(buffer, used, size, path);
    }
    default: return used;
    }
}

/* The namespace flags of clone(): no grant gives a plugin new namespaces (CLONE_NEWTIME shares its bit with the
   exit signal and is refused by clone() itself). */
const unsigned long skillhost_namespace_flags[] = {CLONE_NEWNS,   CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC,
                                                   CLONE_NEWUSER, CLONE_NEWPID,    CLONE_NEWNET};
const size_t skillhost_namespace_flag_count = sizeof skillhost_namespace_flags / sizeof skillhost_namespace_flags[0];

static const char *family_name(long family) {
    switch (family) {
    case AF_INET: return "IPv4";
    case AF_INET6: return "IPv6";
    case AF_UNIX: return "UNIX datagram";
    case AF_NETLINK: return "netlink";
    case AF_PACKET: return "packet";
    default: return "network";
    }
}

#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#endif

void skillhost_on_blocked(int signal, siginfo_t *info, void *context) {
    (void)signal;
    ucontext_t *uc = context;
    int saved = errno;
#if defined(__x86_64__)
    long arg0 = (long)uc->uc_mcontext.gregs[REG_RDI], arg1 = (long)uc->uc_mcontext.gregs[REG_RSI];
#elif defined(__aarch64__)
    long arg0 = (long)uc->uc_mcontext.regs[0], arg1 = (long)uc->uc_mcontext.regs[1];
#else
    long arg0 = 0, arg1 = 0;
#endif
    int number = info->si_syscall;
    char *text = blocked_text;
    size_t size = sizeof blocked_text, used = 0;
    if (info->si_arch != NATIVE_ARCH || (number & 0x40000000)) {
        /* int 0x80 (i386) or an x32 number from a 64-bit process: its numbers mean other calls here. */
        used = append(text, used, size, "a system call through another ABI (number ");
        used = append_number(text, used, size, (unsigned long)number & 0xffff);
        used = append(text, used, size, ")");
        number = -1;
    } else {
        used = append(text, used, size, trapped_name(number));
        used = append(text, used, size, "()");
    }
    if (number == SCMP_SYS(connect) || number == SCMP_SYS(sendto)) {
#if defined(__x86_64__)
        long address = number == SCMP_SYS(sendto) ? (long)uc->uc_mcontext.gregs[REG_R8] : arg1;
#elif defined(__aarch64__)
        long address = number == SCMP_SYS(sendto) ? (long)uc->uc_mcontext.regs[4] : arg1;
#else
        long address = 0;
#endif
        used = append_address(text, used, size, (const struct sockaddr *)address);
    } else if (number == SCMP_SYS(socket)) {
        used = append(text, used, size, " of an ");
        used = append(text, used, size, family_name(arg0));
        used = append(text, used, size, " socket");
    } else if (number == SCMP_SYS(socketpair)) {
        used = append(text, used, size, " of UNIX datagram sockets");
    } else if (number == SCMP_SYS(clone)) {
        unsigned long flags = (unsigned long)arg0;
        int namespaces = 0;
        for (size_t i = 0; i < skillhost_namespace_flag_count; i++)
            namespaces |= (flags & skillhost_namespace_flags[i]) != 0;
        if (namespaces) used = append(text, used, size, " into new namespaces");
    } else if (number == SCMP_SYS(kill)) {
        used = append(text, used, size, " to every process");
    } else if (number == SCMP_SYS(prlimit64) || number == SCMP_SYS(sched_setaffinity) ||
               number == SCMP_SYS(sched_setscheduler) || number == SCMP_SYS(sched_setparam) ||
               number == SCMP_SYS(sched_setattr) || number == SCMP_SYS(migrate_pages) ||
               number == SCMP_SYS(move_pages)) {
        used = append(text, used, size, " of process ");
        used = append_number(text, used, size, (unsigned long)(unsigned int)arg0);
    } else if (number == SCMP_SYS(setpriority) || number == SCMP_SYS(ioprio_set)) {
        used = append(text, used, size, " of another process, group or user");
    } else if (number == SCMP_SYS(execve) && arg0) {
        used = append(text, used, size, " of ");
        used = append(text, used, size, (const char *)arg0);
    } else if (number == SCMP_SYS(execveat) && arg1) {
        used = append(text, used, size, " of ");
        used = append(text, used, size, (const char *)arg1);
    }
    char line[320];
    size_t length = append(line, 0, sizeof line, "skillhost worker: blocked ");
    length = append(line, length, sizeof line, text);
    length = append(line, length, sizeof line, "\n");
    (void)!write(2, line, length);
    /* The call fails with EPERM, as an ordinary permission error the plugin can report. */
#if defined(__x86_64__)
    uc->uc_mcontext.gregs[REG_RAX] = -EPERM;
#elif defined(__aarch64__)
    uc->uc_mcontext.regs[0] = (unsigned long long)-EPERM;
#endif
    errno = saved;
}

int skillhost_blocked_pending(void) { return blocked_text[0] != 0 || skillhost_metadata_refusal(NULL, 0, 0); }

int skillhost_take_blocked(char *buffer, int size) {
    if (size <= 0) return 0;
    /* The supervisor's refusal of a metadata change on this thread, if the filter itself blocked nothing. */
    if (blocked_text[0] == 0) return skillhost_metadata_refusal(buffer, (size_t)size, 1);
    skillhost_metadata_refusal(NULL, 0, 1);
    snprintf(buffer, (size_t)size, "%s", blocked_text);
    blocked_text[0] = 0;
    return 1;
}

