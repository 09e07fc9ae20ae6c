import Agent
import CTerminal
import Foundation
import SessionUI
import SkillHost

#if canImport(Glibc)
    import Glibc
#endif

/// Asking the person before a mutating or destructive call runs.
extension Shell {
    /// A question the owner's stream asked: the shell's thread puts it to the person at its next wake-up.
    func put(_ request: ConfirmationRequest) {
        shared.withLock { $0.questions.append(request) }
        wake()
    }

    /// The question `id` is no longer open (stopped, or withdrawn): not to be asked.
    func withdraw(_ id: String) { shared.withLock { $0.questions.removeAll { $0.callID == id } } }

    /// Puts the questions waiting to the person, one after another, and gives the owner each answer (one the owner
    /// no longer waits for — the work was stopped meanwhile — is dropped there).
    func askQuestions(cancel: () -> Void) {
        while let request = shared.withLock({ $0.questions.isEmpty ? nil : $0.questions.removeFirst() }) {
            // A question of work stopped meanwhile (its withdrawal not yet seen) is not asked.
            guard owner.isOpen(request.callID) else { continue }
            owner.confirm(id: request.callID, answer: ask(request, cancel: cancel))
        }
    }

    /// Shows the call the person is asked about and reads the answer.
    private func ask(_ request: ConfirmationRequest, cancel: () -> Void) -> ConfirmationAnswer {
        let risk =
            request.skill.risk == .destructive
            ? terminal.red("destructive") : terminal.yellow(request.skill.risk.rawValue)
        // The arguments are the model's words: inert, so they cannot draw a prompt over this one.
        let call = InertText.make("\(request.skill.id)(\(SessionViewModel.arguments(request.arguments.jsonText)))")
        say("\(terminal.bold("?")) \(call) is \(risk)\n")
        // A composite is asked about once, for its whole plan.
        if let plan = request.skill.kind.compositePlan {
            say("  it runs \(plan.lines.count) step\(plan.lines.count == 1 ? "" : "s"):\n")
            for line in plan.lines { tell("    \(line)\n") }
        }
        return ask(cancel: cancel)
    }

    /// The answer to "Run it?": one key on a terminal (y, a; n, Esc, Enter or any other key = no — a sentence typed
    /// ahead must not answer it with a letter it happens to start with), a line otherwise.
    func ask(cancel: () -> Void) -> ConfirmationAnswer {
        if Terminal.inputIsTTY {
            say(
                "  Run it? " + terminal.bold("y") + " yes · " + terminal.bold("n") + " no · " + terminal.bold("a")
                    + " always for this call this session · Esc no ")
            // What was typed before the question appeared is not an answer to it.
            _ = tcflush(STDIN_FILENO, TCIFLUSH)
            while true {
                _ = skillhost_sigint_take()
                Signals.unblock()
                let key = skillhost_read_key(STDIN_FILENO)
                Signals.block()
                switch key {
                case Int32(UInt8(ascii: "y")), Int32(UInt8(ascii: "Y")):
                    say("→ yes\n")
                    return .allowOnce
                case Int32(UInt8(ascii: "a")), Int32(UInt8(ascii: "A")):
                    say("→ always\n")
                    return .allowForSession
                case Int32(UInt8(ascii: "n")), Int32(UInt8(ascii: "N")), 27, 10, 13:
                    say("→ no\n")
                    return .deny
                case -1, -2:
                    say("→ no\n")
                    cancel()
                    return .deny
                default:
                    say("→ no (only y or a says yes)\n")
                    return .deny
                }
            }
        }
        while true {
            switch editor.read(prompt: "  Run it? [y]es / [n]o / [a]lways this session: ") {
            case .line(let answer):
                switch answer.trimmingCharacters(in: .whitespaces).lowercased() {
                case "y", "yes": return .allowOnce
                case "a", "always": return .allowForSession
                case "n", "no", "": return .deny
                default:
                    say("  Please answer y, n or a.\n")
                    continue
                }
            case .interrupt, .end:
                cancel()
                return .deny
            }
        }
    }
}
