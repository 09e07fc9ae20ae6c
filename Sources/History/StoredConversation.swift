import Agent
import Foundation

/// A conversation as the history keeps it, for every front end (the shell, the browser, `ask`): a new one, whose
/// row and system prompt are written when the front end begins it, or one resumed from `history.db` — its messages
/// as a killed turn left them — and an agent session wired to it: every message and change journalled as it
/// happens, what it used before counted against its budgets, its earlier changes restored for undo and rewind.
package struct StoredConversation: Sendable {
    package let id: String
    package let journal: HistoryJournal
    /// The stored messages of a resumed conversation; nil for a new one.
    package let resumed: Conversation?

    /// Why a conversation could not be resumed, as one sentence.
    package struct Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        /// There is no conversation by that id (not: it could not be read).
        package let missing: Bool
        package let description: String
    }

    /// A new conversation (nothing is written until `begin`).
    package init(new id: String = HistoryStore.newSessionID(), journal: HistoryJournal) {
        self.id = id
        self.journal = journal
        resumed = nil
    }

    /// Conversation `id` as the history has it.
    package init(resuming id: String, journal: HistoryJournal) throws(Refusal) {
        do {
            guard let conversation = try journal.store.resume(session: id) else {
                throw Refusal(missing: true, description: "no session \(id); skillhost sessions lists them")
            }
            resumed = conversation
        } catch let refusal as Refusal {
            throw refusal
        } catch {
            throw Refusal(missing: false, description: "cannot read session \(id) from \(journal.store.path): \(error)")
        }
        self.id = id
        self.journal = journal
    }

    /// What the agent session starts from: the resumed messages, or a new conversation with `systemPrompt`.
    package func conversation(systemPrompt: String) -> Conversation {
        resumed ?? Conversation(system: systemPrompt)
    }

    /// Journals each message of the conversation (the agent session's `onMessage`).
    package var onMessage: @Sendable (Message) -> Void {
        { [journal, id] message in journal.write(.message(message, session: id)) }
    }

    /// Journals each change a call made (the agent session's `onChange`).
    package var onChange: @Sendable (ChangeRecord) -> Void {
        { [journal, id] change in journal.write(.change(change, session: id)) }
    }

    /// Wires `agent` (made from `conversation(systemPrompt:)`, `onMessage` and `onChange`) to the history: a
    /// resumed conversation's earlier changes can be undone and rewound again, and what it used still counts; its
    /// calls are counted from now on. Returns the sentence to say when the earlier changes cannot be read (the
    /// front end says it where the person sees it — and a rewind must not go on without them); nil when all is
    /// there.
    @discardableResult
    package func attach(_ agent: AgentSession) -> String? {
        var problem: String?
        if resumed != nil {
            do { agent.restoreChanges(try journal.store.changes(session: id)) } catch {
                problem =
                    "history: the changes of session \(id) cannot be read (\(error)); undo and rewind will not reach "
                    + "what was done before this start"
            }
        }
        journal.keepUse(of: agent, session: id, resumed: resumed != nil)
        return problem
    }

    /// Records a turn's event as it happens: a call once it ends (with the arguments it started with, kept in
    /// `arguments` meanwhile), and the usage.
    package func record(_ event: AgentEvent, arguments: inout [String: String]) {
        journal.record(event, session: id, arguments: &arguments)
    }

    /// The answer shown so far, kept so that a killed turn leaves it (resuming makes it part of the record).
    package func draft(_ text: String) { journal.write(.draft(text, session: id)) }

    /// The turn's messages are all stored: no draft is left to come back as an unfinished answer.
    package func turnEnded() { journal.write(.draft("", session: id)) }

    /// Writes a new conversation's row (with the model's name) and its first message (the system prompt): when the
    /// front end starts it, or at its first turn. Nothing for a resumed one.
    package func begin(_ agent: AgentSession, model: String) {
        guard resumed == nil else { return }
        journal.write(.session(id: id, model: model))
        if let first = agent.conversation.messages.first { journal.write(.message(first, session: id)) }
    }
}
