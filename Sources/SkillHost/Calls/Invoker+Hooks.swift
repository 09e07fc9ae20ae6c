import Dispatch
import Foundation
import SkillJSON

/// Hooks on the call path: `before_call` after the policy (a deny stands, and hooks never see a denied call),
/// `permission` where a person's yes is needed, `after_call` once the outcome is known. Every entry point goes
/// through them; the calling-thread ones hand a hooked call to a task, so hook programs never run on the
/// cooperative pool nor hold a protocol reader.
extension Invoker {
    /// What the hooks made of an admitted call.
    enum HookStep: Sendable {
        case refused(CallRefusal)
        case ready(Prepared)
        /// No hook answered for the person that must: ask them.
        case question(Prepared)
    }

    /// Whether hooks must see this call before it runs: a `before_call` hook matches, or it needs a yes and a
    /// `permission` hook matches.
    func hooksApply(to id: String, asks: Bool) -> Bool {
        guard hasHooks else { return false }
        return !hooks.matching(.beforeCall, id).isEmpty || (asks && !hooks.matching(.permission, id).isEmpty)
    }

    /// Runs the `before_call` hooks in order (a deny or a failure ends it; rewritten arguments are validated again
    /// and the policy decides again on them), then — when a yes is needed — the `permission` hooks, before a
    /// person. `refusal`: what a call that needs a yes gets when no hook gives one and no one can be asked. Blocks
    /// on the hook programs.
    func runHooks(
        _ admitted: Prepared, asks needsYes: Bool, refusal: Refusal?, _ invocation: SkillInvocation
    ) -> HookStep {
        var prepared = admitted
        var asks = needsYes
        var unanswered = refusal
        let skill = prepared.entry.info
        func refuse(_ refusal: Refusal) -> HookStep {
            prepared.release()
            return .refused(CallRefusal(refusal, for: invocation.confirmer.audience, arguments: prepared.arguments))
        }
        for hook in hooks.matching(.beforeCall, skill.id) {
            let answer: HookAnswer
            switch consult(hook, .beforeCall, prepared, invocation) {
            case .failure(let refusal): return refuse(refusal)
            case .success(let given): answer = given
            }
            if answer.decision == .deny {
                return refuse(
                    .hook(skill: skill.id, hook: hook.name, event: .beforeCall, reason: answer.reason ?? "it said deny")
                )
            }
            if answer.decision == .ask {
                asks = true
                unanswered = .hook(
                    skill: skill.id, hook: hook.name, event: .beforeCall,
                    reason: (answer.reason.map { $0 + "; " } ?? "")
                        + "it asks for a person's yes, and no one can give it here")
            }
            guard let rewritten = answer.arguments else { continue }
            switch validate(prepared.entry, .value(rewritten), timeout: prepared.timeout, validated: false) {
            case .failure(let invalid):
                prepared.release()
                return .refused(
                    CallRefusal(
                        .invalidArguments,
                        "the before_call hook \(hook.name) rewrote the arguments of \(skill.id) into ones its schema "
                            + "refuses: \(invalid.failure.message)"))
            case .success(let revalidated): prepared = revalidated
            }
            switch pipeline.decide(prepared.entry, arguments: prepared.arguments, confirmer: invocation.confirmer) {
            case .run: break
            case .ask: asks = true
            case .refuse(let refusal):
                guard refusal.needsConfirmation else { return refuse(refusal) }
                asks = true
                unanswered = refusal
            }
        }
        // A yes given beforehand (`--yes`, typing /undo) is a person's yes: it answers a hook's "ask" too.
        guard asks else { return .ready(prepared) }
        if case .confirmed = invocation.confirmer.answerer.kind { return .ready(prepared) }
        for hook in hooks.matching(.permission, skill.id) {
            switch consult(hook, .permission, prepared, invocation) {
            case .failure(let refusal): return refuse(refusal)
            case .success(let answer) where answer.decision == .allow: return .ready(prepared)
            case .success(let answer) where answer.decision == .deny:
                return refuse(
                    .hook(skill: skill.id, hook: hook.name, event: .permission, reason: answer.reason ?? "it said deny")
                )
            case .success: continue
            }
        }
        switch invocation.confirmer.answerer.kind {
        case .person, .caller: return .question(prepared)
        case .confirmed, .consented, .nobody: break
        }
        return refuse(unanswered ?? .needsConfirmation(skill: skill.id, risk: skill.risk))
    }

    /// Runs `hook` and reads its answer; a failure is a refusal naming it, unless it says `"on_error": "allow"`.
    private func consult(
        _ hook: Hook, _ event: HookEvent, _ prepared: Prepared, _ invocation: SkillInvocation
    ) -> Result<HookAnswer, Refusal> {
        let input = Self.hookInput(event, prepared.entry.info, prepared.arguments, invocation)
        let read = HookProcess.run(hook, input: input, event: event, launcher: hooks.launcher).flatMap(HookAnswer.read)
        switch read {
        case .success(let answer): return .success(answer)
        case .failure(let failure):
            configuration.log(
                LogRecord(level: .warning, source: "hooks", message: "\(event.rawValue) hook \(hook.name) \(failure)"))
            if hook.allowOnError { return .success(HookAnswer()) }
            return .failure(
                .hook(
                    skill: prepared.entry.info.id, hook: hook.name, event: event,
                    reason: "it \(failure) (a hook that fails denies; \"on_error\": \"allow\" on it lets calls run)"))
        }
    }

    /// What a hook reads on standard input.
    static func hookInput(
        _ event: HookEvent, _ skill: SkillInfo, _ arguments: JSONValue, _ invocation: SkillInvocation,
        outcome: SkillOutcome? = nil
    ) -> JSONValue {
        var object = JSONObject([
            (key: "event", value: .string(event.rawValue)), (key: "skill", value: .string(skill.id)),
            (key: "arguments", value: arguments), (key: "risk", value: .string(skill.risk.rawValue)),
            (key: "caller", value: .string(caller(invocation.confirmer))),
            (key: "session", value: invocation.session.map { .string($0) } ?? .null),
        ])
        if let outcome {
            object["outcome"] = outcome.envelope
            object["duration_ms"] = .double((outcome.durationMilliseconds * 1000).rounded() / 1000)
        }
        return .object(object)
    }

    /// Who made the call, for hooks: a person at a front end, a caller that confirmed beforehand, or who cannot be
    /// asked (`command_line`, `mcp_client`, `model`, `embedder`).
    private static func caller(_ confirmer: Confirmer) -> String {
        switch confirmer.answerer.kind {
        case .person: return "person"
        case .confirmed: return "confirmed"
        case .consented: return "confirmed"  // never: `answerer` is not a consent
        case .nobody(let audience), .caller(let audience, _):
            switch audience.kind {
            case .commandLine: return "command_line"
            case .mcpClient: return "mcp_client"
            case .model: return "model"
            case .embedder: return "embedder"
            }
        }
    }

    /// Tells the `after_call` hooks how a call ended, on a thread of their own (they only see: the caller does not
    /// wait for them).
    func afterCall(_ invocation: SkillInvocation, _ entry: SkillEntry, arguments: JSONValue, _ outcome: SkillOutcome) {
        guard hasHooks else { return }  // before the entry's description is copied: most calls stop here
        let matching = hooks.matching(.afterCall, entry.id)
        guard !matching.isEmpty else { return }
        let input = Self.hookInput(.afterCall, entry.info, arguments, invocation, outcome: outcome)
        runWatchingHooks(matching, input: input, event: .afterCall, launcher: hooks.launcher, log: configuration.log)
    }
}

extension SkillRegistry {
    /// Tells the `turn_start` or `turn_end` hooks (every one of the event: their `match` is for calls) about an
    /// agent turn: `detail` joins the event and the session in their input. They only see; the turn does not wait.
    public func turnEvent(_ event: HookEvent, session: String?, detail: JSONObject) {
        guard invoker.hasHooks, event == .turnStart || event == .turnEnd else { return }
        let hooks = invoker.hooks.events[event] ?? []
        guard !hooks.isEmpty else { return }
        var object = JSONObject([
            (key: "event", value: .string(event.rawValue)),
            (key: "session", value: session.map { .string($0) } ?? .null),
        ])
        for (key, value) in detail.members { object[key] = value }
        runWatchingHooks(
            hooks, input: .object(object), event: event, launcher: invoker.hooks.launcher,
            log: invoker.configuration.log)
    }

    /// Waits for the hooks that only see (after_call, turns) to end, at most as long as the longest may take.
    func waitForWatchingHooks() {
        guard invoker.hasHooks else { return }
        let longest = invoker.hooks.events.values.joined().map(\.timeout).max() ?? .zero
        let seconds = Double(longest.components.seconds) + 1
        _ = watchingHooks.wait(timeout: .now() + seconds)
    }
}

/// Where hook programs are waited for when no caller's thread may be (after_call; hooked calls of tasks).
let hookQueue = DispatchQueue(label: "skillhost.hooks", attributes: .concurrent)
/// The hooks that only see (after_call, turns) still running: a host that ends waits for them (`shutdown`), so a
/// short-lived command's last after_call is not cut off.
let watchingHooks = DispatchGroup()

/// Runs hooks that only see, on `hookQueue`, counted in `watchingHooks`; failures are logged.
func runWatchingHooks(
    _ hooks: [Hook], input: JSONValue, event: HookEvent, launcher: String?,
    log: @escaping @Sendable (LogRecord) -> Void
) {
    watchingHooks.enter()
    hookQueue.async {
        defer { watchingHooks.leave() }
        for hook in hooks {
            if case .failure(let failure) = HookProcess.run(hook, input: input, event: event, launcher: launcher) {
                log(
                    LogRecord(
                        level: .warning, source: "hooks", message: "\(event.rawValue) hook \(hook.name) \(failure)"))
            }
        }
    }
}

extension Invoker {
    /// `runHooks` off the cooperative pool.
    func runHooksOffPool(
        _ admitted: Prepared, asks: Bool, refusal: Refusal?, _ invocation: SkillInvocation
    ) async -> HookStep {
        await withCheckedContinuation { continuation in
            hookQueue.async { [self] in
                continuation.resume(returning: runHooks(admitted, asks: asks, refusal: refusal, invocation))
            }
        }
    }
}
