import SkillJSON

/// What to do with a call before it runs.
public enum PolicyDecision: String, Sendable, Equatable {
    case allow, ask, deny
}

/// A rule for skill ids matching a glob (`*` any run of characters, `?` one character): `notes_*` → ask; narrowed,
/// optionally, to skills of one risk and to calls whose arguments a JSON Schema accepts:
/// `{"skill": "notes_delete", "arguments": {"properties": {"id": {"maximum": 100}}}, "then": "allow"}`.
public struct PolicyRule: Sendable, Equatable {
    public let pattern: String
    public let decision: PolicyDecision
    /// Only skills of this risk; nil: any.
    public let risk: SkillRisk?
    /// Only calls whose arguments this schema accepts; nil: any.
    public let arguments: ArgumentCondition?

    public init(
        _ pattern: String, _ decision: PolicyDecision, risk: SkillRisk? = nil, arguments: ArgumentCondition? = nil
    ) {
        self.pattern = pattern
        self.decision = decision
        self.risk = risk
        self.arguments = arguments
    }

    /// Whether the rule speaks of a call of `skill` with `arguments` (nil when they are not known: a rule that
    /// looks at arguments then does not apply).
    /// `leading` is `given` with its paths as they lead (`normalizingPaths`): a rule that allows must accept both
    /// spellings, one that asks or denies either — a string that only looks like a path (`/usr/bin/curl https://…`)
    /// is judged as written too.
    func matches(_ skill: SkillInfo, arguments given: JSONValue?, leading: JSONValue? = nil) -> Bool {
        guard Glob.matches(pattern, skill.id), risk == nil || risk == skill.risk else { return false }
        guard let condition = arguments else { return true }
        guard let given else { return false }
        guard let leading, leading != given else { return condition.accepts(given) }
        if decision == .allow { return condition.accepts(given) && condition.accepts(leading) }
        return condition.accepts(given) || condition.accepts(leading)
    }

    /// `value` with every string that is an absolute path (`/…`, `~/…`) written the short way — repeated slashes, `.`
    /// and `..` resolved as text — so a rule about paths sees where a path leads: `^/home/me/scratch/` let
    /// `/home/me/scratch/../outside.txt` through. (Links are the skill's file system's; a rule cannot see them.)
    static func normalizingPaths(_ value: JSONValue) -> JSONValue {
        switch value {
        case .string(let text) where text.hasPrefix("/") || text.hasPrefix("~/"):
            let home = text.hasPrefix("~/")
            var parts: [Substring] = []
            for part in text.dropFirst(home ? 2 : 1).split(separator: "/", omittingEmptySubsequences: true) {
                if part == "." { continue }
                if part == "..", let last = parts.last, last != ".." {
                    parts.removeLast()
                    continue
                }
                // Above the root there is only the root; above `~` is outside it, and stays written so.
                if part == "..", !home { continue }
                parts.append(part)
            }
            let trailing = text.hasSuffix("/") && !parts.isEmpty ? "/" : ""
            return .string((home ? "~/" : "/") + parts.joined(separator: "/") + trailing)
        case .array(let items): return .array(items.map(normalizingPaths))
        case .object(let object):
            return .object(JSONObject(object.members.map { (key: $0.key, value: normalizingPaths($0.value)) }))
        default: return value
        }
    }

    /// Whether the rule may speak of calls of `skill` (its arguments aside).
    public func mayMatch(_ skill: SkillInfo) -> Bool {
        Glob.matches(pattern, skill.id) && (risk == nil || risk == skill.risk)
    }

    /// Whether the rule speaks of every call of skill `id` whatever its risk and arguments (a composite's steps).
    func matchesEveryCall(of id: String) -> Bool { risk == nil && arguments == nil && Glob.matches(pattern, id) }

    /// The rule as config.json writes it: `"notes_*": "ask"`, or with conditions
    /// `{"skill": "notes_*", "risk": "destructive", "arguments": {…}, "then": "ask"}`.
    public var written: String {
        guard risk != nil || arguments != nil else {
            return JSONValue.string(pattern).jsonText + ": " + JSONValue.string(decision.rawValue).jsonText
        }
        var parts = [#""skill": "# + JSONValue.string(pattern).jsonText]
        if let risk { parts.append(#""risk": "# + JSONValue.string(risk.rawValue).jsonText) }
        if let arguments { parts.append(#""arguments": "# + arguments.text) }
        parts.append(#""then": "# + JSONValue.string(decision.rawValue).jsonText)
        return "{" + parts.joined(separator: ", ") + "}"
    }

    /// The rule in short, for `policy explain` and `list`: `notes_* (destructive, arguments {…}) → ask`.
    public var description: String {
        var conditions: [String] = []
        if let risk { conditions.append(risk.rawValue) }
        if let arguments { conditions.append("arguments " + arguments.text) }
        let narrowed = conditions.isEmpty ? "" : " (" + conditions.joined(separator: ", ") + ")"
        return "\(pattern)\(narrowed) → \(decision.rawValue)"
    }
}

/// A policy rule's condition on a call's arguments: a JSON Schema they must match (strictly, after the call's own
/// schema coerced them), bounded in the steps it may take.
public struct ArgumentCondition: Sendable, Equatable {
    /// The schema as written in the configuration.
    public let text: String
    private let schema: JSONSchema

    /// Compiles `schema`; throws when it cannot be used (a keyword the validator does not know is ignored, as in a
    /// skill's schema; one that would hang the host is refused).
    public init(_ schema: JSONValue) throws(SchemaError) {
        self.schema = try JSONSchema(schema)
        text = schema.jsonText
    }

    public static func == (lhs: ArgumentCondition, rhs: ArgumentCondition) -> Bool { lhs.text == rhs.text }

    /// Validation steps one rule may take on one call (a rule that needs more does not match).
    static let stepLimit = 100_000

    func accepts(_ arguments: JSONValue) -> Bool {
        var options = ValidationOptions.strict
        options.stepLimit = Self.stepLimit
        return schema.validate(arguments, options: options).isValid
    }
}

/// The user's answer to a confirmation.
public enum ConfirmationAnswer: Sendable, Equatable {
    case allowOnce
    case allowForSession
    case deny

    /// The answer as front ends send it and records keep it: `yes`, `always`, `no`.
    package var word: String {
        switch self {
        case .allowOnce: return "yes"
        case .allowForSession: return "always"
        case .deny: return "no"
        }
    }

    /// The answer a word stands for; nil for any other word.
    package init?(word: String) {
        switch word {
        case "yes": self = .allowOnce
        case "always": self = .allowForSession
        case "no": self = .deny
        default: return nil
        }
    }
}

/// The user's rules about which calls may run. `CallPipeline` applies them to every call, on every path (the agent,
/// the MCP server, `skillhost call`, the shell's `/call`, composites' steps).
///
/// Rules first: the **most specific** matching rule wins, and the order rules are written in never matters.
/// Specific means, in this order: an exact skill id over any glob, then the glob with more literal characters; at
/// equal skill patterns, a rule with more conditions (a risk, arguments) over one with fewer; at equal specificity
/// `deny` beats `ask` beats `allow`. Without a rule the skill's risk decides: read-only runs, mutating and
/// destructive ask. A deny always wins, even over `--yes`.
public struct Policy: Sendable, Equatable {
    public var rules: [PolicyRule]

    public init(rules: [PolicyRule] = []) { self.rules = rules }

    /// The matching rules for a call of `skill` with `arguments` (nil: not known), the deciding one first.
    public func rules(for skill: SkillInfo, arguments: JSONValue?) -> [PolicyRule] {
        let leading = pathsAsTheyLead(arguments)
        return rules.filter { $0.matches(skill, arguments: arguments, leading: leading) }.sorted {
            Self.rank($0) > Self.rank($1)
        }
    }

    /// The arguments as rules about arguments see them (`PolicyRule.normalizingPaths`), once a call — and only when
    /// some rule looks at arguments.
    private func pathsAsTheyLead(_ arguments: JSONValue?) -> JSONValue? {
        guard let arguments, rules.contains(where: { $0.arguments != nil }) else { return arguments }
        return PolicyRule.normalizingPaths(arguments)
    }

    /// The rules that may speak of calls of `skill` (those about arguments included), most specific first.
    public func rulesAbout(_ skill: SkillInfo) -> [PolicyRule] {
        rules.filter { $0.mayMatch(skill) }.sorted { Self.rank($0) > Self.rank($1) }
    }

    /// The deciding rule for a call of `skill` with `arguments`, if any.
    public func rule(for skill: SkillInfo, arguments: JSONValue?) -> PolicyRule? {
        let leading = pathsAsTheyLead(arguments)
        return rules.filter { $0.matches(skill, arguments: arguments, leading: leading) }.max {
            Self.rank($0) < Self.rank($1)
        }
    }

    /// The deciding rule among those about every call of `id` (no risk or arguments condition).
    func ruleForEveryCall(of id: String) -> PolicyRule? {
        rules.filter { $0.matchesEveryCall(of: id) }.max { Self.rank($0) < Self.rank($1) }
    }

    /// Whether an ask for a call of `skill` is covered by `consent`: for `.risk`, no rule says ask about it (nor,
    /// for a composite, about one of its steps); for `.plan`, no rule with a risk or arguments condition does.
    func covers(_ consent: Consent, _ skill: SkillInfo, arguments: JSONValue?) -> Bool {
        if rules.isEmpty { return true }
        guard let rule = rule(for: skill, arguments: arguments), rule.decision == .ask else {
            if consent == .plan { return true }
            if let plan = skill.kind.compositePlan {
                return !plan.calls.contains { ruleForEveryCall(of: $0)?.decision == .ask }
            }
            return true
        }
        return consent == .plan && rule.risk == nil && rule.arguments == nil
    }

    public func decision(for skill: SkillInfo, arguments: JSONValue? = nil) -> PolicyDecision {
        rule(for: skill, arguments: arguments)?.decision ?? (skill.risk == .readOnly ? .allow : .ask)
    }

    /// Specificity of the skill pattern, then of the conditions, then strictness.
    private static func rank(_ rule: PolicyRule) -> (Int, Int, Int) {
        let wildcards = rule.pattern.filter { $0 == "*" || $0 == "?" }.count
        let specificity = wildcards == 0 ? Int.max : rule.pattern.count - wildcards
        let conditions = (rule.risk == nil ? 0 : 1) + (rule.arguments == nil ? 0 : 1)
        let strictness: Int
        switch rule.decision {
        case .allow: strictness = 0
        case .ask: strictness = 1
        case .deny: strictness = 2
        }
        return (specificity, conditions, strictness)
    }

    /// What the rules and the skill's risk say about a call of `skill` with `arguments` (nil when not known:
    /// rules about arguments do not apply), whoever asks. A composite skill's verdict covers the skills its steps
    /// call: a deny rule for any of them denies it, and an ask rule for one makes it ask (once, for the whole plan)
    /// unless a rule for the composite itself allows it — rules about every call of the step's skill; a rule with a
    /// risk or arguments condition is applied when the step runs, with its arguments (a deny still stops it).
    public func verdict(for skill: SkillInfo, arguments: JSONValue? = nil) -> Verdict {
        // The common case, on every call: no rules, a read-only skill.
        if rules.isEmpty, skill.risk == .readOnly { return .allow }
        var rule = rule(for: skill, arguments: arguments)
        if let plan = skill.kind.compositePlan, rule?.decision != .deny {
            for id in plan.calls {
                guard let stepRule = ruleForEveryCall(of: id) else { continue }
                if stepRule.decision == .deny {
                    return .deny(.denied(skill: skill.id, rule: stepRule.written, step: id))
                }
                // A step's ask stands unless the person wrote a rule for this composite by its own id (a glob such as
                // "*" that happens to match it speaks of no step: `{"*": "allow", "notes_delete": "ask"}` let a
                // one-step composite delete a note unasked).
                let ownRule = rule.map { $0.pattern == skill.id && $0.decision != .deny } ?? false
                if stepRule.decision == .ask, !ownRule { rule = stepRule }
            }
        }
        switch rule?.decision ?? (skill.risk == .readOnly ? .allow : .ask) {
        case .allow: return .allow
        case .deny: return .deny(.denied(skill: skill.id, rule: rule?.written ?? "", step: nil))
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
///
/// A struct over a private value (as `PluginProblem.Code` is), so a new kind of answerer does not break an
/// embedder's code: confirmers are made with the static members below.
public struct Confirmer: Sendable {
    enum Kind: Sendable {
        case person(@Sendable (SkillInfo, JSONValue) async -> ConfirmationAnswer)
        case confirmed
        indirect case consented(Consent, then: Confirmer)
        case nobody(Audience)
        case caller(Audience, ask: @Sendable (SkillInfo, JSONValue) async -> ConfirmationAnswer?)
    }

    let kind: Kind

    /// A person answers: asked with the skill and its validated arguments, only when the policy says ask.
    public static func person(_ ask: @escaping @Sendable (SkillInfo, JSONValue) async -> ConfirmationAnswer)
        -> Confirmer
    {
        Confirmer(kind: .person(ask))
    }
    /// The caller confirmed beforehand (`skillhost call --yes`, a worker whose host already decided): what would be
    /// asked runs; a deny still wins.
    public static let confirmed = Confirmer(kind: .confirmed)
    /// A yes given beforehand covers what `Consent` says — a reversing call `ask --rewind` printed, a composite's
    /// step whose plan was confirmed — and whatever else the policy, a hook or a pin asks about goes to `then` (a
    /// person is asked, nobody refuses, `.confirmed` runs).
    public static func consented(_ consent: Consent, then: Confirmer) -> Confirmer {
        Confirmer(kind: .consented(consent, then: then))
    }
    /// No one can answer (`skillhost ask`, an MCP client): a destructive call, or one a rule says to ask about, is
    /// refused, in words for `audience`; a mutating call without a rule runs.
    public static func nobody(_ audience: Audience) -> Confirmer { Confirmer(kind: .nobody(audience)) }

    /// Nobody at hand, but the caller can put a question to someone (an MCP client, to its user by elicitation):
    /// what `.nobody(audience)` lets run runs unasked; what it would refuse for want of a yes is put to `ask`, with
    /// the skill and its validated arguments — the very call the registry then runs or refuses. `ask` answers nil
    /// for what it cannot put to anyone (a composite's step, when only the call itself can be asked about): refused
    /// as `.nobody(audience)` refuses it.
    public static func caller(
        _ audience: Audience, ask: @escaping @Sendable (SkillInfo, JSONValue) async -> ConfirmationAnswer?
    ) -> Confirmer {
        Confirmer(kind: .caller(audience, ask: ask))
    }

    /// `.nobody` with the sentence embedders get: what to change to let the call run.
    public static var nobodyToAsk: Confirmer { .nobody(.embedder) }

    /// Who answers what a consent does not cover: this confirmer, or the one a `.consented` passes on to.
    var answerer: Confirmer {
        if case .consented(_, let then) = kind { return then.answerer }
        return self
    }

    /// Who reads this call's refusals.
    var audience: Audience {
        switch answerer.kind {
        case .nobody(let audience), .caller(let audience, _): return audience
        case .person, .confirmed, .consented: return .embedder
        }
    }
}

/// What a yes given beforehand covers (`Confirmer.consented`).
public enum Consent: Sendable {
    /// What the policy asks about for a skill's risk alone: the reversing calls a rewind printed, a failed
    /// composite's undoing of its own changes.
    case risk
    /// That and every rule about every call of the skill: a composite's step, whose plan the composite's
    /// confirmation (or a rule naming it) covered. A rule about the step's arguments or risk that says ask, or a
    /// hook that does, is not covered.
    case plan
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
