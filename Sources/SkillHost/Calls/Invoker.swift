import Dispatch
import Foundation
import SkillJSON
import Synchronization

/// Runs calls. Every path takes the same steps once — look the skill up, validate the arguments (lenient
/// coercions, defaults), ask the policy (and the confirmer when it says ask), then run on the entry's backend:
/// the invocation runner for plugin skills, a deadline race for external tools.
///
/// A class, not a struct: each call's closures capture it, and a struct of this size (the configuration's closures,
/// policy, hooks and clock) cost a retain and a release per field at every capture.
final class Invoker: Sendable {
    let catalog: Catalog
    let runner: InvocationRunner
    let configuration: SkillRegistry.Configuration
    /// The decision every call takes, on the configuration's policy.
    let pipeline: CallPipeline
    /// The clock's current instant as a closure made once (validation asks it without a per-call allocation).
    let now: @Sendable () -> ContinuousClock.Instant
    /// Whether any hook is configured (calls without hooks pay one test of this).
    let hasHooks: Bool

    init(catalog: Catalog, runner: InvocationRunner, configuration: SkillRegistry.Configuration) {
        self.catalog = catalog
        self.runner = runner
        self.configuration = configuration
        pipeline = CallPipeline(
            policy: configuration.policy,
            pins: configuration.pinsFile.map { DefinitionPins(file: $0, log: configuration.log) },
            disabled: configuration.disabledSkills)
        hasHooks = !configuration.hooks.isEmpty
        let clock = configuration.clock
        now = { clock.now }
    }

    /// A call that passed lookup and validation. While it exists its plugin counts one user more; `release()`
    /// gives it back.
    struct Prepared: Sendable {
        let entry: SkillEntry
        let arguments: JSONValue
        /// The caller's text when validation changed nothing (a JSON skill gets it as it is).
        let text: String?
        /// How long validation took: it counts against the call's deadline.
        let validated: Duration
        /// The caller's deadline, else the skill's, else the host default.
        let timeout: Duration

        func release() { entry.plugin?.release() }
    }

    /// What became of a call before it runs: every entry point starts here, so each decides the same way.
    enum Admission: Sendable {
        case refused(CallRefusal)
        case ready(Prepared)
        /// A person must say yes first (`confirm`).
        case question(Prepared)
        /// Hooks must see it first (`runHooks`): `asks`, it needs a yes; `refusal`, what it gets when nobody gives
        /// one.
        case hooked(Prepared, asks: Bool, refusal: Refusal?)
    }

    /// The configuration's hooks.
    var hooks: Hooks { configuration.hooks }

    /// Lookup, validation and the call pipeline's decision. For `.ready` and `.question` the plugin counts one
    /// user more.
    func admit(_ invocation: SkillInvocation) -> Admission {
        let prepared: Prepared
        switch prepare(invocation) {
        case .failure(let rejection): return .refused(rejection)
        case .success(let p): prepared = p
        }
        if let refusal = pipeline.disabled(prepared.entry.info, also: invocation.disabledSkills) {
            prepared.release()
            return .refused(CallRefusal(refusal, for: invocation.confirmer.audience, arguments: prepared.arguments))
        }
        switch pipeline.decide(prepared.entry, arguments: prepared.arguments, confirmer: invocation.confirmer) {
        case .run:
            if hooksApply(to: prepared.entry.id, asks: false) {
                return .hooked(prepared, asks: false, refusal: nil)
            }
            return .ready(prepared)
        case .ask:
            if hooksApply(to: prepared.entry.id, asks: true) { return .hooked(prepared, asks: true, refusal: nil) }
            return .question(prepared)
        case .refuse(let refusal):
            // A permission hook may give the yes no one here can.
            if refusal.needsConfirmation, hooksApply(to: prepared.entry.id, asks: true) {
                return .hooked(prepared, asks: true, refusal: refusal)
            }
            prepared.release()
            return .refused(
                CallRefusal(refusal, for: invocation.confirmer.audience, arguments: prepared.arguments))
        }
    }

    /// Asks the invocation's person about a call admitted with a question; on a no the plugin is given back.
    func confirm(_ prepared: Prepared, _ invocation: SkillInvocation) async -> Result<Prepared, CallRefusal> {
        let refusal = await pipeline.ask(
            prepared.entry.info, arguments: prepared.arguments, invocation.confirmer)
        guard let refusal else { return .success(prepared) }
        prepared.release()
        return .failure(
            CallRefusal(refusal, for: invocation.confirmer.audience, arguments: prepared.arguments))
    }

    // MARK: Entry points

    func invoke(_ invocation: SkillInvocation) async -> SkillOutcome {
        let start = ContinuousClock.now
        switch await permit(invocation) {
        case .failure(let rejection): return rejection.outcome(after: .now - start)
        case .success(let prepared):
            defer { prepared.release() }
            return await run(prepared, invocation, start: start)
        }
    }

    /// Everything before the call runs, asking the person when the decision says so. On success the plugin counts
    /// one user more.
    func permit(_ invocation: SkillInvocation) async -> Result<Prepared, CallRefusal> {
        await permitAdmitted(admit(invocation), invocation)
    }

    func start(
        _ invocation: SkillInvocation, onCallingThread: Bool, onHandle: (CallHandle) -> Void,
        completion: @escaping @Sendable (SkillOutcome) -> Void
    ) -> CallHandle {
        let start = ContinuousClock.now
        let prepared: Prepared
        let admitted = admit(invocation)
        switch admitted {
        case .refused(let rejection):
            completion(rejection.outcome(after: .now - start))
            return CallHandle {}
        case .question, .hooked:
            // Only a person is asked, and hooks are waited for, on a task — never on this thread.
            let task = Task {
                switch await permitAdmitted(admitted, invocation) {
                case .failure(let rejection): completion(rejection.outcome(after: .now - start))
                case .success(let prepared):
                    defer { prepared.release() }
                    completion(await run(prepared, invocation, start: start))
                }
            }
            let handle = CallHandle { task.cancel() }
            onHandle(handle)
            return handle
        case .ready(let p): prepared = p
        }
        invocation.onStart?(prepared.arguments)
        switch prepared.entry {
        case .external, .composite:
            let task = Task {
                defer { prepared.release() }
                let outcome = await runOffRunner(prepared, invocation).took(.now - start)
                afterCall(invocation, prepared.entry, arguments: prepared.arguments, outcome)
                completion(outcome)
            }
            let handle = CallHandle { task.cancel() }
            onHandle(handle)
            return handle
        case .plugin(let skill):
            let job = job(skill, prepared, invocation)
            let finish: @Sendable (SkillOutcome) -> Void = { [self] ended in
                let outcome = ownUndo(ended, of: skill)
                prepared.release()
                afterCall(invocation, prepared.entry, arguments: prepared.arguments, outcome)
                completion(outcome)
            }
            let handle = CallHandle(runner, job)
            onHandle(handle)
            if onCallingThread {
                runner.runOnCallingThread(job, completion: finish)
            } else {
                runner.start(job, completion: finish)
            }
            return handle
        }
    }

    /// Runs the call on the calling thread, with no deadline of its own (a worker's host keeps the deadline; a
    /// benchmark measures the call without the hand-off). A call that needs a person's answer is refused here.
    /// `cancellation` is the call's (a worker's, which the host can cancel); nil: made when the call needs one (a
    /// typed skill never does).
    ///
    /// - Important: runs plugin code on the calling thread; never call it from the Swift cooperative pool.
    func invokeOnCurrentThread(_ invocation: SkillInvocation, cancellation: CallCancellation? = nil) -> SkillOutcome {
        let start = ContinuousClock.now
        if let outcome = shortCall(invocation, cancellation: cancellation) { return outcome.took(.now - start) }
        let prepared: Prepared
        switch admit(invocation) {
        case .refused(let rejection): return rejection.outcome(after: .now - start)
        case .question(let asked):
            asked.release()
            return SkillOutcome.refused(.cannotAskHere(skill: asked.entry.info.id), for: invocation.confirmer.audience)
                .took(.now - start)
        case .hooked(let admitted, let asks, let refusal):
            // A thread that may block: the hooks run here.
            switch runHooks(admitted, asks: asks, refusal: refusal, invocation) {
            case .refused(let rejection): return rejection.outcome(after: .now - start)
            case .question(let asked):
                asked.release()
                return SkillOutcome.refused(
                    .cannotAskHere(skill: asked.entry.info.id), for: invocation.confirmer.audience
                ).took(.now - start)
            case .ready(let p): prepared = p
            }
        case .ready(let p): prepared = p
        }
        defer { prepared.release() }
        invocation.onStart?(prepared.arguments)
        let outcome: SkillOutcome
        switch prepared.entry {
        case .plugin(let skill):
            outcome = ownUndo(
                skill.execute(
                    arguments: prepared.arguments, argumentText: prepared.text, resultLimit: configuration.resultLimit,
                    context: context(skill, invocation, cancellation: cancellation ?? CallCancellation())),
                of: skill)
        case .external, .composite:
            let box = Mutex<SkillOutcome?>(nil)
            let done = DispatchSemaphore(value: 0)
            Task {
                let result = await runOffRunner(prepared, invocation)
                box.withLock { $0 = result }
                done.signal()
            }
            done.wait()
            outcome =
                box.withLock { $0 } ?? .failure(code: .failed, "\(prepared.entry.info.id) ended without an outcome")
        }
        let ended = outcome.took(.now - start)
        afterCall(invocation, prepared.entry, arguments: prepared.arguments, ended)
        return ended
    }

    /// A worker's call on its lane: when it may go the short way (as `shortCall` for a JSON skill given validated
    /// text), a plain success comes back as the plugin's result text, unparsed (`Skill.executeForLane`); any other
    /// call is `invokeOnCurrentThread`'s.
    ///
    /// - Important: runs plugin code on the calling thread; never call it from the Swift cooperative pool.
    func invokeForLane(_ invocation: SkillInvocation, cancellation: CallCancellation) -> Skill.LaneAnswer {
        if !hasHooks, invocation.onStart == nil, invocation.argumentsValidated, invocation.disabledSkills.isEmpty,
            case .text(let text) = invocation.arguments, let entry = catalog.acquire(invocation.skill)
        {
            defer { entry.plugin?.release() }
            if pipeline.runsUnlooked(entry), case .plugin(let skill) = entry,
                let answer = skill.executeForLane(
                    argumentText: Self.orEmptyObject(text),
                    context: context(skill, invocation, cancellation: cancellation))
            {
                return answer
            }
        }
        return .outcome(invokeOnCurrentThread(invocation, cancellation: cancellation))
    }

    // MARK: Steps

    /// A call the short way, when nothing would look at its arguments as a value: no hooks, nobody to tell it
    /// starts, a skill that runs unlooked (`CallPipeline.runsUnlooked`) and arguments as text. Either a typed skill
    /// given plain text (`Skill.executePlain`), or a JSON skill given text a validator already checked (a worker's
    /// call: its host validated them) — the text goes to the plugin as it is, unparsed. Nil: the call takes the
    /// general way (which looks the skill up again).
    private func shortCall(_ invocation: SkillInvocation, cancellation: CallCancellation?) -> SkillOutcome? {
        guard !hasHooks, invocation.onStart == nil, invocation.disabledSkills.isEmpty,
            case .text(let text) = invocation.arguments, let entry = catalog.acquire(invocation.skill)
        else { return nil }
        defer { entry.plugin?.release() }
        guard pipeline.runsUnlooked(entry), case .plugin(let skill) = entry else { return nil }
        if invocation.argumentsValidated, case .json = skill.implementation {
            return ownUndo(
                skill.execute(
                    arguments: .null, argumentText: Self.orEmptyObject(text), resultLimit: configuration.resultLimit,
                    context: context(skill, invocation, cancellation: cancellation ?? CallCancellation())),
                of: skill)
        }
        return skill.executePlain(argumentText: text, resultLimit: configuration.resultLimit).map {
            ownUndo($0, of: skill)
        }
    }

    /// `outcome` with its undo only when the undo calls a skill of the same plugin (the same file) as `skill`: a
    /// plugin that registered another plugin's skill (`notes_delete {"id":1}` as the undo of its `polish_text`)
    /// would make /undo and a rewind run what the person never did, under the name of what they did.
    func ownUndo(_ outcome: SkillOutcome, of skill: Skill) -> SkillOutcome {
        guard let undo = outcome.undo else { return outcome }
        if let target = catalog.entry(undo.skillID)?.info, target.plugin == skill.info.plugin,
            target.file == skill.info.file
        {
            return outcome
        }
        configuration.log(
            LogRecord(
                level: .warning, source: skill.info.plugin,
                message: "\(skill.info.id): set_undo ignored: it named \(undo.skillID), which is not a skill of plugin "
                    + "\"\(skill.info.plugin)\"; an undo may only call its own plugin's skills"))
        var kept = outcome
        kept.undo = nil
        return kept
    }

    /// `{}` for blank argument text, else the text.
    static func orEmptyObject(_ text: String) -> String {
        text.utf8.allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D } ? "{}" : text
    }

    /// Looks the skill up (taking a user of its plugin) and validates the arguments.
    func prepare(_ invocation: SkillInvocation) -> Result<Prepared, CallRefusal> {
        guard let entry = catalog.acquire(invocation.skill) else {
            return .failure(
                CallRefusal(.unknown(invocation.skill, among: catalog.ids), for: invocation.confirmer.audience))
        }
        if let definition = invocation.definition, !definition.decidesAlike(entry.info) {
            entry.plugin?.release()
            return .failure(
                CallRefusal(
                    .failed,
                    "\(invocation.skill) did not run: a new version of it was loaded while the call was prepared; ask "
                        + "for it again"))
        }
        let timeout = invocation.timeout ?? entry.timeout ?? configuration.defaultTimeout
        if case .composite(let composite) = entry, let missing = composite.plan?.missing.first {
            return .failure(
                CallRefusal(
                    .failed,
                    "\(invocation.skill) did not run: it calls \(missing), which is not registered (load the plugin "
                        + "or server that provides it, or fix \(composite.file))"))
        }
        let result = validate(
            entry, invocation.arguments, timeout: timeout, validated: invocation.argumentsValidated)
        if case .failure = result { entry.plugin?.release() }
        return result
    }

    /// Parses and validates the arguments under the call's deadline (the time it takes counts against it).
    func validate(
        _ entry: SkillEntry, _ arguments: SkillInvocation.Arguments, timeout: Duration, validated: Bool
    ) -> Result<Prepared, CallRefusal> {
        let value: JSONValue
        let text: String?
        switch arguments {
        case .value(let given):
            value = given
            text = nil
        case .text(let given):
            text = Self.orEmptyObject(given)
            do {
                value = try JSONValue(parsing: text ?? "{}")
            } catch {
                return .failure(CallRefusal(.invalidArguments, "arguments are not valid JSON: \(error)"))
            }
        }
        guard let schema = entry.schema, !validated else {
            return .success(Prepared(entry: entry, arguments: value, text: text, validated: .zero, timeout: timeout))
        }
        // A typed skill's generated schema is its signature: arguments that match it as given need no walk.
        if case .plugin(let skill) = entry, skill.info.schemaIsGenerated,
            case .typed(let function) = skill.implementation,
            function.acceptsAsGiven(value)
        {
            return .success(Prepared(entry: entry, arguments: value, text: text, validated: .zero, timeout: timeout))
        }
        // Only a schema that can cost more than a walk over the value needs the deadline (and the clock reads);
        // the step budget bounds every validation.
        let started = schema.mayBeCostly ? configuration.clock.now : nil
        var options = ValidationOptions.lenient
        if let started {
            options.deadline = started + timeout
            options.now = now
        }
        switch schema.check(value, options: options) {
        case .failure(let invalid) where invalid.stop == .deadline:
            return .failure(
                CallRefusal(
                    .timeout,
                    Deadline.timedOut(entry.info.id, after: timeout) + " while its arguments were checked "
                        + "against its schema (the schema is too costly for them)"))
        case .failure(let invalid):
            return .failure(CallRefusal(.invalidArguments, invalid.issues.summary))
        case .success(let replacement):
            return .success(
                Prepared(
                    entry: entry, arguments: replacement ?? value, text: replacement == nil ? text : nil,
                    validated: started.map { configuration.clock.now - $0 } ?? .zero, timeout: timeout))
        }
    }

    /// Runs a permitted call on its backend.
    func run(_ prepared: Prepared, _ invocation: SkillInvocation, start: ContinuousClock.Instant) async
        -> SkillOutcome
    {
        invocation.onStart?(prepared.arguments)
        let outcome: SkillOutcome
        switch prepared.entry {
        case .plugin(let skill): outcome = ownUndo(await runner.run(job(skill, prepared, invocation)), of: skill)
        case .external, .composite: outcome = await runOffRunner(prepared, invocation).took(.now - start)
        }
        afterCall(invocation, prepared.entry, arguments: prepared.arguments, outcome)
        return outcome
    }

    /// The rest of `permit` for a call `admit` left with a question or hooks.
    private func permitAdmitted(_ admitted: Admission, _ invocation: SkillInvocation) async -> Result<
        Prepared, CallRefusal
    > {
        switch admitted {
        case .refused(let rejection): return .failure(rejection)
        case .ready(let prepared): return .success(prepared)
        case .question(let prepared): return await confirm(prepared, invocation)
        case .hooked(let prepared, let asks, let refusal):
            switch await runHooksOffPool(prepared, asks: asks, refusal: refusal, invocation) {
            case .refused(let rejection): return .failure(rejection)
            case .ready(let prepared): return .success(prepared)
            case .question(let prepared): return await confirm(prepared, invocation)
            }
        }
    }

    /// Runs an external tool or a composite: what the invocation runner does not run.
    private func runOffRunner(_ prepared: Prepared, _ invocation: SkillInvocation) async -> SkillOutcome {
        switch prepared.entry {
        case .plugin: preconditionFailure("a plugin skill runs on the invocation runner")
        case .external(let tool): return await runExternal(tool.skill, prepared)
        case .composite(let composite): return await runComposite(composite, prepared, invocation)
        }
    }

    private func context(_ skill: Skill, _ invocation: SkillInvocation, cancellation: CallCancellation = .init())
        -> CallContext
    {
        CallContext(
            skill: skill, onProgress: invocation.onProgress, log: configuration.log,
            resultLimit: configuration.resultLimit, cancellation: cancellation, client: configuration.client,
            session: invocation.session, callerContext: invocation.callerContext)
    }

    /// The runner's job for a prepared call.
    private func job(_ skill: Skill, _ prepared: Prepared, _ invocation: SkillInvocation) -> Job {
        Job(
            skill: skill, arguments: prepared.arguments, argumentText: prepared.text,
            context: context(skill, invocation), timeout: prepared.timeout, spent: prepared.validated)
    }

    /// Runs an external call racing its deadline on the host's clock; cancelling the caller cancels the call.
    private func runExternal(_ skill: ExternalSkill, _ prepared: Prepared) async -> SkillOutcome {
        let id = skill.info.id
        let call = skill.call
        let value = prepared.arguments
        let named = prepared.timeout
        let outcome = await configuration.clock.race(max(prepared.timeout - prepared.validated, .zero)) {
            await call(value)
        } expired: {
            .failure(code: .timeout, Deadline.timedOut(id, after: named))
        }
        if Task.isCancelled { return .failure(code: .cancelled, "\(id) was cancelled") }
        return outcome
    }
}

extension SkillOutcome {
    /// The outcome with its duration set.
    func took(_ duration: Duration) -> SkillOutcome {
        var outcome = self
        outcome.duration = duration
        return outcome
    }
}
