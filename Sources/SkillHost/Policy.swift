import SkillJSON

/// What to do with a call before it runs.
public enum PolicyDecision: String, Sendable, Equatable {
    case allow, ask, deny
}

/// A rule for skill ids matching a glob (`*` any run of characters, `?` one character): `notes_*` → ask.
public struct PolicyRule: Sendable, Equatable {
    public let pattern: String
    public let decision: PolicyDecision

    public init(_ pattern: String, _ decision: PolicyDecision) {
        self.pattern = pattern
        self.decision = decision
    }

    func matches(_ id: String) -> Bool { Glob.matches(pattern, id) }
}

/// The user's answer to a confirmation.
public enum ConfirmationAnswer: Sendable, Equatable {
    case allowOnce
    case allowForSession
    case deny
}

/// Decides whether a call may run — the one implementation every path that runs a skill uses (the agent, the MCP
/// server, `skillhost call`, the shell's `/call`).
///
/// Rules first: the **most specific** matching rule wins (an exact id over any glob, then the glob with more
/// literal characters), and at equal specificity `deny` beats `ask` beats `allow`, so the order rules are written in
/// never matters. Without a rule the skill's risk decides: read-only runs, mutating and destructive ask. A deny
/// always wins, even over `--yes`.
public struct Policy: Sendable, Equatable {
    public var rules: [PolicyRule]

    public init(rules: [PolicyRule] = []) { self.rules = rules }

    /// The deciding rule for `id`, if any.
    public func rule(for id: String) -> PolicyRule? {
        rules.filter { $0.matches(id) }.max { Self.rank($0) < Self.rank($1) }
    }

    public func decision(for skill: SkillInfo) -> PolicyDecision {
        rule(for: skill.id)?.decision ?? (skill.risk == .readOnly ? .allow : .ask)
    }

    /// Specificity first, then strictness.
    private static func rank(_ rule: PolicyRule) -> (Int, Int) {
        let wildcards = rule.pattern.filter { $0 == "*" || $0 == "?" }.count
        let specificity = wildcards == 0 ? Int.max : rule.pattern.count - wildcards
        let strictness: Int
        switch rule.decision {
        case .allow: strictness = 0
        case .ask: strictness = 1
        case .deny: strictness = 2
        }
        return (specificity, strictness)
    }

    /// Who can answer when a call needs confirming, on the path asking.
    public enum Asking: Sendable {
        /// A person can answer (the shell); the gate says `.ask`.
        case person
        /// The caller confirmed beforehand (`skillhost call --yes`): what would be asked runs; a deny still wins.
        case confirmed
        /// No one can answer (`skillhost ask`, an MCP client, `call` without a terminal): a destructive call, or one
        /// a rule says to ask about, is refused with `refusal`; a mutating call without a rule runs.
        case nobody(refusal: @Sendable (SkillInfo) -> String)
    }

    /// What the gate lets through.
    public enum Gate: Sendable, Equatable {
        case run
        /// Ask the person; run only if they agree.
        case ask
        /// Do not run; the sentence says why and how to change it.
        case refuse(String)
    }

    /// The gate for one call of `skill`. A composite skill's gate covers the skills its steps call: a deny rule
    /// for any of them refuses it, and an ask rule for one makes it ask (once, for the whole plan) unless a rule
    /// for the composite itself allows it.
    public func gate(_ skill: SkillInfo, asking: Asking) -> Gate {
        // The common case, on every call: no rules, a read-only skill.
        if rules.isEmpty, skill.risk == .readOnly { return .run }
        var rule = rule(for: skill.id)
        if case .composite(let plan) = skill.kind, rule?.decision != .deny {
            for id in plan.calls {
                guard let stepRule = self.rule(for: id) else { continue }
                if stepRule.decision == .deny {
                    return .refuse(
                        "not run: \(skill.id) calls \(id), and calls to \(id) are denied by the configuration (policy "
                            + "rule \"\(stepRule.pattern)\": \"deny\")")
                }
                if stepRule.decision == .ask, rule?.decision != .allow, rule?.decision != .ask { rule = stepRule }
            }
        }
        switch rule?.decision ?? (skill.risk == .readOnly ? .allow : .ask) {
        case .allow: return .run
        case .deny:
            return .refuse(
                "not run: calls to \(skill.id) are denied by the configuration (policy rule \"\(rule?.pattern ?? "")\": "
                    + "\"deny\")")
        case .ask:
            switch asking {
            case .person: return .ask
            case .confirmed: return .run
            case .nobody(let refusal):
                return skill.risk == .destructive || rule != nil ? .refuse(refusal(skill)) : .run
            }
        }
    }
}

/// Who answers when the policy says a call needs confirming — every invocation names one (`SkillInvocation`).
public enum Confirmer: Sendable {
    /// A person answers: asked with the skill and its validated arguments, only when the policy says ask.
    case person(@Sendable (SkillInfo, JSONValue) async -> ConfirmationAnswer)
    /// The caller confirmed beforehand (`skillhost call --yes`, a worker whose host already decided): what would be
    /// asked runs; a deny still wins.
    case confirmed
    /// No one can answer (`skillhost ask`, an MCP client): a destructive call, or one a rule says to ask about, is
    /// refused with `refusal`; a mutating call without a rule runs.
    case nobody(refusal: @Sendable (SkillInfo) -> String)

    /// `.nobody` with the sentence embedders get: what to change to let the call run.
    case nobodyToAsk

    /// The sentence `.nobodyToAsk` refuses with.
    static func refusalWithNobodyToAsk(_ skill: SkillInfo) -> String {
        "not run: \(skill.id) is \(skill.risk == .destructive ? "destructive" : "set to ask") and there is no one to "
            + "confirm it (allow it with a rule in the configuration)"
    }

    var asking: Policy.Asking {
        switch self {
        case .person: return .person
        case .confirmed: return .confirmed
        case .nobody(let refusal): return .nobody(refusal: refusal)
        case .nobodyToAsk: return .nobody(refusal: Self.refusalWithNobodyToAsk)
        }
    }
}

/// Whether a call may run.
public enum Permission: Sendable, Equatable {
    case granted
    /// Not run; the sentence says why and how to change it.
    case refused(String)
}

extension Policy {
    /// The one decision every path that runs a skill takes: the gate, then — when it says ask — the confirmer.
    ///
    /// - Parameters:
    ///   - skill: the skill to run.
    ///   - arguments: its validated arguments (what a person is shown).
    ///   - confirmer: who answers when the call needs confirming.
    public func permission(for skill: SkillInfo, arguments: JSONValue, confirmer: Confirmer) async -> Permission {
        switch gate(skill, asking: confirmer.asking) {
        case .run: return .granted
        case .refuse(let reason): return .refused(reason)
        case .ask:
            guard case .person(let ask) = confirmer else { return .granted }
            switch await ask(skill, arguments) {
            case .allowOnce, .allowForSession: return .granted
            case .deny: return .refused("not run: the user declined this call")
            }
        }
    }
}

/// Glob matching for skill ids.
enum Glob {
    static func matches(_ pattern: String, _ text: String) -> Bool {
        let p = Array(pattern)
        let t = Array(text)
        var pi = 0
        var ti = 0
        var star = -1
        var mark = 0
        while ti < t.count {
            if pi < p.count, p[pi] == "?" || p[pi] == t[ti] {
                pi += 1
                ti += 1
            } else if pi < p.count, p[pi] == "*" {
                star = pi
                mark = ti
                pi += 1
            } else if star >= 0 {
                pi = star + 1
                mark += 1
                ti = mark
            } else {
                return false
            }
        }
        while pi < p.count, p[pi] == "*" { pi += 1 }
        return pi == p.count
    }
}
