import Agent
import Foundation
import Synchronization

/// A front end's writes to the history, none of which may be lost without a word: a write that fails (the database
/// is locked by another process, the disk is full) is said at once in one line and kept in memory, in order, and
/// retried before every later write until the database takes it; what is still unsaved when the front end ends is
/// said too. Drafts (the answer streamed so far) are coalesced: only the newest one waits.
package final class HistoryJournal: Sendable {
    package enum Write: Sendable {
        case session(id: String, model: String)
        case message(Message, session: String)
        case draft(String, session: String)
        case toolCall(ToolCallRecord, session: String)
        case usage(Usage, session: String)
        /// The conversation was rewound: messages from `from` on are forgotten.
        case truncate(from: Int, session: String)
        /// A call changed something (with its undo, if any).
        case change(ChangeRecord, session: String)
        /// The session has made this many skill calls more (a composite's steps counted).
        case callsUsed(Int, session: String)
        /// A change was undone (a rewind stopped part way keeps what it undid undone, and forgets it).
        case changeUndone(ChangeRecord, session: String)

        var isDraft: Bool {
            if case .draft = self { return true }
            return false
        }
    }

    private struct State {
        var pending: [Write] = []
        /// The failure last reported; nil while writes succeed.
        var failure: String?
    }

    package let store: HistoryStore
    private let state = Mutex(State())
    /// Shows a line to the user (from any thread).
    private let notice: @Sendable (String) -> Void

    package init(store: HistoryStore, notice: @escaping @Sendable (String) -> Void) {
        self.store = store
        self.notice = notice
    }

    /// Makes `agent` (the stored session `id`) count on from what the session used before (its budgets hold across
    /// a resume), and keeps its count of skill calls as it grows. A use that cannot be read is said and counted from
    /// zero.
    package func keepUse(of agent: AgentSession, session id: String, resumed: Bool) {
        if resumed {
            do {
                let use = try store.use(session: id)
                agent.restoreUse(
                    toolCalls: use.toolCalls, promptTokens: use.promptTokens, completionTokens: use.completionTokens)
            } catch {
                notice("history: what session \(id) used before cannot be read (\(error)); its budgets count from now")
            }
        }
        agent.observeCalls { [weak self] calls in self?.write(.callsUsed(calls, session: id)) }
    }

    /// Shows `line` to the user as the front end shows the journal's notices.
    package func say(_ line: String) { notice(line) }

    /// Writes waiting for the database.
    package var unsaved: Int { state.withLock { $0.pending.count } }

    /// Queues `write` behind any that wait and tries them all, in order.
    package func write(_ write: Write) {
        let (saved, failed) = state.withLock { state -> (Int, String?) in
            if write.isDraft, let last = state.pending.lastIndex(where: \.isDraft) { state.pending.remove(at: last) }
            state.pending.append(write)
            return flush(&state)
        }
        if let failed {
            notice(
                "history: could not save to \(store.path) (\(failed)); kept in memory and saved as soon as the "
                    + "database can be written again")
        } else if saved > 0 {
            notice("history: saved again (\(saved) entries that had waited)")
        }
    }

    /// Retries what waits; true when nothing waits any more.
    @discardableResult
    package func retry() -> Bool {
        let (saved, _) = state.withLock { state in state.pending.isEmpty ? (0, nil) : flush(&state) }
        if saved > 0 { notice("history: saved again (\(saved) entries that had waited)") }
        return unsaved == 0
    }

    /// Applies pending writes in order until one fails. Returns how many were saved after an earlier failure (0
    /// when all was well), and the failure when it is news (the first since the last success, or a different one).
    /// Lock held.
    private func flush(_ state: inout State) -> (Int, String?) {
        var saved = 0
        while let next = state.pending.first {
            do throws(StoreError) {
                try apply(next)
            } catch {
                let message = error.message
                let news = state.failure != message
                state.failure = message
                return (saved, news ? message : nil)
            }
            state.pending.removeFirst()
            saved += 1
        }
        let recovered = state.failure != nil
        state.failure = nil
        return (recovered ? saved : 0, nil)
    }

    private func apply(_ write: Write) throws(StoreError) {
        switch write {
        case .session(let id, let model): try store.createSession(id: id, model: model)
        case .message(let message, let session): try store.append(message, session: session)
        case .draft(let text, let session): try store.saveDraft(text, session: session)
        case .toolCall(let record, let session): try store.recordToolCall(record, session: session)
        case .usage(let usage, let session): try store.recordUsage(usage, session: session)
        case .truncate(let sequence, let session): try store.truncate(session: session, from: sequence)
        case .change(let change, let session): try store.recordChange(change, session: session)
        case .callsUsed(let calls, let session): try store.recordCallsUsed(calls, session: session)
        case .changeUndone(let change, let session): try store.forgetChange(change, session: session)
        }
    }

    /// Writes what the history keeps of a turn's event: each call with its arguments (from its start, kept in
    /// `arguments` by call id until it ends) and its result or failure; the token usage.
    package func record(_ event: AgentEvent, session: String, arguments: inout [String: String]) {
        switch event {
        case .toolCall(let call):
            let result: String?
            let error: String?
            let duration: Duration
            switch call.phase {
            case .started(let given):
                arguments[call.id] = given.jsonText
                return
            case .progress: return
            case .finished(let value, let took): (result, error, duration) = (value.displayText, nil, took)
            case .failed(let failure, let took): (result, error, duration) = (nil, failure.message, took)
            }
            write(
                .toolCall(
                    ToolCallRecord(
                        callID: call.id, skill: call.skill, arguments: arguments.removeValue(forKey: call.id) ?? "",
                        result: result, error: error, durationMilliseconds: duration.milliseconds), session: session))
        case .usage(let usage):
            write(.usage(usage, session: session))
        default: break
        }
    }
}
