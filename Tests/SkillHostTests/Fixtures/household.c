/* Test fixture: a third-party plugin the offline router has never seen — a greeting, a to-do list with
 * mutating and destructive skills, and a few computations — to check that routing is driven by schemas and
 * descriptions, not by the bundled plugins' phrasings. */
#include "skill_sdk.h"

#include <stdio.h>
#include <string.h>

static int echo(void *state, const skill_call_api *api, skill_call *call, const char *args) {
    (void)state;
    api->set_result(call, args, strlen(args));
    return SKILL_OK;
}

static double bmi(double weight_kg, double height_m) { return weight_kg / (height_m * height_m); }

#define OBJECT(properties, required) \
    "{\"type\":\"object\",\"properties\":{" properties "},\"required\":[" required "],\"additionalProperties\":false}"

static const skill_descriptor skills[] = {
    SKILL_JSON("greet", "Greet", "Greets someone by name.",
               OBJECT("\"name\":{\"type\":\"string\",\"maxLength\":60}", "\"name\""), SKILL_RISK_READ_ONLY,
               SKILL_IDEMPOTENT, echo),
    SKILL_JSON("todo_add", "Add a task", "Adds a task to the to-do list.",
               OBJECT("\"task\":{\"type\":\"string\",\"minLength\":1}", "\"task\""), SKILL_RISK_MUTATING, 0, echo),
    SKILL_JSON("todo_done", "Mark a task done", "Marks a task on the to-do list as done.",
               OBJECT("\"task_id\":{\"type\":\"integer\",\"minimum\":1}", "\"task_id\""), SKILL_RISK_MUTATING,
               SKILL_IDEMPOTENT, echo),
    SKILL_JSON("todo_clear", "Clear finished tasks", "Removes every finished task from the to-do list for good.",
               OBJECT("", ""), SKILL_RISK_DESTRUCTIVE, SKILL_IDEMPOTENT, echo),
    SKILL_JSON("todo_list", "List tasks", "Lists the tasks on the to-do list, open ones first.", OBJECT("", ""),
               SKILL_RISK_READ_ONLY, SKILL_IDEMPOTENT, echo),
    SKILL_JSON("dice_roll", "Roll dice", "Rolls dice with the given number of sides and reports the total.",
               OBJECT("\"sides\":{\"type\":\"integer\",\"minimum\":2},\"count\":{\"type\":\"integer\",\"minimum\":1,"
                      "\"default\":1}",
                      "\"sides\""),
               SKILL_RISK_READ_ONLY, 0, echo),
    SKILL_JSON("reverse_text", "Reverse text", "Reverses the characters of a text.",
               OBJECT("\"text\":{\"type\":\"string\"}", "\"text\""), SKILL_RISK_READ_ONLY, SKILL_IDEMPOTENT, echo),
    SKILL_TYPED("bmi", "Body mass index", "Body mass index (BMI) from a weight in kilograms and a height in metres.",
                "double bmi(double weight_kg, double height_m)", bmi),
};
SKILL_PLUGIN("household", "1.0.0", "third-party fixture for the offline router", skills)
