/* Test fixture: a plugin that misbehaves in every way the fault suite covers, plus one healthy skill. */
#define _GNU_SOURCE
#include "skill_sdk.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>

#define OBJECT "{\"type\":\"object\"}"

static int ok(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    (void)state;
    (void)args;
    char result[64];
    api->set_result(call, result, (size_t)snprintf(result, sizeof result, "{\"pid\":%d}", (int)getpid()));
    return SKILL_OK;
}

/* Asks the kernel whether it may signal its parent (signal 0 sends nothing): {"errno": 0} when it may. */
static int signal_parent(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    (void)state;
    (void)args;
    int error = kill(getppid(), 0) == 0 ? 0 : errno;
    char result[64];
    api->set_result(call, result, (size_t)snprintf(result, sizeof result, "{\"errno\":%d}", error));
    return SKILL_OK;
}

/* Connects to the abstract UNIX socket named by {"name": "..."}: {"errno": 0} when it may. */
static int connect_abstract(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    (void)state;
    const char *start = strstr(args, "\"name\":\"");
    if (!start) return SKILL_ERR_INVALID_ARGS;
    start += 8;
    const char *end = strchr(start, '"');
    if (!end || end - start > 90) return SKILL_ERR_INVALID_ARGS;
    struct sockaddr_un address;
    memset(&address, 0, sizeof address);
    address.sun_family = AF_UNIX;
    memcpy(address.sun_path + 1, start, (size_t)(end - start)); /* sun_path[0] = 0: the abstract namespace */
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int error = fd < 0 ? errno
        : connect(fd, (struct sockaddr *)&address, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (end - start))) == 0
            ? 0 : errno;
    if (fd >= 0) close(fd);
    char result[64];
    api->set_result(call, result, (size_t)snprintf(result, sizeof result, "{\"errno\":%d}", error));
    return SKILL_OK;
}

static int segv(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    (void)state, (void)api, (void)call, (void)args;
    *(volatile int *)(uintptr_t)8 = 1;
    return SKILL_OK;
}

static int do_abort(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    (void)state, (void)api, (void)call, (void)args;
    abort();
}

static int kill_self(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    (void)state, (void)api, (void)call, (void)args;
    raise(SIGKILL);
    return SKILL_OK;
}

static int do_exit(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    (void)state, (void)api, (void)call, (void)args;
    exit(3);
}

static volatile int released;
/* Calls of fault_spin and fault_block inside the plugin now. */
static volatile int inside;

/* Loops without ever looking at is_cancelled, until fault_release (so an in-process test can end the thread). */
static int spin(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    (void)state, (void)api, (void)call, (void)args;
    __atomic_add_fetch(&inside, 1, __ATOMIC_SEQ_CST);
    while (!__atomic_load_n(&released, __ATOMIC_SEQ_CST)) {
    }
    __atomic_sub_fetch(&inside, 1, __ATOMIC_SEQ_CST);
    return SKILL_OK;
}

extern char **environ;

/* What the worker's environment holds: whether a planted secret and PATH are there, how many variables, TMPDIR. */
static int environment(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    char result[1200];
    int count = 0;
    (void)state, (void)args;
    while (environ[count]) count++;
    const char *temporary = getenv("TMPDIR");
    api->set_result(call, result,
                    (size_t)snprintf(result, sizeof result, "{\"secret\":%s,\"path\":%s,\"count\":%d,\"tmpdir\":\"%.1000s\"}",
                                     getenv("SKILLHOST_TEST_SECRET") ? "true" : "false", getenv("PATH") ? "true" : "false",
                                     count, temporary ? temporary : ""));
    return SKILL_OK;
}

static int count_inside(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    char result[16];
    (void)state, (void)args;
    api->set_result(call, result, (size_t)snprintf(result, sizeof result, "%d", __atomic_load_n(&inside, __ATOMIC_SEQ_CST)));
    return SKILL_OK;
}

static int release_spin(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    (void)state, (void)api, (void)call, (void)args;
    __atomic_store_n(&released, 1, __ATOMIC_SEQ_CST);
    return SKILL_OK;
}

static int block(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    (void)state, (void)api, (void)call, (void)args;
    __atomic_add_fetch(&inside, 1, __ATOMIC_SEQ_CST);
    sleep(60);
    __atomic_sub_fetch(&inside, 1, __ATOMIC_SEQ_CST);
    return SKILL_OK;
}

/* Allocates and touches 64 MB blocks without checking, as careless code does, until it falls over. */
static int hog(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    (void)state, (void)api, (void)call, (void)args;
    for (;;) {
        char *block = malloc(64u << 20);
        memset(block, 1, 64u << 20);
    }
    return SKILL_OK;
}

/* The background thread crashes only once fault_thread_fire was called: the answer to fault_thread is already with
 * the host by then (the host does not send the next call before), whatever the machine's load. */
static pthread_mutex_t fire_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t fire_signal = PTHREAD_COND_INITIALIZER;
static int fired;

static void *crash_later(void *unused) {
    (void)unused;
    pthread_mutex_lock(&fire_lock);
    while (!fired)
        pthread_cond_wait(&fire_signal, &fire_lock);
    pthread_mutex_unlock(&fire_lock);
    *(volatile int *)(uintptr_t)8 = 1;
    return NULL;
}

/* Starts a thread that crashes after the call returned, when fault_thread_fire tells it to. */
static int background_crash(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    (void)state, (void)args;
    pthread_t thread;
    pthread_create(&thread, NULL, crash_later, NULL);
    pthread_detach(thread);
    api->set_result(call, "\"started\"", 9);
    return SKILL_OK;
}

static int fire(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    (void)state, (void)args;
    pthread_mutex_lock(&fire_lock);
    fired = 1;
    pthread_cond_broadcast(&fire_signal);
    pthread_mutex_unlock(&fire_lock);
    api->set_result(call, "\"fired\"", 7);
    return SKILL_OK;
}

static int garbage(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    (void)state, (void)args;
    printf("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"forged\"}\nnot even json\n");
    fflush(stdout);
    api->set_result(call, "\"printed\"", 9);
    return SKILL_OK;
}

static int huge(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    (void)state, (void)args;
    size_t size = 64u << 20;
    char *text = malloc(size);
    if (!text) return SKILL_ERR_FAILED;
    memset(text, 'a', size);
    text[0] = '"';
    text[size - 1] = '"';
    api->set_result(call, text, size);
    free(text);
    return SKILL_OK;
}

static int bad_utf8(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    (void)state, (void)args;
    api->set_result(call, "caf\xc3(\xff", 6);
    return SKILL_OK;
}

static int bad_json(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    (void)state, (void)args;
    api->set_result(call, "{\"total\": 12,", 13);
    return SKILL_OK;
}

/* Opens /dev/null until it cannot, closes them all again, and answers how many it got. */
/* Forks a child in a session of its own (with "setpgid": true, only a process group of its own) that keeps every
   inherited descriptor (the protocol pipe included) for 300 s, writes its pid to the file named by "pid_file", then
   crashes. */
static int orphan_then_crash(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    char path[512] = "";
    const char *key = strstr(args, "\"pid_file\":\"");
    (void)state, (void)api, (void)call;
    if (key) {
        const char *start = key + 12, *end = strchr(start, '"');
        if (end && (size_t)(end - start) < sizeof path) memcpy(path, start, (size_t)(end - start));
    }
    int group_only = strstr(args, "\"setpgid\":true") != NULL;
    pid_t child = fork();
    if (child == 0) {
        if (group_only) setpgid(0, 0);
        else setsid();
        sleep(300); /* longer than any test waits: it must be stopped, not end by itself */
        _exit(0);
    }
    if (path[0]) {
        FILE *file = fopen(path, "w");
        if (file) {
            fprintf(file, "%d", (int)child);
            fclose(file);
        }
    }
    *(volatile int *)(uintptr_t)8 = 1;
    return SKILL_OK;
}

/* Closes every descriptor above 2 (the worker's protocol channel among them), then returns. */
static int close_descriptors(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    (void)state, (void)api, (void)call, (void)args;
    for (int fd = 3; fd < 1024; fd++) close(fd);
    return SKILL_OK;
}

/* Writes 100,000 lines to standard error as fast as it can. */
static int spam(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    (void)state, (void)api, (void)call, (void)args;
    for (int i = 0; i < 100000; i++) fprintf(stderr, "spam line %d\n", i);
    fflush(stderr);
    return SKILL_OK;
}

static int count_files(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    (void)state, (void)args;
    static int fds[100000];
    int count = 0;
    while (count < 100000) {
        int fd = open("/dev/null", O_RDONLY);
        if (fd < 0) break;
        fds[count++] = fd;
    }
    for (int i = 0; i < count; i++) close(fds[i]);
    char result[32];
    api->set_result(call, result, (size_t)snprintf(result, sizeof result, "%d", count));
    return SKILL_OK;
}

/* Where the worker mapped its lane (the memfd "skillhost-lane"), from /proc/self/maps; 0 when it has none. */
static unsigned long lane_address(void) {
    FILE *maps = fopen("/proc/self/maps", "re");
    char line[512];
    unsigned long start = 0;
    while (maps && fgets(line, sizeof line, maps))
        if (strstr(line, "skillhost-lane") && sscanf(line, "%lx-", &start) == 1) break;
    if (maps) fclose(maps);
    return start;
}

/* Finds the worker's lane (the mapping of the memfd "skillhost-lane") and rings the host's bell out of protocol —
   its word at offset 72 (see shared_lane.c), a futex wake each time — for up to 5 s, then answers. */
static int ring_bell(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    (void)state, (void)args;
    unsigned long start = lane_address();
    if (!start) {
        api->set_error(call, "no lane");
        return SKILL_ERR_FAILED;
    }
    unsigned int *bell = (unsigned int *)(start + 72);
    struct timespec begun, now;
    clock_gettime(CLOCK_MONOTONIC, &begun);
    do {
        __atomic_add_fetch(bell, 1, __ATOMIC_SEQ_CST);
        syscall(SYS_futex, bell, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while (now.tv_sec - begun.tv_sec < 5);
    api->set_result(call, "1", 1);
    return SKILL_OK;
}

/* Leaves a child in a session of its own holding every descriptor of the worker's (the lane's pipe among them)
   for 300 s, its pid written to the file named by "pid_file", announces on the lane a response that comes on the pipe (a forged length: UINT32_MAX at offset 84),
   then crashes. */
static int forge_then_crash(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    (void)state;
    unsigned long start = lane_address();
    if (!start) {
        api->set_error(call, "no lane");
        return SKILL_ERR_FAILED;
    }
    char path[512] = "";
    const char *key = strstr(args, "\"pid_file\":\"");
    if (key) {
        const char *from = key + 12, *end = strchr(from, '"');
        if (end && (size_t)(end - from) < sizeof path) memcpy(path, from, (size_t)(end - from));
    }
    pid_t child = fork();
    if (child == 0) {
        setsid(); /* out of the worker's group, which is killed with it */
        sleep(300); /* longer than any test waits: the test stops it */
        _exit(0);
    }
    FILE *file = path[0] ? fopen(path, "w") : NULL;
    if (file) {
        fprintf(file, "%d", (int)child);
        fclose(file);
    }
    unsigned char *lane = (unsigned char *)start;
    __atomic_store_n((unsigned int *)(lane + 84), 0xFFFFFFFFu, __ATOMIC_SEQ_CST);
    __atomic_add_fetch((unsigned int *)(lane + 64), 1, __ATOMIC_SEQ_CST);
    __atomic_add_fetch((unsigned int *)(lane + 72), 1, __ATOMIC_SEQ_CST);
    syscall(SYS_futex, lane + 72, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
    usleep(100000); /* the host is reading the pipe by now */
    *(volatile int *)(uintptr_t)8 = 1;
    return SKILL_OK;
}

static const skill_descriptor skills[] = {
    SKILL_JSON("fault_orphan", "Orphan", "Leaves a child holding its pipes, then crashes.", OBJECT,
               SKILL_RISK_READ_ONLY, 0, orphan_then_crash),
    SKILL_JSON("fault_close_fds", "Close descriptors", "Closes every descriptor above 2.", OBJECT, SKILL_RISK_READ_ONLY,
               0, close_descriptors),
    SKILL_JSON("fault_spam", "Spam", "Writes 100,000 lines to stderr.", OBJECT, SKILL_RISK_READ_ONLY, 0, spam),
    SKILL_JSON("fault_files", "Files", "Counts the files it can open.", OBJECT, SKILL_RISK_READ_ONLY, 0, count_files),
    SKILL_JSON("fault_ok", "OK", "Answers with the worker's pid.", OBJECT, SKILL_RISK_READ_ONLY, 0, ok),
    SKILL_JSON("fault_forge_crash", "Forge and crash", "Announces a response on the pipe, then crashes.", OBJECT,
               SKILL_RISK_READ_ONLY, 0, forge_then_crash),
    SKILL_JSON("fault_ring", "Ring", "Rings the host's lane bell out of protocol.", OBJECT, SKILL_RISK_READ_ONLY, 0,
               ring_bell),
    SKILL_JSON("fault_connect_abstract", "Connect", "Connects to an abstract UNIX socket.", OBJECT,
               SKILL_RISK_READ_ONLY, 0, connect_abstract),
    SKILL_JSON("fault_signal_parent", "Signal parent", "Tries to signal its parent.", OBJECT, SKILL_RISK_READ_ONLY, 0,
               signal_parent),
    SKILL_JSON("fault_segv", "Segfault", "Dereferences a bad pointer.", OBJECT, SKILL_RISK_READ_ONLY, 0, segv),
    SKILL_JSON("fault_sigkill", "SIGKILL", "Kills its worker with SIGKILL.", OBJECT, SKILL_RISK_READ_ONLY, 0,
               kill_self),
    SKILL_JSON("fault_abort", "Abort", "Calls abort().", OBJECT, SKILL_RISK_READ_ONLY, 0, do_abort),
    SKILL_JSON("fault_exit", "Exit", "Calls exit(3).", OBJECT, SKILL_RISK_READ_ONLY, 0, do_exit),
    SKILL_JSON("fault_spin", "Spin", "Loops forever.", OBJECT, SKILL_RISK_READ_ONLY, 0, spin),
    SKILL_JSON("fault_release", "Release", "Ends fault_spin loops.", OBJECT, SKILL_RISK_READ_ONLY, 0, release_spin),
    SKILL_JSON("fault_env", "Environment", "Describes the worker's environment.", OBJECT, SKILL_RISK_READ_ONLY, 0,
               environment),
    SKILL_JSON("fault_inside", "Inside", "Counts fault_spin and fault_block calls inside the plugin.", OBJECT,
               SKILL_RISK_READ_ONLY, 0, count_inside),
    SKILL_JSON("fault_block", "Block", "Sleeps 60 s.", OBJECT, SKILL_RISK_READ_ONLY, 0, block),
    SKILL_JSON("fault_hog", "Hog", "Allocates until it falls over.", OBJECT, SKILL_RISK_READ_ONLY, 0, hog),
    SKILL_JSON("fault_thread", "Thread", "Crashes on its own thread later.", OBJECT, SKILL_RISK_READ_ONLY, 0,
               background_crash),
    SKILL_JSON("fault_thread_fire", "Fire", "Lets fault_thread's thread crash.", OBJECT, SKILL_RISK_READ_ONLY, 0, fire),
    SKILL_JSON("fault_stdout", "Stdout", "Prints garbage to stdout.", OBJECT, SKILL_RISK_READ_ONLY, 0, garbage),
    SKILL_JSON("fault_huge", "Huge", "Returns 64 MB.", OBJECT, SKILL_RISK_READ_ONLY, 0, huge),
    SKILL_JSON("fault_utf8", "UTF-8", "Returns invalid UTF-8.", OBJECT, SKILL_RISK_READ_ONLY, 0, bad_utf8),
    SKILL_JSON("fault_json", "JSON", "Returns broken JSON.", OBJECT, SKILL_RISK_READ_ONLY, 0, bad_json),
};

/* It forks (fault_orphan) and writes a pid file where a test says: it declares both, so confinement lets it. */
SKILL_PLUGIN_EX("faults", "1.0.0", "Misbehaves on purpose", skills, NULL, NULL, NULL, SKILL_CAP_EXEC | SKILL_CAP_WRITE_FS,
                NULL, NULL)
