/*
 * skill_json.h — optional, header-only helpers for C plugins that read their arguments from JSON and write JSON
 * strings. The host has already validated the arguments against the skill's input_schema, so these helpers only
 * look up top-level members of an object; they never allocate.
 *
 * All functions are [thread-safe] (pure functions of their arguments). Strings are UTF-8.
 */
#ifndef SKILL_JSON_H
#define SKILL_JSON_H

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Result codes of the getters (the getters return >= 0 on success). */
enum { SKILL_JSON_MISSING = -1, SKILL_JSON_WRONG_TYPE = -2, SKILL_JSON_TOO_SMALL = -3, SKILL_JSON_MALFORMED = -4 };

static inline const char *skill_json__ws(const char *p) {
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
    return p;
}

/* Skips one string starting at the opening quote; returns the position after the closing quote or NULL. */
static inline const char *skill_json__skip_string(const char *p) {
    for (p++; *p; p++) {
        if (*p == '\\') {
            if (!*++p) return NULL;
        } else if (*p == '"') {
            return p + 1;
        }
    }
    return NULL;
}

/* Skips one value of any type; returns the position after it or NULL. */
static inline const char *skill_json__skip_value(const char *p) {
    int depth = 0;
    for (;;) {
        p = skill_json__ws(p);
        if (*p == '"') {
            p = skill_json__skip_string(p);
            if (!p) return NULL;
        } else if (*p == '{' || *p == '[') {
            depth++;
            p++;
            continue;
        } else if (*p == '}' || *p == ']') {
            if (--depth < 0) return NULL;
            p++;
        } else if (*p == ',' || *p == ':') {
            if (depth == 0) return NULL;
            p++;
            continue;
        } else if (*p == '\0') {
            return NULL;
        } else {
            while (*p && strchr(",:}] \t\r\n", *p) == NULL) p++;
        }
        if (depth == 0) return p;
    }
}

/* Finds the value of top-level member `key` in the object `json`; returns a pointer to it or NULL. */
static inline const char *skill_json_find(const char *json, const char *key) {
    const char *p = skill_json__ws(json);
    size_t key_length = strlen(key);
    if (*p++ != '{') return NULL;
    for (;;) {
        const char *name, *end;
        p = skill_json__ws(p);
        if (*p != '"') return NULL;
        name = p + 1;
        end = skill_json__skip_string(p);
        if (!end) return NULL;
        p = skill_json__ws(end);
        if (*p++ != ':') return NULL;
        p = skill_json__ws(p);
        if ((size_t)(end - 1 - name) == key_length && memcmp(name, key, key_length) == 0) return p;
        p = skill_json__skip_value(p);
        if (!p) return NULL;
        p = skill_json__ws(p);
        if (*p++ != ',') return NULL;
    }
}

static inline int skill_json__hex(const char *p, unsigned *out) {
    unsigned v = 0;
    int i;
    for (i = 0; i < 4; i++) {
        char c = p[i];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (unsigned)(c - 'A' + 10);
        else return 0;
    }
    *out = v;
    return 1;
}

/**
 * Copies the string member `key` into out (capacity bytes, always NUL-terminated), decoding escapes.
 * Returns the decoded length in bytes, or SKILL_JSON_MISSING / _WRONG_TYPE / _TOO_SMALL / _MALFORMED.
 */
static inline int skill_json_get_string(const char *json, const char *key, char *out, size_t capacity) {
    const char *p = skill_json_find(json, key);
    size_t n = 0;
    if (!p) return SKILL_JSON_MISSING;
    if (*p != '"') return SKILL_JSON_WRONG_TYPE;
    if (capacity == 0) return SKILL_JSON_TOO_SMALL;
    for (p++; *p != '"'; p++) {
        char utf8[4];
        size_t len = 1;
        if (*p == '\0') return SKILL_JSON_MALFORMED;
        utf8[0] = *p;
        if (*p == '\\') {
            p++;
            switch (*p) {
            case 'n': utf8[0] = '\n'; break;
            case 't': utf8[0] = '\t'; break;
            case 'r': utf8[0] = '\r'; break;
            case 'b': utf8[0] = '\b'; break;
            case 'f': utf8[0] = '\f'; break;
            case '"': case '\\': case '/': utf8[0] = *p; break;
            case 'u': {
                unsigned cp, low;
                if (!skill_json__hex(p + 1, &cp)) return SKILL_JSON_MALFORMED;
                p += 4;
                if (cp >= 0xD800 && cp <= 0xDBFF) {
                    if (p[1] != '\\' || p[2] != 'u' || !skill_json__hex(p + 3, &low) || low < 0xDC00 || low > 0xDFFF)
                        return SKILL_JSON_MALFORMED;
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                    p += 6;
                }
                if (cp < 0x80) { utf8[0] = (char)cp; }
                else if (cp < 0x800) { utf8[0] = (char)(0xC0 | (cp >> 6)); utf8[1] = (char)(0x80 | (cp & 0x3F)); len = 2; }
                else if (cp < 0x10000) {
                    utf8[0] = (char)(0xE0 | (cp >> 12)); utf8[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
                    utf8[2] = (char)(0x80 | (cp & 0x3F)); len = 3;
                } else {
                    utf8[0] = (char)(0xF0 | (cp >> 18)); utf8[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
                    utf8[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); utf8[3] = (char)(0x80 | (cp & 0x3F)); len = 4;
                }
                break;
            }
            default: return SKILL_JSON_MALFORMED;
            }
        }
        if (n + len >= capacity) return SKILL_JSON_TOO_SMALL;
        memcpy(out + n, utf8, len);
        n += len;
    }
    out[n] = '\0';
    return (int)n;
}

/** Reads the number member `key` into *out. Returns 0, or SKILL_JSON_MISSING / _WRONG_TYPE. */
static inline int skill_json_get_number(const char *json, const char *key, double *out) {
    const char *p = skill_json_find(json, key);
    char *end;
    if (!p) return SKILL_JSON_MISSING;
    if (*p != '-' && (*p < '0' || *p > '9')) return SKILL_JSON_WRONG_TYPE;
    *out = strtod(p, &end);
    return end == p ? SKILL_JSON_WRONG_TYPE : 0;
}

/** Reads the boolean member `key` into *out (0 or 1). Returns 0, or SKILL_JSON_MISSING / _WRONG_TYPE. */
static inline int skill_json_get_bool(const char *json, const char *key, int *out) {
    const char *p = skill_json_find(json, key);
    if (!p) return SKILL_JSON_MISSING;
    if (strncmp(p, "true", 4) == 0) { *out = 1; return 0; }
    if (strncmp(p, "false", 5) == 0) { *out = 0; return 0; }
    return SKILL_JSON_WRONG_TYPE;
}

/**
 * Writes s as a quoted JSON string into out (capacity bytes, NUL-terminated when it fits).
 * Returns the length the full encoding needs (excluding the NUL), like snprintf: compare it with capacity.
 */
static inline size_t skill_json_write_string(char *out, size_t capacity, const char *s) {
    static const char hex[] = "0123456789abcdef";
    size_t n = 0;
#define SKILL_JSON__PUT(c) do { if (n + 1 < capacity) out[n] = (c); n++; } while (0)
    SKILL_JSON__PUT('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') { SKILL_JSON__PUT('\\'); SKILL_JSON__PUT((char)c); }
        else if (c == '\n') { SKILL_JSON__PUT('\\'); SKILL_JSON__PUT('n'); }
        else if (c == '\t') { SKILL_JSON__PUT('\\'); SKILL_JSON__PUT('t'); }
        else if (c == '\r') { SKILL_JSON__PUT('\\'); SKILL_JSON__PUT('r'); }
        else if (c < 0x20) {
            SKILL_JSON__PUT('\\'); SKILL_JSON__PUT('u'); SKILL_JSON__PUT('0'); SKILL_JSON__PUT('0');
            SKILL_JSON__PUT(hex[c >> 4]); SKILL_JSON__PUT(hex[c & 15]);
        } else SKILL_JSON__PUT((char)c);
    }
    SKILL_JSON__PUT('"');
#undef SKILL_JSON__PUT
    if (capacity > 0) out[n < capacity ? n : capacity - 1] = '\0';
    return n;
}

#ifdef __cplusplus
}
#endif

#endif /* SKILL_JSON_H */
