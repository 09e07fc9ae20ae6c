import SkillJSON
import Synchronization

/// The calls one run of a composite may still make, shared with the composites it calls.
final class CompositeBudget: Sendable {
    private let left = Atomic<Int>(CompositeLimits.calls)

    /// True while calls are left (taking one).
    func take() -> Bool { left.subtract(1, ordering: .relaxed).newValue >= 0 }
}

extension Invoker {
    /// Runs a permitted composite: its steps in order under its one deadline. Its steps were permitted with it (the
    /// policy's gate for a composite covers its steps' rules about every call), so what that covered runs; a rule
    /// about a step's arguments or a hook that says ask is asked of the composite's caller; a deny still wins.
    func runComposite(_ composite: CompositeSkill, _ prepared: Prepared, _ invocation: SkillInvocation) async
        -> SkillOutcome
    {
        var run = CompositeRun(
            definition: composite.definition, invoker: self, invocation: invocation, arguments: prepared.arguments,
            timeout: prepared.timeout, deadline: configuration.clock.now + prepared.timeout - prepared.validated,
            file: composite.file)
        return await run.run()
    }
}

/// One run of a composite skill: the scope references read, the changes made so far (to undo them when a later
/// step fails), and the deadline every step's own is cut to.
struct CompositeRun {
    let definition: CompositeDefinition
    let invoker: Invoker
    let invocation: SkillInvocation
    let timeout: Duration
    let deadline: ContinuousClock.Instant
    /// The composite's file, for sentences that send the user to it.
    let file: String
    private var scope: CompositeScope
    /// What each skill it calls risks and how long it may take, looked up once before the first step.
    private var skills: [String: (risk: SkillRisk, timeout: Duration)] = [:]
    /// Successful calls of skills that change something, in order, with the undo each registered.
    private var changes: [(skill: String, undo: UndoAction?)] = []
    private let budget: CompositeBudget

    init(
        definition: CompositeDefinition, invoker: Invoker, invocation: SkillInvocation, arguments: JSONValue,
        timeout: Duration, deadline: ContinuousClock.Instant, file: String
    ) {
        self.file = file
        self.definition = definition
        self.invoker = invoker
        self.invocation = invocation
        self.timeout = timeout
        self.deadline = deadline
        scope = CompositeScope(input: arguments)
        budget = invocation.compositeBudget ?? CompositeBudget()
    }

    private var id: String { definition.id }

    mutating func run() async -> SkillOutcome {
        if let refusal = preflight() { return refusal }
        let total = definition.steps.count
        var last: JSONValue = .null
        for (offset, step) in definition.steps.enumerated() {
            let number = offset + 1
            switch step {
            case .result(let template):
                report(number, of: total, "result")
                do throws(CompositeError) { last = try template.evaluate(in: scope) } catch {
                    return await stopped(at: number, "result", .failure(code: .failed, error.description))
                }
            case .call(let call):
                report(number, of: total, call.skill)
                let value: JSONValue
                switch await perform(call, number: number, total: total) {
                case .success(let v): value = v
                case .failure(let stop): return stop.outcome
                }
                if let name = call.name { scope.bound[name] = value }
                last = value
            }
        }
        // The result is bounded like a plugin's: a template may repeat a large value.
        let limit = invoker.configuration.resultLimit
        if Self.size(of: last, upTo: limit) > limit {
            let lastStep: String
            switch definition.steps.last {
            case .call(let call)?: lastStep = call.skill
            default: lastStep = "result"
            }
            return await stopped(
                at: total, lastStep,
                .failure(code: .failed, "its result is over \(byteCount(limit)) (max_result_mb in config.json)"))
        }
        return .success(last, undo: combinedUndo())
    }

    /// About how many bytes `value` takes as JSON text, counted no further than just past `limit`.
    static func size(of value: JSONValue, upTo limit: Int) -> Int {
        var total = 0
        var pending: [JSONValue] = [value]
        while let next = pending.popLast(), total <= limit {
            switch next {
            case .string(let text): total += text.utf8.count + 2
            case .array(let elements):
                total += 2 + elements.count
                pending.append(contentsOf: elements)
            case .object(let object):
                total += 2
                for member in object.members {
                    total += member.key.utf8.count + 4
                    pending.append(member.value)
                }
            default: total += 8
            }
        }
        return total
    }

    /// Before anything runs: every step's skill is registered, and arguments that need nothing but the input are
    /// valid for their skill. Returns the refusal, or nil to go on.
    private mutating func preflight() -> SkillOutcome? {
        guard invocation.compositeDepth < CompositeLimits.depth else {
            return .failure(
                code: .failed,
                "\(id) did not run: composite skills call each other more than \(CompositeLimits.depth) deep")
        }
        for (offset, step) in definition.steps.enumerated() {
            guard case .call(let call) = step else { continue }
            guard let entry = invoker.catalog.entry(call.skill) else {
                return .failure(
                    code: .failed,
                    "\(id) did not run: step \(offset + 1) calls \(call.skill), which is not registered (load the "
                        + "plugin or server that provides it, or fix the step in \(file))")
            }
            // A skill only its plugin's views may call is no step of a composite (which a model calls).
            guard entry.info.audience.contains(.model) else {
                return .failure(
                    code: .notPermitted,
                    "\(id) did not run: step \(offset + 1) calls \(call.skill), which is for plugin "
                        + "\(entry.info.plugin)'s views only (remove the step from \(file))")
            }
            skills[call.skill] = (entry.info.risk, entry.timeout ?? invoker.configuration.defaultTimeout)
            guard call.needsOnlyInput, let schema = entry.schema else { continue }
            // Under the composite's deadline, as the invoker validates a call's arguments under the call's.
            var options = ValidationOptions.lenient
            if schema.mayBeCostly {
                options.deadline = deadline
                options.now = invoker.now
            }
            do throws(CompositeError) {
                let arguments = try call.arguments.evaluate(in: scope)
                switch schema.check(arguments, options: options) {
                case .failure(let invalid) where invalid.stop == .deadline:
                    return timedOut(at: offset + 1, call.skill)
                case .failure(let invalid):
                    return .failure(
                        code: .invalidArguments,
                        "\(id) did not run: step \(offset + 1) (\(call.skill)) would get invalid arguments: "
                            + invalid.issues.summary)
                case .success: break
                }
            } catch {
                return .failure(code: .invalidArguments, "\(id) did not run: step \(offset + 1): \(error)")
            }
        }
        return nil
    }

    /// A step that stopped the composite: the composite's outcome, with what ran before it reported (and undone).
    private struct Stop: Error {
        let outcome: SkillOutcome
    }

    /// Runs one call step (once, or once per element of its `for_each`); its value is the result (or the array
    /// of results).
    private mutating func perform(_ call: CompositeDefinition.Call, number: Int, total: Int) async -> Result<
        JSONValue, Stop
    > {
        guard let each = call.forEach else {
            return await callOnce(call, number: number)
        }
        let items: [JSONValue]
        do throws(CompositeError) {
            let value = try each.resolve(in: scope)
            guard let array = value.arrayValue else {
                throw CompositeError("\"for_each\": \(each.written) is \(value.typeName), not an array")
            }
            guard array.count <= CompositeLimits.forEachItems else {
                throw CompositeError(
                    "\"for_each\": \(each.written) has \(array.count) elements; a step runs over at most "
                        + "\(CompositeLimits.forEachItems)")
            }
            items = array
        } catch {
            return .failure(
                Stop(outcome: await stopped(at: number, call.skill, .failure(code: .failed, error.description))))
        }
        var results: [JSONValue] = []
        results.reserveCapacity(items.count)
        // What the results of one step keep is bounded like one result (each result already is).
        let limit = invoker.configuration.resultLimit
        var kept = 0
        for (index, item) in items.enumerated() {
            scope.item = item
            scope.index = index
            if items.count > 1 { report(number, of: total, "\(call.skill) (\(index + 1) of \(items.count))") }
            switch await callOnce(call, number: number) {
            case .success(let value):
                kept += Self.size(of: value, upTo: limit)
                guard kept <= limit else {
                    return .failure(
                        Stop(
                            outcome: await stopped(
                                at: number, call.skill,
                                .failure(
                                    code: .failed,
                                    "the results of its \(index + 1) calls so far are over \(byteCount(limit)) "
                                        + "(max_result_mb in config.json)"))))
                }
                results.append(value)
            case .failure(let stop): return .failure(stop)
            }
        }
        scope.item = nil
        scope.index = nil
        return .success(.array(results))
    }

    private mutating func callOnce(_ call: CompositeDefinition.Call, number: Int) async -> Result<JSONValue, Stop> {
        let arguments: JSONValue
        do throws(CompositeError) { arguments = try call.arguments.evaluate(in: scope) } catch {
            return .failure(
                Stop(outcome: await stopped(at: number, call.skill, .failure(code: .failed, error.description))))
        }
        guard budget.take() else {
            return .failure(
                Stop(
                    outcome: await stopped(
                        at: number, call.skill,
                        .failure(code: .failed, "the composite made \(CompositeLimits.calls) calls, its limit"))))
        }
        if let spent = invocation.stepAllowance?() {
            return .failure(
                Stop(outcome: await stopped(at: number, call.skill, .failure(code: .notPermitted, "not run: \(spent)")))
            )
        }
        let known = skills[call.skill] ?? (.destructive, invoker.configuration.defaultTimeout)
        let left = deadline - invoker.configuration.clock.now
        guard left > .zero else {
            return .failure(Stop(outcome: timedOut(at: number, call.skill)))
        }
        // The composite's confirmation (or a rule naming it) covered its plan; what it did not — a rule about this
        // step's arguments, a hook — is asked of the composite's caller, or refused where no one answers.
        var step = SkillInvocation(
            skill: call.skill, arguments: arguments, timeout: min(known.timeout, left),
            confirmer: .consented(.plan, then: invocation.confirmer))
        step.session = invocation.session
        step.callerContext = invocation.callerContext
        step.compositeDepth = invocation.compositeDepth + 1
        step.compositeBudget = budget
        step.disabledSkills = invocation.disabledSkills
        step.stepAllowance = invocation.stepAllowance
        let outcome = await invoker.invoke(step)
        guard outcome.status == .ok else {
            if outcome.status == .timeout, left <= known.timeout {
                return .failure(Stop(outcome: timedOut(at: number, call.skill)))
            }
            // Arguments a step rejects are the composite's fault, not its caller's.
            let cause =
                outcome.code == .invalidArguments
                ? SkillOutcome.failure(code: .failed, outcome.error ?? "invalid arguments") : outcome
            return .failure(Stop(outcome: await stopped(at: number, call.skill, cause)))
        }
        if known.risk != .readOnly || outcome.undo != nil { changes.append((call.skill, outcome.undo)) }
        return .success(outcome.result ?? .null)
    }

    // MARK: Ending

    /// Progress for the composite's caller: `step 2 of 3: notes_update`.
    private func report(_ number: Int, of total: Int, _ what: String) {
        invocation.onProgress?(
            SkillProgress(
                done: Double(number - 1), total: Double(total), message: "step \(number) of \(total): \(what)"))
    }

    /// The steps' undos, last first, as one undo — when every change registered one.
    private func combinedUndo() -> UndoAction? {
        guard !changes.isEmpty else { return nil }
        var calls: [UndoAction] = []
        for change in changes.reversed() {
            guard let undo = change.undo else { return nil }
            calls += undo.calls
        }
        var first = calls[0]
        first.then = Array(calls.dropFirst())
        return first
    }

    private func timedOut(at number: Int, _ skill: String) -> SkillOutcome {
        var outcome = SkillOutcome.failure(
            code: .timeout,
            Deadline.timedOut(id, after: timeout) + " at step \(number) of \(definition.steps.count) (\(skill))"
                + madeSoFar(undone: "the deadline had passed"))
        outcome.undo = combinedUndo()
        return outcome
    }

    /// `mark_all_read stopped at step 2 of 3 (notes_update): <why>` and what happened to the changes made before:
    /// undone when every one registered an undo and the step failed (not timed out or cancelled).
    private func stopped(at number: Int, _ skill: String, _ cause: SkillOutcome) async -> SkillOutcome {
        let headline =
            "\(id) stopped at step \(number) of \(definition.steps.count) (\(skill)): "
            + (cause.error ?? cause.status.rawValue)
        var outcome = cause
        guard !changes.isEmpty else {
            outcome.reword(headline + (number > 1 ? "; nothing had been changed" : ""))
            return outcome
        }
        if cause.status == .cancelled {
            outcome.reword(headline + madeSoFar(undone: "the call was cancelled"))
            outcome.undo = combinedUndo()
            return outcome
        }
        guard let undo = combinedUndo() else {
            let without = changes.filter { $0.undo == nil }.map(\.skill)
            outcome.reword(
                headline + "; \(changeList) had been made and were not undone: "
                    + "\(Self.grouped(without)) registered no undo")
            return outcome
        }
        let calls = undo.calls
        for (done, call) in calls.enumerated() {
            let left = deadline - invoker.configuration.clock.now
            var reverse = SkillInvocation(
                skill: call.skillID, arguments: call.arguments, timeout: max(left, .milliseconds(1)),
                confirmer: .consented(.risk, then: invocation.confirmer))
            // Its own changes, reversed with the consent the composite had; what a rule or hook asks about is asked
            // of the composite's caller (a person, --yes; refused where no one answers).
            reverse.session = invocation.session
            reverse.compositeDepth = invocation.compositeDepth + 1
            let result = await invoker.invoke(reverse)
            guard result.status == .ok else {
                outcome.reword(
                    headline + "; undoing the \(changeList) made before it stopped at \(call.skillID) "
                        + "(\(result.error ?? result.status.rawValue)): \(done) of \(calls.count) undone")
                return outcome
            }
        }
        outcome.reword(headline + "; the \(changeList) made before it \(changes.count == 1 ? "was" : "were") undone")
        return outcome
    }

    /// `; the 2 changes made before it (notes_add, notes_update) were not undone (the call was cancelled); /undo
    /// reverses them`.
    private func madeSoFar(undone reason: String) -> String {
        guard !changes.isEmpty else { return "" }
        let reversible = combinedUndo() != nil
        return "; the \(changeList) made before it \(changes.count == 1 ? "was" : "were") not undone (\(reason))"
            + (reversible ? "; /undo reverses \(changes.count == 1 ? "it" : "them")" : "")
    }

    /// `change (notes_add)`, `3 changes (notes_add, notes_update ×2)`.
    private var changeList: String {
        let skills = Self.grouped(changes.map(\.skill))
        return changes.count == 1 ? "change (\(skills))" : "\(changes.count) changes (\(skills))"
    }

    /// Runs of the same name shortened: `notes_add, notes_update ×2`.
    static func grouped(_ names: [String]) -> String {
        var parts: [(name: String, count: Int)] = []
        for name in names {
            if parts.last?.name == name { parts[parts.count - 1].count += 1 } else { parts.append((name, 1)) }
        }
        return parts.map { $0.count > 1 ? "\($0.name) ×\($0.count)" : $0.name }.joined(separator: ", ")
    }
}
