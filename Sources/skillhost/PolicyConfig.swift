import SkillHost
import SkillJSON

/// `"policy"` in config.json: an object of skill patterns (`{"wipe_*": "deny", "notes_*": "ask"}`), or a list of
/// rules that may also look at the skill's risk and the call's arguments:
/// `[{"skill": "notes_delete", "arguments": {"properties": {"id": {"maximum": 100}}}, "then": "allow"}]`.
enum PolicyConfig {
    static let decisions = "\"allow\", \"ask\" or \"deny\""
    static let example = #"{"skill": "notes_*", "then": "ask"}"#

    /// The rules `value` holds; `fail` makes the error for a sentence.
    static func rules(_ value: JSONValue, fail: (String) -> CLIError) throws(CLIError) -> [PolicyRule] {
        switch value {
        case .object(let patterns):
            var rules: [PolicyRule] = []
            for (pattern, decision) in patterns.members {
                guard let text = decision.stringValue, let parsed = PolicyDecision(rawValue: text) else {
                    throw fail("policy for \"\(pattern)\" must be \(decisions)")
                }
                rules.append(PolicyRule(pattern, parsed))
            }
            return rules
        case .array(let items):
            var rules: [PolicyRule] = []
            for (index, item) in items.enumerated() {
                rules.append(try rule(item, number: index + 1, fail: fail))
            }
            return rules
        default:
            throw fail(
                "\"policy\" must map skill id patterns to \(decisions), or list rules like [\(example)]")
        }
    }

    private static func rule(_ item: JSONValue, number: Int, fail: (String) -> CLIError) throws(CLIError) -> PolicyRule
    {
        let place = "policy rule \(number)"
        guard let object = item.objectValue else { throw fail("\(place) must be an object like \(example)") }
        for key in object.keys where !["skill", "risk", "arguments", "then"].contains(key) {
            throw fail("\(place) has \"\(key)\", which rules do not take (skill, risk, arguments, then)")
        }
        guard let pattern = object["skill"]?.stringValue, !pattern.isEmpty else {
            throw fail("\(place) needs \"skill\": a skill id or pattern (\"*\" for every skill)")
        }
        guard let then = object["then"]?.stringValue, let decision = PolicyDecision(rawValue: then) else {
            throw fail("\(place) needs \"then\": \(decisions)")
        }
        var risk: SkillRisk?
        if let given = object["risk"] {
            guard let name = given.stringValue, let parsed = SkillRisk(rawValue: name) else {
                throw fail("\(place): \"risk\" must be \"read-only\", \"mutating\" or \"destructive\"")
            }
            risk = parsed
        }
        var arguments: ArgumentCondition?
        if let schema = object["arguments"] {
            guard schema.objectValue != nil else {
                throw fail("\(place): \"arguments\" must be a JSON Schema object, like {\"properties\": {…}}")
            }
            if let problem = SchemaKeywords.unknown(in: schema) {
                throw fail("\(place): its \"arguments\" schema \(problem)")
            }
            do throws(SchemaError) { arguments = try ArgumentCondition(schema) } catch {
                throw fail("\(place): its \"arguments\" schema cannot be used: \(error)")
            }
        }
        return PolicyRule(pattern, decision, risk: risk, arguments: arguments)
    }
}
