/*
 * units — typed skills only: plain C functions described by signatures; the host generates (or checks) the JSON
 * Schema, converts arguments exactly and calls them through libffi. No JSON code here at all.
 */
#include "skill_sdk.h"

#include <ctype.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static double celsius_to_fahrenheit(double celsius) { return celsius * 9.0 / 5.0 + 32.0; }
static double fahrenheit_to_celsius(double fahrenheit) { return (fahrenheit - 32.0) * 5.0 / 9.0; }

/* Kelvin of a temperature in unit "c", "f" or "k" (the schema's enum guarantees one of them). */
static double to_kelvin(double value, const char *unit) {
    switch (unit[0]) {
    case 'c': return value + 273.15;
    case 'f': return (value - 32.0) * 5.0 / 9.0 + 273.15;
    default: return value;
    }
}

static double convert_temperature(double value, const char *from, const char *to) {
    double kelvin = to_kelvin(value, from);
    if (kelvin < 0) return NAN; /* below absolute zero: the host reports "result is not a finite number" */
    switch (to[0]) {
    case 'c': return kelvin - 273.15;
    case 'f': return (kelvin - 273.15) * 9.0 / 5.0 + 32.0;
    default: return kelvin;
    }
}

typedef struct {
    const char *name;
    double factor; /* in base units (metres, kilograms) */
} unit;

static const unit lengths[] = {
    {"mm", 0.001}, {"cm", 0.01}, {"m", 1.0}, {"km", 1000.0},
    {"in", 0.0254}, {"ft", 0.3048}, {"yd", 0.9144}, {"mi", 1609.344},
};
static const unit masses[] = {
    {"mg", 1e-6}, {"g", 0.001}, {"kg", 1.0}, {"t", 1000.0}, {"oz", 0.028349523125}, {"lb", 0.45359237},
};

static double factor(const unit *units, size_t count, const char *name) {
    size_t i;
    for (i = 0; i < count; i++)
        if (strcmp(units[i].name, name) == 0) return units[i].factor;
    return NAN;
}

static double convert_length(double value, const char *from, const char *to) {
    size_t n = sizeof lengths / sizeof lengths[0];
    return value * factor(lengths, n, from) / factor(lengths, n, to);
}

static double convert_mass(double value, const char *from, const char *to) {
    size_t n = sizeof masses / sizeof masses[0];
    return value * factor(masses, n, from) / factor(masses, n, to);
}

/* -2^63 is outside the schema: gcd(-2^63, 0) = 2^63 does not fit an int64, and a typed skill cannot say so. */
#define GCD_INTEGER(name)                                                                                            \
    "\"" name "\":{\"type\":\"integer\",\"minimum\":-9223372036854775807,\"maximum\":9223372036854775807}"
#define GCD_SCHEMA                                                                                                   \
    "{\"type\":\"object\",\"properties\":{" GCD_INTEGER("a") "," GCD_INTEGER("b") "},\"required\":[\"a\",\"b\"]," \
    "\"additionalProperties\":false}"

static int64_t gcd(int64_t a, int64_t b) {
    /* Work on unsigned magnitudes so INT64_MIN does not overflow. */
    uint64_t x = a < 0 ? (uint64_t)0 - (uint64_t)a : (uint64_t)a;
    uint64_t y = b < 0 ? (uint64_t)0 - (uint64_t)b : (uint64_t)b;
    while (y != 0) {
        uint64_t t = x % y;
        x = y;
        y = t;
    }
    return (int64_t)x; /* at most 2^63 - 1: the schema keeps -2^63 out */
}

static bool is_prime(int64_t n) {
    int64_t d;
    if (n < 2) return false;
    if (n % 2 == 0) return n == 2;
    for (d = 3; d <= n / d; d += 2)
        if (n % d == 0) return false;
    return true;
}

/* Lowercase ASCII words joined by '-'; other characters separate words. Returned string is malloc'd. */
static char *slugify(const char *text) {
    size_t length = strlen(text), n = 0;
    char *out = (char *)malloc(length + 1);
    int pending_dash = 0;
    if (!out) return NULL;
    for (; *text; text++) {
        unsigned char c = (unsigned char)*text;
        if (isalnum(c) && c < 0x80) {
            if (pending_dash && n > 0) out[n++] = '-';
            pending_dash = 0;
            out[n++] = (char)tolower(c);
        } else {
            pending_dash = 1;
        }
    }
    out[n] = '\0';
    return out;
}

static void free_string(char *s) { free(s); }

#define TEMPERATURE_SCHEMA                                                                                         \
    "{\"type\":\"object\",\"properties\":{"                                                                        \
    "\"value\":{\"type\":\"number\",\"description\":\"the temperature\"},"                                        \
    "\"from\":{\"type\":\"string\",\"enum\":[\"c\",\"f\",\"k\"],\"description\":\"unit of value\"},"              \
    "\"to\":{\"type\":\"string\",\"enum\":[\"c\",\"f\",\"k\"],\"description\":\"unit of the result\"}},"          \
    "\"required\":[\"value\",\"from\",\"to\"],\"additionalProperties\":false}"

#define LENGTH_UNITS "[\"mm\",\"cm\",\"m\",\"km\",\"in\",\"ft\",\"yd\",\"mi\"]"
#define MASS_UNITS "[\"mg\",\"g\",\"kg\",\"t\",\"oz\",\"lb\"]"
#define CONVERSION_SCHEMA(units)                                                                                   \
    "{\"type\":\"object\",\"properties\":{\"value\":{\"type\":\"number\"},"                                       \
    "\"from\":{\"type\":\"string\",\"enum\":" units "},\"to\":{\"type\":\"string\",\"enum\":" units "}},"          \
    "\"required\":[\"value\",\"from\",\"to\"],\"additionalProperties\":false}"

static const skill_descriptor skills[] = {
    SKILL_TYPED_ANSWER("celsius_to_fahrenheit", "Celsius to Fahrenheit", "Converts a temperature from °C to °F.",
                       "double celsius_to_fahrenheit(double celsius)", celsius_to_fahrenheit,
                       "{args.celsius} °C = {result} °F"),
    SKILL_TYPED_ANSWER("fahrenheit_to_celsius", "Fahrenheit to Celsius", "Converts a temperature from °F to °C.",
                       "double fahrenheit_to_celsius(double fahrenheit)", fahrenheit_to_celsius,
                       "{args.fahrenheit} °F = {result} °C"),
    SKILL_TYPED_SCHEMA("convert_temperature", "Convert temperature",
                       "Converts a temperature between Celsius (c), Fahrenheit (f) and Kelvin (k).",
                       TEMPERATURE_SCHEMA, "double convert_temperature(double value, string from, string to)",
                       convert_temperature),
    SKILL_TYPED_SCHEMA("convert_length", "Convert length",
                       "Converts a length between mm, cm, m, km, in, ft, yd and mi.", CONVERSION_SCHEMA(LENGTH_UNITS),
                       "double convert_length(double value, string from, string to)", convert_length),
    SKILL_TYPED_SCHEMA("convert_mass", "Convert mass", "Converts a mass between mg, g, kg, t (tonnes), oz and lb.",
                       CONVERSION_SCHEMA(MASS_UNITS), "double convert_mass(double value, string from, string to)",
                       convert_mass),
    SKILL_TYPED_SCHEMA("gcd", "Greatest common divisor", "Greatest common divisor of two integers.", GCD_SCHEMA,
                       "int64 gcd(int64 a, int64 b)", gcd),
    SKILL_TYPED_ANSWER("is_prime", "Is prime", "Tells whether an integer is a prime number.", "bool is_prime(int64 n)",
                       is_prime, "Is {args.n} prime: {result}."),
    SKILL_TYPED("slugify", "Slugify", "Turns text into a URL slug: lowercase ASCII words joined by '-'.",
                "string slugify(string text)", slugify),
};

SKILL_PLUGIN_FULL("units", "1.0.0", "Unit conversions and small integer helpers", skills, NULL, NULL, free_string)
