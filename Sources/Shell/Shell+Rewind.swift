import Agent
import Foundation
import History
import SessionUI
import SkillHost

extension Shell {
    /// `/rewind` lists the person's messages; `/rewind N` goes back to before message N: it says which changes made
    /// since will be undone and which cannot be, asks, then undoes them newest first (each through the call
    /// pipeline, as `/undo` does) and forgets the conversation from message N on — here and in the history.
    func rewind(_ argument: String) {
        let messages = session.userMessages
        guard !messages.isEmpty else {
            say("Nothing to rewind: no message yet.\n")
            return
        }
        guard let number = Int(argument), number >= 1, number <= messages.count else {
            var out = "Your messages (/rewind N goes back to before message N, undoing the changes made since):\n"
            for (index, message) in messages.enumerated() {
                out += "  \(index + 1). \(CardText.shorten(message.content, 100))\n"
            }
            tell(out)
            return
        }
        let target = messages[number - 1]
        let changes = session.changes(since: target.sequence)
        let undoable = changes.filter { $0.undo != nil }
        let stuck = changes.filter { $0.undo == nil }
        var plan = "Back to before message \(number) (\(CardText.shorten(target.content, 60))):\n"
        plan +=
            undoable.isEmpty
            ? "  no change to undo\n" : "  undo, newest first: \(undoable.map(\.call).joined(separator: ", "))\n"
        if !stuck.isEmpty {
            plan += "  cannot be undone (no way back registered): \(stuck.map(\.call).joined(separator: ", "))\n"
        }
        tell(plan)
        guard case .line(let answer) = editor.read(prompt: "Rewind? [y/N] "), answer.lowercased().hasPrefix("y") else {
            say("Not rewound.\n")
            return
        }
        for change in undoable {
            for call in change.undo?.calls ?? [] {
                var invocation = SkillInvocation(skill: call.skillID, arguments: call.arguments, confirmer: .confirmed)
                invocation.session = sessionID
                let reverse = invocation
                let outcome = waitFor { await self.registry.invoke(reverse) }
                if let failure = outcome.failure {
                    say(
                        terminal.red("✗") + InertText.make(" undo of \(change.call) failed: \(failure.message); ")
                            + "stopped before forgetting anything\n")
                    return
                }
                say(terminal.cyan("↶") + InertText.make(" undone: \(change.call)\n"))
            }
        }
        session.truncate(from: target.sequence)
        if let journal, let sessionID { journal.write(.truncate(from: target.sequence, session: sessionID)) }
        say("Rewound: the conversation goes on from before message \(number).\n")
    }
}
