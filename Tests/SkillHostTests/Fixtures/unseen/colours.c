/* Test fixture: a third-party-style plugin (colour codes) written without looking at the router. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "skill_sdk.h"

static int parse_hex(const char *text, int rgb[3]) {
    char digits[7];
    size_t n;
    if (*text == '#') text++;
    n = strlen(text);
    if (n == 3) {
        for (int i = 0; i < 3; i++) digits[2 * i] = digits[2 * i + 1] = text[i];
    } else if (n == 6) {
        memcpy(digits, text, 6);
    } else {
        return -1;
    }
    digits[6] = '\0';
    for (int i = 0; i < 6; i++)
        if (!isxdigit((unsigned char)digits[i])) return -1;
    long v = strtol(digits, NULL, 16);
    rgb[0] = (int)((v >> 16) & 255);
    rgb[1] = (int)((v >> 8) & 255);
    rgb[2] = (int)(v & 255);
    return 0;
}

static char *hex2rgb(const char *hex, skill_error *err) {
    int rgb[3];
    if (parse_hex(hex, rgb) != 0) {
        skill_fail(err, SKILL_ERR_INVALID_ARGS, "not a hex colour; write it like #ff8800 or #f80");
        return NULL;
    }
    char *out = malloc(32);
    if (out) snprintf(out, 32, "rgb(%d, %d, %d)", rgb[0], rgb[1], rgb[2]);
    return out;
}

static char *rgb2hex(int32_t r, int32_t g, int32_t b) {
    char *out = malloc(8);
    if (out) snprintf(out, 8, "#%02x%02x%02x", (unsigned)r & 255u, (unsigned)g & 255u, (unsigned)b & 255u);
    return out;
}

static double channel(int c) {
    double s = c / 255.0;
    return s <= 0.03928 ? s / 12.92 : pow((s + 0.055) / 1.055, 2.4);
}

static double luminance(const int rgb[3]) {
    return 0.2126 * channel(rgb[0]) + 0.7152 * channel(rgb[1]) + 0.0722 * channel(rgb[2]);
}

static double contrast_ratio(const char *foreground, const char *background, skill_error *err) {
    int a[3], b[3];
    if (parse_hex(foreground, a) != 0 || parse_hex(background, b) != 0) {
        skill_fail(err, SKILL_ERR_INVALID_ARGS, "both colours must be hex codes like #336699");
        return 0;
    }
    double la = luminance(a), lb = luminance(b);
    double hi = la > lb ? la : lb, lo = la > lb ? lb : la;
    return round((hi + 0.05) / (lo + 0.05) * 100) / 100;
}

static void free_string(char *s) { free(s); }

static const skill_descriptor skills[] = {
    SKILL_TYPED("hex2rgb", "Hex to RGB", "Hex color code -> rgb(r, g, b).", "string hex2rgb(string hex, error err)",
                hex2rgb),
    SKILL_TYPED_SCHEMA("rgb2hex", "RGB to hex", "RGB values (0-255) -> hex color code.",
                       "{\"type\":\"object\",\"properties\":{"
                       "\"r\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":255,\"description\":\"red\"},"
                       "\"g\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":255,\"description\":\"green\"},"
                       "\"b\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":255,\"description\":\"blue\"}},"
                       "\"required\":[\"r\",\"g\",\"b\"],\"additionalProperties\":false}",
                       "string rgb2hex(int32 r, int32 g, int32 b)", rgb2hex),
    SKILL_TYPED("contrast_ratio", "Contrast ratio",
                "WCAG contrast ratio (1 to 21) of two hex colors; 4.5 or more passes AA for normal text.",
                "double contrast_ratio(string foreground, string background, error err)", contrast_ratio),
};
SKILL_PLUGIN_FULL("colorkit", "2.0.0", "color code utils", skills, NULL, NULL, free_string)
