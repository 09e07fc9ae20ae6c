import Agent
import SkillHost
import SkillJSON

/// What a conversation's owner (`ConversationOwner`) tells its front end, in the order it happened: every verb that
/// runs something (send, continue, undo, rewind, a direct call) returns a stream of these, and the stream ends when
/// the work does. The front end renders them and nothing else decides.
package enum ConversationEvent: Sendable {
    /// What the agent's turn reports (or a reversing call's card during an undo). Never `.confirmationNeeded`: a
    /// question comes as `asked`, once it can be answered.
    case agent(AgentEvent)
    /// A call waits for the person: answer it with `confirm(id:answer:)` (the request's `callID`).
    case asked(ConfirmationRequest)
    /// The question `id` is no longer open: answered (here or in another tab), stopped, or withdrawn.
    case settled(String)
    /// `/undo`: reversing call `index` of `count` is about to run (`shown`: "notes_add: notes_delete(id: 1)").
    case undoing(String, index: Int, count: Int)
    /// `/undo`: what reversing call `index` of `count` did. After `.declined` or `.failed` no other follows.
    case undid(UndoRun.Step, index: Int, count: Int)
    /// A rewind undid this change (the history forgets it as well).
    case rewound(ChangeRecord)
    /// The last event of a rewind: nil when the conversation now goes on from before the message, else why it
    /// was not rewound (what was undone stays undone).
    case rewindEnded(failure: String?)
    /// A direct call (`/call`) ended: the last event of its stream.
    case called(SkillOutcome)
}
