/* What a plugin declares, learnt without trusting it: a confined child process opens it and reports. */
#define _GNU_SOURCE
#include "process_support.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "skill_sdk.h"

/* Writes name, capabilities (decimal) and each read path to `fd`, each followed by a NUL. Reads only the fields
   struct_size says exist, and at most SKILLHOST_PEEK_MAX_PATHS paths of at most 4095 bytes. */
static int report(int fd, const skill_plugin *plugin) {
    char buffer[SKILLHOST_PEEK_REPORT_SIZE];
    size_t used = 0;
#define PUT(text, length)                                                                                            \
    do {                                                                                                             \
        size_t n = (length);                                                                                         \
        if (used + n + 1 > sizeof buffer) return 1;                                                                  \
        memcpy(buffer + used, (text), n);                                                                            \
        used += n;                                                                                                   \
        buffer[used++] = 0;                                                                                          \
    } while (0)
    const char *name = plugin->name ? plugin->name : "";
    PUT(name, strnlen(name, 64));
    uint32_t capabilities = 0;
    const char *const *paths = NULL;
    if (plugin->struct_size >= offsetof(skill_plugin, capabilities) + sizeof plugin->capabilities)
        capabilities = plugin->capabilities;
    if (plugin->struct_size >= offsetof(skill_plugin, read_paths) + sizeof plugin->read_paths)
        paths = plugin->read_paths;
    /* A v1.0 plugin with a skill that talks to the world needs the network (as DescriptorValidator reads it). */
    if (plugin->struct_size < offsetof(skill_plugin, capabilities) + sizeof plugin->capabilities && plugin->skills) {
        /* The array's stride is the size the plugin was compiled with: its first descriptor's struct_size. */
        const char *base = (const char *)plugin->skills;
        uint32_t stride = plugin->skills[0].struct_size;
        for (uint32_t i = 0; stride >= offsetof(skill_descriptor, flags) + 4 && i < plugin->skill_count && i < 4096;
             i++) {
            const skill_descriptor *skill = (const skill_descriptor *)(base + (size_t)i * stride);
            if (skill->flags & SKILL_OPEN_WORLD) capabilities |= SKILL_CAP_NETWORK;
        }
    }
    char number[16];
    int length = 0;
    uint32_t value = capabilities;
    char digits[12];
    do {
        digits[length++] = (char)('0' + value % 10);
        value /= 10;
    } while (value);
    for (int i = 0; i < length; i++) number[i] = digits[length - 1 - i];
    PUT(number, (size_t)length);
    for (int i = 0; paths && paths[i] && i < SKILLHOST_PEEK_MAX_PATHS; i++) PUT(paths[i], strnlen(paths[i], 4095));
#undef PUT
    size_t written = 0;
    while (written < used) {
        ssize_t n = write(fd, buffer + written, used - written);
        if (n <= 0) return 1;
        written += (size_t)n;
    }
    return 0;
}

static long long now_ms(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

int skillhost_peek_plugin(const char *path, const struct skillhost_confinement *confinement, int timeout_ms,
                          char *out, int out_size, int *out_length) {
    *out_length = 0;
    int channel[2];
    if (pipe2(channel, O_CLOEXEC) != 0) return errno;
    pid_t child = fork();
    if (child < 0) {
        int saved = errno;
        close(channel[0]);
        close(channel[1]);
        return saved;
    }
    if (child == 0) {
        /* Only the report channel stays open: a constructor cannot write into the worker's protocol. */
        if (dup2(channel[1], 3) < 0) _exit(2);
        close_range(4, ~0U, 0);
        int applied;
        if (skillhost_confine(confinement, &applied) != 0) _exit(3);
        void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!handle) _exit(4);
        const skill_plugin *(*entry)(void) = (const skill_plugin *(*)(void))dlsym(handle, "skill_plugin_entry");
        if (!entry) _exit(5);
        const skill_plugin *plugin = entry();
        if (!plugin || plugin->struct_size < 8 || plugin->abi_major != SKILL_ABI_MAJOR) _exit(6);
        _exit(report(3, plugin) == 0 ? 0 : 7);
    }
    close(channel[1]);
    int result = 0, used = 0;
    long long deadline = now_ms() + timeout_ms;
    for (;;) {
        long long left = deadline - now_ms();
        if (left <= 0) {
            result = ETIMEDOUT;
            break;
        }
        struct pollfd wait_for = {.fd = channel[0], .events = POLLIN};
        int ready = poll(&wait_for, 1, (int)left);
        if (ready < 0 && errno == EINTR) continue;
        if (ready <= 0) continue;
        ssize_t n = read(channel[0], out + used, (size_t)(out_size - used));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        used += (int)n;
        if (used == out_size) break;
    }
    close(channel[0]);
    if (result != 0) kill(child, SIGKILL);
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    if (result == 0 && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) result = ECHILD;
    *out_length = result == 0 ? used : 0;
    return result;
}
