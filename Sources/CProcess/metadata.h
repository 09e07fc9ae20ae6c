/* Metadata changes by a confined process (internal to CProcess; see metadata.c and metadata_start.c). */
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

/* Refusals by thread, in memory the confined process shares with its supervisor, so a call's error can name what
   was refused. The confined process may write all of it: the supervisor bounds every index it takes from here. */
enum { SKILLHOST_REFUSAL_SLOTS = 16 };
struct skillhost_refusals {
    int pending;
    unsigned next;
    struct {
        int tid;
        char text[244];
    } slot[SKILLHOST_REFUSAL_SLOTS];
};

/* One supervised filter: its listener, the canonical folders and files beneath which changes are made, where
   refusals are noted, and whether a refusal is also written to standard error (a forked supervisor's is the
   program's). */
struct skillhost_supervised {
    int listener;
    char **roots;
    int root_count;
    struct skillhost_refusals *refusals;
    int log_to_stderr;
};

/* Receives one request on the listener and answers it. 0, or -1 when the listener is unusable. */
int skillhost_metadata_answer(const struct skillhost_supervised *supervised);

/* Once the filter is in place with its listener: sends it with the refusal memory and `write_paths` to the host
   (and closes the socket), or to the forked supervisor; closes it here either way. 0 or an errno value. */
int skillhost_metadata_hand_over(int listener, const char *const *write_paths, int count);

/* A worker's socket to the host (its descriptor 5), noted by skillhost_worker_setup. */
void skillhost_metadata_set_host_channel(int fd);

/* 1 when the supervisor recorded a refusal for the calling thread; copies it ("chmod() of /x") into `buffer` and
   clears it when `take`. */
int skillhost_metadata_refusal(char *buffer, size_t size, int take);

#endif
