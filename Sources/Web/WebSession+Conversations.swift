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
    /// The conversation a tab names (`key`): open already, or opened from the history — the shell's or this front
    /// end's — shown as it was, to be continued with its whole context (what a killed turn left behind becomes part
    /// of it, as `--resume` does). Nil names the one used last.
    package func room(_ key: String?) throws(WebRefusal) -> WebRoom {
        guard let key else { return latest }
        // A stranger's text names no conversation: ids are short, of letters, digits, '-' and '_'.
        guard key.utf8.count <= 64, !key.isEmpty,
            key.unicodeScalars.allSatisfy({
                $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "-_".unicodeScalars.contains($0))
            })
        else {
            throw WebRefusal(status: 404, sentence: "no conversation has that name; the list shows those there are")
        }
        if let room = state.withLock({ $0.rooms[key] }) {
            touch(room)
            return room
        }
        guard let journal else {
            throw WebRefusal(
                status: 404, sentence: "conversation \(key) is no longer open; start a new one (there is no history)")
        }
        let store = journal.store
        let history: StoredConversation
        let events: [JSONValue]
        do {
            history = try StoredConversation(resuming: key, journal: journal)
            events = WebHistory.events(
                history.resumed?.messages ?? [], calls: try store.toolCalls(session: key), words: cardWords)
        } catch let refusal as StoredConversation.Refusal {
            if refusal.missing {
                throw WebRefusal(status: 404, sentence: "no conversation \(key); the list shows those there are")
            }
            throw WebRefusal(status: 500, sentence: refusal.description)
        } catch {
            throw WebRefusal(status: 500, sentence: "cannot read conversation \(key) from \(store.path): \(error)")
        }
        let made = WebRoom(key: key, owner: owner(history, disabled: configuration.disabledSkills), tabs: tabs)
        // Two tabs opening it at once get one owner: the first to get here.
        let (room, added) = state.withLock { state -> (WebRoom, Bool) in
            if let there = state.rooms[key] { return (there, false) }
            state.rooms[key] = made
            return (made, true)
        }
        guard added else {
            _ = made.owner.retire()
            return room
        }
        touch(room)
        room.show(events)
        // Said once the tabs show the conversation.
        if let problem = room.owner.problem { room.publish(WebEvent.notice(problem)) }
        closeLeastUsed()
        return room
    }

    /// The conversations in the history (the shell's too), most recently active first — with `search`, those that
    /// contain it — and the one used last.
    package func conversations(search: String? = nil) throws(WebRefusal) -> JSONValue {
        let current = latest.owner.id
        guard let journal else { return WebHistory.list([], current: current) }
        do throws(StoreError) {
            return WebHistory.list(try journal.store.listing(search: search), current: current)
        } catch {
            throw WebRefusal(
                status: 500, sentence: "cannot read the history at \(journal.store.path): \(error.message)")
        }
    }

    /// What the history could not save, once the front end ends (after a last try), as a sentence; nil when all
    /// was saved. Conversations deleted and not brought back are removed for good now.
    package var unsavedHistory: String? {
        try? journal?.store.purgeDeleted()
        guard let journal, journal.unsaved > 0, !journal.retry() else { return nil }
        return "history: \(journal.unsaved) entries could not be saved and are lost now that skillhost web ends; "
            + "check \(journal.store.path)"
    }

    /// Starts a new conversation, with the skills switched off in `room`'s (the one used last when nil) still off.
    package func startConversation(from room: WebRoom? = nil) -> WebRoom {
        let disabled = disabledSkills(in: room)
        let owner = owner(journal.map { StoredConversation(journal: $0) }, disabled: disabled)
        let room = state.withLock { state -> WebRoom in
            state.unnamed += 1
            let made = WebRoom(key: owner.id ?? "m\(state.unnamed)", owner: owner, tabs: tabs)
            state.rooms[made.key] = made
            return made
        }
        room.show([])
        used(room)
        closeLeastUsed()
        return room
    }

    /// Names conversation `id` in the history (an empty name: its first message again); every tab's list follows.
    package func rename(_ id: String, to title: String) throws(WebRefusal) {
        let store = try historyStore()
        do {
            guard try store.rename(session: id, to: title) else { throw Self.noConversation(id) }
        } catch let refusal as WebRefusal {
            throw refusal
        } catch {
            throw WebRefusal(status: 500, sentence: "cannot rename conversation \(id) in \(store.path): \(error)")
        }
        tabs.broadcast(WebEvent.conversation(id).jsonText)
    }

    /// Deletes conversation `id` from the history: it leaves every list at once, its tabs go to a new conversation,
    /// and it is removed for good after `deletionDelay` unless `restore` brings it back first. Refused while work
    /// of it runs.
    package func delete(_ id: String) throws(WebRefusal) {
        let store = try historyStore()
        if let room = state.withLock({ $0.rooms[id] }) {
            // Closed first: nothing of it starts again, and nothing is written to it after.
            let busy = WebRefusal(
                status: 409, sentence: "a turn is running in it; wait for its answer or stop it first")
            guard room.startShowing() != nil else { throw busy }
            defer { room.stopShowing() }
            guard room.owner.retire() else { throw busy }
            close(room)
            room.publish(WebEvent.deleted(id))
            // A request that names no conversation gets a new one, not the deleted one.
            if latest === room { _ = startConversation(from: room) }
        }
        do {
            guard try store.markDeleted(session: id) else { throw Self.noConversation(id) }
        } catch let refusal as WebRefusal {
            throw refusal
        } catch {
            throw WebRefusal(status: 500, sentence: "cannot delete conversation \(id) from \(store.path): \(error)")
        }
        tabs.broadcast(WebEvent.conversation(nil).jsonText)
        let delay = deletionDelay
        Task.detached {
            try? await Task.sleep(for: delay)
            // Those deleted at least `delay` ago (this one, unless it was brought back meanwhile).
            try? store.purgeDeleted(before: Date().addingTimeInterval(-Self.seconds(delay) + 0.05))
        }
    }

    /// Brings back conversation `id`, deleted a moment ago.
    package func restore(_ id: String) throws(WebRefusal) {
        let store = try historyStore()
        do {
            guard try store.restore(session: id) else {
                throw WebRefusal(
                    status: 410, sentence: "conversation \(id) cannot be brought back: it was removed for good")
            }
        } catch let refusal as WebRefusal {
            throw refusal
        } catch {
            throw WebRefusal(status: 500, sentence: "cannot bring back conversation \(id) in \(store.path): \(error)")
        }
        tabs.broadcast(WebEvent.conversation(id).jsonText)
    }

    private func historyStore() throws(WebRefusal) -> HistoryStore {
        guard let journal else {
            throw WebRefusal(status: 409, sentence: "there is no history: conversations are kept nowhere")
        }
        return journal.store
    }

    private static func noConversation(_ id: String) -> WebRefusal {
        WebRefusal(status: 404, sentence: "no conversation \(id); the list shows those there are")
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// Past `roomLimit` open conversations, closes the least used idle ones (never the one used last).
    private func closeLeastUsed() {
        while let candidate = state.withLock({ state -> WebRoom? in
            guard state.rooms.count > Self.roomLimit else { return nil }
            return state.rooms.values.filter { $0 !== state.latest && $0.isIdle }
                .min { $0.state.withLock(\.used) < $1.state.withLock(\.used) }
        }) {
            // Taken and retired first: work that started meanwhile keeps it open.
            guard candidate.startShowing() != nil else { return }
            defer { candidate.stopShowing() }
            guard candidate.owner.retire() else { return }
            close(candidate)
        }
    }

    /// Forgets `room` (its owner retired already).
    private func close(_ room: WebRoom) {
        state.withLock { state in
            if state.rooms[room.key] === room { state.rooms.removeValue(forKey: room.key) }
            if state.latest === room,
                let other = state.rooms.values.max(by: { $0.state.withLock(\.used) < $1.state.withLock(\.used) })
            {
                state.latest = other
            }
        }
    }
}
