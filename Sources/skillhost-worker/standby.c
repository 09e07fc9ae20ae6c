/* A spare's peek child, forked before the spare's launch: it gives up its privileges and loads the system-call
   filter of a plugin that declares nothing while it waits, so a start that peeks spends on its path only what
   depends on the plugin — Landlock's rules for the plugin's copy and /proc/self, the plugin's load and the report.
   The fork (about 0.2 ms on a cold CPU), the capabilities (about 0.1 ms for root), the filter's load (about
   0.15 ms) and Landlock's rules for the paths every peek of this host names (the system's folders and files, each
   checked with one stat when the launch comes) happen while nothing waits for them. What it runs once it has the
   plugin's path is the peek child's of skillhost_peek_start, confined the same way: the same filter, the same
   lists, the launch's limits and TMPDIR. */
#define _GNU_SOURCE
#include "worker.h"
#include "process_support.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static struct {
    pid_t child;   /* -1: none */
    int command;   /* the write end of its command pipe */
    int report;    /* the read end of its report pipe */
    char *filter;  /* the filter it loaded, in hex, as the spare was given it */
} standby = {.child = -1, .command = -1, .report = -1};

/* The most a command may hold: the launch's own bound. */
#define COMMAND_LIMIT (1u << 20)

static int read_exactly(int fd, void *buffer, size_t length) {
    size_t done = 0;
    while (done < length) {
        ssize_t n = read(fd, (char *)buffer + done, length - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        done += (size_t)n;
    }
    return 0;
}

static int write_all(int fd, const void *buffer, size_t length) {
    size_t done = 0;
    while (done < length) {
        ssize_t n = write(fd, (const char *)buffer + done, length - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        done += (size_t)n;
    }
    return 0;
}

static int apply_limit(int resource, const char *value) {
    return *value == 0 || skillhost_set_limit(resource, strtoull(value, NULL, 10)) == 0 ? 0 : -1;
}

/* The child, confined for its calls: waits for the command — the copy, the peek's lists (JSON), the three limits,
   TMPDIR ("" for none) and whether the host saw the prepared rules' paths unchanged ("1" or "0"), each
   followed by a NUL, after their length — then confines its files and peeks. Exits
   quietly when the spare goes (its pipe closes). */
static _Noreturn void wait_for_command(void) {
    uint32_t length;
    if (read_exactly(4, &length, sizeof length) != 0 || length > COMMAND_LIMIT) _exit(0);
    char *command = malloc((size_t)length + 1);
    if (!command || read_exactly(4, command, length) != 0) _exit(8);
    command[length] = 0;
    close(4);
    const char *fields[7];
    size_t at = 0;
    for (int i = 0; i < 7; i++) {
        if (at >= length) _exit(8);
        fields[i] = command + at;
        at += strlen(command + at) + 1;
    }
    if (apply_limit(RLIMIT_AS, fields[2]) || apply_limit(RLIMIT_CPU, fields[3]) ||
        apply_limit(RLIMIT_NOFILE, fields[4]))
        _exit(9);
    if (*fields[5] && setenv("TMPDIR", fields[5], 1) != 0) _exit(9);
    struct skillhost_confinement spec;
    int applied = 0;
    if (confinement_read_spec(fields[1], &spec) != 0) _exit(3);
    /* The host watched the prepared rules' paths from before this child prepared them: nothing changed. */
    if (strcmp(fields[6], "1") == 0) skillhost_confine_files_trust_prepared();
    if (skillhost_confine_files(&spec, &applied) != 0) _exit(3);
    skillhost_peek_report(fields[0]);
}

void standby_start(const char *filter, const struct skillhost_confinement *prepare) {
    if (!filter) return;
    int report[2], command[2];
    if (pipe2(report, O_CLOEXEC) != 0) return;
    if (pipe2(command, O_CLOEXEC) != 0) {
        close(report[0]);
        close(report[1]);
        return;
    }
    pid_t parent = getpid();
    pid_t child = fork();
    if (child == 0) {
        /* Only the two pipes stay open, as descriptors 3 (report) and 4 (command); moved above both first, so
           neither overwrites the other. */
        int report_end = fcntl(report[1], F_DUPFD, 16), command_end = fcntl(command[0], F_DUPFD, 16);
        if (report_end < 0 || command_end < 0 || dup2(report_end, 3) < 0 || dup2(command_end, 4) < 0) _exit(2);
        close_range(5, ~0U, 0);
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(0);
        struct skillhost_confinement nothing = {0};
        int applied;
        if (skillhost_confine_calls(&nothing, &applied) != 0) _exit(3);
        /* Landlock's rules for the lists every peek of this host has (all but the plugin's copy); a launch whose
           lists do not hold them, or whose paths name other files by then, builds its own. */
        if (prepare) (void)skillhost_confine_files_prepare(prepare);
        wait_for_command();
    }
    close(report[1]);
    close(command[0]);
    if (child < 0) {
        close(report[0]);
        close(command[1]);
        return;
    }
    standby.child = child;
    standby.command = command[1];
    standby.report = report[0];
    standby.filter = strdup(filter);
}

void standby_abandon(void) {
    if (standby.child <= 0) return;
    close(standby.command);
    close(standby.report);
    kill(standby.child, SIGKILL);
    skillhost_peek_reap_later(standby.child);
    standby.child = -1;
    free(standby.filter);
    standby.filter = NULL;
}

int standby_take(const struct confinement_launch *launch, pid_t *child, int *report) {
    if (standby.child <= 0) return -1;
    /* Only for the peek it was made for: the filter it loaded, nothing preloaded into the worker that it lacks. */
    if (launch->preload || !launch->filter || strcmp(launch->filter, standby.filter) != 0) {
        standby_abandon();
        return -1;
    }
    const char *fields[7] = {worker.copy,
                             launch->peek,
                             launch->limit_as ? launch->limit_as : "",
                             launch->limit_cpu ? launch->limit_cpu : "",
                             launch->limit_files ? launch->limit_files : "",
                             launch->temporary ? launch->temporary : "",
                             launch->prepared_unchanged ? "1" : "0"};
    size_t length = 0;
    for (int i = 0; i < 7; i++) length += strlen(fields[i]) + 1;
    char *message = length <= COMMAND_LIMIT ? malloc(sizeof(uint32_t) + length) : NULL;
    if (!message) {
        standby_abandon();
        return -1;
    }
    uint32_t length32 = (uint32_t)length;
    memcpy(message, &length32, sizeof length32);
    size_t at = sizeof length32;
    for (int i = 0; i < 7; i++) {
        size_t n = strlen(fields[i]) + 1;
        memcpy(message + at, fields[i], n);
        at += n;
    }
    /* A child that is gone (the write fails: main ignores SIGPIPE) is replaced by a peek started now. */
    int sent = write_all(standby.command, message, at) == 0;
    free(message);
    if (!sent) {
        standby_abandon();
        return -1;
    }
    close(standby.command);
    *child = standby.child;
    *report = standby.report;
    standby.child = -1;
    free(standby.filter);
    standby.filter = NULL;
    return 0;
}
