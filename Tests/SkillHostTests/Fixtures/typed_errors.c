/* Test fixture: typed skills that fail through their skill_error (ABI 1.2). */
#include "skill_sdk.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static atomic_long frees;

/* Days since 1970-01-01 of a YYYY-MM-DD date (the proleptic Gregorian calendar); -1 when it is not one. */
static int parse_date(const char *text, long long *days) {
    static const int lengths[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int y, m, d, used = 0;
    if (strlen(text) != 10 || sscanf(text, "%4d-%2d-%2d%n", &y, &m, &d, &used) != 3 || used != 10) return -1;
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (m < 1 || m > 12 || d < 1 || d > lengths[m - 1] || (m == 2 && d == 29 && !leap)) return -1;
    y -= m <= 2;
    long long era = (y >= 0 ? y : y - 399) / 400;
    long long yoe = y - era * 400, doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    *days = era * 146097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719468;
    return 0;
}

static int64_t days_between(const char *date1, const char *date2, skill_error *error) {
    long long a = 0, b = 0;
    char message[160];
    const char *bad = parse_date(date1, &a) != 0 ? "date1" : parse_date(date2, &b) != 0 ? "date2" : NULL;
    if (bad) {
        snprintf(message, sizeof message, "%s \"%.40s\" is not a date; write it as YYYY-MM-DD, such as 2026-12-25", bad,
                 bad[4] == '1' ? date1 : date2);
        skill_fail(error, SKILL_ERR_INVALID_ARGS, message);
        return INT64_MIN;
    }
    return b - a;
}

/* A string result that fails for negative numbers: what it returned is released all the same. */
static char *describe(int64_t n, skill_error *error) {
    char *text = malloc(32);
    if (text) snprintf(text, 32, "the number %lld", (long long)n);
    if (n < 0) skill_fail(error, SKILL_ERR_FAILED, "negative numbers have no description");
    return text;
}

/* A message longer than the record holds, with a two-byte character across the cut. */
static double long_message(skill_error *error) {
    char text[1200];
    memset(text, 'x', sizeof text);
    memcpy(text + 510, "\xc3\xa9", 2); /* é at bytes 510-511: the cut at 511 falls inside it */
    text[sizeof text - 1] = '\0';
    skill_fail(error, SKILL_ERR_FAILED, text);
    return 1;
}

static double bad_message(skill_error *error) {
    skill_fail(error, SKILL_ERR_FAILED, "\xff\xfe not UTF-8");
    return 2;
}

static double no_message(skill_error *error) {
    skill_fail(error, 0, NULL);
    return 3;
}

/* Reports nothing: the call succeeds with what it returned. */
static double fine(double x, skill_error *error) {
    (void)error;
    return x * 2;
}

/* The most arguments a signature may have, and the error record after them. */
static int64_t sum16(int64_t a, int64_t b, int64_t c, int64_t d, int64_t e, int64_t f, int64_t g, int64_t h, int64_t i,
                     int64_t j, int64_t k, int64_t l, int64_t m, int64_t n, int64_t o, int64_t p, skill_error *error) {
    int64_t total = a + b + c + d + e + f + g + h + i + j + k + l + m + n + o + p;
    if (total < 0) skill_fail(error, SKILL_ERR_INVALID_ARGS, "the sum is negative");
    return total;
}

/* Fails and returns a buffer of its own that is no text: the host releases it without reading it. */
static char *junk(skill_error *error) {
    char *buffer = malloc(2);
    if (buffer) memcpy(buffer, "\xff\xfe", 2); /* no terminating NUL: reading it would run off the end */
    skill_fail(error, SKILL_ERR_FAILED, "junk returned");
    return buffer;
}

static int64_t free_count(void) { return atomic_load(&frees); }

static void free_string(char *s) {
    atomic_fetch_add(&frees, 1);
    free(s);
}

static const skill_descriptor skills[] = {
    SKILL_TYPED("days_between", "Days between", "Days from date1 to date2 (YYYY-MM-DD).",
                "int64 days_between(string date1, string date2, error error)", days_between),
    SKILL_TYPED("describe", "Describe", "Describes a number.", "string describe(int64 n, error error)", describe),
    SKILL_TYPED("long_message", "Long message", "Fails at length.", "double long_message(error e)", long_message),
    SKILL_TYPED("bad_message", "Bad message", "Fails in bad bytes.", "double bad_message(error e)", bad_message),
    SKILL_TYPED("no_message", "No message", "Fails without words.", "double no_message(error e)", no_message),
    SKILL_TYPED("fine", "Fine", "Doubles a number.", "double fine(double x, error e)", fine),
    SKILL_TYPED("sum16", "Sum of sixteen", "Adds sixteen integers.",
                "int64 sum16(int64 a, int64 b, int64 c, int64 d, int64 e, int64 f, int64 g, int64 h, int64 i, int64 j, "
                "int64 k, int64 l, int64 m, int64 n, int64 o, int64 p, error error)",
                sum16),
    SKILL_TYPED("junk", "Junk", "Fails with a null string.", "string junk(error error)", junk),
    SKILL_TYPED("free_count", "Free count", "How often free_string ran.", "int64 free_count()", free_count),
};

SKILL_PLUGIN_FULL("typed_errors", "1.0.0", "Typed skills that fail", skills, NULL, NULL, free_string)
