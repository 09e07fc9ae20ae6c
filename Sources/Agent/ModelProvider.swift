import SkillHost
import SkillJSON
import Synchronization

/// A tool as the model sees it (name, description, parameters — what goes on the wire), plus what the host knows
/// about it that a provider may use but never sends: its title and what it can change.
public struct ToolDefinition: Sendable, Equatable {
    public let name: String
    public let description: String
    /// JSON Schema of the arguments.
    public let parameters: JSONValue
    /// Short, for people; the name when the skill has none.
    public let title: String
    /// What a call can change. The offline router calls a mutating or destructive tool only when the request
    /// asks for that change; a tool built without a risk counts as mutating.
    public let risk: SkillRisk

    public init(
        name: String, description: String, parameters: JSONValue, title: String? = nil, risk: SkillRisk = .mutating
    ) {
        self.name = name
        self.description = description
        self.parameters = parameters
        self.title = title ?? name
        self.risk = risk
    }

    /// The tool for a registered skill.
    public init(_ skill: SkillInfo) {
        self.init(
            name: skill.id, description: skill.description, parameters: skill.inputSchema, title: skill.title,
            risk: skill.risk)
    }
}

/// One request to a model: the conversation so far and the tools it may call.
public struct ModelRequest: Sendable {
    public let messages: [Message]
    public let tools: [ToolDefinition]

    public init(messages: [Message], tools: [ToolDefinition]) {
        self.messages = messages
        self.tools = tools
    }
}

/// A piece of a streamed model response. Tool calls arrive whole (providers assemble fragments).
public enum ModelChunk: Sendable, Equatable {
    case text(String)
    case toolCall(ToolCall)
    case usage(Usage)
    /// The provider found no skill for the request and said so in its text (the offline router); the turn ends
    /// as `nothingMatched` instead of `answered`.
    case noSkillMatched
}

/// Why a model request failed, as a sentence for the user (never containing credentials).
public struct ModelError: Error, Sendable, Equatable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Anything that turns a conversation into a streamed response: an OpenAI-compatible server, the offline router,
/// a script in tests.
public protocol ModelProvider: Sendable {
    /// Shown to the user: "gpt-4o-mini at http://localhost:11434/v1", "offline router".
    var displayName: String { get }
    /// Streams the response. Cancelling the consuming task stops the request (and closes its connection).
    func stream(_ request: ModelRequest) -> AsyncThrowingStream<ModelChunk, any Error>
}

/// A provider that replays scripted responses in order, for tests; it records every request.
public final class ScriptedProvider: ModelProvider {
    /// One scripted response: chunks to stream, or an error to throw after them.
    public struct Response: Sendable {
        public var chunks: [ModelChunk]
        public var error: ModelError?
        /// Pause before each chunk (to test streaming and cancellation).
        public var delay: Duration

        public init(_ chunks: [ModelChunk], error: ModelError? = nil, delay: Duration = .zero) {
            self.chunks = chunks
            self.error = error
            self.delay = delay
        }

        /// A plain text answer.
        public static func text(_ text: String) -> Response { Response([.text(text)]) }

        /// Tool calls (`(name, arguments)`), with ids `call_1`, `call_2`, ….
        public static func calls(_ calls: [(String, String)]) -> Response {
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

    public let displayName = "scripted"

    public init(_ responses: [Response], fallback: Response = .text("(end of script)")) {
        script = Mutex(responses)
        self.fallback = fallback
    }

    /// Every request received so far.
    public var requests: [ModelRequest] { recorded.withLock { $0 } }

    public func stream(_ request: ModelRequest) -> AsyncThrowingStream<ModelChunk, any Error> {
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
