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
        guard let plan = owner.rewindPlan(to: number) else { return }
        tell(plan.description)
        // A deliberate yes: "y" or "yes", nothing typed ahead that merely starts with y.
        guard case .line(let answer) = editor.read(prompt: "Rewind? [y/N] "),
            ["y", "yes"].contains(answer.trimmingCharacters(in: .whitespaces).lowercased())
        else {
            say("Not rewound.\n")
            return
        }
        // Each reversing call is decided as any call: where the policy asks, the person is asked.
        guard let stream = try? owner.rewind(plan) else { return }
        let terminal = self.terminal
        let say: @Sendable (String) -> Void = { writeOut(Table.fit($0, width: terminal.width)) }
        follow(stream) { event in
            switch event {
            case .rewound(let change): say(terminal.cyan("↶") + InertText.make(" undone: \(change.call)\n"))
            case .rewindEnded(let failure?):
                // What was undone stays undone (and is forgotten); the conversation is kept whole.
                say(terminal.red("✗") + InertText.make(" \(failure); the conversation was not rewound\n"))
            case .rewindEnded(nil): say("Rewound: the conversation goes on from before message \(number).\n")
            default: break
            }
        }
    }
}
