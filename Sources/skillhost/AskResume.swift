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
        /// The conversation as the history keeps it (opened and wired as every front end does).
        let stored: StoredConversation
        var id: String { stored.id }
        var journal: HistoryJournal { stored.journal }
        /// The resumed conversation's messages; nil for a new one.
        var conversation: Conversation? { stored.resumed }

        /// Nil without `--resume` or `--save`; a sentence when the session does not exist or cannot be read.
        init?(_ options: AskOptions, store: HistoryStore?) throws(CLIError) {
            guard let store, options.resume != nil || options.save else { return nil }
            let journal = HistoryJournal(store: store) { printError("skillhost: \($0)") }
            guard let id = options.resume else {
                stored = StoredConversation(journal: journal)
                return
            }
            do { stored = try StoredConversation(resuming: id, journal: journal) } catch {
                throw .failure(error.description)
            }
        }

        /// Says what the owner could not restore; a new session is written (with its first message) and its id
        /// said. A rewind is refused when the earlier changes cannot be read: it would forget the conversation and
        /// keep what it did, with no way back.
        func started(_ owner: ConversationOwner, rewinding: Bool) throws(CLIError) {
            if let problem = owner.problem {
                if rewinding { throw .failure("\(problem); not rewound") }
                printError("skillhost: \(problem)")
            }
            guard conversation == nil else { return }
            owner.begin()
            printError("skillhost: saved as session \(id) (continue it with skillhost ask --resume \(id) \"…\")")
        }

        /// `--rewind N`: says on stderr what going back undoes (each change and its reversing calls) and what it
        /// cannot, undoes it — the option is consent to what the policy asks about for a skill's risk; a rule or hook
        /// that says ask refuses the reversing call, as nobody is there to ask — and forgets the conversation from
        /// the person's message N on. An undo that fails stops it before anything is forgotten.
        func rewind(_ owner: ConversationOwner, to number: Int) async throws(CLIError) {
            guard let plan = owner.rewindPlan(to: number) else {
                let count = owner.agent.userMessages.count
                throw .usage(
                    UsageError(
                        "--rewind \(number): session \(id) has \(count) message\(count == 1 ? "" : "s") of yours",
                        hint: count == 0 ? "there is nothing to go back to" : "use a number from 1 to \(count)"))
            }
            printError(InertText.make(plan.description).trimmingCharacters(in: .newlines))
            guard let stream = try? owner.rewind(plan, consent: .consented(.risk, then: .nobodyToAsk)) else { return }
            for await event in stream {
                switch event {
                case .rewound(let change): printError(InertText.make("↶ undone: \(change.call)"))
                case .rewindEnded(let failure?): throw .failure("\(failure); the conversation was not rewound")
                default: break
                }
            }
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
