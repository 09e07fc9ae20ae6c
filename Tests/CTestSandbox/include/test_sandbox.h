#ifndef SKILLHOST_TEST_SANDBOX_H
#define SKILLHOST_TEST_SANDBOX_H

/// The suite's own HOME while the tests run: a new empty folder that no test may write to (see sandbox.c).
/// Thread: any. Ownership: a static string, valid for the life of the process. Errors: NULL if it was not made.
const char *skillhost_test_suite_home(void);

#endif
