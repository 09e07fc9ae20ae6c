#define _GNU_SOURCE
#include "process_support.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The largest launch a template takes (a SOCK_SEQPACKET message is bounded by the socket's buffer anyway). */
enum { LAUNCH_CAPACITY = 1 << 20, WORKER_DESCRIPTORS = 7 };

static skillhost_template_entry template_entry;

int skillhost_thread_count(void) {
    DIR *tasks = opendir("/proc/self/task");
    if (!tasks) return -1;
    int count = 0;
    struct dirent *entry;
    while ((entry = readdir(tasks)) != NULL) {
        if (entry->d_name[0] != '.') count++;
    }
    closedir(tasks);
    return count;
}

/* In the new worker: its descriptors 0-6 are the ones the host sent, nothing else is open, it leads a process group
   of its own, signals have their default dispositions (SIGPIPE stays ignored) and none is blocked — what
   skillhost_spawn_worker gives a started process. */
static void become_worker(const int received[WORKER_DESCRIPTORS]) {
    int high[WORKER_DESCRIPTORS];
    /* Copied above every target first, so installing one never closes another that is still to be installed. */
    for (int i = 0; i < WORKER_DESCRIPTORS; i++) {
        high[i] = fcntl(received[i], F_DUPFD_CLOEXEC, 64);
        if (high[i] < 0) _exit(71);
    }
    for (int i = 0; i < WORKER_DESCRIPTORS; i++) {
        if (dup2(high[i], i) < 0) _exit(71);
    }
    closefrom(WORKER_DESCRIPTORS);
    if (setpgid(0, 0) != 0) _exit(71);
    for (int number = 1; number < NSIG; number++) {
        if (number == SIGKILL || number == SIGSTOP || number == SIGPIPE) continue;
        signal(number, SIG_DFL);  /* the C library's own signals refuse; nothing else is set in a template */
    }
    sigset_t none;
    sigemptyset(&none);
    pthread_sigmask(SIG_SETMASK, &none, NULL);
}

/* The serving thread: one request at a time on descriptor 0, each answered with the new worker's pid or a negative
   errno value. Never returns in a worker; returns in the template when the host closed the socket. */
static void *serve(void *unused) {
    (void)unused;
    unsigned char *launch = malloc(LAUNCH_CAPACITY);
    if (!launch) return NULL;
    for (;;) {
        union {
            char buffer[CMSG_SPACE(sizeof(int) * (WORKER_DESCRIPTORS + 1))];
            struct cmsghdr align;
        } control;
        struct iovec vector = {launch, LAUNCH_CAPACITY};
        struct msghdr message = {0};
        message.msg_iov = &vector;
        message.msg_iovlen = 1;
        message.msg_control = control.buffer;
        message.msg_controllen = sizeof control.buffer;
        ssize_t got = recvmsg(0, &message, MSG_CMSG_CLOEXEC);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        int received[WORKER_DESCRIPTORS + 1];
        int count = 0;
        for (struct cmsghdr *header = CMSG_FIRSTHDR(&message); header; header = CMSG_NXTHDR(&message, header)) {
            if (header->cmsg_level != SOL_SOCKET || header->cmsg_type != SCM_RIGHTS) continue;
            int carried = (int)((header->cmsg_len - CMSG_LEN(0)) / sizeof(int));
            for (int i = 0; i < carried; i++) {
                int descriptor;
                memcpy(&descriptor, CMSG_DATA(header) + i * sizeof(int), sizeof(int));
                /* One too many is enough to refuse the request; any further one is closed at once. */
                if (count < WORKER_DESCRIPTORS + 1) received[count++] = descriptor;
                else close(descriptor);
            }
        }
        int32_t reply;
        if (count != WORKER_DESCRIPTORS || (message.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
            reply = -EPROTO;
        } else if (skillhost_thread_count() != 2) {
            /* Only this thread and the main one, which waits for it, may exist: a fork copies no other thread, and
               a lock another thread held would stay locked in the worker for good. */
            reply = -EAGAIN;
        } else {
            /* The host's child, not this process's (CLONE_PARENT): the host waits for it, kills it and sees it end
               exactly as it does a worker it started itself. */
            long child = syscall(SYS_clone, (unsigned long)CLONE_PARENT, NULL, NULL, NULL, NULL);
            if (child == 0) {
                become_worker(received);
                template_entry(launch, (size_t)got);
                _exit(70);
            }
            reply = child > 0 ? (int32_t)child : -errno;
        }
        /* The next worker inherits this memory: it must not find this one's launch (another plugin's paths). */
        memset(launch, 0, (size_t)got);
        for (int i = 0; i < count; i++) close(received[i]);
        while (send(0, &reply, sizeof reply, MSG_NOSIGNAL) < 0 && errno == EINTR) {
        }
    }
    free(launch);
    return NULL;
}

int skillhost_template_run(skillhost_template_entry entry) {
    template_entry = entry;
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    /* The stack the worker's first thread runs on (it leads the worker's protocol reading). */
    pthread_attr_setstacksize(&attributes, 8 << 20);
    pthread_t thread;
    int started = pthread_create(&thread, &attributes, serve, NULL);
    pthread_attr_destroy(&attributes);
    if (started != 0) return started;
    pthread_join(thread, NULL);
    return 0;
}

int skillhost_set_title(char **argv, int argc, const char *title) {
    if (argc < 1 || !argv || !argv[0] || !title) return 0;
    /* The area of the first call, for a later one (a spare's title, then its plugin's): its strings are gone. */
    static char *area;
    static size_t area_room;
    size_t room = area_room;
    if (area != argv[0]) {
        /* The strings lie one after another; only that run is the area /proc/<pid>/cmdline shows. */
        char *end = argv[0] + strlen(argv[0]);
        for (int i = 1; i < argc; i++) {
            if (!argv[i] || argv[i] != end + 1) break;
            end = argv[i] + strlen(argv[i]);
        }
        room = (size_t)(end - argv[0]);
        area = argv[0];
        area_room = room;
    }
    size_t length = strlen(title);
    if (length > room) length = room;
    memcpy(argv[0], title, length);
    /* The last byte stays NUL: the kernel then shows the area up to its first NUL, no further. */
    memset(argv[0] + length, 0, room - length + 1);
    return (int)length;
}
