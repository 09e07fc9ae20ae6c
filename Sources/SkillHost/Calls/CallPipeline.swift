import SkillJSON

/// The one decision every call takes before it runs, on every path (the agent, the shell, `call`, MCP, composites'
/// steps, workers): the policy's verdict on the skill, then who can answer when it says ask. Hooks, budgets and
/// argument-level rules belong here.
///
/// Pure and synchronous: asking the person is the caller's step (`ask(_:_:)`), so the calling-thread paths never
/// wait here.
public struct CallPipeline: Sendable {
    public let policy: Policy
    /// The definitions first seen; a skill whose definition changed since is unapproved. Nil: not kept.
    public let pins: DefinitionPins?
    /// Skills turned off (`"disabled_skills"`): refused, and so is a composite that calls one.
    public let disabledSkills: Set<String>
    /// No rules, no pins, nothing disabled: only a skill's risk decides.
    private let riskAlone: Bool

    public init(policy: Policy, pins: DefinitionPins? = nil, disabled: Set<String> = []) {
        self.policy = policy
        self.pins = pins
        disabledSkills = disabled
        riskAlone = policy.rules.isEmpty && pins == nil && disabled.isEmpty
    }

    /// The refusal of a call of `skill` when it, or a step of it (a composite's), is turned off here or in `also`
    /// (a session's); nil when it may run.
    public func disabled(_ skill: SkillInfo, also: Set<String> = []) -> Refusal? {
        if disabledSkills.isEmpty && also.isEmpty { return nil }
        var ids = [skill.id]
        if let plan = skill.kind.compositePlan { ids += plan.calls }
        for id in ids where disabledSkills.contains(id) || also.contains(id) {
            return .disabled(
                skill: skill.id, step: id == skill.id ? nil : id, byConfiguration: disabledSkills.contains(id))
        }
        return nil
    }

    /// What happens to a call.
    public enum Decision: Sendable, Equatable {
        case run
        /// A person must say yes first: ask them with the confirmer, then run (or refuse with `.declined`).
        case ask
        case refuse(Refusal)
    }

    /// The decision for a call of `skill` with `arguments` (validated; nil when not known, and then rules about
    /// arguments do not apply) whose person (or absence of one) is `confirmer`.
    public func decide(_ skill: SkillInfo, arguments: JSONValue? = nil, confirmer: Confirmer) -> Decision {
        let verdict = policy.verdict(for: skill, arguments: arguments)
        if let change = pins?.change(skill) {
            // Unapproved: a deny stands; otherwise only a person may let it run (not --yes, not a rule).
            if case .deny(let refusal) = verdict { return .refuse(refusal) }
            if case .person = confirmer.answerer.kind { return .ask }
            return .refuse(.definitionChanged(skill: skill.id, parts: change.parts))
        }
        switch verdict {
        case .allow: return .run
        case .deny(let refusal): return .refuse(refusal)
        case .ask(let required):
            switch confirmer.kind {
            case .person: return .ask
            case .confirmed: return .run
            case .nobody: return required ? .refuse(.needsConfirmation(skill: skill.id, risk: skill.risk)) : .run
            // What nobody could let run is asked of the caller's someone; the rest runs as it would unasked.
            case .caller: return required ? .ask : .run
            case .consented(let consent, let then):
                if policy.covers(consent, skill, arguments: arguments) { return .run }
                // A rule says ask, whatever the skill's risk: refused as "set to ask" where no one answers.
                if case .nobody = then.answerer.kind {
                    return .refuse(.needsConfirmation(skill: skill.id, risk: .mutating))
                }
                return decide(skill, arguments: arguments, confirmer: then)
            }
        }
    }

    /// The decision for a registered entry: the common case (no rules, a read-only plugin skill) is decided
    /// without copying the skill's description.
    @inline(__always)
    func decide(_ entry: SkillEntry, arguments: JSONValue, confirmer: Confirmer) -> Decision {
        if runsUnlooked(entry) { return .run }
        return decide(entry.info, arguments: arguments, confirmer: confirmer)
    }

    /// Whether `entry` runs whatever its arguments and whoever confirms: no rules, no pins, a read-only plugin
    /// skill.
    @inline(__always)
    func runsUnlooked(_ entry: SkillEntry) -> Bool {
        guard riskAlone, case .plugin(let skill) = entry else { return false }
        return skill.readOnly
    }

    /// Asks the person behind `confirmer` about a call `decide` said to ask about; nil when they agree.
    func ask(_ skill: SkillInfo, arguments: JSONValue, _ confirmer: Confirmer) async -> Refusal? {
        let answer: ConfirmationAnswer
        switch confirmer.answerer.kind {
        case .person(let person): answer = await person(skill, arguments)
        case .caller(_, let caller):
            // Nobody can be asked about this one: refused as no one to ask refuses it — under a consent (a
            // composite's step), what still asks is a rule, whatever the skill's risk ("set to ask"), as in `decide`.
            guard let given = await caller(skill, arguments) else {
                if case .consented = confirmer.kind { return .needsConfirmation(skill: skill.id, risk: .mutating) }
                return .needsConfirmation(skill: skill.id, risk: skill.risk)
            }
            answer = given
        case .confirmed, .consented, .nobody: return nil
        }
        switch answer {
        case .allowOnce, .allowForSession: return nil
        case .deny: return .declined(skill: skill.id)
        }
    }
}
