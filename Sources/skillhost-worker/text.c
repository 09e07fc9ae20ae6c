#include "text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void text_free(struct text *t) {
    free(t->bytes);
    *t = (struct text){0};
}

static int reserve(struct text *t, size_t more) {
    if (t->failed) return -1;
    if (t->length + more + 1 <= t->capacity) return 0;
    size_t capacity = t->capacity ? t->capacity : 256;
    while (capacity < t->length + more + 1) capacity *= 2;
    char *grown = realloc(t->bytes, capacity);
    if (!grown) {
        t->failed = 1;
        return -1;
    }
    t->bytes = grown;
    t->capacity = capacity;
    return 0;
}

void text_bytes(struct text *t, const void *bytes, size_t length) {
    if (reserve(t, length) != 0) return;
    if (length) memcpy(t->bytes + t->length, bytes, length);
    t->length += length;
    t->bytes[t->length] = 0;
}

void text_cstring(struct text *t, const char *s) { text_bytes(t, s, strlen(s)); }

void text_int(struct text *t, long long value) {
    char digits[32];
    int n = snprintf(digits, sizeof digits, "%lld", value);
    text_bytes(t, digits, (size_t)n);
}

void text_double(struct text *t, double value) {
    char digits[40];
    /* The shortest form that reads back the same; integers without a fraction. NaN and infinities are not JSON. */
    if (value != value || value > 1.7976931348623157e308 || value < -1.7976931348623157e308) {
        text_cstring(t, "null");
        return;
    }
    for (int precision = 15; precision <= 17; precision++) {
        snprintf(digits, sizeof digits, "%.*g", precision, value);
        if (strtod(digits, NULL) == value) break;
    }
    text_cstring(t, digits);
}

/* The length of the UTF-8 sequence at `s` (at most `left` bytes), 0 when it is not a valid one. */
static size_t utf8_length(const unsigned char *s, size_t left) {
    unsigned char c = s[0];
    size_t n;
    uint32_t code;
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) n = 2, code = c & 0x1F;
    else if (c >= 0xE0 && c <= 0xEF) n = 3, code = c & 0x0F;
    else if (c >= 0xF0 && c <= 0xF4) n = 4, code = c & 0x07;
    else return 0;
    if (left < n) return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        code = (code << 6) | (s[i] & 0x3F);
    }
    if (n == 3 && (code < 0x800 || (code >= 0xD800 && code <= 0xDFFF))) return 0;
    if (n == 4 && (code < 0x10000 || code > 0x10FFFF)) return 0;
    return n;
}

int text_is_utf8(const char *bytes, size_t length) {
    const unsigned char *u = (const unsigned char *)bytes;
    for (size_t i = 0; i < length;) {
        if (u[i] < 0x80) {
            i++;
            continue;
        }
        size_t n = utf8_length(u + i, length - i);
        if (!n) return 0;
        i += n;
    }
    return 1;
}

void text_json_string(struct text *t, const char *s, size_t length) {
    static const char hex[] = "0123456789abcdef";
    const unsigned char *u = (const unsigned char *)s;
    text_bytes(t, "\"", 1);
    size_t run = 0; /* bytes copied as they are, written in one piece */
    for (size_t i = 0; i < length;) {
        unsigned char c = u[i];
        size_t n = c >= 0x20 && c != '"' && c != '\\' ? utf8_length(u + i, length - i) : 0;
        if (n) {
            i += n;
            run += n;
            continue;
        }
        text_bytes(t, u + i - run, run);
        run = 0;
        if (c == '"') text_bytes(t, "\\\"", 2);
        else if (c == '\\') text_bytes(t, "\\\\", 2);
        else if (c == '\n') text_bytes(t, "\\n", 2);
        else if (c == '\t') text_bytes(t, "\\t", 2);
        else if (c == '\r') text_bytes(t, "\\r", 2);
        else if (c < 0x20) {
            char escape[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            text_bytes(t, escape, 6);
        } else {
            text_bytes(t, "\xEF\xBF\xBD", 3); /* not UTF-8: U+FFFD, one per byte */
        }
        i += 1;
    }
    text_bytes(t, u + length - run, run);
    text_bytes(t, "\"", 1);
}

void text_json_cstring(struct text *t, const char *s, size_t limit) {
    if (!s) text_cstring(t, "null");
    else text_json_string(t, s, strnlen(s, limit));
}

// MARK: Reading

static const char *space(const char *p, const char *end) {
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
    return p;
}

static const char *skip_string(const char *p, const char *end) {
    if (p >= end || *p != '"') return NULL;
    for (p++; p < end; p++) {
        if (*p == '\\') {
            if (++p >= end) return NULL;
        } else if (*p == '"') {
            return p + 1;
        } else if ((unsigned char)*p < 0x20) {
            return NULL;
        }
    }
    return NULL;
}

const char *json_skip(const char *p, const char *end, int depth_limit) {
    p = space(p, end);
    if (p >= end) return NULL;
    switch (*p) {
    case '"': return skip_string(p, end);
    case '{':
    case '[': {
        if (depth_limit <= 0) return NULL;
        char close = *p == '{' ? '}' : ']';
        p = space(p + 1, end);
        if (p < end && *p == close) return p + 1;
        for (;;) {
            if (close == '}') {
                p = skip_string(space(p, end), end);
                if (!p) return NULL;
                p = space(p, end);
                if (p >= end || *p != ':') return NULL;
                p++;
            }
            p = json_skip(p, end, depth_limit - 1);
            if (!p) return NULL;
            p = space(p, end);
            if (p >= end) return NULL;
            if (*p == close) return p + 1;
            if (*p != ',') return NULL;
            p++;
        }
    }
    default: {
        const char *start = p;
        while (p < end && (strchr("+-.0123456789eE", *p) || (*p >= 'a' && *p <= 'z'))) p++;
        size_t n = (size_t)(p - start);
        if (n == 0) return NULL;
        if (*start == 't' && (n != 4 || memcmp(start, "true", 4))) return NULL;
        if (*start == 'f' && (n != 5 || memcmp(start, "false", 5))) return NULL;
        if (*start == 'n' && (n != 4 || memcmp(start, "null", 4))) return NULL;
        return p;
    }
    }
}

int json_members(const char *p, const char *end, int count, const char *const *keys, const char **values,
                 const char **value_ends) {
    int found = 0;
    for (int i = 0; i < count; i++) values[i] = value_ends[i] = NULL;
    p = space(p, end);
    if (p >= end || *p != '{') return -1;
    p = space(p + 1, end);
    if (p < end && *p == '}') return 0;
    for (;;) {
        const char *name = space(p, end);
        const char *name_end = skip_string(name, end);
        if (!name_end) return -1;
        p = space(name_end, end);
        if (p >= end || *p != ':') return -1;
        const char *start = space(p + 1, end);
        const char *stop = json_skip(start, end, 600);
        if (!stop) return -1;
        /* Keys the host writes carry no escapes: compare the literal's bytes. The first of a repeated key counts;
           the walk ends once every key is found. */
        size_t name_length = (size_t)(name_end - name) - 2;
        for (int i = 0; i < count; i++) {
            if (!values[i] && strlen(keys[i]) == name_length && memcmp(name + 1, keys[i], name_length) == 0) {
                values[i] = start;
                value_ends[i] = stop;
                if (++found == count) return 0;
            }
        }
        p = space(stop, end);
        if (p < end && *p == '}') return 0;
        if (p >= end || *p != ',') return -1;
        p++;
    }
}

int json_member(const char *p, const char *end, const char *key, const char **value, const char **value_end) {
    return json_members(p, end, 1, &key, value, value_end) == 0 && *value ? 0 : -1;
}

int json_next_element(const char **cursor, const char *end, const char **value, const char **value_end) {
    const char *p = space(*cursor, end);
    if (p >= end) return -1;
    if (*p == '[') {
        p = space(p + 1, end);
        if (p < end && *p == ']') {
            *cursor = p;
            return 0;
        }
    } else if (*p == ',') {
        p = space(p + 1, end);
    } else {
        return *p == ']' ? 0 : -1;
    }
    const char *stop = json_skip(p, end, 600);
    if (!stop) return -1;
    *value = p;
    *value_end = stop;
    *cursor = stop;
    return 1;
}

static int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static long read_hex4(const char *p, const char *end) {
    if (end - p < 4) return -1;
    long value = 0;
    for (int i = 0; i < 4; i++) {
        int h = hex_value(p[i]);
        if (h < 0) return -1;
        value = value * 16 + h;
    }
    return value;
}

char *json_string(const char *p, const char *end) {
    const char *stop = skip_string(p, end);
    if (!stop) return NULL;
    char *out = malloc((size_t)(stop - p));
    if (!out) return NULL;
    size_t n = 0;
    for (p++; p < stop - 1; p++) {
        if (*p != '\\') {
            out[n++] = *p;
            continue;
        }
        p++;
        long code;
        switch (*p) {
        case 'n': out[n++] = '\n'; continue;
        case 't': out[n++] = '\t'; continue;
        case 'r': out[n++] = '\r'; continue;
        case 'b': out[n++] = '\b'; continue;
        case 'f': out[n++] = '\f'; continue;
        case 'u':
            code = read_hex4(p + 1, stop);
            if (code < 0) goto broken;
            p += 4;
            if (code >= 0xD800 && code <= 0xDBFF && p + 6 < stop && p[1] == '\\' && p[2] == 'u') {
                long low = read_hex4(p + 3, stop);
                if (low >= 0xDC00 && low <= 0xDFFF) {
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
                    p += 6;
                }
            }
            if (code == 0) goto broken;
            if (code >= 0xD800 && code <= 0xDFFF) code = 0xFFFD;
            if (code < 0x80) out[n++] = (char)code;
            else if (code < 0x800) out[n++] = (char)(0xC0 | (code >> 6)), out[n++] = (char)(0x80 | (code & 63));
            else if (code < 0x10000)
                out[n++] = (char)(0xE0 | (code >> 12)), out[n++] = (char)(0x80 | ((code >> 6) & 63)),
                out[n++] = (char)(0x80 | (code & 63));
            else
                out[n++] = (char)(0xF0 | (code >> 18)), out[n++] = (char)(0x80 | ((code >> 12) & 63)),
                out[n++] = (char)(0x80 | ((code >> 6) & 63)), out[n++] = (char)(0x80 | (code & 63));
            continue;
        default: out[n++] = *p; continue; /* \" \\ \/ */
        }
    }
    out[n] = 0;
    return out;
broken:
    free(out);
    return NULL;
}

int json_integer(const char *p, const char *end, long long *value) {
    char digits[24];
    size_t n = (size_t)(end - p);
    if (n == 0 || n >= sizeof digits) return -1;
    memcpy(digits, p, n);
    digits[n] = 0;
    char *stop;
    long long v = strtoll(digits, &stop, 10);
    if (*stop) return -1;
    *value = v;
    return 0;
}
