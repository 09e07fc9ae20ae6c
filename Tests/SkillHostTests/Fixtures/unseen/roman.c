/* Test fixture: a third-party-style plugin (Roman numerals) written without looking at the router. */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "skill_sdk.h"

static const int values[] = {1000, 900, 500, 400, 100, 90, 50, 40, 10, 9, 5, 4, 1};
static const char *const symbols[] = {"M", "CM", "D", "CD", "C", "XC", "L", "XL", "X", "IX", "V", "IV", "I"};

static void encode(int n, char *out) {
    out[0] = '\0';
    for (int i = 0; i < 13; i++)
        while (n >= values[i]) {
            strcat(out, symbols[i]);
            n -= values[i];
        }
}

static char *to_roman(int32_t number, skill_error *error) {
    if (number < 1 || number > 3999) {
        skill_fail(error, SKILL_ERR_INVALID_ARGS, "Roman numerals go from 1 to 3999");
        return NULL;
    }
    char *out = malloc(20);
    if (out) encode(number, out);
    return out;
}

static int32_t from_roman(const char *numeral, skill_error *error) {
    char upper[32], check[20];
    size_t n = strlen(numeral);
    int total = 0;
    if (n == 0 || n >= sizeof upper) goto bad;
    for (size_t i = 0; i <= n; i++) upper[i] = (char)toupper((unsigned char)numeral[i]);
    for (size_t i = 0; i < n;) {
        int matched = 0;
        for (int k = 0; k < 13 && !matched; k++) {
            size_t len = strlen(symbols[k]);
            if (strncmp(upper + i, symbols[k], len) == 0) {
                total += values[k];
                i += len;
                matched = 1;
            }
        }
        if (!matched || total > 3999) goto bad;
    }
    encode(total, check);
    if (strcmp(check, upper) != 0) goto bad; /* IIII, VX and the like */
    return total;
bad:
    skill_fail(error, SKILL_ERR_INVALID_ARGS, "not a Roman numeral (use I V X L C D M, e.g. MCMXCIV)");
    return 0;
}

static void release(char *s) { free(s); }

static const skill_descriptor skills[] = {
    SKILL_TYPED("to_roman", "To Roman", "Number to Roman numeral (1-3999).", "string to_roman(int32 number, error error)",
                to_roman),
    SKILL_TYPED("from_roman", "From Roman", "Roman numeral to number.", "int32 from_roman(string numeral, error error)",
                from_roman),
};
SKILL_PLUGIN_FULL("roman", "1.0.0", NULL, skills, NULL, NULL, release)
