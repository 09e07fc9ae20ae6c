/* Test fixture: a third-party-style plugin (a habit tracker kept in memory) written without looking at the router. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "skill_json.h"
#include "skill_sdk.h"

#define MAX_HABITS 50
#define MAX_DAYS 1000

static struct habit {
    char name[61];
    int days;
    long day[MAX_DAYS]; /* sorted, distinct: days since 1970-01-01 */
} habits[MAX_HABITS];
static int habit_count;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static int to_days(const char *text, long *out) {
    static const int lengths[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int y, m, d, used = 0;
    if (sscanf(text, "%4d-%2d-%2d%n", &y, &m, &d, &used) != 3 || used != 10) return -1;
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (m < 1 || m > 12 || d < 1 || d > lengths[m - 1] || (m == 2 && d == 29 && !leap)) return -1;
    y -= m <= 2;
    long era = (y >= 0 ? y : y - 399) / 400, yoe = y - era * 400;
    long doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    *out = era * 146097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719468;
    return 0;
}

static void from_days(long z, char out[64]) {
    z += 719468;
    long era = (z >= 0 ? z : z - 146096) / 146097, doe = z - era * 146097;
    long yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365, y = yoe + era * 400;
    long doy = doe - (365 * yoe + yoe / 4 - yoe / 100), mp = (5 * doy + 2) / 153;
    long d = doy - (153 * mp + 2) / 5 + 1, m = mp < 10 ? mp + 3 : mp - 9;
    snprintf(out, 64, "%04ld-%02ld-%02ld", y + (m <= 2), m, d);
}

/* Today in the caller's context, else the machine's local date. */
static long today(const skill_call_api *api, skill_call *call) {
    long days;
    if (api->struct_size >= sizeof(skill_call_api) && api->context) {
        const char *context = api->context(call);
        char now[40];
        if (context && skill_json_get_string(context, "now", now, sizeof now) >= 10) {
            now[10] = '\0';
            if (to_days(now, &days) == 0) return days;
        }
    }
    time_t t = time(NULL);
    struct tm tm;
    char text[11];
    localtime_r(&t, &tm);
    strftime(text, sizeof text, "%Y-%m-%d", &tm);
    return to_days(text, &days) == 0 ? days : 0;
}

static int find(const char *name) {
    for (int i = 0; i < habit_count; i++)
        if (strcasecmp(habits[i].name, name) == 0) return i;
    return -1;
}

static int streak_of(const struct habit *h) {
    int streak = h->days > 0;
    for (int i = h->days - 1; i > 0 && h->day[i] - h->day[i - 1] == 1; i--) streak++;
    return streak;
}

static int log_habit(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    char name[61], date[64], quoted[160], out[300];
    long day;
    (void)state;
    if (skill_json_get_string(args, "habit", name, sizeof name) <= 0) {
        api->set_error(call, "habit must be a name of 1 to 60 bytes");
        return SKILL_ERR_INVALID_ARGS;
    }
    if (skill_json_get_string(args, "date", date, sizeof date) >= 0) {
        if (to_days(date, &day) != 0) {
            api->set_error(call, "date must be a real date written YYYY-MM-DD");
            return SKILL_ERR_INVALID_ARGS;
        }
    } else {
        day = today(api, call);
    }
    pthread_mutex_lock(&lock);
    int i = find(name);
    if (i < 0) {
        if (habit_count == MAX_HABITS) {
            pthread_mutex_unlock(&lock);
            api->set_error(call, "at most 50 habits can be tracked");
            return SKILL_ERR_FAILED;
        }
        i = habit_count++;
        snprintf(habits[i].name, sizeof habits[i].name, "%s", name);
        habits[i].days = 0;
    }
    struct habit *h = &habits[i];
    int at = 0;
    while (at < h->days && h->day[at] < day) at++;
    if ((at == h->days || h->day[at] != day) && h->days < MAX_DAYS) {
        memmove(&h->day[at + 1], &h->day[at], sizeof(long) * (size_t)(h->days - at));
        h->day[at] = day;
        h->days++;
    }
    from_days(day, date);
    skill_json_write_string(quoted, sizeof quoted, h->name);
    int n = snprintf(out, sizeof out, "{\"habit\":%s,\"date\":\"%s\",\"streak\":%d,\"total\":%d}", quoted, date,
                     streak_of(h), h->days);
    pthread_mutex_unlock(&lock);
    api->set_result(call, out, (size_t)n);
    return SKILL_OK;
}

static int habit_streak(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    char name[61], quoted[160], last[64], out[300];
    (void)state;
    skill_json_get_string(args, "habit", name, sizeof name);
    pthread_mutex_lock(&lock);
    int i = find(name);
    if (i < 0) {
        pthread_mutex_unlock(&lock);
        api->set_error(call, "no such habit; log it first with log_habit");
        return SKILL_ERR_FAILED;
    }
    const struct habit *h = &habits[i];
    from_days(h->day[h->days - 1], last);
    skill_json_write_string(quoted, sizeof quoted, h->name);
    int n = snprintf(out, sizeof out, "{\"habit\":%s,\"streak\":%d,\"last\":\"%s\",\"total\":%d}", quoted,
                     streak_of(h), last, h->days);
    pthread_mutex_unlock(&lock);
    api->set_result(call, out, (size_t)n);
    return SKILL_OK;
}

static int list_habits(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    static char out[MAX_HABITS * 200 + 32];
    size_t n;
    (void)state;
    (void)args;
    pthread_mutex_lock(&lock);
    n = (size_t)snprintf(out, sizeof out, "[");
    for (int i = 0; i < habit_count; i++) {
        char quoted[160], last[64];
        from_days(habits[i].day[habits[i].days - 1], last);
        skill_json_write_string(quoted, sizeof quoted, habits[i].name);
        n += (size_t)snprintf(out + n, sizeof out - n, "%s{\"habit\":%s,\"streak\":%d,\"last\":\"%s\",\"total\":%d}",
                              i ? "," : "", quoted, streak_of(&habits[i]), last, habits[i].days);
    }
    n += (size_t)snprintf(out + n, sizeof out - n, "]");
    pthread_mutex_unlock(&lock);
    api->set_result(call, out, n);
    return SKILL_OK;
}

static int delete_habit(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    char name[61], quoted[160], out[200];
    (void)state;
    skill_json_get_string(args, "habit", name, sizeof name);
    pthread_mutex_lock(&lock);
    int i = find(name);
    if (i < 0) {
        pthread_mutex_unlock(&lock);
        api->set_error(call, "no such habit");
        return SKILL_ERR_FAILED;
    }
    int days = habits[i].days;
    memmove(&habits[i], &habits[i + 1], sizeof habits[0] * (size_t)(habit_count - i - 1));
    habit_count--;
    pthread_mutex_unlock(&lock);
    skill_json_write_string(quoted, sizeof quoted, name);
    int n = snprintf(out, sizeof out, "{\"deleted\":%s,\"check_ins_lost\":%d}", quoted, days);
    api->set_result(call, out, (size_t)n);
    return SKILL_OK;
}

#define HABIT "\"habit\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":60}"

static const skill_descriptor skills[] = {
    SKILL_JSON("log_habit", "Log habit", "Check in a habit for a day (default today).",
               "{\"type\":\"object\",\"properties\":{" HABIT ","
               "\"date\":{\"type\":\"string\",\"pattern\":\"^\\\\d{4}-\\\\d{2}-\\\\d{2}$\",\"description\":"
               "\"YYYY-MM-DD\"}},\"required\":[\"habit\"],\"additionalProperties\":false}",
               SKILL_RISK_MUTATING, SKILL_IDEMPOTENT | SKILL_SERIAL, log_habit),
    SKILL_JSON("habit_streak", "Habit streak", "Current streak of a habit in days.",
               "{\"type\":\"object\",\"properties\":{" HABIT "},\"required\":[\"habit\"],\"additionalProperties\":false}",
               SKILL_RISK_READ_ONLY, SKILL_IDEMPOTENT, habit_streak),
    SKILL_JSON("list_habits", "List habits", "All tracked habits with streaks.",
               "{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false}", SKILL_RISK_READ_ONLY,
               SKILL_IDEMPOTENT, list_habits),
    SKILL_JSON("delete_habit", "Delete habit", "Stop tracking a habit and erase its history.",
               "{\"type\":\"object\",\"properties\":{" HABIT "},\"required\":[\"habit\"],\"additionalProperties\":false}",
               SKILL_RISK_DESTRUCTIVE, SKILL_IDEMPOTENT | SKILL_SERIAL, delete_habit),
};
SKILL_PLUGIN("habitual", "0.9.0", "habit tracker", skills)
