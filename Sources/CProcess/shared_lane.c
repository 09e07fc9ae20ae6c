#define _GNU_SOURCE
#include "process_support.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* One call at a time travels through this page-aligned block, mapped by the host and by its worker: a mailbox per
   direction. The host writes a request and bumps `request_seq`; the worker copies it out, runs the call and posts
   each message it writes during the call (progress, log lines, then the response) into the response mailbox,
   bumping `response_seq` and ringing `host_bell`; the host copies each out and acknowledges it (`response_ack`)
   before the worker posts the next. Each side checks for a while before it sleeps on a futex; the other side wakes
   it only when it says it sleeps. A message too long for its mailbox is announced with a length of UINT32_MAX and
   travels on the lane's pipe instead.

   The worker is not trusted: everything the host reads here is read once, bounded, and copied before use; the
   host's own wake-ups ring the bell, which a worker cannot silence for longer than its call may take (a call that
   never answers is cancelled and the worker killed, as on a pipe).

   Each side notes the CPU it runs on (plus one; 0: not yet) while it waits. A side that finds the other noted on its
   own CPU stops spinning and sleeps at once: the other cannot run there while it spins (beside another job on two
   cores the two otherwise took turns spinning out their whole spin, 43-58 us a call). The host's side then moves
   off that CPU (`move_off`): left there, the pair took turns on one core beside the other job for the whole run,
   two context switches a call (10 us against 5.8 when apart, in about half the runs beside two busy loops). A
   worker that writes a false CPU only slows its own calls, or moves its caller at most once per 10 ms. */
struct skillhost_lane {
    _Atomic uint32_t request_seq;
    _Atomic uint32_t worker_sleeping;
    _Atomic uint32_t closed;
    uint32_t request_length;
    _Atomic uint32_t host_cpu;
    char pad0[64 - 20];
    _Atomic uint32_t response_seq;
    _Atomic uint32_t response_ack;
    _Atomic uint32_t host_bell;
    _Atomic uint32_t host_sleeping;
    _Atomic uint32_t worker_awaits_ack;
    uint32_t response_length;
    _Atomic uint32_t worker_cpu;
    char pad1[64 - 28];
    uint8_t request[SKILLHOST_LANE_CAPACITY];
    uint8_t response[SKILLHOST_LANE_CAPACITY];
};

static const size_t lane_size = (sizeof(struct skillhost_lane) + 4095) & ~(size_t)4095;

static long futex(_Atomic uint32_t *word, int operation, uint32_t value) {
    /* Not FUTEX_PRIVATE_FLAG: the word is shared between two processes. */
    return syscall(SYS_futex, (uint32_t *)word, operation, value, NULL, NULL, 0);
}

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Checks `ready(lane, argument)` for up to `spin_ns`; then sleeps on `word` (announcing it in `sleeping`) until it
   no longer holds `seen` and `ready` holds. Returns when ready. */
typedef int (*lane_condition)(struct skillhost_lane *lane, uint32_t argument);

/* Notes this side's CPU in `mine`; true when the other side's note names the same CPU. */
static int sharing_cpu(_Atomic uint32_t *mine, _Atomic uint32_t *theirs) {
    int cpu = sched_getcpu();
    if (cpu < 0) return 0;
    atomic_store_explicit(mine, (uint32_t)cpu + 1, memory_order_relaxed);
    return atomic_load_explicit(theirs, memory_order_relaxed) == (uint32_t)cpu + 1;
}

/* When the thread last moved itself (`move_off`), and how many times it did. */
static _Thread_local uint64_t last_move_ns;
static _Thread_local long moves;

long skillhost_lane_moves(void) { return moves; }

/* Moves the calling thread off the CPU it runs on to another it may run on (its affinity narrowed for an instant,
   then given back as it was), at most once per 10 ms per thread; true when it moved. */
static int move_off(void) {
    uint64_t now = now_ns();
    if (last_move_ns != 0 && now - last_move_ns < 10000000u) return 0;
    last_move_ns = now;
    int cpu = sched_getcpu();
    cpu_set_t original, others;
    if (cpu < 0 || cpu >= CPU_SETSIZE || sched_getaffinity(0, sizeof original, &original) != 0) return 0;
    others = original;
    CPU_CLR(cpu, &others);
    if (CPU_COUNT(&others) == 0 || sched_setaffinity(0, sizeof others, &others) != 0) return 0;
    (void)sched_setaffinity(0, sizeof original, &original);
    moves++;
    return 1;
}

/* Whether this side shares the other's CPU, after moving off it when `may_move` (and the move succeeded). */
static int still_sharing(_Atomic uint32_t *mine, _Atomic uint32_t *theirs, int may_move) {
    if (!sharing_cpu(mine, theirs)) return 0;
    return !(may_move && move_off() && !sharing_cpu(mine, theirs));
}

static void wait_for(struct skillhost_lane *lane, lane_condition ready, uint32_t argument, _Atomic uint32_t *word,
                     _Atomic uint32_t *sleeping, uint64_t spin_ns, _Atomic uint32_t *mine, _Atomic uint32_t *theirs,
                     int may_move) {
    if (ready(lane, argument)) {
        /* Ready at once can mean the other side ran here first, having preempted this one: moved all the same. */
        if (may_move) (void)still_sharing(mine, theirs, may_move);
        return;
    }
    if (spin_ns > 0 && !still_sharing(mine, theirs, may_move)) {
        uint64_t start = now_ns();
        for (unsigned round = 1;; round++) {
            for (int i = 0; i < 64; i++) {
                skillhost_cpu_relax();
                if (ready(lane, argument)) return;
            }
            /* Give the core away now and then: on a busy machine the other side may be waiting for it. */
            if (round % 16 == 0) {
                if (still_sharing(mine, theirs, may_move)) break;
                sched_yield();
            }
            if (now_ns() - start >= spin_ns) break;
        }
    }
    for (;;) {
        uint32_t seen = atomic_load(word);
        atomic_store(sleeping, 1);
        /* seq_cst on both sides: either the other side sees `sleeping` and wakes us, or we see what it changed. */
        if (ready(lane, argument)) break;
        futex(word, FUTEX_WAIT, seen);
        if (ready(lane, argument)) break;
    }
    atomic_store(sleeping, 0);
    (void)sharing_cpu(mine, theirs);  // woken, perhaps elsewhere: the note from before the sleep is stale
}

int skillhost_lane_create(void) {
    int fd = memfd_create("skillhost-lane", MFD_CLOEXEC);
    if (fd < 0) return -errno;
    if (ftruncate(fd, (off_t)lane_size) != 0) {
        int saved = errno;
        close(fd);
        return -saved;
    }
    return fd;
}

void *skillhost_lane_map(int fd) {
    void *lane = mmap(NULL, lane_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    return lane == MAP_FAILED ? NULL : lane;
}

void skillhost_lane_unmap(void *lane) { munmap(lane, lane_size); }

/* MARK: Host */

void skillhost_lane_post_request(void *opaque, const uint8_t *bytes, size_t length) {
    struct skillhost_lane *lane = opaque;
    if (length <= SKILLHOST_LANE_CAPACITY) {
        memcpy(lane->request, bytes, length);
        lane->request_length = (uint32_t)length;
    } else {
        lane->request_length = UINT32_MAX;
    }
    atomic_fetch_add(&lane->request_seq, 1);
    if (atomic_load(&lane->worker_sleeping)) futex(&lane->request_seq, FUTEX_WAKE, 1);
}

struct host_wait {
    uint32_t bell;
};

static int response_or_bell(struct skillhost_lane *lane, uint32_t bell) {
    return atomic_load(&lane->response_seq) != atomic_load(&lane->response_ack) ||
           atomic_load(&lane->host_bell) != bell;
}

long skillhost_lane_next_response(void *opaque, uint8_t *into, size_t capacity, uint64_t spin_ns) {
    struct skillhost_lane *lane = opaque;
    uint32_t bell = atomic_load(&lane->host_bell);
    wait_for(lane, response_or_bell, bell, &lane->host_bell, &lane->host_sleeping, spin_ns, &lane->host_cpu,
             &lane->worker_cpu, 1);
    uint32_t sequence = atomic_load(&lane->response_seq);
    if (sequence == atomic_load(&lane->response_ack)) return SKILLHOST_LANE_WOKEN;
    uint32_t length = lane->response_length;
    long result;
    if (length == UINT32_MAX) {
        result = SKILLHOST_LANE_ON_PIPE;
    } else if (length > SKILLHOST_LANE_CAPACITY || length > capacity) {
        result = SKILLHOST_LANE_BROKEN;
    } else {
        memcpy(into, lane->response, length);
        result = (long)length;
    }
    atomic_store(&lane->response_ack, sequence);
    if (atomic_load(&lane->worker_awaits_ack)) futex(&lane->response_ack, FUTEX_WAKE, 1);
    return result;
}

void skillhost_lane_wake_host(void *opaque) {
    struct skillhost_lane *lane = opaque;
    atomic_fetch_add(&lane->host_bell, 1);
    futex(&lane->host_bell, FUTEX_WAKE, INT_MAX);
}

void skillhost_lane_close(void *opaque) {
    struct skillhost_lane *lane = opaque;
    atomic_store(&lane->closed, 1);
    atomic_fetch_add(&lane->request_seq, 1);
    futex(&lane->request_seq, FUTEX_WAKE, INT_MAX);
    atomic_fetch_add(&lane->response_ack, 1);
    futex(&lane->response_ack, FUTEX_WAKE, INT_MAX);
}

/* MARK: Worker */

static int request_changed(struct skillhost_lane *lane, uint32_t seen) {
    return atomic_load(&lane->request_seq) != seen || atomic_load(&lane->closed);
}

long skillhost_lane_next_request(void *opaque, uint32_t *seen, uint8_t *into, size_t capacity, uint64_t spin_ns) {
    struct skillhost_lane *lane = opaque;
    wait_for(lane, request_changed, *seen, &lane->request_seq, &lane->worker_sleeping, spin_ns, &lane->worker_cpu,
             &lane->host_cpu, 0);
    if (atomic_load(&lane->closed)) return SKILLHOST_LANE_CLOSED;
    *seen = atomic_load(&lane->request_seq);
    uint32_t length = lane->request_length;
    if (length == UINT32_MAX) return SKILLHOST_LANE_ON_PIPE;
    if (length > SKILLHOST_LANE_CAPACITY || length > capacity) return SKILLHOST_LANE_BROKEN;
    memcpy(into, lane->request, length);
    return (long)length;
}

static int acknowledged(struct skillhost_lane *lane, uint32_t unused) {
    (void)unused;
    return atomic_load(&lane->response_ack) == atomic_load(&lane->response_seq) || atomic_load(&lane->closed);
}

int skillhost_lane_post_response(void *opaque, const uint8_t *bytes, size_t length, uint64_t spin_ns) {
    struct skillhost_lane *lane = opaque;
    wait_for(lane, acknowledged, 0, &lane->response_ack, &lane->worker_awaits_ack, spin_ns, &lane->worker_cpu,
             &lane->host_cpu, 0);
    if (atomic_load(&lane->closed)) return SKILLHOST_LANE_CLOSED;
    int on_pipe = length > SKILLHOST_LANE_CAPACITY;
    if (on_pipe) {
        lane->response_length = UINT32_MAX;
    } else {
        memcpy(lane->response, bytes, length);
        lane->response_length = (uint32_t)length;
    }
    atomic_fetch_add(&lane->response_seq, 1);
    atomic_fetch_add(&lane->host_bell, 1);
    if (atomic_load(&lane->host_sleeping)) futex(&lane->host_bell, FUTEX_WAKE, INT_MAX);
    return on_pipe ? SKILLHOST_LANE_ON_PIPE : 0;
}
