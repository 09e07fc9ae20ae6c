/* Test fixture: a third-party-style plugin (a shopping list kept in memory) written without looking at the router. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "skill_json.h"
#include "skill_sdk.h"

#define MAX_ITEMS 200

static struct item {
    char name[81];
    int quantity;
    int bought;
} items[MAX_ITEMS];
static int count;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static int find(const char *name) {
    for (int i = 0; i < count; i++)
        if (strcasecmp(items[i].name, name) == 0) return i;
    return -1;
}

static void drop(int i) {
    memmove(&items[i], &items[i + 1], sizeof items[0] * (size_t)(count - i - 1));
    count--;
}

static int list_json(char *out, size_t capacity) {
    size_t n = (size_t)snprintf(out, capacity, "{\"items\":[");
    for (int i = 0; i < count && n < capacity; i++) {
        char name[200];
        skill_json_write_string(name, sizeof name, items[i].name);
        n += (size_t)snprintf(out + n, capacity - n, "%s{\"item\":%s,\"quantity\":%d,\"bought\":%s}", i ? "," : "", name,
                              items[i].quantity, items[i].bought ? "true" : "false");
    }
    if (n < capacity) n += (size_t)snprintf(out + n, capacity - n, "],\"count\":%d}", count);
    return n < capacity ? (int)n : -1;
}

static int shop_add(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    char name[81], quoted[200], out[300], undo[300];
    double quantity = 1;
    (void)state;
    if (skill_json_get_string(args, "item", name, sizeof name) <= 0) {
        api->set_error(call, "item must be a non-empty name of at most 80 bytes");
        return SKILL_ERR_INVALID_ARGS;
    }
    skill_json_get_number(args, "quantity", &quantity);
    pthread_mutex_lock(&lock);
    int i = find(name);
    if (i < 0) {
        if (count == MAX_ITEMS) {
            pthread_mutex_unlock(&lock);
            api->set_error(call, "the shopping list is full (200 items)");
            return SKILL_ERR_FAILED;
        }
        i = count++;
        snprintf(items[i].name, sizeof items[i].name, "%s", name);
        items[i].quantity = 0;
    }
    items[i].quantity += (int)quantity;
    items[i].bought = 0;
    skill_json_write_string(quoted, sizeof quoted, items[i].name);
    int n = snprintf(out, sizeof out, "{\"item\":%s,\"quantity\":%d,\"items_on_list\":%d}", quoted, items[i].quantity,
                     count);
    pthread_mutex_unlock(&lock);
    snprintf(undo, sizeof undo, "{\"item\":%s,\"quantity\":%d}", quoted, (int)quantity);
    api->set_undo(call, "shop_remove", undo);
    api->set_result(call, out, (size_t)n);
    return SKILL_OK;
}

static int shop_remove(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    char name[81], quoted[200], out[300], undo[300];
    double quantity = 0;
    int removed, left;
    (void)state;
    skill_json_get_string(args, "item", name, sizeof name);
    int partial = skill_json_get_number(args, "quantity", &quantity) == 0;
    pthread_mutex_lock(&lock);
    int i = find(name);
    if (i < 0) {
        pthread_mutex_unlock(&lock);
        api->set_error(call, "that item is not on the shopping list");
        return SKILL_ERR_FAILED;
    }
    skill_json_write_string(quoted, sizeof quoted, items[i].name);
    if (partial && (int)quantity < items[i].quantity) {
        removed = (int)quantity;
        items[i].quantity -= removed;
        left = items[i].quantity;
    } else {
        removed = items[i].quantity;
        left = 0;
        drop(i);
    }
    pthread_mutex_unlock(&lock);
    snprintf(undo, sizeof undo, "{\"item\":%s,\"quantity\":%d}", quoted, removed);
    api->set_undo(call, "shop_add", undo);
    int n = snprintf(out, sizeof out, "{\"item\":%s,\"removed\":%d,\"left\":%d}", quoted, removed, left);
    api->set_result(call, out, (size_t)n);
    return SKILL_OK;
}

static int shop_check_off(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    char name[81], quoted[200], out[300];
    (void)state;
    skill_json_get_string(args, "item", name, sizeof name);
    pthread_mutex_lock(&lock);
    int i = find(name);
    if (i < 0) {
        pthread_mutex_unlock(&lock);
        api->set_error(call, "that item is not on the shopping list");
        return SKILL_ERR_FAILED;
    }
    items[i].bought = 1;
    skill_json_write_string(quoted, sizeof quoted, items[i].name);
    pthread_mutex_unlock(&lock);
    int n = snprintf(out, sizeof out, "{\"item\":%s,\"bought\":true}", quoted);
    api->set_result(call, out, (size_t)n);
    return SKILL_OK;
}

static int shop_list(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    static char out[MAX_ITEMS * 240];
    (void)state;
    (void)args;
    pthread_mutex_lock(&lock);
    int n = list_json(out, sizeof out);
    if (n >= 0) api->set_result(call, out, (size_t)n);
    pthread_mutex_unlock(&lock);
    return SKILL_OK;
}

static int shop_clear(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    int only_bought = 0, removed = 0;
    char out[100];
    (void)state;
    skill_json_get_bool(args, "only_bought", &only_bought);
    pthread_mutex_lock(&lock);
    for (int i = count - 1; i >= 0; i--)
        if (!only_bought || items[i].bought) {
            drop(i);
            removed++;
        }
    int n = snprintf(out, sizeof out, "{\"removed\":%d,\"left\":%d}", removed, count);
    pthread_mutex_unlock(&lock);
    api->set_result(call, out, (size_t)n);
    return SKILL_OK;
}

#define ITEM "\"item\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":80,\"description\":\"what to buy, e.g. " \
             "eggs\"}"

static const skill_descriptor skills[] = {
    SKILL_JSON("shop_add", "Add to shopping list",
               "Puts an item on the shopping list (adds to the quantity if it is already there).",
               "{\"type\":\"object\",\"properties\":{" ITEM ","
               "\"quantity\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":999,\"default\":1}},"
               "\"required\":[\"item\"],\"additionalProperties\":false}",
               SKILL_RISK_MUTATING, SKILL_SERIAL, shop_add),
    SKILL_JSON("shop_remove", "Remove from shopping list",
               "Takes an item off the shopping list, or lowers its quantity when a quantity is given.",
               "{\"type\":\"object\",\"properties\":{" ITEM ","
               "\"quantity\":{\"type\":\"integer\",\"minimum\":1,\"description\":\"how many to take off; the whole "
               "line when omitted\"}},"
               "\"required\":[\"item\"],\"additionalProperties\":false}",
               SKILL_RISK_MUTATING, SKILL_SERIAL, shop_remove),
    SKILL_JSON("shop_check_off", "Check off an item",
               "Marks an item on the shopping list as bought (it stays on the list, crossed off).",
               "{\"type\":\"object\",\"properties\":{" ITEM "},\"required\":[\"item\"],\"additionalProperties\":false}",
               SKILL_RISK_MUTATING, SKILL_IDEMPOTENT | SKILL_SERIAL, shop_check_off),
    SKILL_JSON("shop_list", "Show shopping list", "Shows everything on the shopping list with quantities and what is "
               "already bought.",
               "{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false}", SKILL_RISK_READ_ONLY,
               SKILL_IDEMPOTENT, shop_list),
    SKILL_JSON("shop_clear", "Clear shopping list",
               "Empties the shopping list for good, or only removes the items already checked off as bought.",
               "{\"type\":\"object\",\"properties\":{"
               "\"only_bought\":{\"type\":\"boolean\",\"default\":false,\"description\":\"remove only the items "
               "checked off as bought\"}},\"additionalProperties\":false}",
               SKILL_RISK_DESTRUCTIVE, SKILL_IDEMPOTENT | SKILL_SERIAL, shop_clear),
};
SKILL_PLUGIN("shopping-list", "1.2.0", "A simple shopping list", skills)
