import SkillJSON

/// Who said something.
public enum Role: String, Sendable, Equatable {
    case system, user, assistant, tool
}

/// A call the model asked for: its id, the skill (tool) name, and the arguments exactly as the model wrote them
/// (JSON text that may be invalid — the agent repairs or reports it).
public struct ToolCall: Sendable, Equatable {
    public var id: String
    public var name: String
    public var arguments: String

    public init(id: String, name: String, arguments: String) {
        self.id = id
        self.name = name
        self.arguments = arguments
    }
}

/// One message of a conversation, numbered in the order it was produced.
public struct Message: Sendable, Equatable {
    /// Monotonically increasing within a conversation.
    public var sequence: Int
    public var role: Role
    /// Text (for tool messages: the result, or the error the model should correct).
    public var content: String
    /// Calls the assistant asked for (assistant messages only).
    public var toolCalls: [ToolCall]
    /// The call this message answers (tool messages only).
    public var toolCallID: String?
    /// True when a tool message reports a failure.
    public var isError: Bool

    public init(
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
public struct Usage: Sendable, Equatable {
    public var promptTokens: Int
    public var completionTokens: Int

    public init(promptTokens: Int, completionTokens: Int) {
        self.promptTokens = promptTokens
        self.completionTokens = completionTokens
    }

    public var totalTokens: Int { promptTokens + completionTokens }
}

/// An ordered list of messages with sequence numbers. Value type: the agent's session owns one and appends to it.
public struct Conversation: Sendable, Equatable {
    public private(set) var messages: [Message] = []
    private var nextSequence = 1

    public init(system: String? = nil) {
        if let system { append(Message(role: .system, content: system)) }
    }

    /// Appends `message`, giving it the next sequence number; returns the stored message.
    @discardableResult
    public mutating func append(_ message: Message) -> Message {
        var numbered = message
        numbered.sequence = nextSequence
        nextSequence += 1
        messages.append(numbered)
        return numbered
    }

    /// Skill names called anywhere in the conversation.
    public var calledSkills: Set<String> {
        Set(messages.flatMap { $0.toolCalls.map(\.name) })
    }

    /// Tool calls of the last assistant message that have no tool result yet.
    public var unansweredToolCalls: [ToolCall] {
        guard let index = messages.lastIndex(where: { $0.role == .assistant }) else { return [] }
        let answered = Set(messages[index...].compactMap(\.toolCallID))
        return messages[index].toolCalls.filter { !answered.contains($0.id) }
    }
}
