import Shell
import SkillHost
import SkillJSON

/// `skillhost policy explain SKILL ['<json>']`: which rule decides a call and why; and the rules per skill `list`
/// shows.
enum PolicyCommand {
    /// The explanation, or an error for an unknown skill or arguments the skill's schema refuses.
    static func explain(skill id: String, arguments text: String?, registry: SkillRegistry) throws(CLIError) -> String {
        guard let skill = registry.skill(id) else {
            throw .failure(Refusal.unknownSkill(id: id, suggestion: nil).sentence(for: .commandLine))
        }
        let arguments: JSONValue
        do {
            let given = try JSONValue(parsing: text ?? "{}")
            arguments = try validated(given, for: skill)
        } catch let error as CLIError {
            throw error
        } catch {
            throw .invalidArguments("the arguments are not JSON: \(error)")
        }
        let policy = registry.pipeline.policy
        let matching = policy.rules(for: skill, arguments: arguments)
        let verdict = policy.verdict(for: skill, arguments: arguments)
        var out = "\(skill.id) \(arguments.jsonText): \(name(verdict))\n"
        if case .deny(let refusal) = verdict, let step = refusal.step {
            out +=
                "  decided by a step: it calls \(step), which a rule denies (\(refusal.sentence(for: .commandLine)))\n"
        }
        if let deciding = matching.first {
            out += "  rule \(number(of: deciding, in: policy)): \(deciding.written)\n"
            out += "    the most specific of \(matching.count) matching: \(specificity(of: deciding))\n"
            for other in matching.dropFirst() {
                out += "  also matches, less specific: rule \(number(of: other, in: policy)): \(other.written)\n"
            }
        } else {
            let runs = skill.risk == .readOnly ? "it runs" : "a person is asked"
            out += "  no rule matches; \(skill.id) is \(skill.risk.rawValue), so \(runs)\n"
        }
        if case .ask(let required) = verdict {
            out +=
                required
                ? "  asked in the shell, the browser and the agent; skillhost call needs --yes; MCP clients are "
                    + "refused unless they can ask their user\n"
                : "  asked in the shell and the browser; runs where no one can be asked (skillhost call, MCP, ask)\n"
        }
        return out
    }

    /// The skill's arguments as a call would see them: validated against its schema, coercions and defaults.
    private static func validated(_ given: JSONValue, for skill: SkillInfo) throws -> JSONValue {
        guard let schema = try? JSONSchema(skill.inputSchema) else { return given }
        switch schema.validate(given) {
        case .valid(let value): return value
        case .invalid(let issues):
            throw CLIError.invalidArguments(
                "invalid arguments for \(skill.id): " + issues.map(\.description).joined(separator: "; "))
        }
    }

    private static func name(_ verdict: Policy.Verdict) -> String {
        switch verdict {
        case .allow: return "allow"
        case .ask: return "ask"
        case .deny: return "deny"
        }
    }

    /// The rule's place in config.json's list (1-based), as people count.
    static func number(of rule: PolicyRule, in policy: Policy) -> Int {
        (policy.rules.firstIndex(of: rule) ?? 0) + 1
    }

    private static func specificity(of rule: PolicyRule) -> String {
        let wildcards = rule.pattern.filter { $0 == "*" || $0 == "?" }.count
        var parts = [
            wildcards == 0 ? "exact skill id" : "a pattern with \(rule.pattern.count - wildcards) literal characters"
        ]
        if let risk = rule.risk { parts.append("risk \(risk.rawValue)") }
        if rule.arguments != nil { parts.append("the arguments match its schema") }
        return parts.joined(separator: ", ")
    }

    /// `list`'s section: each skill some rule speaks of, with those rules, most specific first (a rule about
    /// arguments applies to the calls they match).
    static func rulesPerSkill(_ registry: SkillRegistry) -> String {
        let policy = registry.pipeline.policy
        guard !policy.rules.isEmpty else { return "" }
        var rows: [[String]] = []
        for skill in registry.skills {
            let rules = policy.rulesAbout(skill)
            guard !rules.isEmpty else { continue }
            rows.append([
                skill.id, rules.map { "\(number(of: $0, in: policy)). \($0.description)" }.joined(separator: "; "),
            ])
        }
        guard !rows.isEmpty else { return "" }
        return
            "\nPolicy rules per skill (most specific first; skillhost policy explain SKILL ARGS says which decides):\n"
            + Table.render(header: ["SKILL", "RULES"], rows: rows)
    }
}
