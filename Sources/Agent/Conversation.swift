import SkillJSON

/// Who said something.
package enum Role: String, Sendable, Equatable {
    case system, user, assistant, tool
}

/// A call the model asked for: its id, the skill (tool) name, and the arguments exactly as the model wrote them
/// (JSON text that may be invalid — the agent repairs or reports it).
package struct ToolCall: Sendable, Equatable {
    package var id: String
    package var name: String
    package var arguments: String

    package init(id: String, name: String, arguments: String) {
        self.id = id
        self.name = name
        self.arguments = arguments
    }
}

/// One message of a conversation, numbered in the order it was produced.
package struct Message: Sendable, Equatable {
    /// Monotonically increasing within a conversation.
    package var sequence: Int
    package var role: Role
    /// Text (for tool messages: the result, or the error the model should correct).
    package var content: String
    /// Calls the assistant asked for (assistant messages only).
    package var toolCalls: [ToolCall]
    /// The call this message answers (tool messages only).
    package var toolCallID: String?
    /// True when a tool message reports a failure.
    package var isError: Bool

    package init(
        sequence: Int = 0, role: Role, content: String, toolCalls: [ToolCall] = [], toolCallID: String? = nil,
        isError: Bool = false
    ) {
        self.sequence = sequence
        self.role = role
        self.content = content
        self.toolCalls = toolCalls
        self.toolCallID = toolCallID
        self.isError = isError
    }
}

/// Token counts reported by the model server.
package struct Usage: Sendable, Equatable {
    package var promptTokens: Int
    package var completionTokens: Int
    /// The most tokens one response may report (10^12): a server's larger figure is taken as this, so sums of
    /// them never overflow.
    package static let maximum = 1_000_000_000_000

    package init(promptTokens: Int, completionTokens: Int) {
        self.promptTokens = promptTokens
        self.completionTokens = completionTokens
    }

    package var totalTokens: Int { promptTokens + completionTokens }
}

/// An ordered list of messages with sequence numbers. Value type: the agent's session owns one and appends to it.
package struct Conversation: Sendable, Equatable {
    package internal(set) var messages: [Message] = []
    private var nextSequence = 1

    package init(system: String? = nil) {
        if let system { append(Message(role: .system, content: system)) }
    }

    /// Appends `message`, giving it the next sequence number; returns the stored message.
    @discardableResult
    package mutating func append(_ message: Message) -> Message {
        var numbered = message
        numbered.sequence = nextSequence
        nextSequence += 1
        messages.append(numbered)
        return numbered
    }

    /// Skill names called anywhere in the conversation.
    package var calledSkills: Set<String> {
        Set(messages.flatMap { $0.toolCalls.map(\.name) })
    }

    /// Tool calls of the last assistant message that have no tool result yet.
    package var unansweredToolCalls: [ToolCall] {
        guard let index = messages.lastIndex(where: { $0.role == .assistant }) else { return [] }
        let answered = Set(messages[index...].compactMap(\.toolCallID))
        return messages[index].toolCalls.filter { !answered.contains($0.id) }
    }
}
