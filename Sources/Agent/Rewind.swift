import SkillHost
import SkillJSON

/// A change a call made during the session: which call, after which message of the person's, and how to reverse
/// it (nil: the skill registered no way back).
package struct ChangeRecord: Sendable, Equatable {
    /// The sequence of the person's message whose turn made the change.
    package let after: Int
    package let skill: String
    /// `notes_add({"title":"milk"})`, for saying what is undone.
    package let call: String
    package let undo: UndoAction?
}

extension AgentSession {
    /// Records a successful call of a mutating or destructive skill (with its undo, when it registered one).
    func recordChange(skill: String, arguments: JSONValue, undo: UndoAction?) {
        state.withLock { state in
            let after = state.conversation.messages.last { $0.role == .user }?.sequence ?? 0
            state.changes.append(
                ChangeRecord(after: after, skill: skill, call: "\(skill)(\(arguments.jsonText))", undo: undo))
        }
    }

    /// The person's messages, oldest first, each with its sequence (what `/rewind` offers to go back to).
    package var userMessages: [Message] { conversation.messages.filter { $0.role == .user } }

    /// The changes made since the person's message `sequence` (it included), newest first: what going back to
    /// before it must undo.
    package func changes(since sequence: Int) -> [ChangeRecord] {
        state.withLock { $0.changes.filter { $0.after >= sequence }.reversed() }
    }

    /// Forgets the conversation from message `sequence` on, and the changes made since (which the caller undid or
    /// said it could not). Later turns continue from what is left.
    package func truncate(from sequence: Int) {
        state.withLock { state in
            state.conversation.truncate(from: sequence)
            state.changes.removeAll { $0.after >= sequence }
            state.lastUndo = nil
        }
    }
}

extension Conversation {
    /// Drops every message from `sequence` on.
    package mutating func truncate(from sequence: Int) {
        messages.removeAll { $0.sequence >= sequence }
    }
}
