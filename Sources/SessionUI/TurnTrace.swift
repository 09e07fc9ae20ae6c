import Agent
import Foundation
import SkillJSON
import Synchronization

/// What `/trace` shows about the last turn: each step with its timing, the size of the request and response, the
/// token usage, and the skill calls with their durations and full results (the screen shortens them).
package struct TurnTrace: Sendable {
    package struct Call: Sendable {
        package let skill: String
        /// As the skill received them (or as the model wrote them when unusable).
        package var arguments: String = ""
        package var outcome: String = "running"
        package var duration: Duration = .zero
        package var ok = false
    }

    package struct Step: Sendable {
        package let number: Int
        package let started: ContinuousClock.Instant
        package var ended: ContinuousClock.Instant?
        /// Bytes of the conversation sent with the request (messages as JSON).
        package let requestBytes: Int
        package let messageCount: Int
        /// The plugins' state the request carried (the system message `/state` shows), nil for none.
        package let state: String?
        package var responseBytes = 0
        package var usage: Usage?
        package var calls: [String: Call] = [:]
        package var callOrder: [String] = []
    }

    package var steps: [Step] = []
    package var started: ContinuousClock.Instant?
    package var ended: ContinuousClock.Instant?
    package var reason: FinishReason?

    package init() {}

    /// The report, one line per step and call.
    package func report() -> String {
        guard let started, !steps.isEmpty else { return "No turn yet.\n" }
        func ms(_ duration: Duration) -> String { duration.shortDescription }
        func bytes(_ count: Int) -> String {
            count < 1024 ? "\(count) B" : String(format: "%.1f kB", Double(count) / 1024)
        }
        let total = (ended ?? .now) - started
        let calls = steps.reduce(0) { $0 + $1.calls.count }
        let prompt = steps.compactMap(\.usage).reduce(0) { $0 + $1.promptTokens }
        let completion = steps.compactMap(\.usage).reduce(0) { $0 + $1.completionTokens }
        var out =
            "Last turn: \(steps.count) step\(steps.count == 1 ? "" : "s"), \(calls) skill call\(calls == 1 ? "" : "s"), "
            + "\(ms(total)), \(reason?.name ?? "running"); tokens \(prompt) in, \(completion) out\n"
        for step in steps {
            let duration = (step.ended ?? .now) - step.started
            var line =
                "  step \(step.number): \(ms(duration)) · request \(bytes(step.requestBytes)) "
                + "(\(step.messageCount) messages) · response \(bytes(step.responseBytes))"
            if let usage = step.usage { line += " · tokens \(usage.promptTokens) in, \(usage.completionTokens) out" }
            out += line + "\n"
            if let state = step.state {
                // The heading line is the same every time: the snapshots follow it, one plugin a line.
                let lines = state.split(separator: "\n").dropFirst()
                out += "    state (\(bytes(state.utf8.count))): " + lines.joined(separator: "\n      ") + "\n"
            }
            for id in step.callOrder {
                guard let call = step.calls[id] else { continue }
                out +=
                    "    \(call.ok ? "✓" : "✗") \(call.skill)(\(CardText.arguments(call.arguments))) · "
                    + "\(ms(call.duration)) → \(call.outcome)\n"
            }
        }
        return out
    }
}

/// Builds a `TurnTrace` from events, on the main actor's rendering path.
package final class TraceRecorder: Sendable {
    private let state = Mutex(TurnTrace())

    package var trace: TurnTrace { state.withLock { $0 } }

    package init() {}

    /// - Parameter carried: the state message the step's request carries (read when the step starts).
    package func record(_ event: AgentEvent, conversation: Conversation, state carried: String? = nil) {
        state.withLock { trace in
            let now = ContinuousClock.now
            if trace.started == nil { trace.started = now }
            switch event {
            case .thinking(let number):
                if let last = trace.steps.indices.last, trace.steps[last].ended == nil { trace.steps[last].ended = now }
                let messages = conversation.messages.map(OpenAIProvider.message)
                trace.steps.append(
                    TurnTrace.Step(
                        number: number, started: now, requestBytes: JSONValue.array(messages).jsonText.utf8.count,
                        messageCount: messages.count, state: carried))
            case .textDelta(let text):
                if let last = trace.steps.indices.last { trace.steps[last].responseBytes += text.utf8.count }
            case .usage(let usage):
                if let last = trace.steps.indices.last { trace.steps[last].usage = usage }
            case .toolCall(let call):
                switch call.phase {
                case .started(let given):
                    guard let last = trace.steps.indices.last else { return }
                    if trace.steps[last].ended == nil { trace.steps[last].ended = now }
                    let arguments = given.jsonText
                    trace.steps[last].responseBytes += arguments.utf8.count + call.skill.utf8.count
                    trace.steps[last].calls[call.id] = TurnTrace.Call(skill: call.skill, arguments: arguments)
                    trace.steps[last].callOrder.append(call.id)
                case .finished(let result, let duration):
                    update(&trace, call.id) {
                        $0.outcome = result.displayText
                        $0.duration = duration
                        $0.ok = true
                    }
                case .failed(let failure, let duration):
                    update(&trace, call.id) {
                        $0.outcome = failure.message
                        $0.duration = duration
                    }
                case .progress: break
                }
            case .finished(let reason):
                if let last = trace.steps.indices.last, trace.steps[last].ended == nil { trace.steps[last].ended = now }
                trace.ended = now
                trace.reason = reason
            case .confirmationNeeded: break
            }
        }
    }

    private func update(_ trace: inout TurnTrace, _ id: String, _ change: (inout TurnTrace.Call) -> Void) {
        for index in trace.steps.indices where trace.steps[index].calls[id] != nil {
            change(&trace.steps[index].calls[id, default: TurnTrace.Call(skill: "")])
        }
    }
}
