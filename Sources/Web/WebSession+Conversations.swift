import Agent
import Foundation
import History
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
    package var conversationID: String? { state.withLock { $0.conversation } }

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
            let history = journal.map { StoredConversation(journal: $0) }
            return (makeAgent(history, disabled: disabled).agent, history, false, [])
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
            events = WebHistory.events(history.resumed?.messages ?? [], calls: try store.toolCalls(session: id))
        } catch let refusal as StoredConversation.Refusal {
            if refusal.missing {
                throw WebRefusal(status: 404, sentence: "no conversation \(id); the list shows those there are")
            }
            throw WebRefusal(status: 500, sentence: refusal.description)
        } catch {
            throw WebRefusal(status: 500, sentence: "cannot read conversation \(id) from \(store.path): \(error)")
        }
        var problem: String?
        try replace { disabled in
            let made = makeAgent(history, disabled: disabled)
            problem = made.problem
            return (made.agent, history, true, events)
        }
        // Said once the tabs show the conversation (the swap clears what they showed).
        if let problem { publish(WebEvent.notice(problem)) }
    }

    /// Swaps the conversation shown, unless a turn runs: every tab forgets what it showed and is sent `events`.
    private func replace(
        _ make: (Set<String>) -> (agent: AgentSession, history: StoredConversation?, stored: Bool, events: [JSONValue])
    ) throws(WebRefusal) {
        let disabled = state.withLock { $0.running ? nil : $0.agent?.disabledSkills ?? [] }
        guard let disabled else {
            throw WebRefusal(status: 409, sentence: "a turn is running; wait for its answer or stop it first")
        }
        let next = make(disabled)
        let lines = next.events.map(Self.line)
        let swapped = state.withLock { state -> Bool in
            guard !state.running else { return false }
            state.agent = next.agent
            state.history = next.history
            state.stored = next.stored
            state.replay = lines
            state.replayBytes = lines.reduce(0) { $0 + $1.utf8.count }
            while state.replayBytes > Self.replayLimit, !state.replay.isEmpty {
                state.replayBytes -= state.replay.removeFirst().utf8.count
            }
            // Under the lock, as `watch` does: every tab sees the new conversation whole, then what follows.
            for line in [Self.line(WebEvent.reset())] + state.replay { Self.deliver(line, &state) }
            return true
        }
        guard swapped else {
            throw WebRefusal(status: 409, sentence: "a turn is running; wait for its answer or stop it first")
        }
        broadcast(Self.line(WebEvent.conversation(next.history?.id)))
        broadcast(Self.line(WebEvent.undoable(false)))
        view.showing(conversation: next.history?.id)
    }
}
