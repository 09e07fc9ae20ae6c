/* The children this process started on purpose, and the sweep that stops every other child it has: what a confined
   program started and abandoned, adopted by this process as a child subreaper. A child is told from an orphan by
   this record, not by its session or process group, which the orphan chose (setsid, setpgid). */
#define _GNU_SOURCE
#include "process_support.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

/* Held shared while a child is being started (its pid not yet recorded), exclusively by a sweep. */
static pthread_rwlock_t starting = PTHREAD_RWLOCK_INITIALIZER;
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t *started;
static size_t started_count, started_capacity;
static int adopting;

/* Rounds of a sweep: each kills one generation of a tree whose parents were killed the round before. */
enum { SWEEP_ROUNDS = 1024 };

int skillhost_become_subreaper(void) {
    if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) return errno;
    __atomic_store_n(&adopting, 1, __ATOMIC_RELEASE);
    return 0;
}

void skillhost_children_starting(void) { pthread_rwlock_rdlock(&starting); }

void skillhost_children_started(pid_t pid) {
    if (pid > 0) {
        pthread_mutex_lock(&table_lock);
        if (started_count == started_capacity) {
            size_t capacity = started_capacity ? started_capacity * 2 : 64;
            pid_t *grown = realloc(started, capacity * sizeof *grown);
            if (grown) {
                started = grown;
                started_capacity = capacity;
            }
        }
        /* Without room the child is not recorded, and a sweep would stop it: a worker that fails is restarted. */
        if (started_count < started_capacity) started[started_count++] = pid;
        pthread_mutex_unlock(&table_lock);
    }
    pthread_rwlock_unlock(&starting);
}

/* Under table_lock. */
static ssize_t find_started(pid_t pid) {
    for (size_t i = 0; i < started_count; i++)
        if (started[i] == pid) return (ssize_t)i;
    return -1;
}

void skillhost_child_ended(pid_t pid) {
    pthread_mutex_lock(&table_lock);
    ssize_t index = find_started(pid);
    if (index >= 0) started[index] = started[--started_count];
    pthread_mutex_unlock(&table_lock);
}

struct pids {
    pid_t *items;
    size_t count, capacity;
};

static void append(struct pids *list, pid_t pid) {
    if (list->count == list->capacity) {
        size_t capacity = list->capacity ? list->capacity * 2 : 32;
        pid_t *grown = realloc(list->items, capacity * sizeof *grown);
        if (!grown) return;
        list->items = grown;
        list->capacity = capacity;
    }
    list->items[list->count++] = pid;
}

/* The parent pid of `pid` from /proc/<pid>/stat ("pid (comm) state ppid …"); -1 when it cannot be read. */
static pid_t parent_of(pid_t pid) {
    char path[64], buffer[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *file = fopen(path, "re");
    if (!file) return -1;
    size_t length = fread(buffer, 1, sizeof buffer - 1, file);
    fclose(file);
    buffer[length] = 0;
    /* comm may hold spaces and parentheses, so scan from the last ')'. */
    char *close_paren = strrchr(buffer, ')');
    int parent = -1;
    char state;
    if (!close_paren || sscanf(close_paren + 1, " %c %d", &state, &parent) != 2) return -1;
    return (pid_t)parent;
}

/* The children of every thread of this process, from /proc/self/task/<tid>/children (readable in a confined
   worker, where /proc/<other pid> is not); where the kernel lacks that file (CONFIG_PROC_CHILDREN), every process
   whose parent is this one. Zombies included. 0, or -1 when neither can be read. */
static int list_children(struct pids *list) {
    DIR *tasks = opendir("/proc/self/task");
    int listed = 0;
    if (tasks) {
        struct dirent *entry;
        while ((entry = readdir(tasks)) != NULL) {
            if (entry->d_name[0] == '.') continue;
            char path[96];
            snprintf(path, sizeof path, "/proc/self/task/%s/children", entry->d_name);
            FILE *file = fopen(path, "re");
            if (!file) continue;
            listed = 1;
            int pid;
            while (fscanf(file, "%d", &pid) == 1)
                if (pid > 0) append(list, (pid_t)pid);
            fclose(file);
        }
        closedir(tasks);
    }
    if (listed) return 0;
    DIR *proc = opendir("/proc");
    if (!proc) return -1;
    pid_t self = getpid();
    struct dirent *entry;
    while ((entry = readdir(proc)) != NULL) {
        char *end;
        long value = strtol(entry->d_name, &end, 10);
        if (*end != 0 || value <= 0) continue;
        if (parent_of((pid_t)value) == self) append(list, (pid_t)value);
    }
    closedir(proc);
    return 0;
}

/* Kills and reaps `pid`; 1 when it was killed. A child this process may not signal (a confined worker's metadata
   supervisor, outside its Landlock domain, which dies with it) is reaped if it already ended, never waited for. */
static int kill_child(pid_t pid) {
    if (kill(pid, SIGKILL) != 0) {
        waitpid(pid, NULL, WNOHANG);
        return 0;
    }
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
    }
    return 1;
}

static int is_started(pid_t pid) {
    pthread_mutex_lock(&table_lock);
    int found = find_started(pid) >= 0;
    pthread_mutex_unlock(&table_lock);
    return found;
}

int skillhost_kill_adopted(int every_child) {
    if (!every_child && !__atomic_load_n(&adopting, __ATOMIC_ACQUIRE)) return 0;
    if (!every_child) pthread_rwlock_wrlock(&starting);
    int killed = 0;
    /* A killed child's own children come to this process as it dies: round after round until one kills nothing.
       A recorded child is forgotten only when its owner says it reaped it (skillhost_child_ended), never because a
       listing missed it: the per-thread lists are read one after another, and a child moves to another thread's
       list when the thread that started it ends. */
    for (int round = 0; round < SWEEP_ROUNDS; round++) {
        struct pids children = {0};
        if (list_children(&children) != 0) break;
        int this_round = 0;
        for (size_t i = 0; i < children.count; i++) {
            if (!every_child && is_started(children.items[i])) continue;
            this_round += kill_child(children.items[i]);
        }
        free(children.items);
        killed += this_round;
        if (this_round == 0) break;
    }
    if (!every_child) pthread_rwlock_unlock(&starting);
    return killed;
}
