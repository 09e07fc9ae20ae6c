/* Shared between confine.c (the filter and the order of things), landlock.c (the file rules) and blocked.c (the
   record of what they blocked); internal to CProcess. */
#ifndef SKILLHOST_CONFINE_INTERNAL_H
#define SKILLHOST_CONFINE_INTERNAL_H

#include "process_support.h"

#include <signal.h>
#include <stddef.h>

/* The Landlock ABI `spec` is confined with: the kernel's, at most `maximum_abi` (when not negative). */
int skillhost_landlock_effective_abi(const struct skillhost_confinement *spec);

/* Restricts the calling thread's process with `spec`'s lists under `abi` (at least 1), from the ruleset prepared
   ahead when it fits (skillhost_confine_files_prepare; given up either way); adds its bits to `applied`. 0 or an
   errno value. */
int skillhost_landlock_apply(const struct skillhost_confinement *spec, int abi, int *applied);

/* Closes what was opened ahead (skillhost_confine_open_ahead) and not used. */
void skillhost_landlock_forget_opened(void);

/* The namespace flags of clone(): no grant gives a plugin new namespaces. */
extern const unsigned long skillhost_namespace_flags[];
extern const size_t skillhost_namespace_flag_count;

/* Remembers the name of a trapped call's number, for the record. [before the filter is loaded] */
void skillhost_note_trapped(int number, const char *name);

/* The SIGSYS handler: notes what was blocked and makes the call fail with EPERM. */
void skillhost_on_blocked(int signal, siginfo_t *info, void *context);

#endif
