/* Metadata changes by a confined process (internal to CProcess; see metadata.c). */
#ifndef SKILLHOST_METADATA_H
#define SKILLHOST_METADATA_H

#include <stddef.h>
#include <sys/types.h>

/* The system calls that change a file's metadata — mode, owner, times, extended attributes — in every form the
   kernel offers (path, *at with flags, descriptor). The filter hands them to the supervisor; `names[i]` is the name
   of `numbers[i]`. */
extern const char *const skillhost_metadata_names[];
extern const int skillhost_metadata_numbers[];
extern const int skillhost_metadata_count;

/* Forks the supervisor for the confinement about to be applied: it may change metadata only beneath
   `write_paths` (resolved now, before Landlock). The caller passes the listener of its filter with
   skillhost_metadata_hand_over once the filter is in place. Returns 0 or an errno value. [single-threaded] */
int skillhost_metadata_fork(const char *const *write_paths, int count);

/* Gives the filter's listener to the supervisor forked above and closes it here, so nothing that runs later in
   this process can answer its own requests. Returns 0 or an errno value. */
int skillhost_metadata_hand_over(int listener);

/* 1 when the supervisor recorded a refusal for the calling thread; copies it ("chmod() of /x") into `buffer` and
   clears it when `take`. */
int skillhost_metadata_refusal(char *buffer, size_t size, int take);

#endif
