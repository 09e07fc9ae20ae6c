/* Test fixture: v1.0's context-free skill_host.log called from a thread the plugin started itself. */
#include "skill_sdk.h"

#include <pthread.h>
#include <string.h>

static const skill_host *host_record;

static int setup(const skill_host *host, void **state, char *error, size_t capacity) {
    (void)state; (void)error; (void)capacity;
    host_record = host;
    host->log(SKILL_LOG_INFO, "set up");
    return 0;
}

static void *speak(void *argument) {
    host_record->log(SKILL_LOG_WARNING, (const char *)argument);
    return NULL;
}

static int from_thread(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    (void)state; (void)args;
    pthread_t thread;
    if (pthread_create(&thread, NULL, speak, "from my own thread") != 0) return SKILL_ERR_FAILED;
    pthread_join(thread, NULL);
    api->set_result(call, "true", 4);
    return SKILL_OK;
}

static const skill_descriptor skills[] = {
    SKILL_JSON("thread_log", "Thread log", "Logs from a thread of its own.", "{\"type\":\"object\"}",
               SKILL_RISK_READ_ONLY, 0, from_thread),
};

SKILL_PLUGIN_FULL("threadlog", "1.0.0", "log from a plugin thread", skills, setup, NULL, NULL)
