import Agent
import Foundation
import SkillHost
import SkillJSON
import Synchronization

/// A provider that replays scripted responses in order, for tests and the agent benchmark; it records every request.
package final class ScriptedProvider: ModelProvider {
    /// One scripted response: chunks to stream, or an error to throw after them.
    package struct Response: Sendable {
        package var chunks: [ModelChunk]
        package var error: ModelError?
        /// Pause before each chunk (to test streaming and cancellation).
        package var delay: Duration

        package init(_ chunks: [ModelChunk], error: ModelError? = nil, delay: Duration = .zero) {
            self.chunks = chunks
            self.error = error
            self.delay = delay
        }

        /// A plain text answer.
        package static func text(_ text: String) -> Response { Response([.text(text)]) }

        /// Tool calls (`(name, arguments)`), with ids `call_1`, `call_2`, ….
        package static func calls(_ calls: [(String, String)]) -> Response {
            Response(
                calls.enumerated().map {
                    .toolCall(ToolCall(id: "call_\($0.offset + 1)", name: $0.element.0, arguments: $0.element.1))
                })
        }
    }

    private let script: Mutex<[Response]>
    private let recorded = Mutex<[ModelRequest]>([])
    /// Answer when the script has run out.
    private let fallback: Response

    package let displayName = "scripted"

    package init(_ responses: [Response], fallback: Response = .text("(end of script)")) {
        script = Mutex(responses)
        self.fallback = fallback
    }

    /// Every request received so far.
    package var requests: [ModelRequest] { recorded.withLock { $0 } }

    package func stream(_ request: ModelRequest) -> AsyncThrowingStream<ModelChunk, any Error> {
        recorded.withLock { $0.append(request) }
        let response = script.withLock { $0.isEmpty ? fallback : $0.removeFirst() }
        return AsyncThrowingStream { continuation in
            let task = Task {
                for chunk in response.chunks {
                    if response.delay > .zero { try? await Task.sleep(for: response.delay) }
                    if Task.isCancelled { break }
                    continuation.yield(chunk)
                }
                if Task.isCancelled {
                    continuation.finish(throwing: CancellationError())
                } else if let error = response.error {
                    continuation.finish(throwing: error)
                } else {
                    continuation.finish()
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}

/// Events collected from one turn.
package func collect(_ stream: AsyncStream<AgentEvent>) async -> [AgentEvent] {
    var events: [AgentEvent] = []
    for await event in stream { events.append(event) }
    return events
}

/// Skills for an agent session without any plugin: each id answers with a fixed result (or refuses with a fixed
/// sentence), and every call that ran is recorded with its arguments.
package final class StandInSkills: AgentSkills {
    package struct Behaviour: Sendable {
        let info: SkillInfo
        let answer: @Sendable (JSONValue) -> SkillOutcome
        let refusal: String?

        /// A read-only skill answering `answer(arguments)`; with `refusal`, every call is refused with it.
        package init(
            _ id: String, risk: SkillRisk = .readOnly, refusal: String? = nil,
            answer: @escaping @Sendable (JSONValue) -> SkillOutcome = { SkillOutcome.success($0) }
        ) {
            info = SkillInfo(
                id: id, title: id, description: "stand-in \(id)", plugin: "stand-in", pluginVersion: "1", file: "",
                risk: risk, flags: [], timeout: nil, inputSchema: ["type": "object"], schemaIsGenerated: false,
                kind: .json)
            self.answer = answer
            self.refusal = refusal
        }
    }

    private struct Ready: ReadySkillCall {
        let arguments: JSONValue
        let behaviour: Behaviour
        let record: @Sendable (String, JSONValue) -> Void

        func run() async -> SkillOutcome {
            record(behaviour.info.id, arguments)
            return behaviour.answer(arguments)
        }
    }

    private let behaviours: [String: Behaviour]
    private let ran = Mutex<[(String, JSONValue)]>([])

    package init(_ behaviours: [Behaviour]) {
        self.behaviours = Dictionary(behaviours.map { ($0.info.id, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The calls that ran, in order.
    package var calls: [(skill: String, arguments: JSONValue)] { ran.withLock { $0 } }

    package var skills: [SkillInfo] { behaviours.values.map(\.info).sorted { $0.id < $1.id } }

    package func skill(_ id: String) -> SkillInfo? { behaviours[id]?.info }

    package func prepareCall(_ invocation: SkillInvocation) async -> Result<any ReadySkillCall, CallRefusal> {
        guard let behaviour = behaviours[invocation.skill] else {
            return .failure(CallRefusal(SkillFailure(code: .unknownSkill, message: "unknown skill")))
        }
        guard case .value(let arguments) = invocation.arguments else {
            return .failure(CallRefusal(SkillFailure(code: .invalidArguments, message: "stand-ins take values")))
        }
        if let refusal = behaviour.refusal {
            return .failure(CallRefusal(SkillFailure(code: .notPermitted, message: refusal), arguments: arguments))
        }
        return .success(
            Ready(arguments: arguments, behaviour: behaviour) { [self] id, value in
                ran.withLock { $0.append((id, value)) }
            })
    }
}
