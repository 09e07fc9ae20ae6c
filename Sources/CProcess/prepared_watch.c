/* Whether the paths of prepared Landlock rules still name the files they named (skillhost_confine_files_prepare),
   learnt by the host with one read instead of by each worker with one stat a path: inotify watches every folder on
   the way to each path — as written and as resolved through symbolic links — and the path itself. A path can name
   another file only if an entry of one of those folders was created, removed or renamed, or the file itself was
   moved, removed or lost a link (a new file renamed over it): each is an event. A mount over a path is not: a rule
   then holds the file the path named, which the mount hides. The host keeps the watch for its life, as closing an
   inotify descriptor that holds watches waits for a grace period of the kernel's (0.1 to 14 ms measured here). */
#define _GNU_SOURCE
#include "process_support.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

/* Bounds: a worker's lists hold some 60 paths, each a few folders deep. */
enum { MAXIMUM_FOLDERS = 4096 };

static int compare(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Appends every prefix of absolute `path` that ends before one of its '/' ("/", "/usr", "/usr/lib" for
   "/usr/lib/x"); 0, or -1 when there is no room or no memory. */
static int add_folders(const char *path, char **folders, int *count) {
    for (const char *slash = path; (slash = strchr(slash, '/')) != NULL; slash++) {
        size_t length = slash == path ? 1 : (size_t)(slash - path);
        if (*count >= MAXIMUM_FOLDERS) return -1;
        if (!(folders[*count] = strndup(path, length))) return -1;
        (*count)++;
    }
    return 0;
}

static int watch_all(int fd, const char *const *paths, int count, char **folders, int *folder_count) {
    const uint32_t entries = IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF;
    for (int i = 0; i < count; i++) {
        const char *path = paths[i];
        /* Not /proc (its entries are never prepared), nor a relative path (not one of the host's). */
        if (path[0] != '/' || strncmp(path, "/proc/", 6) == 0) continue;
        if (add_folders(path, folders, folder_count) != 0) return ENOMEM;
        /* The path itself (followed, when a link): moved, removed, or its last link gone. A path that does not exist
           now is not prepared either. */
        if (inotify_add_watch(fd, path, entries | IN_ATTRIB) < 0 && errno != ENOENT) return errno;
        char resolved[PATH_MAX];
        if (realpath(path, resolved) && strcmp(resolved, path) != 0 &&
            add_folders(resolved, folders, folder_count) != 0)
            return ENOMEM;
    }
    qsort(folders, (size_t)*folder_count, sizeof *folders, compare);
    for (int i = 0; i < *folder_count; i++) {
        if (i > 0 && strcmp(folders[i], folders[i - 1]) == 0) continue;
        if (inotify_add_watch(fd, folders[i], entries) < 0 && errno != ENOENT && errno != ENOTDIR) return errno;
    }
    return 0;
}

int skillhost_paths_watch(const char *const *paths, int count) {
    int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (fd < 0) return -1;
    char **folders = malloc(MAXIMUM_FOLDERS * sizeof *folders);
    int folder_count = 0;
    int result = folders ? watch_all(fd, paths, count, folders, &folder_count) : ENOMEM;
    for (int i = 0; i < folder_count; i++) free(folders[i]);
    free(folders);
    if (result != 0) {
        close(fd);
        errno = result;
        return -1;
    }
    return fd;
}

int skillhost_paths_changed(int fd) {
    char buffer[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
    int changed = 0;
    for (;;) {
        ssize_t got = read(fd, buffer, sizeof buffer);
        if (got > 0) {
            changed = 1;
            continue;
        }
        if (got < 0 && errno == EINTR) continue;
        /* EAGAIN: nothing (more) is queued. Anything else, and nothing can be vouched for. */
        return changed || !(got < 0 && errno == EAGAIN);
    }
}
