import SkillJSON
import Synchronization

/// One call of a skill, as one value: what to call, with what, under which deadline, who confirms it, and who
/// hears its progress. `SkillRegistry.invoke(_:)` and `start(_:completion:)` take it.
///
/// ```swift
/// let call = SkillInvocation(skill: "calculator", arguments: ["expression": "(23+7)*2"])
/// let outcome = await registry.invoke(call)
/// ```
public struct SkillInvocation: Sendable {
    /// The arguments as the caller has them: a value, or JSON text (text is passed on unchanged to a JSON skill
    /// when validation changes nothing, so it is never parsed and printed again).
    public enum Arguments: Sendable, Equatable {
        case value(JSONValue)
        /// JSON text; blank text means `{}`.
        case text(String)
    }

    /// The skill id.
    public var skill: String
    public var arguments: Arguments
    /// Overrides the skill's `timeout_ms` and the host default.
    public var timeout: Duration?
    /// Who answers when the policy says the call needs confirming.
    public var confirmer: Confirmer
    /// Receives `report_progress` calls, on the plugin's thread.
    public var onProgress: (@Sendable (SkillProgress) -> Void)?
    /// Called once the call is permitted, with its validated arguments, just before it runs (the agent shows the
    /// call then).
    public var onStart: (@Sendable (JSONValue) -> Void)?
    /// The conversation the call belongs to, as skills see it (`session` in their context); nil outside one.
    public var session: String?
    /// The context the skill sees as JSON text; nil: the registry's own (a worker passes the host's on).
    package var callerContext: String?
    /// Skills the caller turned off besides the configuration's (the shell's `/disable`): refused, directly or as
    /// a composite's step, and passed on to every step.
    package var disabledSkills: Set<String> = []
    /// Asked before each step a composite runs (the composite itself was counted by the caller), and passed on to
    /// the steps: nil to go on, or why not (a budget of calls spent) — the composite stops there, undoing what it
    /// had changed. A budget of calls thereby counts steps as the calls they are.
    package var stepAllowance: (@Sendable () -> String?)?
    /// The definition the caller looked the skill up as, and decided by (an agent turn runs read-only calls
    /// together): the call runs only while the registry's entry still says the same (`SkillInfo.decidesAlike`), so
    /// a plugin reloaded in between as something else is not run under what was decided of the old one. Nil:
    /// whatever the registry has.
    package var definition: SkillInfo?
    /// The arguments were validated against this skill's schema by whoever sent the call: a worker's host validated
    /// them (coerced, defaults filled in) against the schema the worker itself described, so the worker does not
    /// walk them again.
    var argumentsValidated = false
    /// The composite skills this call runs inside (0 outside one), and the calls the outermost may still make.
    var compositeDepth = 0
    var compositeBudget: CompositeBudget?

    /// - Parameter confirmer: defaults to nobody: destructive calls (and calls a rule says to ask about) are
    ///   refused, everything else runs.
    public init(
        skill: String, arguments: JSONValue = .object(JSONObject()), timeout: Duration? = nil,
        confirmer: Confirmer = .nobodyToAsk, onProgress: (@Sendable (SkillProgress) -> Void)? = nil
    ) {
        self.skill = skill
        self.arguments = .value(arguments)
        self.timeout = timeout
        self.confirmer = confirmer
        self.onProgress = onProgress
    }

    /// A call whose arguments are JSON text (`""` means `{}`).
    public init(
        skill: String, argumentText: String, timeout: Duration? = nil, confirmer: Confirmer = .nobodyToAsk,
        onProgress: (@Sendable (SkillProgress) -> Void)? = nil
    ) {
        self.skill = skill
        self.arguments = .text(argumentText)
        self.timeout = timeout
        self.confirmer = confirmer
        self.onProgress = onProgress
    }
}

/// A call that passed lookup, validation and the policy, and has not run yet: `SkillRegistry.prepare(_:)` makes
/// it, `run()` runs it. Lets a front end announce several calls in order and then run them at once.
///
/// While it exists, the skill's plugin is not retired; dropping it without running it gives the plugin back.
public final class PreparedCall: Sendable {
    /// The skill as it was looked up.
    public var skill: SkillInfo { prepared.entry.info }
    /// The validated arguments (coerced, defaults filled in): what runs.
    public var arguments: JSONValue { prepared.arguments }

    let prepared: Invoker.Prepared
    let invocation: SkillInvocation
    let start: ContinuousClock.Instant
    private let invoker: Invoker
    private let taken = Atomic<Bool>(false)

    init(_ prepared: Invoker.Prepared, _ invocation: SkillInvocation, start: ContinuousClock.Instant, invoker: Invoker)
    {
        self.invoker = invoker
        self.prepared = prepared
        self.invocation = invocation
        self.start = start
    }

    /// Runs the call under its deadline (once; running it again is an error outcome).
    public func run() async -> SkillOutcome {
        guard take() else { return .failure(code: .failed, "\(skill.id): this prepared call already ran") }
        defer { prepared.release() }
        return await invoker.run(prepared, invocation, start: start)
    }

    /// True the first time: the caller runs the call and gives the plugin back.
    private func take() -> Bool { !taken.exchange(true, ordering: .acquiringAndReleasing) }

    deinit { if take() { prepared.release() } }
}

/// A call refused before it ran (unknown skill, arguments that do not validate, a rule, a person's no): always a
/// failure, and its validated arguments when it got that far.
public struct CallRefusal: Error, Sendable {
    public let failure: SkillFailure
    /// The arguments as validated, when the call was refused after validation.
    public let arguments: JSONValue?

    public init(_ failure: SkillFailure, arguments: JSONValue? = nil) {
        self.failure = failure
        self.arguments = arguments
    }

    /// A refusal from the call pipeline, with its sentence for `audience`.
    init(_ refusal: Refusal, for audience: Audience, arguments: JSONValue? = nil) {
        self.init(SkillFailure(refusal, for: audience), arguments: arguments)
    }

    /// A refusal that is not the pipeline's (the call cannot run as asked): its code and sentence.
    init(_ code: FailureCode, _ message: String) { self.init(SkillFailure(code: code, message: message)) }

    /// The refusal as the outcome of a call that took `duration` to refuse.
    public func outcome(after duration: Duration) -> SkillOutcome {
        SkillOutcome(.failure(failure), duration: duration)
    }
}
