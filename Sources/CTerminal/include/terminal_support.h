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

#endif
