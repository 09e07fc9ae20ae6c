/* Test fixture: a third-party-style plugin (loan and mortgage maths) written without looking at the router. */
#include <math.h>
#include <stdio.h>

#include "skill_json.h"
#include "skill_sdk.h"

/* Payment per period of an amortising loan. */
static double payment(double principal, double annual_rate, double years, double per_year) {
    double n = years * per_year, r = annual_rate / 100.0 / per_year;
    return r == 0 ? principal / n : principal * r / (1 - pow(1 + r, -n));
}

static double cents(double x) { return round(x * 100) / 100; }

static int loan_payment(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    double principal = 0, rate = 0, years = 0, per_year = 12;
    char out[200];
    (void)state;
    skill_json_get_number(args, "principal", &principal);
    skill_json_get_number(args, "annual_rate", &rate);
    skill_json_get_number(args, "years", &years);
    skill_json_get_number(args, "payments_per_year", &per_year);
    double p = payment(principal, rate, years, per_year), total = p * years * per_year;
    int n = snprintf(out, sizeof out, "{\"payment\":%.2f,\"number_of_payments\":%.0f,\"total_paid\":%.2f,"
                     "\"total_interest\":%.2f}", cents(p), years * per_year, cents(total), cents(total - principal));
    api->set_result(call, out, (size_t)n);
    return SKILL_OK;
}

static int loan_balance(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    double principal = 0, rate = 0, years = 0, paid = 0;
    char out[160];
    (void)state;
    skill_json_get_number(args, "principal", &principal);
    skill_json_get_number(args, "annual_rate", &rate);
    skill_json_get_number(args, "years", &years);
    skill_json_get_number(args, "payments_made", &paid);
    if (paid > years * 12) {
        api->set_error(call, "payments_made is more than the number of monthly payments of the loan");
        return SKILL_ERR_INVALID_ARGS;
    }
    double p = payment(principal, rate, years, 12), r = rate / 100.0 / 12, balance;
    balance = r == 0 ? principal - p * paid : principal * pow(1 + r, paid) - p * (pow(1 + r, paid) - 1) / r;
    if (balance < 0) balance = 0;
    int n = snprintf(out, sizeof out, "{\"remaining_balance\":%.2f,\"monthly_payment\":%.2f}", cents(balance), cents(p));
    api->set_result(call, out, (size_t)n);
    return SKILL_OK;
}

static int loan_affordable(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    double monthly = 0, rate = 0, years = 0;
    char out[120];
    (void)state;
    skill_json_get_number(args, "monthly_payment", &monthly);
    skill_json_get_number(args, "annual_rate", &rate);
    skill_json_get_number(args, "years", &years);
    double n = years * 12, r = rate / 100.0 / 12;
    double principal = r == 0 ? monthly * n : monthly * (1 - pow(1 + r, -n)) / r;
    int len = snprintf(out, sizeof out, "{\"max_principal\":%.2f}", cents(principal));
    api->set_result(call, out, (size_t)len);
    return SKILL_OK;
}

#define RATE "\"annual_rate\":{\"type\":\"number\",\"minimum\":0,\"maximum\":100,\"description\":\"nominal yearly " \
             "interest rate in percent, e.g. 4.5 for 4.5%\"}"
#define YEARS "\"years\":{\"type\":\"number\",\"exclusiveMinimum\":0,\"maximum\":50,\"description\":\"term of the " \
              "loan in years\"}"

static const skill_descriptor skills[] = {
    SKILL_JSON("loan_payment", "Loan / mortgage payment",
               "Computes the fixed periodic repayment of an amortising loan or mortgage (monthly by default) from the "
               "amount borrowed, the yearly interest rate and the term, with the total paid and the total interest "
               "over the life of the loan.",
               "{\"type\":\"object\",\"properties\":{"
               "\"principal\":{\"type\":\"number\",\"exclusiveMinimum\":0,\"description\":\"amount borrowed\"},"
               RATE "," YEARS ","
               "\"payments_per_year\":{\"type\":\"integer\",\"enum\":[12,26,52],\"default\":12,\"description\":\"12 "
               "monthly, 26 fortnightly, 52 weekly\"}},"
               "\"required\":[\"principal\",\"annual_rate\",\"years\"],\"additionalProperties\":false}",
               SKILL_RISK_READ_ONLY, SKILL_IDEMPOTENT, loan_payment),
    SKILL_JSON("loan_balance", "Remaining loan balance",
               "How much is still owed on a monthly-repaid loan after a number of monthly payments have been made.",
               "{\"type\":\"object\",\"properties\":{"
               "\"principal\":{\"type\":\"number\",\"exclusiveMinimum\":0,\"description\":\"amount originally "
               "borrowed\"}," RATE "," YEARS ","
               "\"payments_made\":{\"type\":\"integer\",\"minimum\":0,\"description\":\"monthly payments made so "
               "far\"}},"
               "\"required\":[\"principal\",\"annual_rate\",\"years\",\"payments_made\"],\"additionalProperties\":false}",
               SKILL_RISK_READ_ONLY, SKILL_IDEMPOTENT, loan_balance),
    SKILL_JSON("loan_affordable", "How much can I borrow",
               "The largest loan you can take for a given monthly repayment, yearly interest rate and term in years.",
               "{\"type\":\"object\",\"properties\":{"
               "\"monthly_payment\":{\"type\":\"number\",\"exclusiveMinimum\":0,\"description\":\"what you can repay "
               "each month\"}," RATE "," YEARS "},"
               "\"required\":[\"monthly_payment\",\"annual_rate\",\"years\"],\"additionalProperties\":false}",
               SKILL_RISK_READ_ONLY, SKILL_IDEMPOTENT, loan_affordable),
};
SKILL_PLUGIN("loan-calc", "1.4.0", "Loan and mortgage calculator", skills)
