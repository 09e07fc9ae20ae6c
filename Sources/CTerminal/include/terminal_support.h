#ifndef SKILLHOST_TERMINAL_SUPPORT_H
#define SKILLHOST_TERMINAL_SUPPORT_H
/*
 * Async-signal-safe Ctrl-C handling for the shell. The SIGINT handler only bumps a counter and writes one byte to a
 * self-pipe; it is installed without SA_RESTART so a blocking read (the line editor) returns EINTR.
 */

/** Installs the handler (once) and returns the read end of the self-pipe, or -1. [main thread] */
int skillhost_sigint_install(void);

/** Returns how many SIGINTs arrived since the last call, and resets the count. [thread-safe] */
int skillhost_sigint_take(void);

/** Makes the calling thread the one SIGINT is meant for: a SIGINT that lands on any other thread is forwarded to it
    (so a blocking read there is interrupted). [the shell's input thread] */
void skillhost_sigint_target_current_thread(void);

/** Turns the terminal's echo of control characters (`^C` printed when Ctrl-C is pressed) on or off. Returns whether
    it was on before (1 or 0), or -1 when `fd` is not a terminal. [the shell's input thread] */
int skillhost_tty_echo_control(int fd, int on);

/** Reads one key from the terminal `fd` without waiting for Enter and without echoing it (Ctrl-C still raises
    SIGINT). An escape sequence (an arrow key) reads as a lone Escape, 27. Returns the byte, -1 at end of input or
    on error, -2 when a signal interrupted the wait. The terminal's settings are restored before it returns.
    [the shell's input thread] */
int skillhost_read_key(int fd);

#endif
