import Foundation
import SkillHost
import SkillJSON
import Synchronization

/// One turn of the loop: request → stream → run the requested calls → repeat until the model answers, the step
/// limit is reached, the same call repeats three times, the model fails, or the turn is cancelled.
struct TurnRunner: Sendable {
    let session: AgentSession
    let emit: @Sendable (AgentEvent) -> Void

    var registry: any AgentSkills { session.skills }
    var configuration: AgentConfiguration { session.configuration }

    func run() async -> FinishReason {
        var callCounts: [String: Int] = [:]
        // The first call of the turn that was not run for want of permission.
        var refused: String?
        // The plugins' state, taken for the first request and again after any step that may have changed it.
        var stateMessage: String?
        var stateIsCurrent = false
        for step in 1...max(1, configuration.stepLimit) {
            if Task.isCancelled { return .cancelled }
            // Checked between steps, where the conversation is whole: every call asked for has its result.
            if let reached = session.budgetReached() { return .budgetReached(reached) }
            let conversation = session.conversation
            let tools = tools(for: conversation)
            // Taken before the step is announced, so whoever records the step (`/trace`) sees the state it sends.
            if !stateIsCurrent {
                stateMessage = await self.stateMessage(for: tools)
                session.setLastStateMessage(stateMessage)
                stateIsCurrent = true
            }
            emit(.thinking(step: step))
            let response: (text: String, calls: [ToolCall], noMatch: Bool)
            switch await requestModel(conversation, tools: tools, state: stateMessage) {
            case .success(let r): response = r
            case .failure(let reason): return reason
            }
            session.append(Message(role: .assistant, content: response.text, toolCalls: response.calls))
            if response.calls.isEmpty {
                if response.noMatch { return .nothingMatched }
                return refused.map { .refused(skill: $0) } ?? .answered
            }

            // The same call in three responses of a turn: the model is stuck. (Identical calls within one
            // response count once: asking for the same thing twice at once is not a loop.)
            for key in Set(response.calls.map(Self.callKey)) {
                callCounts[key, default: 0] += 1
            }
            if let repeated = response.calls.first(where: { callCounts[Self.callKey($0), default: 0] >= 3 }) {
                for call in response.calls {
                    session.append(
                        Message(
                            role: .tool, content: "not run: the same call was already made twice in this turn",
                            toolCallID: call.id, isError: true))
                }
                return .repeatedCall(skill: repeated.name)
            }

            // A budget of skill calls is checked before each call: of a response asking for more than are left,
            // the first run and the rest are answered "not run" (every call asked for still has its result).
            var running = response.calls
            var overBudget: [ToolCall] = []
            var budget: BudgetReached?
            if let (left, reached) = session.toolCallsLeft(), left < running.count {
                overBudget = Array(running[left...])
                running = Array(running[..<left])
                budget = reached
            }
            // Looked up once per call, and that definition is what is decided and run (the registry refuses a call
            // whose skill was reloaded since): an id no skill has runs nothing, so it counts as read-only.
            let definitions = running.map { registry.skill($0.name) }
            if definitions.contains(where: { ($0?.risk ?? .readOnly) != .readOnly }) { stateIsCurrent = false }
            // Counted before they run: a composite among them counts its steps against what is left after them.
            session.recordUse(calls: running.count)
            let results = await execute(running, definitions: definitions)
            for (call, result) in zip(running, results) {
                if result.refused, refused == nil { refused = call.name }
                session.append(
                    Message(role: .tool, content: result.content, toolCallID: call.id, isError: result.isError))
            }
            for call in overBudget {
                let scope = budget?.scope == .session ? "session" : "turn"
                session.append(
                    Message(
                        role: .tool,
                        content:
                            "not run: the \(scope)'s budget of \(BudgetReached.count(budget?.limit ?? 0)) skill calls "
                            + "is used up", toolCallID: call.id, isError: true))
            }
            if let budget, !overBudget.isEmpty {
                return .budgetReached(
                    BudgetReached(scope: budget.scope, kind: .toolCalls, used: budget.limit, limit: budget.limit))
            }
            if Task.isCancelled { return .cancelled }
        }
        return .stepLimitReached(configuration.stepLimit)
    }

    /// `skill` + canonical arguments (so `{"a":1,"b":2}` equals `{"b":2, "a":1}`).
    static func callKey(_ call: ToolCall) -> String {
        switch ArgumentRepair.repair(call.arguments) {
        case .success(let object):
            let sorted = JSONObject(object.members.sorted { $0.key < $1.key })
            return call.name + " " + JSONValue.object(sorted).jsonText
        case .failure: return call.name + " " + call.arguments
        }
    }

    // MARK: The model

    /// The snapshots of the plugins behind `tools` as one system message (nil when there are none or the budget
    /// is 0).
    func stateMessage(for tools: [ToolDefinition]) async -> String? {
        guard configuration.snapshotBudget > 0 else { return nil }
        let plugins = Set(tools.compactMap { registry.skill($0.name)?.plugin })
        let taken = await registry.snapshots(of: plugins.sorted())
        return StateSnapshots.message(taken, budget: configuration.snapshotBudget)
    }

    private func requestModel(_ conversation: Conversation, tools: [ToolDefinition], state: String?) async
        -> Result<(text: String, calls: [ToolCall], noMatch: Bool), FinishReason>
    {
        var messages = conversation.messages
        // The state and the context go right after the leading system message: they belong to this request, not to
        // the history.
        let at = messages.first?.role == .system ? 1 : 0
        if let state { messages.insert(Message(role: .system, content: state), at: at) }
        if let context = configuration.context?(), !context.isEmpty {
            messages.insert(Message(role: .system, content: context), at: at)
        }
        let request = ModelRequest(messages: messages, tools: tools)
        var text = ""
        var calls: [ToolCall] = []
        var noMatch = false
        // Recording: the request, then the whole response (or why it failed) — collected here, on the turn's own
        // pull, with nothing between the model and the turn.
        let recorder = session.recording?.recorder
        let step = recorder?.request(request) ?? 0
        var chunks: [ModelChunk] = []
        do {
            for try await chunk in session.provider.stream(request) {
                if recorder != nil { chunks.append(chunk) }
                switch chunk {
                case .text(let delta):
                    text += delta
                    emit(.textDelta(delta))
                case .toolCall(let call): calls.append(call)
                case .usage(let usage):
                    session.recordUse(tokens: usage)
                    emit(.usage(usage))
                case .noSkillMatched: noMatch = true
                }
            }
            if Task.isCancelled { throw CancellationError() }
            recorder?.response(step: step, chunks: chunks, error: nil)
        } catch {
            recorder?.response(step: step, chunks: chunks, error: "\(error)")
            // Keep what was said; the next turn's model sees that it was cut short.
            if !text.isEmpty {
                session.append(Message(role: .assistant, content: text + "\n[interrupted]"))
            }
            if error is CancellationError || Task.isCancelled { return .failure(.cancelled) }
            return .failure(.modelError((error as? ModelError)?.message ?? "the model request failed: \(error)"))
        }
        // Every call needs an id the results can refer to.
        var seen: Set<String> = []
        for index in calls.indices where calls[index].id.isEmpty || !seen.insert(calls[index].id).inserted {
            calls[index].id = "call_\(UUID().uuidString.prefix(8).lowercased())"
            seen.insert(calls[index].id)
        }
        return .success((text, calls, noMatch))
    }

    /// The tools offered for this request: every enabled skill, or the most relevant ones when there are many.
    func tools(for conversation: Conversation) -> [ToolDefinition] {
        // An unapproved definition (changed since first seen, not trusted) is not offered: its words reach no model.
        let disabled = session.disabledSkills
        // A skill only its plugin's views may call (a list's refresh) is never offered to a model.
        let skills = registry.offered(registry.skills, disabled: disabled).filter { $0.audience.contains(.model) }
        var offered = skills
        if skills.count > configuration.maximumTools {
            let query = conversation.messages.filter { $0.role == .user }.suffix(2).map(\.content).joined(
                separator: " ")
            let chosen = Set(
                session.selector(for: skills).select(
                    query, limit: configuration.maximumTools,
                    keep: conversation.calledSkills.union(configuration.pinnedTools)))
            offered = skills.filter { chosen.contains($0.id) }
        }
        return offered.map(ToolDefinition.init)
    }

    // MARK: Calls

    struct CallResult: Sendable {
        let content: String
        let isError: Bool
        /// Not run for want of permission: a policy rule, a declined confirmation, no one to confirm.
        var refused = false
    }

    /// Runs the calls: read-only ones concurrently, then the others one after another; results in the model's
    /// order. Calls are prepared (checked, confirmed, announced) one by one in the model's order, so front ends
    /// show their cards in that order even when they then run at the same time.
    private func execute(_ calls: [ToolCall], definitions: [SkillInfo?]) async -> [CallResult] {
        let readOnly = calls.indices.filter { (definitions[$0]?.risk ?? .readOnly) == .readOnly }
        let others = calls.indices.filter { !readOnly.contains($0) }
        var results = [CallResult?](repeating: nil, count: calls.count)
        var ready: [(Int, Prepared)] = []
        for index in readOnly {
            switch await prepare(calls[index], definitions[index]) {
            case .success(let prepared): ready.append((index, prepared))
            case .failure(let result): results[index] = result.result
            }
        }
        await withTaskGroup(of: (Int, CallResult).self) { group in
            for (index, prepared) in ready {
                group.addTask { [self] in (index, await run(prepared)) }
            }
            for await (index, result) in group { results[index] = result }
        }
        for index in others {
            switch await prepare(calls[index], definitions[index]) {
            case .success(let prepared): results[index] = await run(prepared, changes: true)
            case .failure(let result): results[index] = result.result
            }
        }
        return results.map { $0 ?? CallResult(content: "cancelled before it ran", isError: true) }
    }

    /// Who asked for a call.
    enum Caller: Equatable {
        case model
        /// A view (an MCP App) of `plugin`, the plugin or MCP server whose page it is; `mayAsk` false: the person
        /// said no to it already, and a call of it that needs a yes is refused without asking again.
        case view(plugin: String, mayAsk: Bool)
    }

    /// Why a view of `plugin` may not call `name` (`definition`: its skill, nil: none), or nil when it may.
    static func viewRefusal(_ name: String, _ definition: SkillInfo?, plugin: String) -> String? {
        guard let definition else { return "a view of \(plugin) called \(name), which is no skill here" }
        guard definition.plugin == plugin else {
            return "a view of \(plugin) called \(name), a skill of \(definition.plugin): a view may call only its own "
                + "plugin's skills"
        }
        guard definition.audience.contains(.view) else {
            return
                "a view of \(plugin) called \(name), which is for the model only: its plugin does not let views call it"
        }
        return nil
    }

    /// One call a view asked for, through the pipeline a model's goes through (the registry's one decision with the
    /// person as confirmer, hooks, the budgets of skill calls, the card's events, the change kept for undo and
    /// rewind), refused unless it is a skill of the view's own `plugin` that views may call.
    /// `mayAsk` false: a call that needs the person's yes is refused without asking (they said no to this view).
    func runViewCall(_ call: ToolCall, plugin: String, mayAsk: Bool) async {
        let definition = registry.skill(call.name)
        switch await prepare(call, definition, caller: .view(plugin: plugin, mayAsk: mayAsk)) {
        case .failure: return
        case .success(let prepared): _ = await run(prepared, changes: (definition?.risk ?? .readOnly) != .readOnly)
        }
    }

    /// A call that may run: the registry's prepared call, and when it was first seen.
    struct Prepared: Sendable {
        let call: ToolCall
        let prepared: any ReadySkillCall
        let start: ContinuousClock.Instant
    }

    /// A call that ends before running, with the result the model gets.
    struct Refused: Error {
        let result: CallResult
    }

    /// Everything before the skill runs, for `definition` (the skill as the turn looked it up, nil: none): argument
    /// repair, then the registry's one preparation of that very definition (validation, policy, confirmation), then
    /// the `toolCallStarted` event. Never throws: every problem becomes a tool result the model can correct from.
    private func prepare(_ call: ToolCall, _ definition: SkillInfo?, caller: Caller = .model) async -> Result<
        Prepared, Refused
    > {
        let start = ContinuousClock.now
        func failed(_ failure: SkillFailure, shown arguments: SkillInvocation.Arguments) -> Result<Prepared, Refused> {
            emit(.toolCall(ToolCallEvent(id: call.id, skill: call.name, phase: .started(arguments: arguments))))
            emit(
                .toolCall(ToolCallEvent(id: call.id, skill: call.name, phase: .failed(failure, duration: .now - start)))
            )
            return .failure(
                Refused(
                    result: CallResult(
                        content: "error: \(failure.message)", isError: true, refused: failure.code == .notPermitted)))
        }
        switch caller {
        case .model:
            guard !session.disabledSkills.contains(call.name), let definition else {
                return failed(unknownSkill(call.name), shown: .text(call.arguments))
            }
            // Never offered, but a model may name it anyway.
            guard definition.audience.contains(.model) else {
                return failed(
                    SkillFailure(
                        code: .notPermitted,
                        message: "\(call.name) is for plugin \(definition.plugin)'s views only: a model cannot call it"),
                    shown: .text(call.arguments))
            }
        case .view(let plugin, _):
            // A view reaches only its own plugin's (or MCP server's) skills that name views among their callers; the
            // switches of the skills panel are the model's, not the view's.
            if let refusal = Self.viewRefusal(call.name, definition, plugin: plugin) {
                return failed(SkillFailure(code: .notPermitted, message: refusal), shown: .text(call.arguments))
            }
            // Counted before it runs, as a model's call is.
            if let spent = session.takeToolCall() {
                return failed(
                    SkillFailure(code: .notPermitted, message: "not run: \(spent)"), shown: .text(call.arguments))
            }
        }
        guard let definition else { return failed(unknownSkill(call.name), shown: .text(call.arguments)) }
        let object: JSONObject
        switch ArgumentRepair.repair(call.arguments) {
        case .failure(let error):
            return failed(
                SkillFailure(
                    code: .invalidArguments, message: "\(error.message); send the arguments as one JSON object"),
                shown: .text(call.arguments))
        case .success(let repaired): object = repaired
        }
        let report = self.emit
        // A view the person said no to already is asked nothing more: what needs a yes is refused.
        var asksNoMore = false
        if case .view(_, mayAsk: false) = caller { asksNoMore = true }
        var invocation = SkillInvocation(
            skill: call.name, arguments: .object(object),
            confirmer: asksNoMore ? .person { _, _ in .deny } : confirmer(for: call),
            onProgress: { progress in
                report(.toolCall(ToolCallEvent(id: call.id, skill: call.name, phase: .progress(progress))))
            })
        invocation.session = configuration.sessionID
        invocation.definition = definition
        // A composite's steps are decided as the calls they are: a disabled one refuses it, and each is counted
        // against the budgets of skill calls before it runs.
        invocation.disabledSkills = session.disabledSkills
        let session = self.session
        invocation.stepAllowance = { session.takeToolCall() }
        switch await registry.prepareCall(invocation) {
        case .failure(let refusal):
            let shown = SkillInvocation.Arguments.value(refusal.arguments ?? .object(object))
            var failure = refusal.failure
            switch failure.code {
            case .unknownSkill: return failed(unknownSkill(call.name), shown: shown)
            case .invalidArguments: failure.message = "invalid arguments: \(failure.message)"
            default: break
            }
            return failed(failure, shown: shown)
        case .success(let prepared):
            if Task.isCancelled { return failed(.cancelledByTheUser, shown: .value(prepared.arguments)) }
            emit(
                .toolCall(
                    ToolCallEvent(id: call.id, skill: call.name, phase: .started(arguments: .value(prepared.arguments)))
                ))
            return .success(Prepared(call: call, prepared: prepared, start: start))
        }
    }

    /// Runs a prepared call and reports how it ended. `changes`: the skill is mutating or destructive (its risk was
    /// looked up once, for the turn), so a success is recorded for `/rewind`.
    private func run(_ prepared: Prepared, changes: Bool = false) async -> CallResult {
        let call = prepared.call
        let outcome = await prepared.prepared.run()
        switch outcome.ending {
        case .success(let result):
            if let undo = outcome.undo { session.recordUndo(undo, skill: call.name) }
            if changes {
                session.recordChange(skill: call.name, arguments: prepared.prepared.arguments, undo: outcome.undo)
            }
            emit(
                .toolCall(
                    ToolCallEvent(
                        id: call.id, skill: call.name, phase: .finished(result: result, duration: outcome.duration))))
            return CallResult(content: result.displayText, isError: false)
        case .failure(var failure):
            if failure.code == .cancelled, Task.isCancelled { failure = .cancelledByTheUser }
            emit(
                .toolCall(
                    ToolCallEvent(
                        id: call.id, skill: call.name, phase: .failed(failure, duration: .now - prepared.start))))
            return CallResult(content: "error: \(failure.message)", isError: true)
        }
    }

    /// Who confirms this call: the front end's person, asked through `confirmationNeeded` — or nobody. "Always
    /// this session" covers the exact skill and arguments the user approved, never another call of the same skill.
    private func confirmer(for call: ToolCall) -> Confirmer {
        // No one to ask (`ask`, piped input): the model made the call, and hooks are told so.
        guard let confirm = session.confirm else { return .nobody(.model(available: [])) }
        let session = self.session
        let emit = self.emit
        return .person { skill, arguments in
            // Pre-approved: a built-in source's skill (external, from the source named), never an id alone.
            if case .external = skill.kind, session.configuration.preapproved.contains(skill.plugin + "/" + skill.id) {
                return .allowOnce
            }
            // The definition is part of what was approved: a changed one is asked about again.
            let approval =
                skill.id + " " + arguments.jsonText + " " + String(skill.description.hashValue)
                + String(skill.inputSchema.jsonText.hashValue)
            if session.state.withLock({ $0.allowedForSession.contains(approval) }) { return .allowOnce }
            let request = ConfirmationRequest(callID: call.id, skill: skill, arguments: arguments)
            emit(.confirmationNeeded(request))
            let answer = await confirm(request)
            session.recording?.recorder?.confirmation(request, answer)
            if answer == .allowForSession { session.state.withLock { _ = $0.allowedForSession.insert(approval) } }
            return answer
        }
    }

    /// The model's failure for a name no skill it may call has: the nearest it may call, or all of them.
    func unknownSkill(_ name: String) -> SkillFailure {
        // Only what the model may call: never a disabled or unapproved skill, nor a composite of a disabled one, nor
        // a skill only for its plugin's views.
        let disabled = session.disabledSkills
        let available = registry.offered(registry.skills, disabled: disabled).filter { $0.audience.contains(.model) }
            .map(\.id)
        return SkillFailure(.unknown(name, among: available), for: .model(available: available))
    }
}
