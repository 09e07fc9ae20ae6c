import Foundation
import SkillJSON
import Support
import TestSupport
import Testing

/// Every number from outside is range-checked before it becomes an integer: a model server's token usage or
/// tool-call index of 1e300, and a record's version, rewind target or request offset of 1e300, trapped (exit 132).
struct StrangerNumbersTests: DrivesSkillhost {
    let home = Paths.temporaryDirectory("stranger-numbers-home")

    @Test func aModelServersHugeNumbersDoNotCrashAsk() throws {
        let call =
            #"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1e300,"id":"c1","type":"function","#
            + #""function":{"name":"calculator","arguments":"{\"expression\":\"1+1\"}"}}]},"finish_reason":null}]}"#
        let server = try LoopbackServer([
            .events([
                call, #"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
                #"{"choices":[],"usage":{"prompt_tokens":1e300,"completion_tokens":1.7976931348623157e308}}"#,
                "[DONE]",
            ]),
            .events([
                #"{"choices":[{"index":0,"delta":{"content":"It is 2."},"finish_reason":"stop"}]}"#,
                #"{"choices":[],"usage":{"prompt_tokens":-5,"completion_tokens":"many"}}"#, "[DONE]",
            ]),
        ])
        defer { server.stop() }
        let result = try skillhost(
            ["ask", "what is 1+1", "--json"],
            ["OPENAI_BASE_URL": server.baseURL.absoluteString, "SKILLHOST_MODEL": "m"])
        // The first response's usage is taken as the most one response may report, so the turn's budget stops it.
        #expect(result.status == 10, "\(result.stderr)")
        let events = try result.stdout.split(separator: "\n").map { try JSONValue(parsing: String($0)) }
        #expect(events.contains { $0["event"] == "usage" && $0["prompt_tokens"] == 1_000_000_000_000 }, "\(events)")
        #expect(events.contains { $0["event"] == "tool_call_finished" }, "\(result.stdout)")
    }

    @Test(arguments: [
        #"{"skillrec":1e300,"model":"m"}"#,
        #"{"skillrec":1,"model":"m"}"# + "\n" + #"{"type":"turn","prompt":"hi"}"# + "\n"
            + #"{"type":"rewind","to":1e300}"#,
        #"{"skillrec":1,"model":"m"}"# + "\n" + #"{"type":"turn","prompt":"hi"}"# + "\n"
            + #"{"type":"request","from":1e300,"messages":[]}"# + "\n"
            + #"{"type":"response","chunks":[{"text":"hello"},{"usage":{"prompt":1e300,"completion":-1e300}}]}"#,
    ])
    func aRecordsHugeNumbersDoNotCrashReplay(_ text: String) throws {
        let path = home + "/hostile.skillrec"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        let result = try skillhost(["replay", path])
        #expect(result.status == 0 || result.status == 1, "exit \(result.status): \(result.stderr)")
        #expect(!result.stderr.contains("Fatal error"), "\(result.stderr)")
    }

    @Test func theIntegerReadingOfAStrangersNumberNeverTraps() {
        #expect(JSONValue.double(1e300).integer(in: 0...10) == nil)
        #expect(JSONValue.double(.infinity).integer(in: 0...10) == nil)
        #expect(JSONValue.double(.nan).integer(in: 0...10) == nil)
        #expect(JSONValue.double(2.5).integer(in: 0...10) == nil)
        #expect(JSONValue.double(3).integer(in: 0...10) == 3)
        #expect(JSONValue.int(-1).integer(in: 0...10) == nil)
        #expect(JSONValue.double(9.3e18).integer(in: 0...Int.max) == nil)
        #expect(JSONValue.double(1e300).count(upTo: 100) == 100)
        #expect(JSONValue.double(-1e300).count(upTo: 100) == 0)
        #expect(JSONValue.double(.nan).count(upTo: 100) == 0)
        #expect(JSONValue.string("many").count(upTo: 100) == 0)
    }
}

/// A reader that has closed the output (`| head -0`) ends a command quietly, with exit 141 as a program a closed
/// pipe stops — never a fatal error and a backtrace (exit 132). The output here is a pipe whose reading end is
/// closed before the command starts, so the first write finds it closed (`head` would race the command).
struct ClosedOutputTests {
    let home = Paths.temporaryDirectory("closed-output-home")

    static let closedPipe = """
        import os, subprocess, sys
        r, w = os.pipe()
        os.close(r)
        p = subprocess.run(sys.argv[1:], stdout=w, stderr=subprocess.PIPE)
        sys.stderr.write(p.stderr.decode(errors="replace"))
        sys.exit(p.returncode if p.returncode >= 0 else 128 - p.returncode)
        """

    @Test(arguments: [
        ["ask", "what is 2+2"], ["ask", "what is 2+2", "--json"], ["list"],
        ["call", "calculator", #"{"expression":"1+1"}"#, "--json"], ["sessions"],
    ])
    func aClosedOutputEndsTheCommandQuietly(_ arguments: [String]) throws {
        let result = try runProcess(
            "/usr/bin/python3", ["-c", Self.closedPipe, Paths.skillhost] + arguments,
            environment: cliEnvironment(home: home))
        #expect(result.status == 141, "\(arguments): exit \(result.status), \(result.stderr)")
        #expect(!result.stderr.contains("Fatal error") && !result.stderr.contains("crashed"), "\(result.stderr)")
    }
}

/// A password and a key in the model server's address are never written: records, `history.db` and `config show`
/// show the address without user information and with key-like query parameters redacted.
struct AddressCredentialsTests {
    let home = Paths.temporaryDirectory("address-credentials-home")

    @Test func credentialsInTheBaseURLAreRedactedEverywhereItIsWritten() throws {
        let server = try LoopbackServer([.chatText(["It is 4."])])
        defer { server.stop() }
        let port = try #require(server.baseURL.port)
        let address = "http://me:hunter22secret@127.0.0.1:\(port)/v1?api-key=abc123secretkey&mode=x"
        let environment = cliEnvironment(home: home, ["OPENAI_BASE_URL": address, "SKILLHOST_MODEL": "m"])
        let record = home + "/run.skillrec"
        let asked = try runProcess(
            Paths.skillhost, ["ask", "what is 2+2", "--save", "--record", record], environment: environment)
        #expect(asked.status == 0, "\(asked.stderr)")
        let shown = try runProcess(Paths.skillhost, ["config", "show"], environment: environment)
        // The database and its write-ahead log (where the newest pages are until a checkpoint).
        let history = try ["", "-wal"].compactMap {
            FileManager.default.contents(atPath: home + "/data/skillhost/history.db" + $0)
        }.reduce(Data(), +)
        #expect(!history.isEmpty)
        for (place, text) in [
            ("record", try String(contentsOfFile: record, encoding: .utf8)), ("config show", shown.stdout),
            ("history.db", String(decoding: history, as: UTF8.self)), ("stderr", asked.stderr),
        ] {
            #expect(!text.contains("hunter22secret") && !text.contains("abc123secretkey"), "\(place): \(text)")
        }
        #expect(
            shown.stdout.contains("http://[redacted]@127.0.0.1:\(port)/v1?api-key=[redacted]&mode=x"), "\(shown.stdout)"
        )
    }

    /// The redaction keeps a record line JSON (a URL's credentials end at a quote) and takes more forms of keys.
    @Test func redactingURLsKeepsJSONAndTakesMoreKeyForms() throws {
        let line =
            #"{"content":"see https://x.test/?token=abc&x=1","id":7,"base_url":"http://localhost:11434","#
            + #""email":"me@example.com"}"#
        let redacted = Redaction.url(line)
        #expect(
            redacted
                == #"{"content":"see https://x.test/?token=[redacted]&x=1","id":7,"base_url":"http://localhost:11434","#
                + #""email":"me@example.com"}"#)
        #expect((try? JSONValue(parsing: redacted)) != nil)
        for (given, kept) in [
            ("https://h/cb#access_token=SECRET1&state=2", "https://h/cb#access_token=[redacted]&state=2"),
            ("https://h/?client_secret=SECRET2", "https://h/?client_secret=[redacted]"),
            ("https://h/?X-Amz-Signature=SECRET3", "https://h/?X-Amz-Signature=[redacted]"),
            ("https://h/?x-api-key=SECRET4", "https://h/?x-api-key=[redacted]"),
        ] {
            #expect(Redaction.url(given) == kept, "\(given)")
        }
    }
}
