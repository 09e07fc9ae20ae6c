import Foundation
import TestSupport
import Testing

/// `ask --save` keeps a turn as a session; `ask --resume ID` continues it with its context; `--rewind N` first goes
/// back to before message N, undoing the changes made since (also those made by an earlier process).
struct AskResumeTests: DrivesSkillhost {
    let home = Paths.temporaryDirectory("ask-resume-home")

    @Test func askContinuesASavedSessionAndRewindsItAcrossProcesses() throws {
        let first = try skillhost("ask", "--save", #"add a note titled "milk""#)
        #expect(first.status == 0, "\(first.stderr)")
        let said = first.stderr.components(separatedBy: "saved as session ").last ?? ""
        let id = String(said.prefix(8))
        #expect(said.hasPrefix("\(id) (continue it with skillhost ask --resume \(id) \"…\")"), "\(first.stderr)")

        let second = try skillhost("ask", "--resume", id, #"add a note titled "eggs""#)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(try skillhost("call", "notes_list").stdout.contains("eggs"))
        let sessions = try skillhost("sessions")
        #expect(sessions.stdout.contains("\(id) ") && sessions.stdout.contains("8 messages"), "\(sessions.stdout)")

        let rewound = try skillhost("ask", "--resume", id, "--rewind", "2", "what is 2+2")
        #expect(rewound.status == 0, "\(rewound.stderr)")
        #expect(
            rewound.stderr.hasPrefix(
                """
                Back to before message 2 (add a note titled "eggs"):
                  undo, newest first:
                    notes_add({"title":"eggs","body":""}) undone by notes_delete({"id":2,"expect":{"title":"eggs","body":""}})
                ↶ undone: notes_add({"title":"eggs","body":""})

                """), "\(rewound.stderr)")
        #expect(rewound.stdout.contains("4"))
        let notes = try skillhost("call", "notes_list").stdout
        #expect(notes.contains("milk") && !notes.contains("eggs"), "\(notes)")

        let tooFar = try skillhost("ask", "--resume", id, "--rewind", "9", "hello")
        #expect(tooFar.status == 2)
        #expect(
            tooFar.stderr
                == "skillhost: --rewind 9: session \(id) has 2 messages of yours\nhint: use a number from 1 to 2\n",
            "\(tooFar.stderr)")
        let unknown = try skillhost("ask", "--resume", "nosuchid", "hello")
        #expect(unknown.stderr == "skillhost: no session nosuchid; skillhost sessions lists them\n")
        let alone = try skillhost("ask", "--rewind", "1", "hello")
        #expect(alone.status == 2)
        #expect(alone.stderr.hasPrefix("skillhost: --rewind goes back in a resumed session\n"), "\(alone.stderr)")
    }
}
