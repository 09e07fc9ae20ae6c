import SkillHost

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

/// Decides whether a call may run: rules first (the last matching rule wins), then the skill's risk — read-only
/// runs, mutating and destructive ask. Asking needs an interactive front end; without one, destructive calls are
/// denied and mutating calls run.
public struct Policy: Sendable, Equatable {
    public var rules: [PolicyRule]

    public init(rules: [PolicyRule] = []) { self.rules = rules }

    public func decision(for skill: SkillInfo) -> PolicyDecision {
        if let rule = rules.last(where: { $0.matches(skill.id) }) { return rule.decision }
        return skill.risk == .readOnly ? .allow : .ask
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
