import SkillHost
import SkillJSON

/// What an agent session needs of the skills it offers the model: the registry — or a stand-in, so agent tests
/// can script skills without compiling plugins.
package protocol AgentSkills: Sendable {
    /// Every skill there is, sorted by id.
    var skills: [SkillInfo] { get }
    func skill(_ id: String) -> SkillInfo?
    /// Lookup, validation, policy and confirmation: a call ready to run, or why it may not.
    func prepareCall(_ invocation: SkillInvocation) async -> Result<any ReadySkillCall, CallRefusal>
    /// The state snapshots of these plugins (ABI 1.1), for the model; none by default.
    func snapshots(of plugins: [String]) async -> [PluginState]
    /// A turn starts or ends (the registry runs its `turn_start`/`turn_end` hooks); nothing by default.
    func turnEvent(_ event: HookEvent, session: String?, detail: JSONObject)
    /// Whether `skill` may be offered to the model: its definition is approved (as first seen, or trusted since:
    /// one that changed reaches no model — its new description may be the stranger's instruction), and neither it
    /// nor a step of it is disabled (here, or in `disabled`: the session's). By default, when it is not in
    /// `disabled`.
    func isOffered(_ skill: SkillInfo, disabled: Set<String>) -> Bool
    /// The skills of `skills` that are offered (`isOffered`), decided in one batch.
    func offered(_ skills: [SkillInfo], disabled: Set<String>) -> [SkillInfo]
}

extension AgentSkills {
    package func snapshots(of plugins: [String]) async -> [PluginState] { [] }
    package func turnEvent(_ event: HookEvent, session: String?, detail: JSONObject) {}
    package func isOffered(_ skill: SkillInfo, disabled: Set<String>) -> Bool { !disabled.contains(skill.id) }
    package func offered(_ skills: [SkillInfo], disabled: Set<String>) -> [SkillInfo] {
        skills.filter { isOffered($0, disabled: disabled) }
    }

    /// Runs a call through the pipeline (lookup, validation, policy, confirmation) as any call is.
    package func invoke(_ invocation: SkillInvocation) async -> SkillOutcome {
        switch await prepareCall(invocation) {
        case .success(let ready): return await ready.run()
        case .failure(let refusal): return SkillOutcome(.failure(refusal.failure))
        }
    }
}

/// A call that passed everything before running.
package protocol ReadySkillCall: Sendable {
    /// The validated arguments: what runs.
    var arguments: JSONValue { get }
    /// Runs it under its deadline.
    func run() async -> SkillOutcome
}

extension PreparedCall: ReadySkillCall {}

extension SkillRegistry: AgentSkills {

    package func prepareCall(_ invocation: SkillInvocation) async -> Result<any ReadySkillCall, CallRefusal> {
        await prepare(invocation).map { $0 }
    }
}
