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

/// The user's rules about which calls may run. `CallPipeline` applies them to every call, on every path (the agent,
/// the MCP server, `skillhost call`, the shell's `/call`, composites' steps).
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

    /// What the rules and the skill's risk say about a call of `skill`, whoever asks. A composite skill's verdict
    /// covers the skills its steps call: a deny rule for any of them denies it, and an ask rule for one makes it ask
    /// (once, for the whole plan) unless a rule for the composite itself allows it.
    public func verdict(for skill: SkillInfo) -> Verdict {
        // The common case, on every call: no rules, a read-only skill.
        if rules.isEmpty, skill.risk == .readOnly { return .allow }
        var rule = rule(for: skill.id)
        if case .composite(let plan) = skill.kind, rule?.decision != .deny {
            for id in plan.calls {
                guard let stepRule = self.rule(for: id) else { continue }
                if stepRule.decision == .deny {
                    return .deny(.denied(skill: skill.id, rule: stepRule.pattern, step: id))
                }
                if stepRule.decision == .ask, rule?.decision != .allow, rule?.decision != .ask { rule = stepRule }
            }
        }
        switch rule?.decision ?? (skill.risk == .readOnly ? .allow : .ask) {
        case .allow: return .allow
        case .deny: return .deny(.denied(skill: skill.id, rule: rule?.pattern ?? "", step: nil))
        case .ask: return .ask(required: skill.risk == .destructive || rule != nil)
        }
    }

    /// What the policy says about one call.
    public enum Verdict: Sendable, Equatable {
        case allow
        /// A person should confirm it. `required`: it is destructive or a rule says ask, so it does not run when no
        /// one can confirm (a mutating call without a rule does).
        case ask(required: Bool)
        case deny(Refusal)
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
    /// refused, in words for `audience`; a mutating call without a rule runs.
    case nobody(Audience)

    /// `.nobody` with the sentence embedders get: what to change to let the call run.
    public static var nobodyToAsk: Confirmer { .nobody(.embedder) }

    /// Who reads this call's refusals.
    var audience: Audience {
        if case .nobody(let audience) = self { return audience }
        return .embedder
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
