#ifndef SKILLHOST_TEST_SANDBOX_H
#define SKILLHOST_TEST_SANDBOX_H

/// The suite's own HOME while the tests run: a new empty folder that no test may write to (see sandbox.c).
/// Thread: any. Ownership: a static string, valid for the life of the process. Errors: NULL if it was not made.
const char *skillhost_test_suite_home(void);

/// The CPUs (0-63) thread `thread` (0: the calling one) may run on, as a bit mask in `mask`.
/// Thread: any. Errors: -1 with errno set.
int skillhost_test_affinity(int thread, unsigned long long *mask);

/// Lets thread `thread` (0: the calling one) run only on the CPUs (0-63) in `mask`; a running thread moves at once.
/// Thread: any. Errors: -1 with errno set (EINVAL: none of them allowed).
int skillhost_test_set_affinity(int thread, unsigned long long mask);

#endif
