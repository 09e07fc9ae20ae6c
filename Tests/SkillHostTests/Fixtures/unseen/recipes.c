/* Test fixture: a third-party-style plugin (recipe helpers) written without looking at the router. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "skill_json.h"
#include "skill_sdk.h"

/* Scale one ingredient of a recipe from the servings it was written for to the servings you want. */
static int scale_recipe(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    double quantity = 0, from = 0, to = 0;
    char unit[64] = "", unit_json[160], out[320];
    (void)state;
    skill_json_get_number(args, "quantity", &quantity);
    skill_json_get_number(args, "original_servings", &from);
    skill_json_get_number(args, "desired_servings", &to);
    if (skill_json_get_string(args, "unit", unit, sizeof unit) < 0) unit[0] = '\0';
    double scaled = quantity * to / from;
    scaled = round(scaled * 1000) / 1000;
    skill_json_write_string(unit_json, sizeof unit_json, unit);
    int n = snprintf(out, sizeof out, "{\"quantity\":%.10g,\"unit\":%s,\"factor\":%.10g}", scaled, unit_json, to / from);
    api->set_result(call, out, (size_t)n);
    return SKILL_OK;
}

static const struct { const char *name; double grams_per_cup; } densities[] = {
    {"flour", 120}, {"sugar", 200}, {"brown sugar", 220}, {"butter", 227}, {"rice", 185},
    {"oats", 90},   {"honey", 340}, {"milk", 245},        {"water", 240},  {"cocoa", 85},
};

static int cups_to_grams(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    char ingredient[32], out[160];
    double cups = 0;
    (void)state;
    if (skill_json_get_string(args, "ingredient", ingredient, sizeof ingredient) < 0) {
        api->set_error(call, "ingredient is missing");
        return SKILL_ERR_INVALID_ARGS;
    }
    skill_json_get_number(args, "cups", &cups);
    for (size_t i = 0; i < sizeof densities / sizeof densities[0]; i++) {
        if (strcmp(densities[i].name, ingredient) == 0) {
            double grams = round(cups * densities[i].grams_per_cup * 10) / 10;
            int n = snprintf(out, sizeof out, "{\"ingredient\":\"%s\",\"cups\":%.10g,\"grams\":%.10g}", ingredient, cups,
                             grams);
            api->set_result(call, out, (size_t)n);
            return SKILL_OK;
        }
    }
    api->set_error(call, "unknown ingredient; use flour, sugar, brown sugar, butter, rice, oats, honey, milk, water or cocoa");
    return SKILL_ERR_INVALID_ARGS;
}

static int oven_gas_mark(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    static const int celsius[] = {140, 150, 170, 180, 190, 200, 220, 230, 240};
    static const int fahrenheit[] = {275, 300, 325, 350, 375, 400, 425, 450, 475};
    double mark = 0;
    char out[120];
    (void)state;
    skill_json_get_number(args, "gas_mark", &mark);
    int m = (int)mark;
    if (m < 1 || m > 9) {
        api->set_error(call, "gas marks go from 1 to 9");
        return SKILL_ERR_INVALID_ARGS;
    }
    int n = snprintf(out, sizeof out, "{\"gas_mark\":%d,\"celsius\":%d,\"fahrenheit\":%d}", m, celsius[m - 1],
                     fahrenheit[m - 1]);
    api->set_result(call, out, (size_t)n);
    return SKILL_OK;
}

static const skill_descriptor skills[] = {
    SKILL_JSON("scale_recipe", "Scale a recipe ingredient",
               "Scales the quantity of one ingredient when you cook a recipe for a different number of servings than "
               "it was written for. Example: 300 g of pasta for 4 people becomes 450 g for 6 people. Call it once "
               "per ingredient.",
               "{\"type\":\"object\",\"properties\":{"
               "\"quantity\":{\"type\":\"number\",\"exclusiveMinimum\":0,\"description\":\"amount of the ingredient "
               "in the original recipe\"},"
               "\"unit\":{\"type\":\"string\",\"description\":\"unit of the quantity (g, cups, tbsp, eggs...), "
               "returned unchanged\"},"
               "\"original_servings\":{\"type\":\"integer\",\"minimum\":1,\"description\":\"how many servings the "
               "recipe makes as written\"},"
               "\"desired_servings\":{\"type\":\"integer\",\"minimum\":1,\"description\":\"how many servings you want "
               "to make\"}},"
               "\"required\":[\"quantity\",\"original_servings\",\"desired_servings\"],\"additionalProperties\":false}",
               SKILL_RISK_READ_ONLY, SKILL_IDEMPOTENT, scale_recipe),
    SKILL_JSON("cups_to_grams", "Cups to grams",
               "Converts US cups of a common baking ingredient to grams by weight (a cup of flour weighs less than a "
               "cup of sugar).",
               "{\"type\":\"object\",\"properties\":{"
               "\"ingredient\":{\"type\":\"string\",\"enum\":[\"flour\",\"sugar\",\"brown sugar\",\"butter\",\"rice\","
               "\"oats\",\"honey\",\"milk\",\"water\",\"cocoa\"]},"
               "\"cups\":{\"type\":\"number\",\"exclusiveMinimum\":0,\"description\":\"number of US cups, e.g. 0.5\"}},"
               "\"required\":[\"ingredient\",\"cups\"],\"additionalProperties\":false}",
               SKILL_RISK_READ_ONLY, SKILL_IDEMPOTENT, cups_to_grams),
    SKILL_JSON("oven_gas_mark", "Gas mark to oven temperature",
               "Tells the oven temperature in °C and °F for a British gas mark (1 to 9), as found in UK recipes.",
               "{\"type\":\"object\",\"properties\":{"
               "\"gas_mark\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":9}},"
               "\"required\":[\"gas_mark\"],\"additionalProperties\":false}",
               SKILL_RISK_READ_ONLY, SKILL_IDEMPOTENT, oven_gas_mark),
};
SKILL_PLUGIN("recipe-tools", "0.3.1", "Kitchen helpers: scale recipes, cups to grams, gas marks", skills)
