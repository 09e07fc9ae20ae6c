/* A typed skill's call: the host converted the arguments to the signature's C types (`typed` in protocol.md); here
   they are put in libffi's slots and the function is called. What the values mean — ranges, NUL characters, a
   result that is not finite or not UTF-8 — is the host's to judge (TypedFunction's rules). */
#define _GNU_SOURCE
#include "worker.h"

#include <ffi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAXIMUM_PARAMETERS = 17 }; /* 16 arguments and a function's skill_error (ABI 1.2) */

static ffi_type *type_of(char code) {
    switch (code) {
    case 'v': return &ffi_type_void;
    case 'b': return &ffi_type_uint8;
    case 'i': return &ffi_type_sint32;
    case 'l': return &ffi_type_sint64;
    case 'd': return &ffi_type_double;
    case 's': return &ffi_type_pointer;
    case 'e': return &ffi_type_pointer; /* the skill_error a function that reports errors takes last (ABI 1.2) */
    default: return NULL;
    }
}

static char *failure(const char *message) {
    char *copy = strdup(message);
    if (!copy) worker_fail("out of memory for a call's error");
    return copy;
}

/* The failure a function reported through its skill_error, as a copy of its message (at most 511 bytes, whatever
   it wrote); the host checks that the message is UTF-8. */
static char *reported_failure(skill_error *report, int *reported) {
    report->message[sizeof report->message - 1] = '\0';
    /* As in process (TypedCallError.reported): the caller's fault or the skill's, nothing else. */
    *reported = report->code == SKILL_ERR_INVALID_ARGS ? SKILL_ERR_INVALID_ARGS : SKILL_ERR_FAILED;
    if (!text_is_utf8(report->message, strlen(report->message)))
        return failure("the skill failed, and its message is not valid UTF-8");
    return failure(report->message);
}

char *typed_invoke(const skill_descriptor *d, const char *spec, size_t length, char *returns, uint64_t *returned,
                   int *reported) {
    const char *end = spec + length, *value, *value_end;
    char *return_code = json_member(spec, end, "returns", &value, &value_end) == 0 ? json_string(value, value_end)
                                                                                  : NULL;
    char *types = json_member(spec, end, "types", &value, &value_end) == 0 ? json_string(value, value_end) : NULL;
    int has_values = json_member(spec, end, "values", &value, &value_end) == 0 && *value == '[';
    size_t count = types ? strlen(types) : 0;
    char *error = NULL;
    if (!return_code || strlen(return_code) != 1 || !type_of(*return_code) || *return_code == 'e' || !types ||
        !has_values || count > MAXIMUM_PARAMETERS || (count == MAXIMUM_PARAMETERS && types[count - 1] != 'e')) {
        error = failure("the host sent a typed call the worker cannot read");
        goto done;
    }
    *returns = *return_code;
    ffi_type *argument_types[MAXIMUM_PARAMETERS];
    uint64_t slots[MAXIMUM_PARAMETERS] = {0};
    void *pointers[MAXIMUM_PARAMETERS];
    char *strings[MAXIMUM_PARAMETERS] = {0};
    skill_error report = {.struct_size = sizeof report};
    skill_error *report_pointer = &report;
    int reports = 0;
    const char *cursor = value, *p, *item_end;
    for (size_t i = 0; i < count && !error; i++) {
        argument_types[i] = type_of(types[i]);
        pointers[i] = &slots[i];
        long long number;
        if (!argument_types[i] || types[i] == 'v' || json_next_element(&cursor, value_end, &p, &item_end) != 1 ||
            (types[i] == 'e' && i + 1 != count)) {
            error = failure("the host sent a typed call the worker cannot read");
        } else if (types[i] == 'e') {
            memcpy(&slots[i], &report_pointer, sizeof report_pointer);
            reports = 1;
        } else if (types[i] == 's') {
            strings[i] = json_string(p, item_end);
            if (!strings[i]) error = failure("the host sent a typed call the worker cannot read");
            memcpy(&slots[i], &strings[i], sizeof strings[i]);
        } else if (json_integer(p, item_end, &number) != 0) {
            error = failure("the host sent a typed call the worker cannot read");
        } else if (types[i] == 'b') {
            uint8_t flag = number != 0;
            memcpy(&slots[i], &flag, sizeof flag);
        } else if (types[i] == 'i') {
            int32_t narrow = (int32_t)number;
            memcpy(&slots[i], &narrow, sizeof narrow);
        } else { /* int64, and a double as its bits */
            memcpy(&slots[i], &number, sizeof number);
        }
    }
    if (!error) {
        ffi_cif cif;
        ffi_status status =
            ffi_prep_cif(&cif, FFI_DEFAULT_ABI, (unsigned)count, type_of(*returns), count ? argument_types : NULL);
        if (status != FFI_OK) {
            char message[64];
            snprintf(message, sizeof message, "libffi could not prepare the call (status %d)", (int)status);
            error = failure(message);
        } else {
            /* libffi widens a return value narrower than a register to ffi_arg: 8 bytes here, as on the host. */
            ffi_arg result = 0;
            atomic_fetch_add(&worker.running, 1);
            ffi_call(&cif, FFI_FN(d->function), &result, count ? pointers : NULL);
            atomic_fetch_sub(&worker.running, 1);
            *returned = (uint64_t)result;
            if (reports && report.code != 0) error = reported_failure(&report, reported);
        }
    }
    for (size_t i = 0; i < count; i++) free(strings[i]);
done:
    free(return_code);
    free(types);
    return error;
}
