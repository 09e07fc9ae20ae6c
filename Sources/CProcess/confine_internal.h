/* Shared between confine.c (the rules) and blocked.c (the record of what they blocked); internal to CProcess. */
#ifndef SKILLHOST_CONFINE_INTERNAL_H
#define SKILLHOST_CONFINE_INTERNAL_H

#include <signal.h>
#include <stddef.h>

/* The namespace flags of clone(): no grant gives a plugin new namespaces. */
extern const unsigned long skillhost_namespace_flags[];
extern const size_t skillhost_namespace_flag_count;

/* Remembers the name of a trapped call's number, for the record. [before the filter is loaded] */
void skillhost_note_trapped(int number, const char *name);

/* The SIGSYS handler: notes what was blocked and makes the call fail with EPERM. */
void skillhost_on_blocked(int signal, siginfo_t *info, void *context);

#endif
