import Foundation
import SkillJSON
import TestSupport
import Testing

/// Hooks through the real binary: small shell scripts written by the test see every call, may allow, deny, ask or
/// rewrite it, answer confirmations for headless use, and see outcomes and turns. One that hangs, answers garbage
/// or rewrites arguments into invalid ones is a refusal naming it.
struct HooksCLITests: DrivesSkillhost {
    let home = Paths.temporaryDirectory("hooks-home")

    /// Writes an executable script into the home's bin folder and returns its path.
    func script(_ name: String, _ body: String) throws -> String {
        let folder = home + "/bin"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let path = folder + "/" + name
        try writeExecutable("#!/bin/sh\n" + body + "\n", to: path)
        return path
    }

    func configure(_ hooks: String) throws {
        try FileManager.default.createDirectory(atPath: home + "/config/skillhost", withIntermediateDirectories: true)
        try #"{"hooks": \#(hooks)}"#.write(
            toFile: home + "/config/skillhost/config.json", atomically: true, encoding: .utf8)
    }

    func waitForFile(_ path: String) async -> String? {
        for _ in 0..<600 {
            if let text = try? String(contentsOfFile: path, encoding: .utf8), text.hasSuffix("\n") { return text }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return nil
    }

    @Test func beforeCallSeesAllowsDeniesAndRewrites() throws {
        let seen = home + "/seen.json"
        let allow = try script("allow", "cat > \(seen); echo '{\"decision\": \"allow\"}'")
        let deny = try script("deny", #"cat > /dev/null; echo '{"decision": "deny", "reason": "not on Fridays"}'"#)
        let rewrite = try script(
            "rewrite", #"cat > /dev/null; echo '{"arguments": {"expression": "1+1"}}'"#)
        try configure(
            #"{"before_call": [{"match": "calc*", "command": ["\#(allow)"]}, {"match": "notes_add", "command": ["\#(deny)"]}, {"match": "calculator", "command": ["\#(rewrite)"]}]}"#
        )
        let rewritten = try skillhost("call", "calculator", #"{"expression": "(23+7)*2"}"#)
        #expect(rewritten.stdout == "2\n", "the second hook rewrote it: \(rewritten.stderr)")
        let input = try JSONValue(parsing: String(contentsOfFile: seen, encoding: .utf8))
        #expect(input["event"] == "before_call")
        #expect(input["skill"] == "calculator")
        #expect(input["arguments"] == ["expression": "(23+7)*2"])
        #expect(input["risk"] == "read-only")
        #expect(input["caller"] == "command_line")
        let denied = try skillhost("call", "notes_add", #"{"title": "milk"}"#, "--yes")
        #expect(denied.status == 1)
        #expect(denied.stderr == "error: not run: the before_call hook \(deny) refused notes_add: not on Fridays\n")
        #expect(try skillhost("call", "notes_list", "{}").stdout == "[]\n", "nothing was added")
    }

    @Test func aDenyRuleStandsAndAHooksAskNeedsAYes() throws {
        let seen = home + "/seen.json"
        let asks = try script("asks", "cat > \(seen); echo '{\"decision\": \"ask\", \"reason\": \"big change\"}'")
        try FileManager.default.createDirectory(atPath: home + "/config/skillhost", withIntermediateDirectories: true)
        try #"{"policy": {"notes_delete": "deny"}, "hooks": {"before_call": [{"command": ["\#(asks)"]}]}}"#.write(
            toFile: home + "/config/skillhost/config.json", atomically: true, encoding: .utf8)
        let denied = try skillhost("call", "notes_delete", #"{"id": 1}"#, "--yes")
        #expect(
            denied.stderr
                == "error: not run: calls to notes_delete are denied by the configuration (policy rule \"notes_delete\": "
                + "\"deny\")\n")
        #expect(!FileManager.default.fileExists(atPath: seen), "a call a rule denies is never shown to hooks")
        // A read-only call the hook wants a person for: refused where no one can be asked, run with --yes.
        let refused = try skillhost("call", "calculator", #"{"expression": "1+1"}"#)
        #expect(
            refused.stderr
                == "error: not run: the before_call hook \(asks) refused calculator: big change; it asks for a "
                + "person's yes, and no one can give it here\n")
        #expect(try skillhost("call", "calculator", #"{"expression": "1+1"}"#, "--yes").stdout == "2\n")
    }

    @Test func aHookThatFailsDeniesAndSaysHow() throws {
        let hangs = try script("hangs", "sleep 30")
        let garbage = try script("garbage", "cat > /dev/null; echo 'yes please'")
        let invalid = try script("invalid", #"cat > /dev/null; echo '{"arguments": {"nope": 1}}'"#)
        let crashes = try script("crashes", "echo 'out of cheese' >&2; exit 3")
        let cases: [(hook: String, extra: String, sentence: String)] = [
            (
                hangs, #", "timeout_ms": 300"#,
                "not run: the before_call hook \(hangs) refused calculator: it did not answer within 300 ms (a hook "
                    + #"that fails denies; "on_error": "allow" on it lets calls run)"#
            ),
            (
                garbage, "",
                "not run: the before_call hook \(garbage) refused calculator: it answered yes please, not a JSON "
                    + #"object like {"decision": "allow"} (a hook that fails denies; "on_error": "allow" on it lets "#
                    + "calls run)"
            ),
            (
                crashes, "",
                "not run: the before_call hook \(crashes) refused calculator: it exited with status 3: out of cheese "
                    + #"(a hook that fails denies; "on_error": "allow" on it lets calls run)"#
            ),
            (
                invalid, "",
                "the before_call hook \(invalid) rewrote the arguments of calculator into ones its schema refuses: "
            ),
        ]
        for (hook, extra, sentence) in cases {
            try configure(#"{"before_call": [{"command": ["\#(hook)"]\#(extra)}]}"#)
            let started = ContinuousClock.now
            let result = try skillhost("call", "calculator", #"{"expression": "1+2"}"#)
            #expect(result.status != 0, "\(hook)")
            #expect(result.stderr.contains(sentence), "\(result.stderr)")
            if hook == hangs { #expect(ContinuousClock.now - started < .seconds(25), "the hanging hook was killed") }
        }
        // "on_error": "allow": a hook that fails lets the call run.
        try configure(#"{"before_call": [{"command": ["\#(hangs)"], "timeout_ms": 200, "on_error": "allow"}]}"#)
        #expect(try skillhost("call", "calculator", #"{"expression": "1+2"}"#).stdout == "3\n")
    }

    /// A hook decides for the person: one in a folder others can write (or writable itself) approved notes_delete.
    /// It does not run, and the call is refused saying why (as ssh refuses keys others can write).
    @Test func aHookOthersCanChangeDoesNotRun() throws {
        let shared = home + "/shared"
        try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: true)
        let path = shared + "/permit"
        try "#!/bin/sh\ncat > /dev/null; echo '{\"decision\": \"allow\"}'\n".write(
            toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o755)
        chmod(shared, 0o777)
        #expect(try skillhost("call", "notes_add", #"{"title": "milk"}"#).status == 0)
        try configure(#"{"permission": [{"match": "notes_delete", "command": ["\#(path)"]}]}"#)
        let refused = try skillhost("call", "notes_delete", #"{"id": 1}"#)
        #expect(refused.status != 0)
        #expect(
            refused.stderr.contains(
                "could not start (\(path) lies in \(shared), which other users can write (mode 777); move the hook "
                    + "into a folder only you can write)"), "\(refused.stderr)")
        chmod(shared, 0o755)
        chmod(path, 0o777)
        let writable = try skillhost("call", "notes_delete", #"{"id": 1}"#)
        #expect(
            writable.stderr.contains(
                "could not start (\(path) can be changed by other users (mode 777); chmod go-w it)"),
            "\(writable.stderr)")
        // Run through an interpreter, the script is what decides: it is checked too.
        try configure(#"{"permission": [{"match": "notes_delete", "command": ["/bin/sh", "\#(path)"]}]}"#)
        let interpreted = try skillhost("call", "notes_delete", #"{"id": 1}"#)
        #expect(
            interpreted.stderr.contains(
                "could not start (\(path) can be changed by other users (mode 777); chmod go-w it)"),
            "\(interpreted.stderr)")
        chmod(path, 0o755)
        #expect(try skillhost("call", "notes_delete", #"{"id": 1}"#).status == 0, "only the person can change it now")
    }

    @Test func permissionAnswersForHeadlessUseAndAfterCallSeesTheOutcome() async throws {
        let allow = try script("permit", #"cat > /dev/null; echo '{"decision": "allow"}'"#)
        let refuse = try script("refuse", #"cat > /dev/null; echo '{"decision": "deny", "reason": "ask Bob"}'"#)
        let outcomes = home + "/outcomes.jsonl"
        let after = try script("after", "cat >> \(outcomes); echo >> \(outcomes)")
        #expect(try skillhost("call", "notes_add", #"{"title": "milk"}"#).status == 0)
        // Without a hook, a destructive call needs --yes; the permission hook gives the yes instead.
        #expect(try skillhost("call", "notes_delete", #"{"id": 1}"#).status == 1)
        try configure(
            #"{"permission": [{"match": "notes_delete", "command": ["\#(allow)"]}], "after_call": [{"command": ["\#(after)"]}]}"#
        )
        let deleted = try skillhost("call", "notes_delete", #"{"id": 1}"#)
        #expect(deleted.status == 0, "\(deleted.stderr)")
        let line = try #require(await waitForFile(outcomes), "the after_call hook ran")
        let outcome = try JSONValue(parsing: line.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(outcome["event"] == "after_call")
        #expect(outcome["skill"] == "notes_delete")
        #expect(outcome["outcome"]?["status"] == "ok", "\(outcome)")
        #expect(outcome["duration_ms"]?.doubleValue != nil)
        try configure(#"{"permission": [{"command": ["\#(refuse)"]}]}"#)
        let refused = try skillhost("call", "notes_delete", #"{"id": 2}"#)
        #expect(refused.stderr == "error: not run: the permission hook \(refuse) refused notes_delete: ask Bob\n")
    }

    @Test func turnHooksSeeTheAgentsTurns() async throws {
        let turns = home + "/turns.jsonl"
        let log = try script("turns", "cat >> \(turns); echo >> \(turns)")
        try configure(#"{"turn_start": [{"command": ["\#(log)"]}], "turn_end": [{"command": ["\#(log)"]}]}"#)
        #expect(try skillhost("ask", "what is 2+2").status == 0)
        var lines: [String] = []
        for _ in 0..<600 {
            lines = ((try? String(contentsOfFile: turns, encoding: .utf8)) ?? "").split(separator: "\n").map(
                String.init)
            if lines.count >= 2 { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        let events = try lines.map { try JSONValue(parsing: $0) }
        #expect(
            events.map { $0["event"] } == ["turn_start", "turn_end"]
                || events.map { $0["event"] } == ["turn_end", "turn_start"])
        #expect(events.first { $0["event"] == "turn_start" }?["message"] == "what is 2+2")
        #expect(events.first { $0["event"] == "turn_end" }?["reason"] == "answered")
    }

    @Test func aSandboxedHookIsConfinedLikeAnMCPServer() throws {
        let leak = home + "/leak.txt"
        let nosy = try script("nosy", "cat > /dev/null; echo secret > \(leak); echo '{\"decision\": \"allow\"}'")
        try configure(#"{"before_call": [{"command": ["\#(nosy)"], "sandbox": true}]}"#)
        #expect(try skillhost("call", "calculator", #"{"expression": "1+1"}"#).stdout == "2\n")
        #expect(!FileManager.default.fileExists(atPath: leak), "confined: it may not write the home folder")
        try configure(#"{"before_call": [{"command": ["\#(nosy)"]}]}"#)
        #expect(try skillhost("call", "calculator", #"{"expression": "1+1"}"#).stdout == "2\n")
        #expect(FileManager.default.fileExists(atPath: leak), "without a sandbox it may")
    }

    @Test func aHookThatCannotBeConfiguredIsRefused() throws {
        let cases: [(String, String)] = [
            (
                #"{"before_cal": []}"#,
                #""hooks" has "before_cal", which is not an event (did you mean "before_call"? before_call, after_call, permission, turn_start, turn_end)"#
            ),
            (
                #"{"before_call": [{"command": []}]}"#,
                #"hooks.before_call[1] needs "command": the program and its arguments, like ["~/bin/audit", "--strict"]"#
            ),
            (
                #"{"after_call": [{"command": ["x"], "on_eror": "allow"}]}"#,
                #"hooks.after_call[1] has "on_eror", which hooks do not take (did you mean "on_error"? match, command, timeout_ms, on_error, sandbox)"#
            ),
            (
                #"{"after_call": [{"command": ["x"], "timeout_ms": 0}]}"#,
                #"hooks.after_call[1]: "timeout_ms" must be a number of milliseconds from 1 to 600000"#
            ),
            (
                #"{"permission": [{"command": ["x"], "on_error": "maybe"}]}"#,
                #"hooks.permission[1]: "on_error" must be "allow" or "deny" (what a hook that fails means)"#
            ),
        ]
        for (hooks, sentence) in cases {
            try configure(hooks)
            let result = try skillhost("call", "calculator", #"{"expression": "1"}"#)
            #expect(result.status == 2)
            #expect(
                result.stderr.hasPrefix("skillhost: \(home)/config/skillhost/config.json: \(sentence)\n"),
                "\(result.stderr)")
        }
    }

    /// A call the agent made where no one can be asked (`ask`, piped input) reaches hooks as the model's, with the
    /// conversation's id (they got "embedder" and no session).
    @Test func theAgentsCallsInAskReachHooksAsTheModelsWithTheConversation() throws {
        let log = home + "/seen.jsonl"
        let audit = try script("audit", "cat >> \(log); echo >> \(log); echo '{}'")
        try configure(#"{"before_call": [{"command": ["\#(audit)"]}]}"#)
        let asked = try skillhost("ask", "what is 2+2")
        #expect(asked.status == 0, "\(asked.stderr)")
        let seen = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").map {
            try JSONValue(parsing: String($0))
        }
        #expect(seen.first?["caller"] == "model", "\(seen)")
        #expect(seen.first?["session"]?.stringValue?.count == 8, "\(seen)")
    }
}
