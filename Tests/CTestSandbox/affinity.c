// CPU affinity for tests, which Swift cannot reach (sched_getaffinity and the CPU_* macros are GNU C).
#define _GNU_SOURCE
#include "test_sandbox.h"

#include <sched.h>

int skillhost_test_affinity(int thread, unsigned long long *mask) {
    cpu_set_t set;
    if (sched_getaffinity(thread, sizeof set, &set) != 0) return -1;
    *mask = 0;
    for (int cpu = 0; cpu < 64; cpu++)
        if (CPU_ISSET(cpu, &set)) *mask |= 1ull << cpu;
    return 0;
}

int skillhost_test_set_affinity(int thread, unsigned long long mask) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int cpu = 0; cpu < 64; cpu++)
        if (mask & (1ull << cpu)) CPU_SET(cpu, &set);
    return sched_setaffinity(thread, sizeof set, &set);
}
