/* skillhost-worker: a worker process without the Swift runtime. It loads one plugin file and answers its host on
   the channels `skillhost_spawn_worker` gives it (protocol.md in this folder has the messages). What needs
   judgement — the descriptors' rules, schemas, the outcome of a call — stays in the host: this process only reads the plugin's
   records, runs its functions and reports what they did. */
#ifndef SKILLHOST_WORKER_H
#define SKILLHOST_WORKER_H
#include "text.h"
#include "skill_sdk.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The longest string read from a plugin's records (a schema, a description); a longer one is cut there. */
#define WORKER_STRING_LIMIT (1u << 20)

struct worker {
    const char *file;       /* as the user placed it, for messages */
    const char *copy;       /* the private copy to load */
    const char *data_dir;   /* parent of the per-plugin data directories */
    size_t result_limit;    /* longest result a call may set */
    int in, out;            /* the protocol channel */
    pthread_mutex_t out_lock;
    void *lane_memory;      /* the lane's shared memory, NULL without a lane */
    int lane_in, lane_out;  /* the lane's pipes */
    void *handle;           /* dlopen's */
    const skill_plugin *plugin;
    char *name;             /* the plugin's name as it gave it (a copy), "" before */
    void *state;            /* what init stored */
    int initialised;        /* init ran and succeeded (deinit is owed) */
    atomic_int running;     /* calls inside the plugin */
};

extern struct worker worker;

/* Sends one message (a line without its newline) on the calling thread's channel: the lane for the lane's thread,
   the main channel otherwise. 0, or -1 when the host is gone. [any thread] */
int worker_send(const struct text *line);
/* Sends a JSON-RPC notification `method` whose params are `params` (a JSON object's text). [any thread] */
void worker_notify(const char *method, const struct text *params);
/* The head of an answer to request `id` (null when `id` is NULL): `{"jsonrpc":"2.0","id":<id>`. */
void worker_answer_head(struct text *line, const long long *id);
/* Answers request `id` (or null, when `id` is NULL) with a JSON-RPC error. [any thread] */
void respond_error(const long long *id, int code, const char *message);
/* A log line from the plugin, `message` read as the plugin gave it (NULL: empty). [any thread] */
void worker_log(int level, const char *prefix, const char *message);
/* Writes "skillhost worker: <message>" to standard error, stops the plugin's children and exits 70. */
_Noreturn void worker_fail(const char *message);
/* Fails (worker_fail) when the plugin closed the protocol channel's descriptor, naming it. [any thread] */
void worker_check_channel(void);

/* plugin.c: dlopen the copy and call its entry; NULL on success (worker.plugin is what the entry returned, maybe
   NULL), else dlopen's reason with the copy named as the user's file, or "" when there is no entry. [main, once] */
const char *plugin_open(void);
/* The plugin's records as they are, for the host to judge: the `describe` answer's text ({"entry_returned_null":
   true} when the entry gave none). [main thread] */
void plugin_describe(struct text *out);
/* Runs init with the data directory `directory`; NULL, or the failure as a JSON object's text (allocated). */
char *plugin_init(const char *directory);
/* The `snapshot` answer: null (the plugin has none) or {"code", "size"?, "bytes"?}. [any thread] */
void plugin_snapshot(struct text *out);
/* deinit, when init succeeded and no call is inside the plugin. [once] */
void plugin_deinit(void);
/* The descriptor of skill `id`, NULL when the plugin has none. */
const skill_descriptor *plugin_skill(const char *id);

/* call.c: runs call `id` of skill `skill` with `arguments` (JSON text, NUL-terminated; with `typed`, the host's
   conversion for a typed skill) and `context` (NULL: none) on the calling thread and sends its answer on the calling
   thread's channel (`lane`: the lane's short form for a JSON skill's plain success). */
void call_run(long long id, const char *skill, const char *arguments, const char *context, int lane, int typed);
/* A `cancel` for call `id`: its flag is raised now, or when it arrives. [any thread] */
void call_cancel(long long id);

/* typed.c: calls typed skill `d` with the host's conversion `spec` (`length` bytes): NULL, with the signature's return
   type code in `returns` and the function's result in `returned` (a register's bits), or why it could not (allocated).
   Executes plugin code. */
char *typed_invoke(const skill_descriptor *d, const char *spec, size_t length, char *returns, uint64_t *returned,
                   int *reported);

struct skillhost_confinement;

/* What the launch says of confinement: the arguments `--confinement` (`final`), `--peek`, `--filter`, and what a
   standby peek child takes from the launch besides (`--preload`, the limits, `--tmpdir`); NULL when absent. */
struct confinement_launch {
    const char *final, *peek, *filter;
    const char *preload, *limit_as, *limit_cpu, *limit_files, *temporary;
    int prepared_unchanged; /* `--prepared unchanged`: the host saw nothing change the prepared rules' paths */
};

/* confine.c: at the start, before any plugin code: confines this process with the host's `final` lists, or starts
   a peek confined with `peek` (JSON, `ConfinementSpec`) — in the standby child when there is one for it; `filter` is
   the host's compiled filter in hex (may be NULL). Nothing when both are NULL. [main thread, single-threaded] */
void confinement_start(const struct confinement_launch *launch);
/* A spare, before its launch: takes `filter` (the host's compiled filter, hex) and starts a standby peek child
   with it (nothing without one); the child and this process build Landlock's rules ahead for the lists `prepare`
   (JSON, `ConfinementSpec`; may be NULL) holds. [main thread, single-threaded] */
void confinement_standby(const char *filter, const char *prepare);
/* The host's `ConfinementSpec` JSON (NUL-terminated) as skillhost_confine takes it; 0, or -1 when it is not one. */
int confinement_read_spec(const char *text, struct skillhost_confinement *spec);

/* standby.c: a spare's standby peek child, forked before its launch and confined for its calls
   (skillhost_confine_calls with `filter`, a plugin's that declares nothing, in hex, already imported), its file rules
   for `prepare`'s lists (may be NULL) built ahead. [main thread] */
void standby_start(const char *filter, const struct skillhost_confinement *prepare);
/* Hands the standby child its launch (the copy, the peek's lists, the limits, TMPDIR): 0 with its pid and report pipe
   (for skillhost_peek_finish), -1 when there is none or it does not fit the launch (it is then gone). */
int standby_take(const struct confinement_launch *launch, pid_t *child, int *report);
/* Kills the standby child, if there is one (reaped later), and closes its pipes. */
void standby_abandon(void);
/* Whether the worker waits for `declaration` and `confine` (it peeked). */
int confinement_pending(void);
/* Why confinement failed (the plugin is then never opened), or NULL. */
const char *confinement_failure(void);
/* The SKILLHOST_CONFINED_* bits applied, or -1 when this process is not confined. */
int confinement_applied(void);
/* The `declaration` answer: the peek's report as {"name", "capabilities", "read_paths"}, or null. */
void confinement_declaration(struct text *out);
/* The `confine` request: NULL once it was applied (or failed: confinement_failure), else why it was refused. */
const char *confinement_apply(const char *params, const char *end);
/* main.c: runs the plugin's constructors and starts the lane's thread. [main thread, once] */
void open_plugin(void);

/* lane.c: starts the lane's thread. 0 or an errno value. */
int lane_start(void);
/* main.c: reads JSON-RPC requests on the protocol channel until it closes, first the `pending_length` bytes at
   `pending` (what the host sent after a spare's launch). [main thread] */
void serve(int fd, size_t limit, const char *pending, size_t pending_length);
/* Handles one JSON-RPC line (from either channel). */
void handle_line(const char *line, size_t length);
#endif
