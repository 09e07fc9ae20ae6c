import Foundation
import TestSupport
import Testing

/// An undo is a call like any other: the policy decides it, and it undoes the change it recorded or says it cannot —
/// a later note that reused the id is never deleted by a rewind of the note added before it.
struct UndoAsRecordedTests: DrivesSkillhost {
    let home = Paths.temporaryDirectory("undo-as-recorded-home")

    func savedSession(_ prompt: String) throws -> String {
        let first = try skillhost("ask", "--save", prompt)
        #expect(first.status == 0, "\(first.stderr)")
        return String((first.stderr.components(separatedBy: "saved as session ").last ?? "").prefix(8))
    }

    @Test func aRewindWhoseRecordNoLongerMatchesSaysSoAndDeletesNothing() throws {
        let id = try savedSession(#"add a note titled "temp""#)
        // Outside the session, temp goes and a new note takes its id (SQLite gives the highest rowid + 1 again).
        #expect(try skillhost("call", "notes_delete", #"{"id":1}"#, "--yes").status == 0)
        let passport = try skillhost("call", "notes_add", #"{"title":"passport number","body":"X1234"}"#)
        #expect(passport.stdout.contains(#""id":1"#), "\(passport.stdout)")

        let rewound = try skillhost("ask", "--resume", id, "--rewind", "1", "what is 2+2")
        #expect(rewound.status == 1, "\(rewound.stderr)")
        #expect(
            rewound.stderr
                == """
                Back to before message 1 (add a note titled "temp"):
                  undo, newest first:
                    notes_add({"title":"temp","body":""}) undone by notes_delete({"id":1,"expect":{"title":"temp","body":""}})
                skillhost: undo of notes_add({"title":"temp","body":""}) failed: note 1 is not the one this change left (it is now "passport number"): the record no longer matches, so nothing was deleted; the conversation was not rewound

                """, "\(rewound.stderr)")
        #expect(try skillhost("call", "notes_list").stdout.contains("passport number"))
        #expect(try skillhost("sessions").stdout.contains("4 messages"))
    }

    @Test func aRewindsReversingCallIsDecidedByThePolicy() throws {
        try FileManager.default.createDirectory(atPath: home + "/config/skillhost", withIntermediateDirectories: true)
        try #"{"policy": {"notes_delete": "ask"}}"#.write(
            toFile: home + "/config/skillhost/config.json", atomically: true, encoding: .utf8)
        let id = try savedSession(#"add a note titled "milk""#)
        let rewound = try skillhost("ask", "--resume", id, "--rewind", "1", "what is 2+2")
        #expect(rewound.status == 1, "\(rewound.stderr)")
        #expect(
            rewound.stderr.hasSuffix(
                "skillhost: undo of notes_add({\"title\":\"milk\",\"body\":\"\"}) failed: not run: notes_delete is set to "
                    + "ask and there is no one to confirm it (allow it with a rule in the configuration); the "
                    + "conversation was not rewound\n"), "\(rewound.stderr)")
        #expect(try skillhost("call", "notes_list").stdout.contains("milk"))
    }
}

/// A session's budget of skill calls holds across `ask --resume`: what the session used before counts.
struct ResumedBudgetTests: DrivesSkillhost {
    let home = Paths.temporaryDirectory("resumed-budget-home")

    @Test func aSessionsBudgetSurvivesAResume() throws {
        try FileManager.default.createDirectory(atPath: home + "/config/skillhost", withIntermediateDirectories: true)
        try #"{"budgets": {"session": {"tool_calls": 2}}}"#.write(
            toFile: home + "/config/skillhost/config.json", atomically: true, encoding: .utf8)
        let first = try skillhost("ask", "--save", #"add a note titled "alpha""#)
        let id = String((first.stderr.components(separatedBy: "saved as session ").last ?? "").prefix(8))
        // The second call uses the budget up (the turn stops there, before the model's answer).
        _ = try skillhost("ask", "--resume", id, #"add a note titled "beta""#)
        let third = try skillhost("ask", "--resume", id, #"add a note titled "gamma""#)
        #expect(
            third.stderr.hasSuffix(
                "skillhost: stopped: this session has made 2 skill calls of 2 (the session.tool_calls budget)\n"),
            "\(third.stderr)")
        let notes = try skillhost("call", "notes_list").stdout
        #expect(notes.contains("alpha") && notes.contains("beta") && !notes.contains("gamma"), "\(notes)")
    }
}
