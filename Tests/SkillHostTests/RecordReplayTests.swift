import Foundation
import SkillJSON
import TestSupport
import Testing

/// `ask --record` writes the session as JSON Lines; `replay` runs it again in another host process, offline, with
/// the skills from the record or live, and says where it went another way.
struct RecordReplayTests: DrivesSkillhost {
    let home = Paths.temporaryDirectory("record-home")
    var record: String { home + "/run.skillrec" }

    @Test func aRecordedSessionReplaysOfflineAndDifferencesAreShown() throws {
        let server = try LoopbackServer([
            .chatToolCalls([("c1", "calculator", #"{"expression":"(23+7)*2"}"#)]), .chatText(["It is ", "60."]),
        ])
        let recorded = try skillhost(
            ["ask", "what is (23+7)*2", "--record", record],
            [
                "OPENAI_BASE_URL": server.baseURL.absoluteString, "SKILLHOST_MODEL": "m",
                "OPENAI_API_KEY": "sk-very-secret",
            ])
        server.stop()
        #expect(recorded.status == 0, "\(recorded.stderr)")
        #expect(recorded.stdout == "It is 60.\n")
        let text = try String(contentsOfFile: record, encoding: .utf8)
        #expect(!text.contains("sk-very-secret"), "no secret is written")
        let lines = try text.split(separator: "\n").map { try JSONValue(parsing: String($0)) }
        #expect(lines.first?["skillrec"] == 1)
        #expect(lines.dropFirst().first?["prompt"] == "what is (23+7)*2")
        #expect(
            lines.map { $0["type"]?.stringValue ?? "header" } == [
                "header", "turn", "tools", "request", "response", "call", "request", "response", "finished",
            ])
        #expect(
            lines[3]["messages"]?.arrayValue?.count == 2, "the first request carries the system prompt and question")
        #expect(lines[6]["from"] == 2, "a later request carries only the messages added since")
        let attributes = try FileManager.default.attributesOfItem(atPath: record)
        #expect((attributes[.posixPermissions] as? Int).map { $0 & 0o777 } == 0o600)

        // Another host process, no model server: the answers come from the record.
        for mode in [[], ["--skills", "live"]] {
            let replayed = try skillhost(["replay", record] + mode)
            #expect(replayed.status == 0, "\(replayed.stderr)")
            #expect(replayed.stdout == "It is 60.\n")
            #expect(
                replayed.stderr.hasSuffix(
                    "and 1 call (\(mode.isEmpty ? "skills from the record" : "skills live")): as recorded\n"),
                "\(replayed.stderr)")
        }

        // A record whose skill answered otherwise: live, the difference is the first divergence.
        try text.replacingOccurrences(of: #""result":60"#, with: #""result":61"#).write(
            toFile: record, atomically: true, encoding: .utf8)
        let diverged = try skillhost(["replay", record, "--skills", "live"])
        #expect(diverged.status == 1)
        #expect(
            diverged.stderr
                == "skillhost: the replay went another way than the record: call 1: calculator answered "
                + #"{"status":"ok","result":60} live; the record has {"status":"ok","result":61}"# + "\n")

        // A run that calls something else than the record: the call is named.
        try text.replacingOccurrences(
            of: #""arguments":{"expression":"(23+7)*2"}"#, with: #""arguments":{"expression":"1+1"}"#
        )
        .write(toFile: record, atomically: true, encoding: .utf8)
        let otherCall = try skillhost(["replay", record])
        #expect(otherCall.status == 1)
        #expect(
            otherCall.stderr.hasPrefix(
                #"skillhost: the replay went another way than the record: call 1: the run called calculator({"expression":"(23+7)*2"}); the record has calculator({"expression":"1+1"})"#
            ),
            "\(otherCall.stderr)")

        try "hello".write(toFile: record, atomically: true, encoding: .utf8)
        let garbage = try skillhost(["replay", record])
        #expect(garbage.status == 1)
        #expect(
            garbage.stderr
                == "skillhost: \(record) is not a skillhost record (its first line is not a skillrec header)\n")
    }
}

extension RecordReplayTests {
    /// `"record": true` records every `ask` in the state folder; a resumed and rewound session's record starts
    /// from the stored conversation and replays through the rewind.
    @Test func configuredRecordsAndAResumedRewoundSessionReplay() throws {
        let config = home + "/config/skillhost"
        try FileManager.default.createDirectory(atPath: config, withIntermediateDirectories: true)
        try #"{"record": true}"#.write(toFile: config + "/config.json", atomically: true, encoding: .utf8)
        let folder = home + "/state/skillhost/records"
        let saved = try skillhost(["ask", "--save", "what is 2+2"])
        #expect(saved.status == 0, "\(saved.stderr)")
        let id = String((saved.stderr.components(separatedBy: "saved as session ").last ?? "").prefix(8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).count == 1)
        let rewound = try skillhost(["ask", "--resume", id, "--rewind", "1", "what is 3+3"])
        #expect(rewound.status == 0, "\(rewound.stderr)")
        #expect(rewound.stdout.contains("6"))
        let records = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
        #expect(records.count == 2 && records.allSatisfy { $0.hasSuffix(".skillrec") }, "\(records)")
        let texts = try records.map { try String(contentsOfFile: folder + "/" + $0, encoding: .utf8) }
        let index = try #require(texts.firstIndex { $0.contains(#"{"type":"rewind","to":1}"#) })
        let second = folder + "/" + records[index]
        let replayed = try skillhost(["replay", second])
        #expect(replayed.status == 0, "\(replayed.stderr)")
        #expect(replayed.stdout.contains("6"))

        try #"{"record": 5}"#.write(toFile: config + "/config.json", atomically: true, encoding: .utf8)
        let wrong = try skillhost(["ask", "hello"])
        #expect(
            wrong.stderr.hasPrefix(
                "skillhost: \(config)/config.json: \"record\" must be true (records go to "
                    + "~/.local/state/skillhost/records), false, or a folder that is absolute or starts with ~\n"),
            "\(wrong.stderr)")
    }
}
