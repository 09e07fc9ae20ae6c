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
    /// Whether `key` could name a conversation: short, of letters, digits, '-' and '_' (a stranger's text names none,
    /// and a key may go into a statement of this code's).
    static func isKey(_ key: String) -> Bool {
        key.utf8.count <= 64 && !key.isEmpty
            && key.unicodeScalars.allSatisfy {
                $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "-_".unicodeScalars.contains($0))
            }
    }

    private static func checked(_ key: String) throws(WebRefusal) -> String {
        guard isKey(key) else {
            throw WebRefusal(status: 404, sentence: "no conversation has that name; the list shows those there are")
        }
        return key
    }

    /// The conversation a tab names (`key`): open already, or opened from the history — the shell's or this front
    /// end's — shown as it was, to be continued with its whole context (what a killed turn left behind becomes part
    /// of it, as `--resume` does). Nil names the one used last.
    package func room(_ key: String?) throws(WebRefusal) -> WebRoom {
        guard let key else { return latest }
        let found = try state.withLock { state throws(WebRefusal) -> WebRoom? in
            if state.deleted.contains(key) { throw Self.noConversation(key) }
            guard let room = state.rooms[try Self.checked(key)] else { return nil }
            Self.touch(room, &state)
            return room
        }
        if let found { return found }
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
            if refusal.missing { throw Self.noConversation(key) }
            throw WebRefusal(status: 500, sentence: refusal.description)
        } catch {
            throw WebRefusal(status: 500, sentence: "cannot read conversation \(key) from \(store.path): \(error)")
        }
        let made = WebRoom(key: key, owner: owner(history, disabled: configuration.disabledSkills), tabs: tabs)
        // Its events are sent before it can be found: nothing another request starts in it comes before them.
        made.show(events)
        if let problem = made.owner.problem { made.publish(WebEvent.notice(problem)) }
        // Two tabs opening it at once get one owner: the first to get here; one deleted meanwhile, none.
        let room = try state.withLock { state throws(WebRefusal) -> WebRoom in
            if state.deleted.contains(key) { throw Self.noConversation(key) }
            if let there = state.rooms[key] { return there }
            state.rooms[key] = made
            Self.touch(made, &state)
            return made
        }
        if room !== made { _ = made.owner.retire() }
        closeLeastUsed(keeping: room)
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

    /// Ends the session's use of the history: the conversations deleted here and not brought back are removed for
    /// good, and what could not be saved is tried once more. Returns what is still unsaved as a sentence; nil when
    /// all was saved.
    package func closeHistory() -> String? {
        let deleted = state.withLock { Array($0.deleted) }
        try? journal?.store.purgeDeleted(only: deleted)
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
        closeLeastUsed(keeping: room)
        return room
    }

    /// Names conversation `id` in the history (an empty name: its first message again); every tab's list follows.
    package func rename(_ id: String, to title: String) throws(WebRefusal) {
        let store = try historyStore()
        let id = try Self.checked(id)
        do {
            guard try store.rename(session: id, to: title) else { throw Self.noConversation(id) }
        } catch let refusal as WebRefusal {
            throw refusal
        } catch {
            throw WebRefusal(status: 500, sentence: "cannot rename conversation \(id) in \(store.path): \(error)")
        }
        tabs.broadcast(WebEvent.conversation(id).jsonText)
    }

    /// Deletes conversation `id` from the history: it leaves every list at once and is never opened again here, its
    /// tabs go to a new conversation, and it is removed for good after `deletionDelay` (or when this front end
    /// ends) unless `restore` brings it back first. Refused while work of it runs.
    package func delete(_ id: String) throws(WebRefusal) {
        let store = try historyStore()
        let id = try Self.checked(id)
        do {
            guard try store.hasSession(id) else { throw Self.noConversation(id) }
        } catch let refusal as WebRefusal {
            throw refusal
        } catch {
            throw WebRefusal(status: 500, sentence: "cannot read conversation \(id) from \(store.path): \(error)")
        }
        // Closed first, under the session's lock: nothing of it starts again, nothing opens it again, nothing is
        // written to it after.
        try state.withLock { state throws(WebRefusal) in
            if let room = state.rooms[id] {
                guard room.isIdle, room.owner.retire() else {
                    throw WebRefusal(
                        status: 409, sentence: "a turn is running in it; wait for its answer or stop it first")
                }
                Self.forget(room, &state)
            }
            state.deleted.insert(id)
        }
        do {
            _ = try store.markDeleted(session: id)
        } catch {
            // Not deleted: it may be opened again (its owner was retired; a tab opens it anew from the history).
            state.withLock { _ = $0.deleted.remove(id) }
            throw WebRefusal(status: 500, sentence: "cannot delete conversation \(id) from \(store.path): \(error)")
        }
        tabs.broadcast(WebEvent.deleted(id).jsonText)
        tabs.broadcast(WebEvent.conversation(nil).jsonText)
        // A request that names no conversation gets a new one, not the deleted one.
        if latest.owner.id == id { _ = startConversation() }
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
        let id = try Self.checked(id)
        do {
            switch try store.restore(session: id) {
            case .restored: break
            case .notDeleted:
                throw WebRefusal(status: 409, sentence: "conversation \(id) is not deleted; the list shows it")
            case .gone:
                throw WebRefusal(
                    status: 410, sentence: "conversation \(id) cannot be brought back: it was removed for good")
            }
        } catch let refusal as WebRefusal {
            throw refusal
        } catch {
            throw WebRefusal(status: 500, sentence: "cannot bring back conversation \(id) in \(store.path): \(error)")
        }
        state.withLock { _ = $0.deleted.remove(id) }
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

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// Past `roomLimit` open conversations, closes idle ones: those nothing was said in yet first (a tab that showed
    /// one goes on in a new one, which is the same), then the least used (it comes back from the history) — never
    /// `kept` (the one a request just got) or the one used last, and without a history never one with something
    /// said in it.
    private func closeLeastUsed(keeping kept: WebRoom) {
        let history = journal != nil
        state.withLock { state in
            while state.rooms.count > Self.roomLimit {
                // Chosen and retired under the session's lock: a request that finds it meanwhile finds it open.
                let idle = state.rooms.values.filter { $0 !== state.latest && $0 !== kept && $0.isIdle }
                let unsaid = idle.filter { !$0.owner.isBegun }
                let candidates = unsaid.isEmpty && history ? idle : unsaid
                guard
                    let candidate = candidates.min(by: { $0.state.withLock(\.used) < $1.state.withLock(\.used) }),
                    candidate.owner.retire()
                else { return }
                Self.forget(candidate, &state)
            }
        }
    }

    /// Forgets `room` (its owner retired already); the one used last becomes the most recently used other one.
    private static func forget(_ room: WebRoom, _ state: inout State) {
        if state.rooms[room.key] === room { state.rooms.removeValue(forKey: room.key) }
        if state.latest === room,
            let other = state.rooms.values.max(by: { $0.state.withLock(\.used) < $1.state.withLock(\.used) })
        {
            state.latest = other
        }
    }
}
