/* The worker's text: a growing byte buffer that writes JSON, and a bounded reader of the few JSON shapes the host
   sends (a JSON-RPC request's members, strings, integers). Nothing here allocates without a bound: the reader walks
   at most `depth_limit` levels and the buffer grows only by what is appended. [any thread, one buffer each] */
#ifndef SKILLHOST_WORKER_TEXT_H
#define SKILLHOST_WORKER_TEXT_H
#include <stddef.h>
#include <stdint.h>

struct text {
    char *bytes;
    size_t length, capacity;
    int failed; /* an allocation failed: the text is incomplete and must not be sent */
};

void text_free(struct text *t);
void text_bytes(struct text *t, const void *bytes, size_t length);
void text_cstring(struct text *t, const char *s);
void text_int(struct text *t, long long value);
void text_double(struct text *t, double value);
/* A JSON string literal of `length` bytes; bytes that are not UTF-8 become U+FFFD (as the host reads them). */
void text_json_string(struct text *t, const char *s, size_t length);
/* Whether the `length` bytes are UTF-8. */
int text_is_utf8(const char *bytes, size_t length);
/* A JSON string literal of `s`, or null when `s` is NULL; at most `limit` bytes are read of it. */
void text_json_cstring(struct text *t, const char *s, size_t limit);

/* The end of the JSON value starting at `p` (after leading white space), or NULL when it is not one within `end`
   or nests deeper than `depth_limit`. */
const char *json_skip(const char *p, const char *end, int depth_limit);
/* In the object starting at `p`: the value of member `key` (its first byte, after white space) and its end; 0 when
   found, -1 when absent or the text is not an object. */
int json_member(const char *p, const char *end, const char *key, const char **value, const char **value_end);
/* In the object starting at `p`, the values of `count` members at once (one walk over the object): each found
   key's value and end, NULL for a key that is absent; 0, or -1 when the text is not an object. */
int json_members(const char *p, const char *end, int count, const char *const *keys, const char **values,
                 const char **value_ends);
/* The next element of the array whose `[` is at `*cursor` (or after its previous element): 1 with the element's
   bounds (`*cursor` moves past it), 0 at the array's end, -1 when the text is not an array. Start with `*cursor` at
   the `[`. */
int json_next_element(const char **cursor, const char *end, const char **value, const char **value_end);
/* The string literal at `p` unescaped into a new NUL-terminated buffer (free it); NULL when it is not a string or
   holds a NUL. */
char *json_string(const char *p, const char *end);
/* The integer at `p`; 0 when it is one, -1 otherwise. */
int json_integer(const char *p, const char *end, long long *value);
#endif
