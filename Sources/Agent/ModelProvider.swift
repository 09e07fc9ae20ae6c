import SkillHost
import SkillJSON

/// A tool as the model sees it (name, description, parameters — what goes on the wire), plus what the host knows
/// about it that a provider may use but never sends: its title and what it can change.
package struct ToolDefinition: Sendable, Equatable {
    package let name: String
    package let description: String
    /// JSON Schema of the arguments.
    package let parameters: JSONValue
    /// Short, for people; the name when the skill has none.
    package let title: String
    /// What a call can change. The offline router calls a mutating or destructive tool only when the request
    /// asks for that change; a tool built without a risk counts as mutating.
    package let risk: SkillRisk
    /// How a result reads as a sentence for people (the skill's declared template), nil when it declares none.
    package let answer: AnswerTemplate?
    /// JSON Schema of the result, for the titles of its members; nil when none is declared.
    package let output: JSONValue?

    package init(
        name: String, description: String, parameters: JSONValue, title: String? = nil, risk: SkillRisk = .mutating,
        answer: AnswerTemplate? = nil, output: JSONValue? = nil
    ) {
        self.answer = answer
        self.output = output
        self.name = name
        self.description = description
        self.parameters = parameters
        self.title = title ?? name
        self.risk = risk
    }

    /// The tool for a registered skill.
    package init(_ skill: SkillInfo) {
        self.init(
            name: skill.id, description: skill.description, parameters: skill.inputSchema, title: skill.title,
            risk: skill.risk, answer: skill.answer, output: skill.outputSchema)
    }
}

/// One request to a model: the conversation so far and the tools it may call.
package struct ModelRequest: Sendable {
    package let messages: [Message]
    package let tools: [ToolDefinition]

    package init(messages: [Message], tools: [ToolDefinition]) {
        self.messages = messages
        self.tools = tools
    }
}

/// A piece of a streamed model response. Tool calls arrive whole (providers assemble fragments).
package enum ModelChunk: Sendable, Equatable {
    case text(String)
    case toolCall(ToolCall)
    case usage(Usage)
    /// The provider found no skill for the request and said so in its text (the offline router); the turn ends
    /// as `nothingMatched` instead of `answered`.
    case noSkillMatched
}

/// Why a model request failed, as a sentence for the user (never containing credentials).
package struct ModelError: Error, Sendable, Equatable, CustomStringConvertible {
    package let message: String
    package init(_ message: String) { self.message = message }
    package var description: String { message }
}

/// Anything that turns a conversation into a streamed response: an OpenAI-compatible server, the offline router,
/// a script in tests.
package protocol ModelProvider: Sendable {
    /// Shown to the user: "gpt-4o-mini at http://localhost:11434/v1", "offline router".
    var displayName: String { get }
    /// Streams the response. Cancelling the consuming task stops the request (and closes its connection).
    func stream(_ request: ModelRequest) -> AsyncThrowingStream<ModelChunk, any Error>
    /// Whether answers are markdown to lay out (models) or plain lines (the offline router).
    var answersInMarkdown: Bool { get }
}

extension ModelProvider {
    package var answersInMarkdown: Bool { true }
}
