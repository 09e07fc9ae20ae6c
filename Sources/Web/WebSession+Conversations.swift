import Agent
import Foundation
import History
import SessionUI
import SkillJSON

/// Why a conversation could not be started or opened: the HTTP status and one sentence.
package struct WebRefusal: Error, Sendable, Equatable {
    package let status: Int
    package let sentence: String

    package init(status: Int, sentence: String) {
        self.status = status
        self.sentence = sentence
    }
}

extension WebSession {
    /// The conversation shown now: its id in the history (nil without a history).
    package var conversationID: String? { owner.id }

    /// The conversations in the history (the shell's too), newest first, and which one is shown.
    package func conversations() throws(WebRefusal) -> JSONValue {
        guard let journal else { return WebHistory.list([], current: nil) }
        do {
            return WebHistory.list(try journal.store.sessions(), current: conversationID)
        } catch {
            throw WebRefusal(
                status: 500, sentence: "cannot read the history at \(journal.store.path): \(error.message)")
        }
    }

    /// What the history could not save, once the front end ends (after a last try), as a sentence; nil when all
    /// was saved.
    package var unsavedHistory: String? {
        guard let journal, journal.unsaved > 0, !journal.retry() else { return nil }
        return "history: \(journal.unsaved) entries could not be saved and are lost now that skillhost web ends; "
            + "check \(journal.store.path)"
    }

    /// Starts a new conversation in every tab (the skills switched off stay off).
    package func startConversation() throws(WebRefusal) {
        try replace { disabled in
            (owner(journal.map { StoredConversation(journal: $0) }, disabled: disabled), [])
        }
    }

    /// Opens conversation `id` from the history — the shell's or this front end's — in every tab, shown as it was,
    /// to be continued with its whole context. What a killed turn left behind (finished calls' results, the
    /// streamed draft) becomes part of it, as `--resume` does.
    package func openConversation(_ id: String) throws(WebRefusal) {
        guard let journal else {
            throw WebRefusal(status: 409, sentence: "there is no history to open conversations from")
        }
        let store = journal.store
        let history: StoredConversation
        let events: [JSONValue]
        do {
            history = try StoredConversation(resuming: id, journal: journal)
            events = WebHistory.events(
                history.resumed?.messages ?? [], calls: try store.toolCalls(session: id), words: cardWords)
        } catch let refusal as StoredConversation.Refusal {
            if refusal.missing {
                throw WebRefusal(status: 404, sentence: "no conversation \(id); the list shows those there are")
            }
            throw WebRefusal(status: 500, sentence: refusal.description)
        } catch {
            throw WebRefusal(status: 500, sentence: "cannot read conversation \(id) from \(store.path): \(error)")
        }
        let opened = try replace { disabled in (owner(history, disabled: disabled), events) }
        // Said once the tabs show the conversation (the swap clears what they showed).
        if let problem = opened.problem { publish(WebEvent.notice(problem)) }
    }

    /// Swaps the conversation shown, unless a turn runs: every tab forgets what it showed and is sent `events`.
    @discardableResult
    private func replace(
        _ make: (Set<String>) -> (owner: ConversationOwner, events: [JSONValue])
    ) throws(WebRefusal) -> ConversationOwner {
        // The tabs are taken for the swap, as for any work: no turn starts and no other model is chosen meanwhile
        // (the next owner is made with the model chosen now).
        guard let current = startShowing() else {
            throw WebRefusal(status: 409, sentence: "a turn is running; wait for its answer or stop it first")
        }
        defer { stopShowing() }
        let next = make(current.agent.disabledSkills)
        let lines = next.events.map(Self.line)
        let swapped = state.withLock { state -> Bool in
            // Retired, the old conversation starts nothing more (a send that got it before the swap is refused).
            guard state.owner.retire() else { return false }
            state.owner = next.owner
            Self.show(lines, &state)
            return true
        }
        guard swapped else {
            throw WebRefusal(status: 409, sentence: "a turn is running; wait for its answer or stop it first")
        }
        broadcast(Self.line(WebEvent.conversation(next.owner.id)))
        broadcast(Self.line(WebEvent.undoable(false)))
        view.showing(conversation: next.owner.id)
        return next.owner
    }
}
