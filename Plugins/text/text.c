/*
 * text — JSON skills over plain text: counts (words, characters, lines, sentences) and an extractive summary
 * (the first N sentences). Shows reading arguments with skill_json.h, building a JSON result, and polling
 * is_cancelled / reporting progress on long inputs.
 */
#include "skill_json.h"
#include "skill_sdk.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

/* Reads the "text" argument into a new buffer; on failure sets the error and returns NULL. */
static char *read_text(const skill_call_api *api, skill_call *call, const char *args_json) {
    size_t capacity = strlen(args_json) + 1; /* decoding never makes a string longer than its JSON form */
    char *text = (char *)malloc(capacity);
    if (!text) {
        api->set_error(call, "out of memory");
        return NULL;
    }
    if (skill_json_get_string(args_json, "text", text, capacity) < 0) {
        free(text);
        api->set_error(call, "$.text: expected a string");
        return NULL;
    }
    return text;
}

/* Length of the sentence starting at p: up to and including ., ! or ? followed by whitespace or the end. */
static size_t sentence_length(const char *p) {
    const char *s = p;
    while (*s) {
        if ((*s == '.' || *s == '!' || *s == '?') && (s[1] == '\0' || is_space(s[1]))) {
            while (s[1] == '.' || s[1] == '!' || s[1] == '?') s++;
            return (size_t)(s - p) + 1;
        }
        s++;
    }
    return (size_t)(s - p);
}

static int text_stats(void *state, const skill_call_api *api, skill_call *call, const char *args_json) {
    char *text = read_text(api, call, args_json);
    size_t words = 0, characters = 0, lines = 0, sentences = 0, i;
    int in_word = 0;
    const char *p;
    char result[256];
    int length;
    (void)state;
    if (!text) return SKILL_ERR_INVALID_ARGS;
    for (i = 0; text[i]; i++) {
        if ((i & 0xFFFF) == 0 && api->is_cancelled(call)) {
            free(text);
            return SKILL_ERR_CANCELLED;
        }
        if (((unsigned char)text[i] & 0xC0) != 0x80) characters++;
        if (text[i] == '\n') lines++;
        if (is_space(text[i])) in_word = 0;
        else if (!in_word) {
            in_word = 1;
            words++;
        }
    }
    if (i > 0 && text[i - 1] != '\n') lines++;
    for (p = text; *p;) {
        size_t n;
        while (is_space(*p)) p++;
        if (!*p) break;
        n = sentence_length(p);
        sentences++;
        p += n;
    }
    length = snprintf(result, sizeof result,
                      "{\"words\":%zu,\"characters\":%zu,\"lines\":%zu,\"sentences\":%zu}", words, characters, lines,
                      sentences);
    api->set_result(call, result, (size_t)length);
    free(text);
    return SKILL_OK;
}

static int text_summary(void *state, const skill_call_api *api, skill_call *call, const char *args_json) {
    char *text = read_text(api, call, args_json), *summary, *json;
    double wanted = 3;
    size_t count = 0, used = 0, total_sentences = 0, needed;
    const char *p;
    (void)state;
    if (!text) return SKILL_ERR_INVALID_ARGS;
    skill_json_get_number(args_json, "sentences", &wanted);
    summary = (char *)malloc(strlen(text) + 1);
    if (!summary) {
        free(text);
        api->set_error(call, "out of memory");
        return SKILL_ERR_FAILED;
    }
    for (p = text; *p;) {
        size_t n;
        while (is_space(*p)) p++;
        if (!*p) break;
        n = sentence_length(p);
        total_sentences++;
        if ((double)count < wanted) {
            if (used > 0) summary[used++] = ' ';
            memcpy(summary + used, p, n);
            used += n;
            count++;
            api->report_progress(call, (double)count, wanted, "collecting sentences");
        }
        p += n;
    }
    summary[used] = '\0';
    needed = skill_json_write_string(NULL, 0, summary);
    json = (char *)malloc(needed + 96);
    if (!json) {
        free(text);
        free(summary);
        api->set_error(call, "out of memory");
        return SKILL_ERR_FAILED;
    }
    {
        size_t n = (size_t)snprintf(json, 64, "{\"summary\":");
        n += skill_json_write_string(json + n, needed + 1, summary);
        n += (size_t)snprintf(json + n, 80, ",\"sentences\":%zu,\"of\":%zu}", count, total_sentences);
        api->set_result(call, json, n);
    }
    free(json);
    free(summary);
    free(text);
    return SKILL_OK;
}

static const skill_descriptor skills[] = {
    SKILL_JSON_ANSWER("text_stats", "Text statistics",
               "Counts the words, characters (Unicode code points), lines and sentences of a text.",
               "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\",\"maxLength\":1048576}},"
               "\"required\":[\"text\"],\"additionalProperties\":false}",
               "{\"type\":\"object\",\"properties\":{\"words\":{\"type\":\"integer\"},\"characters\":{\"type\":\"integer\"},"
               "\"lines\":{\"type\":\"integer\"},\"sentences\":{\"type\":\"integer\"}},"
               "\"required\":[\"words\",\"characters\",\"lines\",\"sentences\"]}",
               "{words|plural:word}, {characters|plural:character}, {lines|plural:line}, "
               "{sentences|plural:sentence}.", SKILL_RISK_READ_ONLY, SKILL_IDEMPOTENT, text_stats),
    SKILL_JSON_ANSWER("text_summary", "Summarise text",
               "Extractive summary: returns the first N sentences of a text (default 3), and how many it has.",
               "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\",\"maxLength\":1048576},"
               "\"sentences\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":100,\"default\":3}},"
               "\"required\":[\"text\"],\"additionalProperties\":false}",
               "{\"type\":\"object\",\"properties\":{\"summary\":{\"type\":\"string\"},\"sentences\":{\"type\":\"integer\"},"
               "\"of\":{\"type\":\"integer\"}},\"required\":[\"summary\",\"sentences\",\"of\"]}",
               "The first {sentences} of {of} sentences: {summary}", SKILL_RISK_READ_ONLY, SKILL_IDEMPOTENT, text_summary),
};

SKILL_PLUGIN("text", "1.0.0", "Word counts and extractive summaries", skills)
