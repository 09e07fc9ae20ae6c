import Agent
import SkillJSON

/// `"budgets"` and `"prices"` in config.json:
/// `"budgets": {"turn": {"tokens": 100000, "tool_calls": 50, "seconds": 600, "cost": 0.5}, "session": {…},
/// "mcp_session": {"tool_calls": 1000}}`,
/// `"prices": {"gpt-4o": {"input": 2.5, "output": 10}}` (per million tokens; cost is counted for the model in use).
enum BudgetsConfig {
    static let example = #"{"turn": {"tokens": 100000, "tool_calls": 50}, "session": {"cost": 5}}"#

    /// Applies `value` over the default budgets.
    static func budgets(_ value: JSONValue, over defaults: Budgets, fail: (String) -> CLIError) throws(CLIError)
        -> Budgets
    {
        guard let object = value.objectValue else { throw fail("\"budgets\" must be an object like \(example)") }
        var budgets = defaults
        for (scope, limits) in object.members {
            if scope == "mcp_session" {
                budgets.mcpSessionToolCalls = try mcpSession(limits, fail: fail)
                continue
            }
            guard scope == "turn" || scope == "session" else {
                throw fail(
                    "\"budgets\" has \"\(scope)\"; budgets are for a \"turn\", the \"session\" or an "
                        + "\"mcp_session\"")
            }
            let parsed = try self.limits(
                limits, over: scope == "turn" ? defaults.turn : defaults.session, place: "budgets.\(scope)", fail: fail)
            if scope == "turn" { budgets.turn = parsed } else { budgets.session = parsed }
        }
        return budgets
    }

    /// `"mcp_session": {"tool_calls": N}`: the calls one MCP client session may make (its model is its own: only
    /// calls count).
    private static func mcpSession(_ value: JSONValue, fail: (String) -> CLIError) throws(CLIError) -> Int? {
        guard let object = value.objectValue, object.members.allSatisfy({ $0.key == "tool_calls" }) else {
            throw fail(
                "budgets.mcp_session counts tool_calls only (an MCP client brings its own model), like "
                    + #"{"tool_calls": 1000}"#)
        }
        guard let given = object["tool_calls"], given != .null else { return nil }
        guard let number = given.doubleValue, number >= 1, number < 1e15 else {
            throw fail("budgets.mcp_session.tool_calls must be a positive number, or null for no limit")
        }
        return Int(number)
    }

    private static func limits(
        _ value: JSONValue, over defaults: BudgetLimits, place: String, fail: (String) -> CLIError
    ) throws(CLIError) -> BudgetLimits {
        guard let object = value.objectValue else {
            throw fail("\(place) must be an object of tokens, tool_calls, seconds and cost, like \(example)")
        }
        var limits = defaults
        for (key, given) in object.members {
            // null lifts a default limit.
            let number: Double?
            if case .null = given {
                number = nil
            } else {
                guard let value = given.doubleValue, value > 0, value < 1e15 else {
                    throw fail("\(place).\(key) must be a positive number, or null for no limit")
                }
                number = value
            }
            switch key {
            case "tokens": limits.tokens = number.map { Int($0) }
            case "tool_calls": limits.toolCalls = number.map { Int($0) }
            case "seconds": limits.seconds = number
            case "cost": limits.cost = number
            default:
                let hint =
                    EditDistance.closest(to: key, among: ["tokens", "tool_calls", "seconds", "cost"])
                    .map { " (did you mean \"\($0)\"?)" } ?? ""
                throw fail("\(place) has \"\(key)\"\(hint); a budget counts tokens, tool_calls, seconds or cost")
            }
        }
        return limits
    }

    /// The price of `model` from `"prices"`, per million input and output tokens.
    static func price(_ value: JSONValue, model: String?, fail: (String) -> CLIError) throws(CLIError) -> (
        input: Double, output: Double
    )? {
        let example = #"{"gpt-4o": {"input": 2.5, "output": 10}}"#
        guard let object = value.objectValue else {
            throw fail("\"prices\" must map model names to prices per million tokens, like \(example)")
        }
        var found: (input: Double, output: Double)?
        for (name, price) in object.members {
            guard let input = price["input"]?.doubleValue, let output = price["output"]?.doubleValue, input >= 0,
                output >= 0
            else { throw fail("prices.\(name) must be {\"input\": <per million>, \"output\": <per million>}") }
            if name == model { found = (input, output) }
        }
        return found
    }
}
