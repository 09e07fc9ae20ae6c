#include "terminal_support.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

static atomic_int pending;
static int pipe_fds[2] = {-1, -1};
static pthread_t target;
static atomic_int has_target;

static void on_sigint(int signal_number) {
    char byte = 1;
    if (atomic_load(&has_target) && !pthread_equal(pthread_self(), target)) {
        pthread_kill(target, signal_number); /* async-signal-safe */
        return;
    }
    atomic_fetch_add(&pending, 1);
    if (pipe_fds[1] >= 0) {
        ssize_t ignored = write(pipe_fds[1], &byte, 1);
        (void)ignored;
    }
}

int skillhost_sigint_install(void) {
    struct sigaction action;
    if (pipe_fds[0] >= 0) return pipe_fds[0];
    if (pipe(pipe_fds) != 0) return -1;
    fcntl(pipe_fds[0], F_SETFD, FD_CLOEXEC);
    fcntl(pipe_fds[1], F_SETFD, FD_CLOEXEC);
    fcntl(pipe_fds[1], F_SETFL, O_NONBLOCK);
    memset(&action, 0, sizeof action);
    action.sa_handler = on_sigint;
    sigemptyset(&action.sa_mask);
    action.sa_flags = 0; /* no SA_RESTART: the line editor's read() returns EINTR */
    sigaction(SIGINT, &action, NULL);
    return pipe_fds[0];
}

int skillhost_sigint_take(void) { return atomic_exchange(&pending, 0); }

void skillhost_sigint_target_current_thread(void) {
    target = pthread_self();
    atomic_store(&has_target, 1);
}

int skillhost_tty_echo_control(int fd, int on) {
    struct termios settings;
    int was;
    if (tcgetattr(fd, &settings) != 0) return -1;
    was = (settings.c_lflag & ECHOCTL) != 0;
    if (on) settings.c_lflag |= ECHOCTL;
    else settings.c_lflag &= ~(tcflag_t)ECHOCTL;
    return tcsetattr(fd, TCSANOW, &settings) == 0 ? was : -1;
}

int skillhost_read_key(int fd) {
    struct termios saved, raw;
    unsigned char byte = 0;
    ssize_t count;
    int result;
    if (tcgetattr(fd, &saved) != 0) return -1;
    raw = saved;
    raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
    raw.c_cc[VMIN] = 1;
    raw.c_cc[VTIME] = 0;
    if (tcsetattr(fd, TCSANOW, &raw) != 0) return -1;
    count = read(fd, &byte, 1);
    if (count == 1) {
        result = byte;
        if (byte == 27) {
            /* The rest of an escape sequence arrives at once: swallow it. */
            struct pollfd more = {fd, POLLIN, 0};
            unsigned char rest[16];
            while (poll(&more, 1, 30) > 0 && read(fd, rest, sizeof rest) > 0) {}
        }
    } else if (count < 0 && errno == EINTR) {
        result = -2;
    } else {
        result = -1;
    }
    tcsetattr(fd, TCSANOW, &saved);
    return result;
}
