/* Test fixture: JSON skills with every behaviour the runner and the call API must handle. */
#define _GNU_SOURCE
#include "skill_json.h"
#include "skill_sdk.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static atomic_int running_serial;
static atomic_int max_serial;
static atomic_int init_calls;

static void sleep_ms(double ms) {
    struct timespec t;
    t.tv_sec = (time_t)(ms / 1000);
    t.tv_nsec = (long)((ms - (double)t.tv_sec * 1000) * 1e6);
    nanosleep(&t, NULL);
}

/* Blocks for "ms" milliseconds without ever looking at is_cancelled. */
static int block(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    double ms = 0;
    (void)state;
    skill_json_get_number(args, "ms", &ms);
    sleep_ms(ms);
    api->set_result(call, "\"woke up\"", 9);
    return SKILL_OK;
}

static atomic_int gate_open;
static atomic_int holding;

/* Blocks until "release" is called or the file named by "until" exists (at most 120 s), without ever looking at
   is_cancelled: a stuck call whose end the test decides. */
static int hold(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    char until[512] = "";
    int i;
    (void)state;
    skill_json_get_string(args, "until", until, sizeof until);
    atomic_fetch_add(&holding, 1);
    for (i = 0; i < 120000 && !atomic_load(&gate_open) && !(until[0] && access(until, F_OK) == 0); i++) sleep_ms(1);
    atomic_fetch_sub(&holding, 1);
    api->set_result(call, "\"released\"", 10);
    return SKILL_OK;
}

/* Lets every "hold" call return. */
static int release(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    (void)state;
    (void)args;
    atomic_store(&gate_open, 1);
    api->set_result(call, "true", 4);
    return SKILL_OK;
}

/* How many "hold" calls are inside the plugin now. */
static int held(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    char result[16];
    (void)state;
    (void)args;
    api->set_result(call, result, (size_t)snprintf(result, sizeof result, "%d", atomic_load(&holding)));
    return SKILL_OK;
}

/* Sleeps in 1 ms steps until "ms" passed or the call is cancelled. */
static int cooperative(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    double ms = 0, waited = 0;
    (void)state;
    skill_json_get_number(args, "ms", &ms);
    while (waited < ms) {
        if (api->is_cancelled(call)) {
            api->log(call, SKILL_LOG_INFO, "noticed the cancellation");
            return SKILL_ERR_CANCELLED;
        }
        sleep_ms(1);
        waited += 1;
    }
    api->set_result(call, "\"done\"", 6);
    return SKILL_OK;
}

/* SKILL_SERIAL: records the highest number of concurrent invocations ever seen. */
static int serial_probe(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    char result[32];
    int now = atomic_fetch_add(&running_serial, 1) + 1, seen;
    (void)state;
    (void)args;
    seen = atomic_load(&max_serial);
    while (now > seen && !atomic_compare_exchange_weak(&max_serial, &seen, now)) {
    }
    sleep_ms(2);
    atomic_fetch_sub(&running_serial, 1);
    api->set_result(call, result, (size_t)snprintf(result, sizeof result, "%d", atomic_load(&max_serial)));
    return SKILL_OK;
}

static int echo(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    (void)state;
    api->set_result(call, args, strlen(args));
    return SKILL_OK;
}

static int whoami(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    const char *id = api->skill_id(call);
    char result[128];
    (void)args;
    api->set_result(call, result, (size_t)snprintf(result, sizeof result, "%s:%s", id, (const char *)state));
    return SKILL_OK;
}

static int progress(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    int i;
    (void)state;
    (void)args;
    for (i = 1; i <= 3; i++) api->report_progress(call, i, 3, "step");
    api->log(call, SKILL_LOG_INFO, "progress done");
    api->set_result(call, "3", 1);
    return SKILL_OK;
}

/* The name of the thread the call runs on, as a JSON string. */
static int thread_name(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    char name[17] = {0}, result[40];
    (void)state;
    (void)args;
    prctl(PR_GET_NAME, name, 0, 0, 0);
    api->set_result(call, result, (size_t)snprintf(result, sizeof result, "\"%s\"", name));
    return SKILL_OK;
}

static int undoable(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    (void)state;
    (void)args;
    api->set_undo(call, "echo", "{\"restore\":1}");
    api->set_result(call, "{\"changed\":true}", 16);
    return SKILL_OK;
}

static int plain_text(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    (void)state;
    (void)args;
    api->set_result(call, "hello, world", 12);
    return SKILL_OK;
}

static int fail(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    (void)state;
    (void)args;
    api->set_error(call, "the disk is full");
    return SKILL_ERR_FAILED;
}

static int fail_silently(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    (void)state;
    (void)api;
    (void)call;
    (void)args;
    return SKILL_ERR_UNAVAILABLE;
}

static int reject(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    (void)state;
    (void)args;
    api->set_error(call, "$.n: must be even");
    return SKILL_ERR_INVALID_ARGS;
}

static int bad_utf8(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    (void)state;
    (void)args;
    api->set_result(call, "\xC3\x28", 2);
    return SKILL_OK;
}

static int init(const skill_host *host, void **state, char *error, size_t capacity) {
    (void)error;
    (void)capacity;
    atomic_fetch_add(&init_calls, 1);
    *state = (void *)"state-ok";
    return host->data_dir != NULL && host->struct_size >= sizeof(skill_host) ? 0 : 1;
}

#define ANY "{\"type\":\"object\"}"
#define MS "{\"type\":\"object\",\"properties\":{\"ms\":{\"type\":\"number\"}},\"required\":[\"ms\"]}"
static const skill_descriptor skills[] = {
    SKILL_JSON("block", "Block", "Blocks for ms milliseconds ignoring cancellation.", MS, 0, 0, block),
    SKILL_JSON("hold", "Hold", "Blocks until release is called, ignoring cancellation.", ANY, 0, 0, hold),
    SKILL_JSON("release", "Release", "Lets every hold call return.", ANY, 0, 0, release),
    SKILL_JSON("held", "Held", "Counts the hold calls inside the plugin.", ANY, 0, 0, held),
    SKILL_JSON("cooperative", "Cooperative", "Sleeps for ms milliseconds, polling is_cancelled.", MS, 0, 0,
               cooperative),
    SKILL_JSON("serial_probe", "Serial probe", "Reports the maximum concurrency seen.", ANY, 0, SKILL_SERIAL,
               serial_probe),
    SKILL_JSON("echo", "Echo", "Returns its arguments.", ANY, 0, SKILL_IDEMPOTENT, echo),
    SKILL_JSON("whoami", "Who am I", "Returns skill_id and init state.", ANY, 0, 0, whoami),
    SKILL_JSON("progress", "Progress", "Reports progress three times.", ANY, 0, 0, progress),
    SKILL_JSON("thread_name", "Thread name", "Returns the name of the thread it runs on.", ANY, 0, 0, thread_name),
    SKILL_JSON("undoable", "Undoable", "Registers an undo call.", ANY, SKILL_RISK_MUTATING, 0, undoable),
    SKILL_JSON("plain_text", "Plain text", "Returns plain text.", ANY, 0, 0, plain_text),
    SKILL_JSON("fail", "Fail", "Fails with a message.", ANY, 0, 0, fail),
    SKILL_JSON("fail_silently", "Fail silently", "Fails without a message.", ANY, 0, 0, fail_silently),
    SKILL_JSON("reject", "Reject", "Rejects its arguments.", ANY, 0, 0, reject),
    SKILL_JSON("bad_utf8", "Bad UTF-8", "Returns invalid UTF-8.", ANY, 0, 0, bad_utf8),
};

SKILL_PLUGIN_FULL("behaviours", "2.0.0", "Test behaviours", skills, init, NULL, NULL)
