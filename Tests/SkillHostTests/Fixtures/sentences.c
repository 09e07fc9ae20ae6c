/* Test fixture: a third-party plugin whose results read as sentences (ABI 1.3): a typed skill and a JSON skill that
 * declare how, and one whose result schema names its members instead. */
#include "skill_sdk.h"
#include "skill_json.h"

#include <stdio.h>

static double rect_area(double width, double height) { return width * height; }

/* {"count": 2, "mean": (a+b)/2} */
static int pair_stats(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    (void)state;
    double a = 0, b = 0;
    skill_json_get_number(args, "a", &a);
    skill_json_get_number(args, "b", &b);
    char text[96];
    int length = snprintf(text, sizeof text, "{\"count\":2,\"mean\":%g}", (a + b) / 2);
    api->set_result(call, text, (size_t)length);
    return SKILL_OK;
}

#define PAIR "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"number\"},\"b\":{\"type\":\"number\"}}," \
             "\"required\":[\"a\",\"b\"],\"additionalProperties\":false}"
#define STATS "{\"type\":\"object\",\"properties\":{\"count\":{\"type\":\"integer\",\"title\":\"Count\"}," \
              "\"mean\":{\"type\":\"number\",\"title\":\"Mean\"}}}"

static const skill_descriptor skills[] = {
    SKILL_TYPED_ANSWER("rect_area", "Rectangle area", "Area of a rectangle from its width and height.",
                       "double rect_area(double width, double height)", rect_area,
                       "A {args.width} by {args.height} rectangle has an area of {result}."),
    SKILL_JSON_ANSWER("pair_mean", "Mean of a pair", "Mean of two numbers a and b.", PAIR, STATS,
                      "The mean of {args.a} and {args.b} is {mean}.", SKILL_RISK_READ_ONLY, SKILL_IDEMPOTENT,
                      pair_stats),
    SKILL_JSON_OUTPUT("pair_stats", "Pair statistics", "Count and mean of two numbers a and b.", PAIR, STATS,
                      SKILL_RISK_READ_ONLY, SKILL_IDEMPOTENT, pair_stats),
};

SKILL_PLUGIN("sentences", "1.0.0", "Results as sentences", skills)
