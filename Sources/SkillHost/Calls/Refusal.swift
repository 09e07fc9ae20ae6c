import SkillJSON

/// Who reads a refusal: each client says how to let the call run in its own terms.
///
/// A struct over a private value (as `PluginProblem.Code` is), so a new kind of client can be added without
/// breaking an embedder's code; audiences compare with `==`.
public struct Audience: Sendable, Equatable {
    enum Kind: Sendable, Equatable {
        case embedder, commandLine, mcpClient
        case model(available: [String])
    }

    let kind: Kind

    /// A program embedding the registry (and the agent without a person): rules in the configuration.
    public static let embedder = Audience(kind: .embedder)
    /// `skillhost call`: `--yes`, or a rule in config.json.
    public static let commandLine = Audience(kind: .commandLine)
    /// An MCP client: a rule for MCP clients, with the exact text to add; tool names in the protocol's words.
    public static let mcpClient = Audience(kind: .mcpClient)
    /// A model choosing tools: an unknown name comes back with the names it may use.
    public static func model(available: [String]) -> Audience { Audience(kind: .model(available: available)) }
}

/// A call refused before it ran, as a value: every path that runs a skill refuses through it, and each client
/// renders it once (`sentence(for:)`). Adding a kind of refusal is one case of `Kind` here and its sentence.
///
/// A struct over a private value (as `PluginProblem.Code` is), so a new kind of refusal does not break an
/// embedder's exhaustive `switch`: refusals are made with the static functions below, compared with `==`, and read
/// through `skill`, `code`, `suggestion`, `step` and `needsConfirmation`.
public struct Refusal: Error, Sendable, Equatable {
    enum Kind: Sendable, Equatable {
        case unknownSkill(id: String, suggestion: String?)
        case denied(skill: String, rule: String, step: String?)
        case needsConfirmation(skill: String, risk: SkillRisk)
        case declined(skill: String)
        case cannotAskHere(skill: String)
        case definitionChanged(skill: String, parts: [String])
        case hook(skill: String, hook: String, event: HookEvent, reason: String)
        case disabled(skill: String, step: String?, byConfiguration: Bool)
    }

    let kind: Kind

    /// No skill has the id; `suggestion` is the nearest id, when one is near.
    public static func unknownSkill(id: String, suggestion: String?) -> Refusal {
        Refusal(kind: .unknownSkill(id: id, suggestion: suggestion))
    }
    /// A policy rule (`rule`, as config.json writes it) denies the skill — or `step`, a skill the composite `skill`
    /// calls.
    public static func denied(skill: String, rule: String, step: String?) -> Refusal {
        Refusal(kind: .denied(skill: skill, rule: rule, step: step))
    }
    /// The call needs a person's yes (its risk is destructive, or a rule says ask) and no one can give it.
    public static func needsConfirmation(skill: String, risk: SkillRisk) -> Refusal {
        Refusal(kind: .needsConfirmation(skill: skill, risk: risk))
    }
    /// The person asked said no.
    public static func declined(skill: String) -> Refusal { Refusal(kind: .declined(skill: skill)) }
    /// The call needs a person's yes and runs on a thread that cannot wait for one.
    public static func cannotAskHere(skill: String) -> Refusal { Refusal(kind: .cannotAskHere(skill: skill)) }
    /// The skill's definition changed since it was first seen (`parts`: which) and has not been trusted since.
    public static func definitionChanged(skill: String, parts: [String]) -> Refusal {
        Refusal(kind: .definitionChanged(skill: skill, parts: parts))
    }
    /// A hook (`hook`: its program) at `event` said no — or failed, and its `on_error` is deny; `reason` says which.
    public static func hook(skill: String, hook: String, event: HookEvent, reason: String) -> Refusal {
        Refusal(kind: .hook(skill: skill, hook: hook, event: event, reason: reason))
    }
    /// The skill — or `step`, a skill the composite `skill` calls — is turned off: by config.json's
    /// `"disabled_skills"` (`byConfiguration`), or by the caller (the shell's `/disable`).
    public static func disabled(skill: String, step: String?, byConfiguration: Bool) -> Refusal {
        Refusal(kind: .disabled(skill: skill, step: step, byConfiguration: byConfiguration))
    }

    /// An unknown id, with the nearest of `known` as its suggestion.
    public static func unknown(_ id: String, among known: [String]) -> Refusal {
        .unknownSkill(id: id, suggestion: EditDistance.closest(to: id, among: known))
    }

    /// The skill the call named.
    public var skill: String {
        switch kind {
        case .unknownSkill(let id, _): return id
        case .denied(let skill, _, _), .needsConfirmation(let skill, _), .declined(let skill),
            .cannotAskHere(let skill), .hook(let skill, _, _, _), .definitionChanged(let skill, _),
            .disabled(let skill, _, _):
            return skill
        }
    }

    public var code: FailureCode {
        if case .unknownSkill = kind { return .unknownSkill }
        return .notPermitted
    }

    /// The nearest known id of an unknown one, when one is near; nil for other refusals.
    public var suggestion: String? {
        if case .unknownSkill(_, let suggestion) = kind { return suggestion }
        return nil
    }

    /// The skill a composite calls that the refusal is about (denied or disabled), nil when it is the call's own.
    public var step: String? {
        switch kind {
        case .denied(_, _, let step), .disabled(_, let step, _): return step
        default: return nil
        }
    }

    /// Whether the call waits only for a person's yes (it would run once one gives it).
    public var needsConfirmation: Bool {
        if case .needsConfirmation = kind { return true }
        return false
    }

    /// The one sentence for `audience`: what was refused, and how to let it run.
    public func sentence(for audience: Audience) -> String {
        switch kind {
        case .unknownSkill(let id, let suggestion):
            switch (audience.kind, suggestion) {
            case (.mcpClient, let suggestion?): return "Unknown tool: \(id) (did you mean \(suggestion)?)"
            case (.mcpClient, nil): return "Unknown tool: \(id)"
            case (_, let suggestion?): return "unknown skill \"\(id)\" (did you mean \"\(suggestion)\"?)"
            case (.model(let available), nil):
                return "unknown skill \"\(id)\"; available skills: \(available.joined(separator: ", "))"
            case (_, nil): return "unknown skill \"\(id)\"; run skillhost list to see the available skills"
            }
        case .denied(let skill, let rule, let step?):
            return "not run: \(skill) calls \(step), and calls to \(step) are denied by the configuration (policy rule "
                + "\(rule))"
        case .denied(let skill, let rule, nil):
            return "not run: calls to \(skill) are denied by the configuration (policy rule \(rule))"
        case .needsConfirmation(let skill, let risk):
            let kind = risk == .destructive ? "destructive" : "set to ask"
            switch audience.kind {
            case .commandLine:
                return "not run: \(skill) is \(kind); run it again with --yes to confirm, or allow it with a policy "
                    + "rule in config.json"
            case .mcpClient:
                return "not run: \(skill) is \(kind); allow it for MCP clients with a policy rule in config.json "
                    + "(\"policy\": {\"\(skill)\": \"allow\"})"
            case .embedder, .model:
                return "not run: \(skill) is \(kind) and there is no one to confirm it (allow it with a rule in the "
                    + "configuration)"
            }
        case .declined(let skill):
            if audience == .mcpClient { return "not run: the user declined \(skill)" }
            return "not run: the user declined this call"
        case .cannotAskHere(let skill):
            return "not run: \(skill) needs confirming, and a call on the calling thread cannot ask a person "
                + "(confirm it beforehand, or allow it with a policy rule)"
        case .definitionChanged(let skill, let parts):
            return "not run: the definition of \(skill) changed since skillhost first saw it "
                + "(\(parts.joined(separator: ", "))); see what changed with skillhost list, and approve it with "
                + "skillhost trust \(skill)"
        case .hook(let skill, let hook, let event, let reason):
            return "not run: the \(event.rawValue) hook \(hook) refused \(skill): \(reason)"
        case .disabled(let skill, let step, let byConfiguration):
            let off = step ?? skill
            let how =
                byConfiguration
                ? "disabled by \"disabled_skills\" in config.json (take it out of that list to let it run)"
                : "disabled in this conversation (the shell's /enable \(off), or the browser's skills panel, turns it "
                    + "back on)"
            return step == nil ? "not run: \(skill) is \(how)" : "not run: \(skill) calls \(off), which is \(how)"
        }
    }
}
