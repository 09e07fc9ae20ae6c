/* Test fixture: typed skills of every supported type, called through libffi. */
#include "skill_sdk.h"

#include <ctype.h>
#include <math.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static atomic_long frees;

static double add(double a, double b) { return a + b; }
static int32_t negate32(int32_t x) { return -x; }
static int64_t twice64(int64_t x) { return x * 2; }
static bool invert(bool b) { return !b; }
static double not_a_number(void) { return NAN; }
static void nothing(void) {}
static double mixed(int32_t a, double b, int64_t c, bool d, const char *e) {
    return (double)a + b + (double)c + (d ? 1000.0 : 0.0) + (double)strlen(e);
}
static char *upper(const char *s) {
    size_t n = strlen(s), i;
    char *out = (char *)malloc(n + 1);
    for (i = 0; i <= n; i++) out[i] = (char)toupper((unsigned char)s[i]);
    return out;
}
static int64_t free_count(void) { return atomic_load(&frees); }
static void free_string(char *s) {
    atomic_fetch_add(&frees, 1);
    free(s);
}

static const skill_descriptor skills[] = {
    SKILL_TYPED("add", "Add", "Adds two numbers.", "double add(double a, double b)", add),
    SKILL_TYPED("negate32", "Negate", "Negates an int32.", "int32 negate32(int32 x)", negate32),
    SKILL_TYPED("twice64", "Twice", "Doubles an int64.", "int64 twice64(int64 x)", twice64),
    SKILL_TYPED("invert", "Invert", "Negates a boolean.", "bool invert(bool b)", invert),
    SKILL_TYPED("not_a_number", "NaN", "Returns NaN.", "double not_a_number(void)", not_a_number),
    SKILL_TYPED("nothing", "Nothing", "Returns nothing.", "void nothing()", nothing),
    SKILL_TYPED("mixed", "Mixed", "Every parameter type at once.",
                "double mixed(int32 a, double b, int64 c, bool d, string e)", mixed),
    SKILL_TYPED("upper", "Upper", "Uppercases ASCII.", "string upper(string s)", upper),
    SKILL_TYPED("free_count", "Free count", "How often free_string ran.", "int64 free_count()", free_count),
};

SKILL_PLUGIN_FULL("typed", "1.0.0", "Typed test skills", skills, NULL, NULL, free_string)
