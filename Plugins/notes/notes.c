/*
 * notes — notes kept in SQLite inside the plugin's data_dir. The showcase for risk levels, confirmation and undo:
 * add and update are mutating, delete is destructive, and each registers the call that reverses it (set_undo), so
 * the shell's /undo restores a changed or deleted note.
 */
#include "skill_json.h"
#include "skill_sdk.h"
#include "notes_view.h"

#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
    char path[4096];
} notes_state;

static int notes_init(const skill_host *host, void **state, char *error, size_t capacity) {
    notes_state *notes = (notes_state *)calloc(1, sizeof *notes);
    sqlite3 *db = NULL;
    char *message = NULL;
    if (!notes) {
        snprintf(error, capacity, "out of memory");
        return 1;
    }
    snprintf(notes->path, sizeof notes->path, "%s/notes.db", host->data_dir);
    /* The notes are the user's alone: the file is made 0600 whatever the umask (SQLite gives its -wal and -shm
       files the database's mode), and an older one that others could read is tightened. */
    int fd = open(notes->path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
        snprintf(error, capacity, "cannot create %s: %s", notes->path, strerror(errno));
        free(notes);
        return 1;
    }
    fchmod(fd, 0600);
    close(fd);
    if (sqlite3_open(notes->path, &db) != SQLITE_OK ||
        sqlite3_exec(db,
                     "PRAGMA journal_mode=WAL;"
                     "CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, title TEXT NOT NULL, body TEXT NOT NULL,"
                     " created TEXT NOT NULL DEFAULT (datetime('now')), updated TEXT NOT NULL DEFAULT (datetime('now')));",
                     NULL, NULL, &message) != SQLITE_OK) {
        snprintf(error, capacity, "cannot open %s: %s", notes->path, message ? message : sqlite3_errmsg(db));
        sqlite3_free(message);
        sqlite3_close(db);
        free(notes);
        return 1;
    }
    sqlite3_close(db);
    *state = notes;
    return 0;
}

static void notes_deinit(void *state) { free(state); }

/* Opens the database for one call; reports failures through set_error. */
static sqlite3 *open_db(void *state, const skill_call_api *api, skill_call *call) {
    sqlite3 *db = NULL;
    if (sqlite3_open(((notes_state *)state)->path, &db) != SQLITE_OK) {
        api->set_error(call, sqlite3_errmsg(db));
        sqlite3_close(db);
        return NULL;
    }
    sqlite3_busy_timeout(db, 2000);
    return db;
}

/* A growing buffer for JSON results. */
typedef struct {
    char *data;
    size_t length, capacity;
} buffer;

static void put(buffer *b, const char *text, size_t length) {
    if (b->length + length + 1 > b->capacity) {
        size_t capacity = (b->capacity + length + 1) * 2;
        char *data = (char *)realloc(b->data, capacity);
        if (!data) return;
        b->data = data;
        b->capacity = capacity;
    }
    memcpy(b->data + b->length, text, length);
    b->length += length;
    b->data[b->length] = '\0';
}

static void put_string(buffer *b, const char *text) {
    size_t needed = skill_json_write_string(NULL, 0, text);
    char *quoted = (char *)malloc(needed + 1);
    if (!quoted) return;
    skill_json_write_string(quoted, needed + 1, text);
    put(b, quoted, needed);
    free(quoted);
}

/* Appends {"id":…,"title":…,"body":…,"created":…,"updated":…} for the current row (columns in that order). */
static void put_note(buffer *b, sqlite3_stmt *row) {
    char id[32];
    put(b, "{\"id\":", 6);
    put(b, id, (size_t)snprintf(id, sizeof id, "%lld", (long long)sqlite3_column_int64(row, 0)));
    put(b, ",\"title\":", 9);
    put_string(b, (const char *)sqlite3_column_text(row, 1));
    put(b, ",\"body\":", 8);
    put_string(b, (const char *)sqlite3_column_text(row, 2));
    put(b, ",\"created\":", 11);
    put_string(b, (const char *)sqlite3_column_text(row, 3));
    put(b, ",\"updated\":", 11);
    put_string(b, (const char *)sqlite3_column_text(row, 4));
    put(b, "}", 1);
}

/* Reads a string argument into a new buffer (NULL if missing). */
static char *string_argument(const char *args, const char *key) {
    size_t capacity = strlen(args) + 1;
    char *value = (char *)malloc(capacity);
    if (value && skill_json_get_string(args, key, value, capacity) < 0) {
        free(value);
        return NULL;
    }
    return value;
}

static int finish_with_note(sqlite3 *db, const skill_call_api *api, skill_call *call, sqlite3_int64 id) {
    sqlite3_stmt *row = NULL;
    buffer b = {NULL, 0, 0};
    sqlite3_prepare_v2(db, "SELECT id, title, body, created, updated FROM notes WHERE id = ?", -1, &row, NULL);
    sqlite3_bind_int64(row, 1, id);
    if (sqlite3_step(row) == SQLITE_ROW) put_note(&b, row);
    sqlite3_finalize(row);
    sqlite3_close(db);
    if (!b.data) {
        api->set_error(call, "the note disappeared");
        return SKILL_ERR_FAILED;
    }
    api->set_result(call, b.data, b.length);
    free(b.data);
    return SKILL_OK;
}

/* Starts an undo's arguments with the note at `row` as it is (the trailing "}" left off, for what follows). */
static void put_note_open(buffer *b, sqlite3_stmt *row) {
    put_note(b, row);
    if (b->data && b->length > 0) b->data[--b->length] = '\0';
}

/* An undo carries what its change left: "expect": {"title", "body"} (the note as the change left it) or "absent" (a
   note the change deleted). The note as it is now must match, or the undo refuses in a sentence: a later note that
   reused the id, or an edit made since, is never undone by a call recorded before it. Returns 1 to go on. */
static int as_expected(sqlite3 *db, sqlite3_int64 id, const char *args, const skill_call_api *api, skill_call *call,
                       const char *verb) {
    const char *expect = skill_json_find(args, "expect");
    sqlite3_stmt *row = NULL;
    char message[320];
    int ok = 1;
    if (!expect) return 1;
    sqlite3_prepare_v2(db, "SELECT title, body FROM notes WHERE id = ?", -1, &row, NULL);
    sqlite3_bind_int64(row, 1, id);
    if (sqlite3_step(row) == SQLITE_ROW) {
        const char *title = (const char *)sqlite3_column_text(row, 0), *body = (const char *)sqlite3_column_text(row, 1);
        char *wanted_title = *expect == '{' ? string_argument(expect, "title") : NULL;
        char *wanted_body = *expect == '{' ? string_argument(expect, "body") : NULL;
        ok = wanted_title && wanted_body && strcmp(wanted_title, title) == 0 && strcmp(wanted_body, body) == 0;
        if (!ok) {
            /* At most 80 bytes of the title, cut where a character starts (never inside one). */
            size_t length = strlen(title);
            if (length > 80) {
                length = 80;
                while (length > 0 && ((unsigned char)title[length] & 0xC0) == 0x80) length--;
            }
            snprintf(message, sizeof message,
                     "note %lld is not the one this change left (it is now \"%.*s\"): the record no longer matches, "
                     "so nothing was %s",
                     (long long)id, (int)length, title, verb);
        }
        free(wanted_title);
        free(wanted_body);
    } else if (*expect == '{') {
        ok = 0;
        snprintf(message, sizeof message,
                 "note %lld is gone since this change: the record no longer matches, so nothing was %s", (long long)id,
                 verb);
    }
    sqlite3_finalize(row);
    if (!ok) api->set_error(call, message);
    return ok;
}

/* Appends ,"expect":{"title":…,"body":…}} to an undo's arguments: the note `id` as the change left it. */
static void put_expectation(buffer *b, sqlite3 *db, sqlite3_int64 id) {
    sqlite3_stmt *row = NULL;
    sqlite3_prepare_v2(db, "SELECT title, body FROM notes WHERE id = ?", -1, &row, NULL);
    sqlite3_bind_int64(row, 1, id);
    if (sqlite3_step(row) == SQLITE_ROW) {
        put(b, ",\"expect\":{\"title\":", strlen(",\"expect\":{\"title\":"));
        put_string(b, (const char *)sqlite3_column_text(row, 0));
        put(b, ",\"body\":", 8);
        put_string(b, (const char *)sqlite3_column_text(row, 1));
        put(b, "}", 1);
    }
    sqlite3_finalize(row);
    put(b, "}", 1);
}

static int notes_add(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    char *title = string_argument(args, "title"), *body = string_argument(args, "body");
    sqlite3 *db = open_db(state, api, call);
    sqlite3_stmt *insert = NULL;
    sqlite3_int64 id;
    char number[32];
    buffer undo = {NULL, 0, 0};
    if (!db) {
        free(title);
        free(body);
        return SKILL_ERR_UNAVAILABLE;
    }
    /* The note added and the one its undo expects are one (no other connection writes in between). */
    sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    sqlite3_prepare_v2(db, "INSERT INTO notes (title, body) VALUES (?, ?)", -1, &insert, NULL);
    sqlite3_bind_text(insert, 1, title ? title : "", -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(insert, 2, body ? body : "", -1, SQLITE_TRANSIENT);
    free(title);
    free(body);
    if (sqlite3_step(insert) != SQLITE_DONE) {
        api->set_error(call, sqlite3_errmsg(db));
        sqlite3_finalize(insert);
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        sqlite3_close(db);
        return SKILL_ERR_FAILED;
    }
    sqlite3_finalize(insert);
    id = sqlite3_last_insert_rowid(db);
    /* The undo deletes this note only while it is as added (an id reused later is another note). */
    put(&undo, "{\"id\":", 6);
    put(&undo, number, (size_t)snprintf(number, sizeof number, "%lld", (long long)id));
    put_expectation(&undo, db, id);
    if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        api->set_error(call, sqlite3_errmsg(db));
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        sqlite3_close(db);
        free(undo.data);
        return SKILL_ERR_FAILED;
    }
    if (undo.data) api->set_undo(call, "notes_delete", undo.data);
    free(undo.data);
    return finish_with_note(db, api, call, id);
}

static int notes_list(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    const char *search = skill_json_find(args, "query");
    char *query = search ? string_argument(args, "query") : NULL;
    sqlite3 *db = open_db(state, api, call);
    sqlite3_stmt *rows = NULL;
    buffer b = {NULL, 0, 0};
    int first = 1;
    if (!db) {
        free(query);
        return SKILL_ERR_UNAVAILABLE;
    }
    if (query) {
        sqlite3_prepare_v2(db,
                           "SELECT id, title, body, created, updated FROM notes WHERE title LIKE '%' || ?1 || '%' "
                           "OR body LIKE '%' || ?1 || '%' ORDER BY id",
                           -1, &rows, NULL);
        sqlite3_bind_text(rows, 1, query, -1, SQLITE_TRANSIENT);
    } else {
        sqlite3_prepare_v2(db, "SELECT id, title, body, created, updated FROM notes ORDER BY id", -1, &rows, NULL);
    }
    put(&b, "[", 1);
    while (sqlite3_step(rows) == SQLITE_ROW) {
        if (!first) put(&b, ",", 1);
        first = 0;
        put_note(&b, rows);
    }
    put(&b, "]", 1);
    sqlite3_finalize(rows);
    sqlite3_close(db);
    free(query);
    api->set_result(call, b.data, b.length);
    free(b.data);
    return SKILL_OK;
}

/* Loads note `id` into *row (positioned on it); returns 0 and sets the error if it does not exist. */
static int load_note(sqlite3 *db, sqlite3_int64 id, sqlite3_stmt **row, const skill_call_api *api, skill_call *call) {
    char message[64];
    sqlite3_prepare_v2(db, "SELECT id, title, body, created, updated FROM notes WHERE id = ?", -1, row, NULL);
    sqlite3_bind_int64(*row, 1, id);
    if (sqlite3_step(*row) == SQLITE_ROW) return 1;
    snprintf(message, sizeof message, "there is no note %lld", (long long)id);
    api->set_error(call, message);
    sqlite3_finalize(*row);
    return 0;
}

static int notes_update(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    double id = 0;
    char *title = string_argument(args, "title"), *body = string_argument(args, "body");
    sqlite3 *db;
    sqlite3_stmt *row = NULL, *update = NULL;
    buffer undo = {NULL, 0, 0};
    skill_json_get_number(args, "id", &id);
    db = open_db(state, api, call);
    if (!db || !load_note(db, (sqlite3_int64)id, &row, api, call)) {
        free(title);
        free(body);
        sqlite3_close(db);
        return db ? SKILL_ERR_INVALID_ARGS : SKILL_ERR_UNAVAILABLE;
    }
    put_note_open(&undo, row); /* the previous title and body, restored while the note is as this update left it */
    sqlite3_finalize(row);
    sqlite3_prepare_v2(db,
                       "UPDATE notes SET title = coalesce(?, title), body = coalesce(?, body), "
                       "updated = datetime('now') WHERE id = ?",
                       -1, &update, NULL);
    if (title) sqlite3_bind_text(update, 1, title, -1, SQLITE_TRANSIENT);
    if (body) sqlite3_bind_text(update, 2, body, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(update, 3, (sqlite3_int64)id);
    sqlite3_step(update);
    sqlite3_finalize(update);
    free(title);
    free(body);
    put_expectation(&undo, db, (sqlite3_int64)id);
    if (undo.data) api->set_undo(call, "notes_restore", undo.data);
    free(undo.data);
    return finish_with_note(db, api, call, (sqlite3_int64)id);
}

static int notes_delete(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    double id = 0;
    sqlite3 *db;
    sqlite3_stmt *row = NULL, *remove = NULL;
    char result[64];
    buffer undo = {NULL, 0, 0};
    skill_json_get_number(args, "id", &id);
    db = open_db(state, api, call);
    if (!db) return SKILL_ERR_UNAVAILABLE;
    /* One transaction: the note checked, copied for the undo and deleted is one note (another connection cannot
       change it or take its id in between). */
    sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    if (!as_expected(db, (sqlite3_int64)id, args, api, call, "deleted")) {
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        sqlite3_close(db);
        return SKILL_ERR_FAILED;
    }
    if (!load_note(db, (sqlite3_int64)id, &row, api, call)) {
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        sqlite3_close(db);
        return SKILL_ERR_INVALID_ARGS;
    }
    put_note_open(&undo, row); /* everything needed to put it back, while no other note has taken its id */
    put(&undo, ",\"expect\":\"absent\"}", strlen(",\"expect\":\"absent\"}"));
    sqlite3_finalize(row);
    sqlite3_prepare_v2(db, "DELETE FROM notes WHERE id = ?", -1, &remove, NULL);
    sqlite3_bind_int64(remove, 1, (sqlite3_int64)id);
    int deleted = sqlite3_step(remove) == SQLITE_DONE;
    sqlite3_finalize(remove);
    if (!deleted || sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        api->set_error(call, sqlite3_errmsg(db));
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        sqlite3_close(db);
        free(undo.data);
        return SKILL_ERR_FAILED;
    }
    sqlite3_close(db);
    if (undo.data) api->set_undo(call, "notes_restore", undo.data);
    free(undo.data);
    api->set_result(call, result, (size_t)snprintf(result, sizeof result, "{\"deleted\":%lld}", (long long)id));
    return SKILL_OK;
}

/* Puts a note back exactly as it was (the undo of update and delete). */
static int notes_restore(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    double id = 0;
    char *title = string_argument(args, "title"), *body = string_argument(args, "body");
    char *created = string_argument(args, "created"), *updated = string_argument(args, "updated");
    sqlite3 *db = open_db(state, api, call);
    sqlite3_stmt *upsert = NULL;
    skill_json_get_number(args, "id", &id);
    if (!db) {
        free(title), free(body), free(created), free(updated);
        return SKILL_ERR_UNAVAILABLE;
    }
    /* Checked and written in one transaction: the note the check saw is the note replaced. */
    sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    if (!as_expected(db, (sqlite3_int64)id, args, api, call, "restored")) {
        free(title), free(body), free(created), free(updated);
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        sqlite3_close(db);
        return SKILL_ERR_FAILED;
    }
    sqlite3_prepare_v2(db,
                       "INSERT OR REPLACE INTO notes (id, title, body, created, updated) VALUES (?, ?, ?, "
                       "coalesce(?, datetime('now')), coalesce(?, datetime('now')))",
                       -1, &upsert, NULL);
    sqlite3_bind_int64(upsert, 1, (sqlite3_int64)id);
    sqlite3_bind_text(upsert, 2, title ? title : "", -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(upsert, 3, body ? body : "", -1, SQLITE_TRANSIENT);
    if (created) sqlite3_bind_text(upsert, 4, created, -1, SQLITE_TRANSIENT);
    if (updated) sqlite3_bind_text(upsert, 5, updated, -1, SQLITE_TRANSIENT);
    int written = sqlite3_step(upsert) == SQLITE_DONE;
    sqlite3_finalize(upsert);
    free(title), free(body), free(created), free(updated);
    if (!written || sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        api->set_error(call, sqlite3_errmsg(db));
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        sqlite3_close(db);
        return SKILL_ERR_FAILED;
    }
    return finish_with_note(db, api, call, (sqlite3_int64)id);
}

#define ID "\"id\":{\"type\":\"integer\",\"minimum\":1,\"description\":\"the note's id\"}"
/* What an undo expects the note to be (set by the change it reverses; a model leaves it out). */
#define EXPECT                                                                                                     \
    "\"expect\":{\"description\":\"for undo only: the note as the change left it, or absent\",\"anyOf\":["              \
    "{\"type\":\"object\",\"properties\":{\"title\":{\"type\":\"string\"},\"body\":{\"type\":\"string\"}},"               \
    "\"required\":[\"title\",\"body\"],\"additionalProperties\":false},{\"const\":\"absent\"}]}"
/* What the skills return: a note, a list of notes, what was deleted (ABI 1.1 result schemas). */
#define NOTE                                                                                                       \
    "{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"integer\"},\"title\":{\"type\":\"string\"},"                     \
    "\"body\":{\"type\":\"string\"},\"created\":{\"type\":\"string\"},\"updated\":{\"type\":\"string\"}},"                    \
    "\"required\":[\"id\",\"title\",\"body\",\"created\",\"updated\"]}"
#define NOTES "{\"type\":\"array\",\"items\":" NOTE "}"
#define DELETED "{\"type\":\"object\",\"properties\":{\"deleted\":{\"type\":\"integer\"}},\"required\":[\"deleted\"]}"
static const skill_descriptor skills[] = {
    SKILL_JSON_ANSWER("notes_add", "Add a note", "Saves a new note with a title and a body. Returns the note with its id.",
               "{\"type\":\"object\",\"properties\":{\"title\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":200},"
               "\"body\":{\"type\":\"string\",\"default\":\"\"}},\"required\":[\"title\"],\"additionalProperties\":false}",
               NOTE, "Added note {id}: {title}.", SKILL_RISK_MUTATING, 0, notes_add),
    SKILL_JSON_VIEW("notes_list", "List notes", "Lists every saved note (id, title, body, dates).",
               "{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false}", NOTES, NULL,
               SKILL_RISK_READ_ONLY, SKILL_IDEMPOTENT, notes_list, "list", 0u),
    SKILL_JSON_OUTPUT("notes_search", "Search notes", "Finds notes whose title or body contains the query text.",
               "{\"type\":\"object\",\"properties\":{\"query\":{\"type\":\"string\",\"minLength\":1}},"
               "\"required\":[\"query\"],\"additionalProperties\":false}",
               NOTES, SKILL_RISK_READ_ONLY, SKILL_IDEMPOTENT, notes_list),
    SKILL_JSON_ANSWER("notes_update", "Update a note", "Changes the title and/or body of a note. Can be undone.",
               "{\"type\":\"object\",\"properties\":{" ID ",\"title\":{\"type\":\"string\",\"minLength\":1},"
               "\"body\":{\"type\":\"string\"}},\"required\":[\"id\"],\"additionalProperties\":false}",
               NOTE, "Updated note {id}: {title}.", SKILL_RISK_MUTATING, SKILL_IDEMPOTENT, notes_update),
    SKILL_JSON_ANSWER("notes_delete", "Delete a note", "Deletes a note for good (the shell's /undo restores it).",
               "{\"type\":\"object\",\"properties\":{" ID "," EXPECT "},\"required\":[\"id\"],"
               "\"additionalProperties\":false}",
               DELETED, "Deleted note {deleted}.", SKILL_RISK_DESTRUCTIVE, SKILL_IDEMPOTENT, notes_delete),
    SKILL_JSON_ANSWER("notes_restore", "Restore a note", "Puts a note back exactly as given (used to undo changes).",
               "{\"type\":\"object\",\"properties\":{" ID ",\"title\":{\"type\":\"string\"},\"body\":{\"type\":\"string\"},"
               "\"created\":{\"type\":\"string\"},\"updated\":{\"type\":\"string\"}," EXPECT "},"
               "\"required\":[\"id\",\"title\",\"body\"]}",
               NOTE, "Restored note {id}: {title}.", SKILL_RISK_MUTATING, SKILL_IDEMPOTENT, notes_restore),
};

/* The state a model should know before it acts (ABI 1.1 snapshot): how many notes there are and the five most
 * recently changed, newest first, with their ids: {"notes": 3, "recent": [{"id": 3, "title": "milk"}, …]}.
 * Thread-safe: its own connection, like every call. */
static int notes_snapshot(void *state, const skill_snapshot_api *api, skill_snapshot *out) {
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(((notes_state *)state)->path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        sqlite3_close(db);
        return SKILL_ERR_UNAVAILABLE;
    }
    sqlite3_busy_timeout(db, 2000);
    buffer b = {NULL, 0, 0};
    sqlite3_stmt *count = NULL, *rows = NULL;
    char number[32];
    long long total = 0;
    if (sqlite3_prepare_v2(db, "SELECT count(*) FROM notes", -1, &count, NULL) == SQLITE_OK &&
        sqlite3_step(count) == SQLITE_ROW)
        total = (long long)sqlite3_column_int64(count, 0);
    sqlite3_finalize(count);
    put(&b, "{\"notes\":", 9);
    put(&b, number, (size_t)snprintf(number, sizeof number, "%lld", total));
    put(&b, ",\"recent\":[", 11);
    int first = 1;
    if (sqlite3_prepare_v2(db, "SELECT id, title FROM notes ORDER BY updated DESC, id DESC LIMIT 5", -1, &rows,
                           NULL) == SQLITE_OK) {
        while (sqlite3_step(rows) == SQLITE_ROW) {
            if (!first) put(&b, ",", 1);
            first = 0;
            put(&b, "{\"id\":", 6);
            put(&b, number, (size_t)snprintf(number, sizeof number, "%lld", (long long)sqlite3_column_int64(rows, 0)));
            put(&b, ",\"title\":", 9);
            put_string(&b, (const char *)sqlite3_column_text(rows, 1));
            put(&b, "}", 1);
        }
    }
    sqlite3_finalize(rows);
    sqlite3_close(db);
    put(&b, "]}", 2);
    if (!b.data) return SKILL_ERR_UNAVAILABLE;
    api->set(out, b.data, b.length);
    free(b.data);
    return SKILL_OK;
}

/* The list as a small app (ABI 1.4): hosts that render MCP Apps show it where notes_list's result is. */
static const skill_view views[] = {
    SKILL_VIEW("list", "Notes", notes_view_html, NULL, NULL, 0u),
};

SKILL_PLUGIN_VIEWS("notes", "1.2.0", "Notes kept in SQLite, with undo", skills, notes_init, notes_deinit, NULL, 0u,
                   NULL, notes_snapshot, views)
