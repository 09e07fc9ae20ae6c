/* What a plugin declares, learnt without trusting it: a confined child process opens it and reports. */
#define _GNU_SOURCE
#include "process_support.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
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
    /* The report ends where its length says, so the worker need not wait for this process to be torn down. */
    uint32_t length32 = (uint32_t)used;
    if (write(fd, &length32, sizeof length32) != (ssize_t)sizeof length32) return 1;
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

void skillhost_peek_report(const char *path) {
    void *handle = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
    if (!handle) _exit(4);
    const skill_plugin *(*entry)(void) = (const skill_plugin *(*)(void))dlsym(handle, "skill_plugin_entry");
    if (!entry) _exit(5);
    const skill_plugin *plugin = entry();
    if (!plugin || plugin->struct_size < 8 || plugin->abi_major != SKILL_ABI_MAJOR) _exit(6);
    _exit(report(3, plugin) == 0 ? 0 : 7);
}

int skillhost_peek_start(const char *path, const struct skillhost_confinement *confinement, pid_t *pid,
                         int *report_fd) {
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
        /* Only the declaration is read here: metadata changes fail (ENOSYS) rather than fork a supervisor. */
        struct skillhost_confinement spec = *confinement;
        spec.supervise_metadata = 0;
        if (skillhost_confine(&spec, &applied) != 0) _exit(3);
        skillhost_peek_report(path);
    }
    close(channel[1]);
    *pid = child;
    *report_fd = channel[0];
    return 0;
}

/* A peek child killed after its report that was not gone yet (reaped by skillhost_peek_reap). One at a time: a
   worker peeks once. */
static _Atomic pid_t unreaped_peek = 0;

int skillhost_peek_finish(pid_t child, int channel, int timeout_ms, char *out, int out_size, int *out_length) {
    *out_length = 0;
    int result = 0, used = 0, complete = 0;
    long long deadline = now_ms() + timeout_ms;
    for (;;) {
        long long left = deadline - now_ms();
        if (left <= 0) {
            result = ETIMEDOUT;
            break;
        }
        struct pollfd wait_for = {.fd = channel, .events = POLLIN};
        int ready = poll(&wait_for, 1, (int)left);
        if (ready < 0 && errno == EINTR) continue;
        if (ready <= 0) continue;
        ssize_t n = read(channel, out + used, (size_t)(out_size - used));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        used += (int)n;
        if (used >= 4) {
            uint32_t expected;
            memcpy(&expected, out, sizeof expected);
            if (expected > (uint32_t)out_size - 4) break;
            if ((uint32_t)used >= expected + 4) {
                complete = 1;
                break;
            }
        }
        if (used == out_size) break;
    }
    close(channel);
    /* Whatever it still does (a constructor's thread, its exit), it is done: the report is in. */
    kill(child, SIGKILL);
    int status = 0;
    if (complete) {
        /* Reaped now if it is gone, else by skillhost_peek_reap: its teardown is not waited for. */
        if (waitpid(child, &status, WNOHANG) == 0) atomic_store(&unreaped_peek, child);
        used -= 4;
        memmove(out, out + 4, (size_t)used);
        *out_length = used;
        return 0;
    }
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    return result != 0 ? result : ECHILD;
}

void skillhost_peek_reap_later(pid_t child) {
    int status;
    pid_t expected = 0;
    if (waitpid(child, &status, WNOHANG) != 0) return;
    /* The one place is taken (it never is in a worker, which peeks once): waited for now. */
    if (!atomic_compare_exchange_strong(&unreaped_peek, &expected, child))
        while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
        }
}

void skillhost_peek_reap(void) {
    pid_t child = atomic_load(&unreaped_peek);
    if (child <= 0) return;
    int status;
    pid_t result = waitpid(child, &status, WNOHANG);
    if (result == child || (result < 0 && errno == ECHILD)) atomic_store(&unreaped_peek, 0);
}

int skillhost_mapped_folders(const char *skip, char *out, int out_size) {
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    static char maps[1 << 18];
    size_t length = 0;
    ssize_t n;
    while (length < sizeof maps - 1 && (n = read(fd, maps + length, sizeof maps - 1 - length)) > 0) length += (size_t)n;
    close(fd);
    maps[length] = 0;
    int used = 0;
    for (char *line = maps; line && *line;) {
        char *end = strchr(line, '\n');
        if (end) *end = 0;
        char *path = strchr(line, '/');
        char *slash = path ? strrchr(path, '/') : NULL;
        /* Only regular files that exist: not "/memfd:x (deleted)" or "/dev/zero", whose folders are "/" and "/dev". */
        struct stat status;
        if (path && slash && slash != path && strcmp(path, skip) != 0 && stat(path, &status) == 0 &&
            S_ISREG(status.st_mode)) {
            size_t folder = (size_t)(slash - path);
            /* Maps list a file's segments one after another: compare with the folders kept so far. */
            int known = 0;
            for (int at = 0; at < used && !known; at += (int)strlen(out + at) + 1)
                known = strlen(out + at) == folder && memcmp(out + at, path, folder) == 0;
            if (!known && used + (int)folder + 1 <= out_size) {
                memcpy(out + used, path, folder);
                used += (int)folder;
                out[used++] = 0;
            }
        }
        line = end ? end + 1 : NULL;
    }
    return used;
}
