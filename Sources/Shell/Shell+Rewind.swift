import Agent
import Foundation
import History
import SessionUI
import SkillHost

extension Shell {
    /// `/rewind` lists the person's messages; `/rewind N` goes back to before message N: it says which changes made
    /// since will be undone and which cannot be, asks, then undoes them newest first (each through the call
    /// pipeline, asked about where the policy asks, as `/undo` does) and forgets the conversation from message N on — here and in the history.
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
        guard let plan = RewindPlan(session, number: number) else { return }
        tell(plan.description)
        // A deliberate yes: "y" or "yes", nothing typed ahead that merely starts with y.
        guard case .line(let answer) = editor.read(prompt: "Rewind? [y/N] "),
            ["y", "yes"].contains(answer.trimmingCharacters(in: .whitespaces).lowercased())
        else {
            say("Not rewound.\n")
            return
        }
        let terminal = self.terminal
        let registry = self.registry
        let sessionID = self.sessionID
        // Each reversing call is decided as any call: where the policy asks, the person is asked.
        let confirmer = personConfirmer
        let journal = self.journal
        let failure = waitFor {
            await plan.undo(with: registry, session: sessionID, confirmer: confirmer) { change in
                writeOut(terminal.cyan("↶") + InertText.make(" undone: \(change.call)\n"))
                if let journal, let sessionID { journal.write(.changeUndone(change, session: sessionID)) }
            }
        }
        if let failure {
            // What was undone stays undone (and is forgotten); the conversation is kept whole.
            say(terminal.red("✗") + InertText.make(" \(failure); the conversation was not rewound\n"))
            return
        }
        plan.apply(to: session)
        if let journal, let sessionID { journal.write(.truncate(from: plan.target.sequence, session: sessionID)) }
        say("Rewound: the conversation goes on from before message \(number).\n")
    }
}
