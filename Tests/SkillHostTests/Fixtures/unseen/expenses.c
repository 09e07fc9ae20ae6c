/* Test fixture: a third-party-style plugin (an expense tracker kept in memory) written without looking at the router. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "skill_json.h"
#include "skill_sdk.h"

#define MAX_EXPENSES 500

static struct expense {
    int id;
    double amount;
    char category[16];
    char note[121];
} expenses[MAX_EXPENSES];
static int count, next_id = 1;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static int expense_json(const struct expense *e, char *out, size_t capacity) {
    char note[300];
    skill_json_write_string(note, sizeof note, e->note);
    return snprintf(out, capacity, "{\"id\":%d,\"amount\":%.2f,\"category\":\"%s\",\"note\":%s}", e->id, e->amount,
                    e->category, note);
}

static int expense_add(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    struct expense e = {0};
    char out[400], undo[40];
    (void)state;
    skill_json_get_number(args, "amount", &e.amount);
    e.amount = round(e.amount * 100) / 100;
    if (skill_json_get_string(args, "category", e.category, sizeof e.category) < 0) strcpy(e.category, "other");
    if (skill_json_get_string(args, "note", e.note, sizeof e.note) < 0) e.note[0] = '\0';
    pthread_mutex_lock(&lock);
    if (count == MAX_EXPENSES) {
        pthread_mutex_unlock(&lock);
        api->set_error(call, "the expense log is full (500 entries); delete some first");
        return SKILL_ERR_FAILED;
    }
    e.id = next_id++;
    expenses[count++] = e;
    pthread_mutex_unlock(&lock);
    int n = expense_json(&e, out, sizeof out);
    snprintf(undo, sizeof undo, "{\"id\":%d}", e.id);
    api->set_undo(call, "expense_delete", undo);
    api->set_result(call, out, (size_t)n);
    return SKILL_OK;
}

static int expense_total(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    char category[16] = "", out[120];
    double total = 0;
    int entries = 0;
    (void)state;
    int filtered = skill_json_get_string(args, "category", category, sizeof category) >= 0;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < count; i++)
        if (!filtered || strcmp(expenses[i].category, category) == 0) {
            total += expenses[i].amount;
            entries++;
        }
    pthread_mutex_unlock(&lock);
    int n = snprintf(out, sizeof out, "{\"category\":\"%s\",\"total\":%.2f,\"entries\":%d}",
                     filtered ? category : "all", total, entries);
    api->set_result(call, out, (size_t)n);
    return SKILL_OK;
}

static int expense_list(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    static char out[MAX_EXPENSES * 320];
    char category[16] = "";
    double limit = 10;
    size_t n;
    int shown = 0;
    (void)state;
    int filtered = skill_json_get_string(args, "category", category, sizeof category) >= 0;
    skill_json_get_number(args, "limit", &limit);
    pthread_mutex_lock(&lock);
    n = (size_t)snprintf(out, sizeof out, "[");
    for (int i = count - 1; i >= 0 && shown < (int)limit; i--) {
        if (filtered && strcmp(expenses[i].category, category) != 0) continue;
        if (shown++) out[n++] = ',';
        n += (size_t)expense_json(&expenses[i], out + n, sizeof out - n);
    }
    n += (size_t)snprintf(out + n, sizeof out - n, "]");
    pthread_mutex_unlock(&lock);
    api->set_result(call, out, n);
    return SKILL_OK;
}

static int expense_delete(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    double id = 0;
    char out[400];
    (void)state;
    skill_json_get_number(args, "id", &id);
    pthread_mutex_lock(&lock);
    for (int i = 0; i < count; i++)
        if (expenses[i].id == (int)id) {
            struct expense gone = expenses[i];
            memmove(&expenses[i], &expenses[i + 1], sizeof expenses[0] * (size_t)(count - i - 1));
            count--;
            pthread_mutex_unlock(&lock);
            int n = snprintf(out, sizeof out, "{\"deleted\":");
            n += expense_json(&gone, out + n, sizeof out - (size_t)n);
            n += snprintf(out + n, sizeof out - (size_t)n, "}");
            api->set_result(call, out, (size_t)n);
            return SKILL_OK;
        }
    pthread_mutex_unlock(&lock);
    api->set_error(call, "there is no expense with that id; expense_list shows the ids");
    return SKILL_ERR_FAILED;
}

#define CATEGORIES "[\"food\",\"transport\",\"rent\",\"bills\",\"fun\",\"health\",\"other\"]"

static const skill_descriptor skills[] = {
    SKILL_JSON("expense_add", "Record an expense",
               "Records money spent: an amount, a category and an optional note. Returns the entry with its id.",
               "{\"type\":\"object\",\"properties\":{"
               "\"amount\":{\"type\":\"number\",\"exclusiveMinimum\":0,\"description\":\"how much was spent\"},"
               "\"category\":{\"type\":\"string\",\"enum\":" CATEGORIES ",\"default\":\"other\"},"
               "\"note\":{\"type\":\"string\",\"maxLength\":120,\"description\":\"what it was for\"}},"
               "\"required\":[\"amount\"],\"additionalProperties\":false}",
               SKILL_RISK_MUTATING, 0, expense_add),
    SKILL_JSON("expense_total", "Total spent",
               "Adds up the recorded expenses, all of them or one category's.",
               "{\"type\":\"object\",\"properties\":{"
               "\"category\":{\"type\":\"string\",\"enum\":" CATEGORIES ",\"description\":\"only this category; every "
               "category when omitted\"}},\"additionalProperties\":false}",
               SKILL_RISK_READ_ONLY, SKILL_IDEMPOTENT, expense_total),
    SKILL_JSON("expense_list", "List expenses",
               "Lists the most recent expenses, newest first, with their ids.",
               "{\"type\":\"object\",\"properties\":{"
               "\"category\":{\"type\":\"string\",\"enum\":" CATEGORIES "},"
               "\"limit\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":500,\"default\":10}},"
               "\"additionalProperties\":false}",
               SKILL_RISK_READ_ONLY, SKILL_IDEMPOTENT, expense_list),
    SKILL_JSON("expense_delete", "Delete an expense", "Deletes one recorded expense by its id, permanently.",
               "{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"integer\",\"minimum\":1}},"
               "\"required\":[\"id\"],\"additionalProperties\":false}",
               SKILL_RISK_DESTRUCTIVE, SKILL_IDEMPOTENT, expense_delete),
};
SKILL_PLUGIN("spendlog", "2.1.0", "Track what you spend", skills)
