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

    package init(after: Int, skill: String, call: String, undo: UndoAction?) {
        self.after = after
        self.skill = skill
        self.call = call
        self.undo = undo
    }
}

extension AgentSession {
    /// Records a successful call of a mutating or destructive skill (with its undo, when it registered one).
    func recordChange(skill: String, arguments: JSONValue, undo: UndoAction?) {
        let change = state.withLock { state in
            let after = state.conversation.messages.last { $0.role == .user }?.sequence ?? 0
            let change = ChangeRecord(after: after, skill: skill, call: "\(skill)(\(arguments.jsonText))", undo: undo)
            state.changes.append(change)
            return change
        }
        onChange?(change)
    }

    /// Every change of the session, oldest first.
    package var allChanges: [ChangeRecord] { state.withLock { $0.changes } }

    /// Adds changes made before this session object existed (a resumed session's, from the history).
    package func restoreChanges(_ changes: [ChangeRecord]) {
        state.withLock { $0.changes = changes + $0.changes }
    }

    /// The person's messages, oldest first, each with its sequence (what `/rewind` offers to go back to).
    package var userMessages: [Message] { conversation.messages.filter { $0.role == .user } }

    /// The changes made since the person's message `sequence` (it included), newest first: what going back to
    /// before it must undo.
    package func changes(since sequence: Int) -> [ChangeRecord] {
        state.withLock { $0.changes.filter { $0.after >= sequence }.reversed() }
    }

    /// Forgets a change that was undone (the newest record of it): a rewind that stops part way keeps what it undid
    /// undone, and a later one does not undo it again.
    package func forgetChange(_ change: ChangeRecord) {
        state.withLock { state in
            if let index = state.changes.lastIndex(of: change) { state.changes.remove(at: index) }
        }
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

/// Going back to before the person's message `number` (1 is the first): the changes made since that can be undone
/// and those that cannot, and the undoing, newest first, each reversing call through the call pipeline.
package struct RewindPlan: Sendable {
    package let number: Int
    package let target: Message
    package let undoable: [ChangeRecord]
    package let stuck: [ChangeRecord]
    /// The session the changes are forgotten from as they are undone.
    private let session: AgentSession

    /// Nil when the session has no such message of the person's.
    package init?(_ session: AgentSession, number: Int) {
        let messages = session.userMessages
        guard number >= 1, number <= messages.count else { return nil }
        self.number = number
        self.session = session
        target = messages[number - 1]
        let changes = session.changes(since: target.sequence)
        undoable = changes.filter { $0.undo != nil }
        stuck = changes.filter { $0.undo == nil }
    }

    /// Whether `other` goes back to the same message with the same changes (a plan made again after a while).
    package func sameAs(_ other: RewindPlan) -> Bool {
        number == other.number && target.sequence == other.target.sequence
            && undoable.map(\.call) == other.undoable.map(\.call)
            && undoable.map(\.after) == other.undoable.map(\.after)
            && stuck.map(\.call) == other.stuck.map(\.call)
    }

    /// What going back does, in lines: the message, what is undone, what cannot be.
    package var description: String {
        var plan = "Back to before message \(number) (\(Self.shorten(target.content, 60))):\n"
        plan += undoable.isEmpty ? "  no change to undo\n" : "  undo, newest first:\n"
        for change in undoable {
            let calls = (change.undo?.calls ?? []).map { "\($0.skillID)(\($0.arguments.jsonText))" }
            plan += "    \(change.call) undone by \(calls.joined(separator: ", then "))\n"
        }
        if !stuck.isEmpty {
            plan += "  cannot be undone (no way back registered): \(stuck.map(\.call).joined(separator: ", "))\n"
        }
        return plan
    }

    /// Runs the reversing calls, newest change first, telling `undone` each change undone (and forgetting it in the
    /// session: the caller forgets it in the history). Each is a call like any
    /// other: the policy decides it and `confirmer` answers where it asks (the front end's person; `.consented` where
    /// the plan was printed as consent, `ask --rewind`). Stops at the first that fails or is refused and returns why
    /// ("undo of notes_add(…) failed: …"); nil when every one ran.
    package func undo(
        with skills: any AgentSkills, session: String?, confirmer: Confirmer,
        undone: @Sendable (ChangeRecord) -> Void
    ) async -> String? {
        for change in undoable {
            for call in change.undo?.calls ?? [] {
                var invocation = SkillInvocation(skill: call.skillID, arguments: call.arguments, confirmer: confirmer)
                invocation.session = session
                if let failure = await skills.invoke(invocation).failure {
                    let declined = Refusal.declined(skill: call.skillID).sentence(for: .embedder)
                    if failure.code == .notPermitted, failure.message == declined {
                        return "\(change.call) was not undone: you said no"
                    }
                    return "undo of \(change.call) failed: \(failure.message)"
                }
            }
            self.session.forgetChange(change)
            undone(change)
        }
        return nil
    }

    /// Goes back: forgets the conversation from the target message on (call after `undo` succeeded).
    package func apply(to session: AgentSession) {
        session.truncate(from: target.sequence)
        session.recording?.recorder?.rewound(to: number)
    }

    private static func shorten(_ text: String, _ limit: Int) -> String {
        let line = text.replacingOccurrences(of: "\n", with: " ").replacingOccurrences(of: "\t", with: " ")
        return line.count > limit ? String(line.prefix(max(1, limit - 1))) + "…" : line
    }
}

extension Conversation {
    /// Drops every message from `sequence` on.
    package mutating func truncate(from sequence: Int) {
        messages.removeAll { $0.sequence >= sequence }
    }
}
