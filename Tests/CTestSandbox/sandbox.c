// Keeps the test suite out of the user's home. Before any test code runs (a constructor), the test process's HOME
// and XDG folders are pointed at a new empty folder; the real values stay in SKILLHOST_TEST_REAL_HOME and
// SKILLHOST_TEST_REAL_<VARIABLE> for the few tools that should keep the user's caches (pip's wheel cache). A
// test that runs skillhost, or the host's code, without a temporary home of its own therefore writes into that
// folder instead of the user's — and when the process exits, anything found there fails the suite with the
// paths that were written.
#define _GNU_SOURCE
#include "test_sandbox.h"

#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char suite_home[PATH_MAX];

const char *skillhost_test_suite_home(void) { return suite_home[0] ? suite_home : NULL; }

static const char *const redirected[] = {"XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"};

static pid_t suite_pid;
static int found;

/* Anything counts, an empty folder too: the host creates nothing under HOME that a test did not ask for. */
static int count(const char *path, const struct stat *info, int type, struct FTW *walk) {
    (void)path;
    (void)info;
    (void)type;
    if (walk->level > 0) found++;
    return 0;
}

static int report(const char *path, const struct stat *info, int type, struct FTW *walk) {
    (void)info;
    (void)type;
    if (walk->level > 0 && found++ < 20) fprintf(stderr, "  %s\n", path);
    return 0;
}

static int removal(const char *path, const struct stat *info, int type, struct FTW *walk) {
    (void)info;
    (void)type;
    (void)walk;
    remove(path);
    return 0;
}

static void check(void) {
    if (!suite_home[0] || getpid() != suite_pid) return;
    found = 0;
    nftw(suite_home, count, 16, FTW_PHYS);
    if (found > 0) {
        int total = found;
        fflush(stdout);
        fprintf(stderr,
                "error: the test suite wrote outside its temporary folders: a test ran skillhost or its code with "
                "the suite's own HOME and XDG folders (%s) instead of a temporary home of its own (give the child "
                "cliEnvironment(home:)). Written:\n",
                suite_home);
        found = 0;
        nftw(suite_home, report, 16, FTW_PHYS);
        if (total > 20) fprintf(stderr, "  … and %d more\n", total - 20);
        fflush(stderr);
        _exit(1);
    }
    nftw(suite_home, removal, 16, FTW_DEPTH | FTW_PHYS);
}

__attribute__((constructor)) static void redirect_home(void) {
    const char *temporary = getenv("TMPDIR");
    if (!temporary || !*temporary) temporary = "/tmp";
    snprintf(suite_home, sizeof suite_home, "%s/skillhost-suite-home-XXXXXX", temporary);
    if (!mkdtemp(suite_home)) {
        suite_home[0] = 0;
        return;
    }
    const char *home = getenv("HOME");
    if (home) setenv("SKILLHOST_TEST_REAL_HOME", home, 1);
    for (size_t i = 0; i < sizeof redirected / sizeof redirected[0]; i++) {
        const char *value = getenv(redirected[i]);
        char name[64];
        snprintf(name, sizeof name, "SKILLHOST_TEST_REAL_%s", redirected[i]);
        if (value) setenv(name, value, 1);
        unsetenv(redirected[i]);
    }
    setenv("HOME", suite_home, 1);
    suite_pid = getpid();
    atexit(check);
}
