/* Test fixture: a third-party-style plugin (tips and bill splitting) written without looking at the router. */
#include <math.h>
#include <stdio.h>

#include "skill_json.h"
#include "skill_sdk.h"

static int tipcalc(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    double bill = 0, percent = 15, people = 1;
    int round_up = 0;
    char out[200];
    (void)state;
    skill_json_get_number(args, "bill", &bill);
    skill_json_get_number(args, "percent", &percent);
    skill_json_get_number(args, "people", &people);
    skill_json_get_bool(args, "round_up", &round_up);
    double tip = bill * percent / 100, total = bill + tip, each = total / people;
    if (round_up) {
        each = ceil(each);
        total = each * people;
        tip = total - bill;
    }
    int n = snprintf(out, sizeof out, "{\"tip\":%.2f,\"total\":%.2f,\"per_person\":%.2f}", round(tip * 100) / 100,
                     round(total * 100) / 100, round(each * 100) / 100);
    api->set_result(call, out, (size_t)n);
    return SKILL_OK;
}

static double splitbill(double total, int32_t people, skill_error *e) {
    if (people < 1) {
        skill_fail(e, SKILL_ERR_INVALID_ARGS, "people must be at least 1");
        return 0;
    }
    if (total < 0) {
        skill_fail(e, SKILL_ERR_INVALID_ARGS, "total cannot be negative");
        return 0;
    }
    return ceil(total / people * 100) / 100;
}

static const skill_descriptor skills[] = {
    SKILL_JSON("tipcalc", "Tip calculator",
               "tip for a restaurant bill + total, optionally split between people",
               "{\"type\":\"object\",\"properties\":{"
               "\"bill\":{\"type\":\"number\",\"minimum\":0},"
               "\"percent\":{\"type\":\"number\",\"minimum\":0,\"maximum\":100,\"default\":15},"
               "\"people\":{\"type\":\"integer\",\"minimum\":1,\"default\":1},"
               "\"round_up\":{\"type\":\"boolean\",\"default\":false,\"description\":\"round each share up to a whole "
               "amount\"}},"
               "\"required\":[\"bill\"]}",
               SKILL_RISK_READ_ONLY, SKILL_IDEMPOTENT, tipcalc),
    SKILL_TYPED("splitbill", "Split a bill", "split a total evenly, no tip (each share rounded up to the cent)",
                "double splitbill(double total, int32 people, error e)", splitbill),
};
SKILL_PLUGIN("tipjar", "0.1.0", "tips", skills)
