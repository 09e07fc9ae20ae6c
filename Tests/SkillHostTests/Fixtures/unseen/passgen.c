/* Test fixture: a third-party-style plugin (password and passphrase generator) written without looking at the router. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "skill_json.h"
#include "skill_sdk.h"

/* A uniformly random number below bound (rejection sampling over getrandom). */
static int random_below(unsigned bound, unsigned *out) {
    unsigned limit = (unsigned)-1 - ((unsigned)-1 % bound), v;
    do {
        if (getrandom(&v, sizeof v, 0) != (ssize_t)sizeof v) return -1;
    } while (v >= limit);
    *out = v % bound;
    return 0;
}

static int generate_password(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    static const char lower[] = "abcdefghijklmnopqrstuvwxyz", upper[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
                      digits[] = "0123456789", symbols[] = "!#$%&*+-=?@^_~";
    char pool[100], password[129], out[300];
    double length = 16;
    int use_digits = 1, use_symbols = 1;
    (void)state;
    skill_json_get_number(args, "length", &length);
    skill_json_get_bool(args, "digits", &use_digits);
    skill_json_get_bool(args, "symbols", &use_symbols);
    snprintf(pool, sizeof pool, "%s%s%s%s", lower, upper, use_digits ? digits : "", use_symbols ? symbols : "");
    size_t size = strlen(pool);
    int n = (int)length;
    for (int i = 0; i < n; i++) {
        unsigned k;
        if (random_below((unsigned)size, &k) != 0) {
            api->set_error(call, "the system's random source failed");
            return SKILL_ERR_FAILED;
        }
        password[i] = pool[k];
    }
    password[n] = '\0';
    int len = snprintf(out, sizeof out, "{\"password\":\"%s\",\"entropy_bits\":%.0f}", password,
                       floor(n * log2((double)size)));
    api->set_result(call, out, (size_t)len);
    return SKILL_OK;
}

static const char *const words[64] = {
    "apple",  "brick",  "cloud",  "delta",  "ember",  "fable", "grape",  "harbor", "igloo",  "jelly",  "kettle",
    "lemon",  "maple",  "nectar", "orbit",  "pepper", "quill", "river",  "saddle", "tiger",  "umbra",  "velvet",
    "walnut", "xenon",  "yodel",  "zebra",  "anchor", "bison", "cactus", "dune",   "eagle",  "fjord",  "garnet",
    "hazel",  "ivory",  "jigsaw", "koala",  "lantern", "meadow", "nimbus", "otter", "pebble", "quartz", "raven",
    "sprout", "thistle", "unicorn", "violet", "willow", "yonder", "zephyr", "acorn", "bramble", "cobalt", "dahlia",
    "falcon", "glacier", "hollow", "inkwell", "juniper", "kindle", "lagoon", "marble", "nutmeg",
};

static int generate_passphrase(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    char separator[8] = "-", phrase[256] = "", quoted[400], out[500];
    double count = 4;
    (void)state;
    skill_json_get_number(args, "words", &count);
    if (skill_json_get_string(args, "separator", separator, sizeof separator) < 0) strcpy(separator, "-");
    for (int i = 0; i < (int)count; i++) {
        unsigned k;
        if (random_below(64, &k) != 0) {
            api->set_error(call, "the system's random source failed");
            return SKILL_ERR_FAILED;
        }
        if (i) strcat(phrase, separator);
        strcat(phrase, words[k]);
    }
    skill_json_write_string(quoted, sizeof quoted, phrase);
    int n = snprintf(out, sizeof out, "{\"passphrase\":%s,\"entropy_bits\":%d}", quoted, 6 * (int)count);
    api->set_result(call, out, (size_t)n);
    return SKILL_OK;
}

static char *password_strength(const char *password) {
    int lower = 0, upper = 0, digit = 0, other = 0;
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)password; *p; p++) {
        if ((*p & 0xC0) == 0x80) continue; /* count characters, not bytes */
        n++;
        if (islower(*p)) lower = 1;
        else if (isupper(*p)) upper = 1;
        else if (isdigit(*p)) digit = 1;
        else other = 1;
    }
    int pool = 26 * lower + 26 * upper + 10 * digit + 33 * other;
    double bits = pool ? n * log2((double)pool) : 0;
    const char *verdict = bits < 28 ? "very weak" : bits < 36 ? "weak" : bits < 60 ? "reasonable"
                        : bits < 128 ? "strong" : "very strong";
    char *out = malloc(64);
    if (out) snprintf(out, 64, "%s (about %.0f bits)", verdict, floor(bits));
    return out;
}

static void release(char *s) { free(s); }

static const skill_descriptor skills[] = {
    SKILL_JSON("generate_password", "Generate a password",
               "Generates a random password from letters and, unless turned off, digits and symbols.",
               "{\"type\":\"object\",\"properties\":{"
               "\"length\":{\"type\":\"integer\",\"minimum\":8,\"maximum\":128,\"default\":16,\"description\":"
               "\"number of characters\"},"
               "\"digits\":{\"type\":\"boolean\",\"default\":true,\"description\":\"include 0-9\"},"
               "\"symbols\":{\"type\":\"boolean\",\"default\":true,\"description\":\"include symbols such as ! # $\"}},"
               "\"additionalProperties\":false}",
               SKILL_RISK_READ_ONLY, 0, generate_password),
    SKILL_JSON("generate_passphrase", "Generate a passphrase",
               "Generates a memorable passphrase of random dictionary words joined by a separator "
               "(correct-horse-battery-staple style).",
               "{\"type\":\"object\",\"properties\":{"
               "\"words\":{\"type\":\"integer\",\"minimum\":3,\"maximum\":12,\"default\":4,\"description\":\"how many "
               "words\"},"
               "\"separator\":{\"type\":\"string\",\"maxLength\":3,\"default\":\"-\"}},"
               "\"additionalProperties\":false}",
               SKILL_RISK_READ_ONLY, 0, generate_passphrase),
    SKILL_TYPED("password_strength", "Password strength",
                "Rates how hard a password is to guess (very weak to very strong) from its length and character "
                "variety. The password is not stored or sent anywhere.",
                "string password_strength(string password)", password_strength),
};
SKILL_PLUGIN_FULL("passgen", "1.0.2", "Password & passphrase generator", skills, NULL, NULL, release)
