import Agent
import Foundation
import History
import SessionUI
import SkillHost

extension AskCommand {
    /// The stored session an `ask` writes to: the one `--resume` continues (its conversation and changes), or a
    /// new one (`--save`); and the journal its turn is written to (every message, call and change, as the shell
    /// writes them).
    struct Resumed {
        let id: String
        let conversation: Conversation?
        let changes: [ChangeRecord]
        let journal: HistoryJournal

        /// Nil without `--resume` or `--save`; a sentence when the session does not exist or cannot be read.
        init?(_ options: AskOptions, model: String, store: HistoryStore?) throws(CLIError) {
            guard let store, options.resume != nil || options.save else { return nil }
            journal = HistoryJournal(store: store) { printError("skillhost: \($0)") }
            guard let id = options.resume else {
                id = HistoryStore.newSessionID()
                conversation = nil
                changes = []
                journal.write(.session(id: id, model: model))
                return
            }
            do {
                guard let conversation = try store.resume(session: id) else {
                    throw CLIError.failure("no session \(id); skillhost sessions lists them")
                }
                self.conversation = conversation
                changes = try store.changes(session: id)
            } catch let error as CLIError {
                throw error
            } catch {
                throw .failure("cannot read session \(id) from \(store.path): \(error)")
            }
            self.id = id
        }

        /// Writes a new session's first message (the system prompt) and says its id.
        func started(_ session: AgentSession) {
            guard conversation == nil else { return }
            if let first = session.conversation.messages.first { journal.write(.message(first, session: id)) }
            printError("skillhost: saved as session \(id) (continue it with skillhost ask --resume \(id) \"…\")")
        }

        var onMessage: @Sendable (Message) -> Void {
            { [journal, id] message in journal.write(.message(message, session: id)) }
        }

        var onChange: @Sendable (ChangeRecord) -> Void {
            { [journal, id] change in journal.write(.change(change, session: id)) }
        }

        func record(_ event: AgentEvent, arguments: inout [String: String]) {
            journal.record(event, session: id, arguments: &arguments)
        }

        /// `--rewind N`: says on stderr what going back undoes (each change and its reversing calls) and what it
        /// cannot, undoes it — the option is consent to what the policy asks about for a skill's risk; a rule or hook
        /// that says ask refuses the reversing call, as nobody is there to ask — and forgets the conversation from the person's message N on. An undo that fails stops it
        /// before anything is forgotten.
        func rewind(_ session: AgentSession, to number: Int, registry: SkillRegistry) async throws(CLIError) {
            guard let plan = RewindPlan(session, number: number) else {
                let count = session.userMessages.count
                throw .usage(
                    UsageError(
                        "--rewind \(number): session \(id) has \(count) message\(count == 1 ? "" : "s") of yours",
                        hint: count == 0 ? "there is nothing to go back to" : "use a number from 1 to \(count)"))
            }
            printError(InertText.make(plan.description).trimmingCharacters(in: .newlines))
            let consent = Confirmer.consented(.risk, then: .nobodyToAsk)
            let failure = await plan.undo(with: registry, session: id, confirmer: consent) { [journal, id] change in
                printError(InertText.make("↶ undone: \(change.call)"))
                journal.write(.changeUndone(change, session: id))
            }
            if let failure { throw .failure("\(failure); the conversation was not rewound") }
            plan.apply(to: session)
            journal.write(.truncate(from: plan.target.sequence, session: id))
        }

        /// Says what could not be saved when the command ends.
        func finish() {
            if journal.unsaved > 0, !journal.retry() {
                printError(
                    "skillhost: history: \(journal.unsaved) entries could not be saved and are lost now that ask "
                        + "ends; check \(journal.store.path)")
            }
        }
    }
}
