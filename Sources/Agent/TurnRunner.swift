import Foundation
import SkillHost
import SkillJSON
import Synchronization

/// One turn of the loop: request → stream → run the requested calls → repeat until the model answers, the step
/// limit is reached, the same call repeats three times, the model fails, or the turn is cancelled.
struct TurnRunner: Sendable {
    let session: AgentSession
    let emit: @Sendable (AgentEvent) -> Void

    var registry: SkillRegistry { session.registry }
    var configuration: AgentConfiguration { session.configuration }

    func run() async -> FinishReason {
        var callCounts: [String: Int] = [:]
        for step in 1...max(1, configuration.stepLimit) {
            if Task.isCancelled { return .cancelled }
            emit(.thinking(step: step))
            let response: (text: String, calls: [ToolCall], noMatch: Bool)
            switch await requestModel() {
            case .success(let r): response = r
            case .failure(let reason): return reason
            }
            session.append(Message(role: .assistant, content: response.text, toolCalls: response.calls))
            if response.calls.isEmpty { return response.noMatch ? .nothingMatched : .answered }

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

            let results = await execute(response.calls)
            for (call, result) in zip(response.calls, results) {
                session.append(
                    Message(role: .tool, content: result.content, toolCallID: call.id, isError: result.isError))
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

    private func requestModel() async -> Result<(text: String, calls: [ToolCall], noMatch: Bool), FinishReason> {
        let conversation = session.conversation
        let request = ModelRequest(messages: conversation.messages, tools: tools(for: conversation))
        var text = ""
        var calls: [ToolCall] = []
        var noMatch = false
        do {
            for try await chunk in session.provider.stream(request) {
                switch chunk {
                case .text(let delta):
                    text += delta
                    emit(.textDelta(delta))
                case .toolCall(let call): calls.append(call)
                case .usage(let usage): emit(.usage(usage))
                case .noSkillMatched: noMatch = true
                }
            }
            if Task.isCancelled { throw CancellationError() }
        } catch {
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
        let skills = registry.skills.filter { !session.disabledSkills.contains($0.id) }
        var offered = skills
        if skills.count > configuration.maximumTools {
            let query = conversation.messages.filter { $0.role == .user }.suffix(2).map(\.content).joined(
                separator: " ")
            let chosen = Set(
                session.selector(for: skills).select(
                    query, limit: configuration.maximumTools, keep: conversation.calledSkills))
            offered = skills.filter { chosen.contains($0.id) }
        }
        return offered.map(ToolDefinition.init)
    }

    // MARK: Calls

    struct CallResult: Sendable {
        let content: String
        let isError: Bool
    }

    /// Runs the calls: read-only ones concurrently, then the others one after another; results in the model's
    /// order. Calls are prepared (checked, confirmed, announced) one by one in the model's order, so front ends
    /// show their cards in that order even when they then run at the same time.
    private func execute(_ calls: [ToolCall]) async -> [CallResult] {
        let readOnly = calls.indices.filter { registry.skill(calls[$0].name)?.risk ?? .readOnly == .readOnly }
        let others = calls.indices.filter { !readOnly.contains($0) }
        var results = [CallResult?](repeating: nil, count: calls.count)
        var ready: [(Int, Prepared)] = []
        for index in readOnly {
            switch await prepare(calls[index]) {
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
            switch await prepare(calls[index]) {
            case .success(let prepared): results[index] = await run(prepared)
            case .failure(let result): results[index] = result.result
            }
        }
        return results.map { $0 ?? CallResult(content: "cancelled before it ran", isError: true) }
    }

    /// A call that may run: its validated arguments, and when it was first seen.
    struct Prepared: Sendable {
        let call: ToolCall
        let arguments: JSONValue
        let start: ContinuousClock.Instant
    }

    /// A call that ends before running, with the result the model gets.
    struct Refused: Error {
        let result: CallResult
    }

    /// Everything before the skill runs: lookup, argument repair and validation, policy and confirmation, then
    /// the `toolCallStarted` event. Never throws: every problem becomes a tool result the model can correct from.
    private func prepare(_ call: ToolCall) async -> Result<Prepared, Refused> {
        let start = ContinuousClock.now
        func failed(_ message: String, shown arguments: String) -> Result<Prepared, Refused> {
            emit(.toolCallStarted(id: call.id, skill: call.name, arguments: arguments))
            emit(.toolCallFailed(id: call.id, skill: call.name, error: message, duration: .now - start))
            return .failure(Refused(result: CallResult(content: "error: \(message)", isError: true)))
        }
        guard !session.disabledSkills.contains(call.name), let skill = registry.skill(call.name) else {
            return failed(unknownSkillMessage(call.name), shown: call.arguments)
        }
        let arguments: JSONValue
        switch ArgumentRepair.repair(call.arguments) {
        case .failure(let error):
            return failed("\(error.message); send the arguments as one JSON object", shown: call.arguments)
        case .success(let object):
            switch registry.validate(call.name, arguments: .object(object)) {
            case .failure(let invalid):
                return failed("invalid arguments: \(invalid.issues.summary)", shown: JSONValue.object(object).jsonText)
            case .success(let value): arguments = value
            }
        }
        if let refusal = await permission(for: skill, call: call, arguments: arguments) {
            return failed(refusal, shown: arguments.jsonText)
        }
        if Task.isCancelled { return failed("cancelled by the user", shown: arguments.jsonText) }
        emit(.toolCallStarted(id: call.id, skill: call.name, arguments: arguments.jsonText))
        return .success(Prepared(call: call, arguments: arguments, start: start))
    }

    /// Runs a prepared call and reports how it ended.
    private func run(_ prepared: Prepared) async -> CallResult {
        let call = prepared.call
        let report = self.emit
        let outcome = await registry.invoke(call.name, arguments: prepared.arguments.jsonText) { progress in
            report(.toolCallProgress(id: call.id, progress: progress))
        }
        switch outcome.status {
        case .ok:
            if let undo = outcome.undo { session.recordUndo(undo, skill: call.name) }
            let result = outcome.result ?? .null
            emit(.toolCallFinished(id: call.id, skill: call.name, result: result, duration: outcome.duration))
            return CallResult(content: result.displayText, isError: false)
        default:
            let message =
                outcome.status == .cancelled && Task.isCancelled
                ? "cancelled by the user" : (outcome.error ?? outcome.status.rawValue)
            emit(.toolCallFailed(id: call.id, skill: call.name, error: message, duration: .now - prepared.start))
            return CallResult(content: "error: \(message)", isError: true)
        }
    }

    /// nil when the call may run; otherwise the reason it may not. "Always this session" covers the exact skill
    /// and arguments the user approved, never another call of the same skill.
    private func permission(for skill: SkillInfo, call: ToolCall, arguments: JSONValue) async -> String? {
        let asking: Policy.Asking =
            session.confirm == nil
            ? .nobody(refusal: {
                "not run: \($0.id) is \($0.risk == .destructive ? "destructive" : "set to ask") and there is no one to "
                    + "confirm it (allow it with a rule in the configuration)"
            }) : .person
        switch configuration.policy.gate(skill, asking: asking) {
        case .run: return nil
        case .refuse(let reason): return reason
        case .ask:
            let approval = skill.id + " " + arguments.jsonText
            if session.state.withLock({ $0.allowedForSession.contains(approval) }) { return nil }
            guard let confirm = session.confirm else { return "not run: there is no one to confirm \(skill.id)" }
            let request = ConfirmationRequest(callID: call.id, skill: skill, arguments: arguments)
            emit(.confirmationNeeded(request))
            switch await confirm(request) {
            case .allowOnce: return nil
            case .allowForSession:
                session.state.withLock { _ = $0.allowedForSession.insert(approval) }
                return nil
            case .deny: return "not run: the user declined this call"
            }
        }
    }

    func unknownSkillMessage(_ name: String) -> String {
        let available = registry.skills.map(\.id).filter { !session.disabledSkills.contains($0) }
        if let suggestion = EditDistance.closest(to: name, among: available) {
            return "unknown skill \"\(name)\" (did you mean \"\(suggestion)\"?)"
        }
        return "unknown skill \"\(name)\"; available skills: \(available.joined(separator: ", "))"
    }
}
