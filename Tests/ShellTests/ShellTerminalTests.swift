import Foundation
import History
import SkillJSON
import TestSupport
import Testing

@testable import Shell

/// A program running in a real pseudo-terminal, driven through tmux the way a person types.
final class TmuxSession: @unchecked Sendable {
    // @unchecked: immutable after init; tmux itself serialises access to the pane.
    let socket = "skillhost-test-\(UUID().uuidString.prefix(8))"
    let name = "shell"

    init(_ command: [String], environment: [String: String], width: Int = 150) throws {
        let exports = environment.map { "\($0.key)=\(Self.quote($0.value))" }.joined(separator: " ")
        let line = "env -i \(exports) \(command.map(Self.quote).joined(separator: " "))"  // only what we give it
        // The tmux server outlives this call: it must not inherit our pipes, or reading them would never end.
        let start = ["tmux", "-L", socket, "new-session", "-d", "-s", name, "-x", String(width), "-y", "50", line]
        // (system() waits for the shell itself; Foundation's Process waits on the daemonised server as well.)
        guard system(start.map(Self.quote).joined(separator: " ") + " </dev/null >/dev/null 2>&1") == 0 else {
            throw POSIXError(.ECHILD)
        }
        try tmux(["set-option", "-t", name, "remain-on-exit", "on"])
    }

    static func quote(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'" }

    @discardableResult
    func tmux(_ arguments: [String]) throws -> String {
        let result = try runProcess("/usr/bin/env", ["tmux", "-L", socket] + arguments)
        return result.stdout
    }

    /// Types text literally, then Enter.
    func type(_ text: String) throws {
        try tmux(["send-keys", "-t", name, "-l", text])
        try tmux(["send-keys", "-t", name, "Enter"])
    }

    func key(_ key: String) throws { try tmux(["send-keys", "-t", name, key]) }

    /// The screen and scrollback, plain (or with escape sequences).
    func screen(escapes: Bool = false) -> String {
        (try? tmux(["capture-pane", "-p", "-J", "-S", "-500", "-t", name] + (escapes ? ["-e"] : []))) ?? ""
    }

    /// Waits until the screen contains `text` (fails the test after a generous cap for a busy machine).
    @discardableResult
    func waitFor(_ text: String, count: Int = 1, timeout: Duration = .seconds(60), failing: Bool = true) async -> Bool {
        var deadline = PatientDeadline(timeout)
        let shown = { self.screen().components(separatedBy: text).count - 1 >= count }
        while !deadline.passed() {
            if shown() { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        if shown() { return true }
        guard failing else { return false }
        Issue.record("timed out waiting for \(count) × “\(text)”; the screen:\n\(screen())")
        return false
    }

    /// The process running in the pane.
    var panePID: Int32? {
        Int32(
            ((try? tmux(["display-message", "-p", "-t", name, "#{pane_pid}"])) ?? "").trimmingCharacters(
                in: .whitespacesAndNewlines))
    }

    /// Whether the program in the pane has ended: tmux says the pane is dead, or the process is gone or a zombie
    /// (tmux 3.3a with remain-on-exit sometimes leaves an ended pane's process unreaped and the pane alive).
    var programEnded: Bool {
        if screen().contains("Pane is dead") { return true }
        guard let pid = panePID else { return true }
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return true }
        return stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).hasPrefix("Z")
    }

    func close() { _ = try? tmux(["kill-server"]) }
}

/// The shell driven in a pseudo-terminal, with the offline router or a loopback OpenAI-compatible server.
@Suite(.serialized)
struct ShellTerminalTests {
    let home = Paths.temporaryDirectory("shell-home")

    func environment(server: LoopbackServer? = nil, colors: Bool = false) -> [String: String] {
        var environment = cliEnvironment(home: home, ["TERM": "xterm-256color"])
        if !colors { environment["NO_COLOR"] = "1" }
        if let server {
            environment["OPENAI_BASE_URL"] = server.baseURL.absoluteString
            environment["SKILLHOST_MODEL"] = "test-model"
        }
        return environment
    }

    static func toolCalls(_ calls: [(id: String, name: String, arguments: String)]) -> LoopbackServer.Reply {
        .chatToolCalls(calls)
    }

    static func text(_ words: [String], delay: Duration = .zero, finish: Bool = true) -> LoopbackServer.Reply {
        var payloads = words.map { #"{"choices":[{"index":0,"delta":{"content":"\#($0)"},"finish_reason":null}]}"# }
        if finish { payloads += [#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#, "[DONE]"] }
        return .events(payloads, delay: delay)
    }

    @Test func aTurnWithTwoToolCallsRendersBothCardsInOrder() async throws {
        let server = try LoopbackServer([
            Self.toolCalls([
                ("c1", "calculator", #"{"expression":"(23+7)*2"}"#),
                ("c2", "convert_length", #"{"value":5,"from":"km","to":"mi"}"#),
            ]),
            Self.text(["Sixty, ", "and about 3.1 miles."]),
        ])
        defer { server.stop() }
        let tmux = try TmuxSession([Paths.skillhost], environment: environment(server: server, colors: true))
        defer { tmux.close() }
        await tmux.waitFor("test-model at http://127.0.0.1:\(server.port)/v1 · 20 skills")
        try tmux.type("compute both")
        await tmux.waitFor("Sixty, and about 3.1 miles.")
        let screen = tmux.screen()
        let calculator = try #require(screen.range(of: "✓ calculator → 60 · "))
        let length = try #require(screen.range(of: "✓ convert_length → 3.1068559611866697 · "))
        #expect(calculator.lowerBound < length.lowerBound)
        #expect(!screen.contains("⟳"), "running cards were redrawn in place when they finished")
        #expect(tmux.screen(escapes: true).contains("\u{1B}[32m✓"), "colours on a terminal")
    }

    /// A markdown answer streams as sent, then is laid out in place once complete: the table drawn and aligned, the
    /// heading without its marker in colour (and with it in plain), the code boxed. `--raw` keeps the text as sent.
    @Test(arguments: [(80, false), (120, true)])
    func aMarkdownAnswerIsLaidOutInPlace(width: Int, colors: Bool) async throws {
        // JSON escapes inside the streamed deltas: \\n is a newline in the answer.
        let answer = Self.text([
            "# Plan\\n\\nUse **both**:\\n\\n", "| step | cost |\\n|---|--:|\\n| walk | 3 |\\n| ride | 12 |\\n",
            "\\n```sh\\nls -l\\n```\\n\\nDone.",
        ])
        let server = try LoopbackServer([answer, answer])
        defer { server.stop() }
        let tmux = try TmuxSession(
            [Paths.skillhost], environment: environment(server: server, colors: colors), width: width)
        defer { tmux.close() }
        await tmux.waitFor("Ctrl-D to quit")
        try tmux.type("plan it")
        await tmux.waitFor("└──────┴──────┘")
        let screen = tmux.screen()
        #expect(screen.contains("│ step │ cost │"), "\(screen)")
        #expect(screen.contains("│ walk │    3 │"))
        #expect(screen.contains("│ ride │   12 │"))
        #expect(!screen.contains("|---|--:|"), "the raw table was replaced")
        #expect(screen.contains("┌─ sh "))
        #expect(screen.contains("│ ls -l"))
        if colors {
            #expect(
                tmux.screen(escapes: true).contains("\u{1B}[1m\u{1B}[4mPlan")
                    || tmux.screen(escapes: true).contains("\u{1B}[1;4mPlan"))
            #expect(!screen.contains("# Plan"))
        } else {
            #expect(screen.contains("# Plan"))
            #expect(screen.contains("Use both:"))
        }
        tmux.close()

        let raw = try TmuxSession(
            [Paths.skillhost, "--raw"], environment: environment(server: server, colors: colors), width: width)
        defer { raw.close() }
        await raw.waitFor("Ctrl-D to quit")
        try raw.type("plan it")
        await raw.waitFor("Done.")
        #expect(raw.screen().contains("|---|--:|"), "--raw keeps the answer as sent")
    }

    @Test func ctrlCStopsATurnAndTheNextTurnWorks() async throws {
        var slow = Self.text((0..<60).map { "word\($0) " }, delay: .milliseconds(100), finish: false)
        slow.holdOpen = true
        let server = try LoopbackServer([slow, Self.text(["Second answer."])])
        defer { server.stop() }
        let tmux = try TmuxSession([Paths.skillhost], environment: environment(server: server))
        defer { tmux.close() }
        await tmux.waitFor("/help for commands")
        try tmux.type("talk for a while")
        await tmux.waitFor("word3 ")
        try tmux.key("C-c")
        await tmux.waitFor("[interrupted]")
        #expect(!tmux.screen().contains("word59"), "stopped before the stream's end (6 s after its start)")
        await tmux.waitFor("> ", count: 2)
        try tmux.type("and now?")
        await tmux.waitFor("Second answer.")
        #expect(
            await eventually { server.clientClosedConnections == 1 }, "the interrupted stream's connection was closed")
        // The model saw the interrupted answer in the second request.
        #expect(server.requests.last?.body.contains("[interrupted]") == true)
        try tmux.key("C-c")
        await tmux.waitFor("press Ctrl-D or type /exit to quit")
        try tmux.key("C-d")
    }

    /// The registry applies the policy to every path, the shell's /call and /undo included: a deny rule wins even
    /// over the user's explicit command.
    @Test func aDenyRuleHoldsForCallAndUndo() async throws {
        try FileManager.default.createDirectory(atPath: home + "/config/skillhost", withIntermediateDirectories: true)
        try #"{"policy": {"notes_delete": "deny"}}"#.write(
            toFile: home + "/config/skillhost/config.json", atomically: true, encoding: .utf8)
        let tmux = try TmuxSession([Paths.skillhost], environment: environment())
        defer { tmux.close() }
        await tmux.waitFor("/help for commands")
        try tmux.type(#"add a note titled "milk""#)
        await tmux.waitFor("? notes_add(title: \"milk\", body: \"\") is mutating")
        try tmux.key("y")
        await tmux.waitFor("✓ notes_add → {\"id\":1")
        let denied =
            #"not run: calls to notes_delete are denied by the configuration (policy rule "notes_delete": "deny")"#
        try tmux.type("/undo")
        await tmux.waitFor("✗ undo failed: " + denied)
        try tmux.type(#"/call notes_delete {"id":1}"#)
        await tmux.waitFor("notes_delete → " + denied)
        try tmux.type("list notes")
        await tmux.waitFor("- id: 1, title: milk")
    }

    /// A sentence typed ahead does not answer a confirmation with the letter it starts with: typing "why" at a
    /// destructive call's question answered yes (the y), "summarise" always (the a). Any key but y or a is no.
    @Test func aKeyOtherThanYesOrAlwaysMeansNo() async throws {
        let tmux = try TmuxSession([Paths.skillhost], environment: environment())
        defer { tmux.close() }
        await tmux.waitFor("offline router · 20 skills")
        try tmux.type(#"add a note titled "milk""#)
        await tmux.waitFor("? notes_add(title: \"milk\", body: \"\") is mutating")
        try tmux.key("w")
        await tmux.waitFor("→ no (only y or a says yes)")
        await tmux.waitFor("✗ notes_add → not run: the user declined this call")
        try tmux.type(#"add a note titled "eggs""#)
        await tmux.waitFor("? notes_add(title: \"eggs\", body: \"\") is mutating")
        try tmux.key("y")
        await tmux.waitFor("✓ notes_add → {\"id\":1")
    }

    @Test func confirmationsYesNoAlwaysAndUndo() async throws {
        let tmux = try TmuxSession([Paths.skillhost], environment: environment())
        defer { tmux.close() }
        await tmux.waitFor("offline router · 20 skills")
        try tmux.type(#"add a note titled "milk""#)
        await tmux.waitFor("? notes_add(title: \"milk\", body: \"\") is mutating")
        // One key answers, without Enter; the prompt says which.
        await tmux.waitFor("Run it? y yes · n no · a always for this call this session · Esc no")
        try tmux.key("y")
        await tmux.waitFor("→ yes")
        await tmux.waitFor("✓ notes_add → {\"id\":1")
        try tmux.type("delete note 1")
        await tmux.waitFor("? notes_delete(id: 1) is destructive")
        try tmux.key("n")
        await tmux.waitFor("✗ notes_delete → not run: the user declined this call")
        try tmux.type("delete note 1")
        await tmux.waitFor("? notes_delete(id: 1) is destructive", count: 2)
        try tmux.key("a")
        await tmux.waitFor("✓ notes_delete → {\"deleted\":1}")
        try tmux.type("/undo")
        await tmux.waitFor(#"? notes_restore(id: 1, title: "milk""#)
        try tmux.key("y")
        await tmux.waitFor("✓ undone: {\"id\":1,\"title\":\"milk\"")
        try tmux.type(#"add a note titled "eggs""#)
        await tmux.waitFor("? notes_add(title: \"eggs\", body: \"\") is mutating")
        try tmux.key("a")
        await tmux.waitFor("✓ notes_add → {\"id\":2")
        // "Always" covers that exact call, not another call of the same skill.
        try tmux.type(#"add a note titled "bread""#)
        await tmux.waitFor("? notes_add(title: \"bread\", body: \"\") is mutating")
        try tmux.key("y")
        await tmux.waitFor("✓ notes_add → {\"id\":3")
        try tmux.type(#"add a note titled "eggs""#)
        await tmux.waitFor("✓ notes_add → {\"id\":4")
        // Asked: milk, the undo's notes_restore, eggs, bread — the approved call ran unasked.
        #expect(tmux.screen().components(separatedBy: "is mutating").count - 1 == 4, "the approved call ran unasked")
        try tmux.type("list notes")
        await tmux.waitFor("- id: 1, title: milk")
        // Escape is no.
        try tmux.type("delete note 3")
        await tmux.waitFor("? notes_delete(id: 3) is destructive")
        try tmux.key("Escape")
        await tmux.waitFor("✗ notes_delete → not run: the user declined this call", count: 2)
        // "Always" for deleting note 1 does not cover a maths question, nor deleting another note.
        try tmux.type("what's 2 to the power of 16")
        await tmux.waitFor("[offline router] 2^16 = 65536")
        try tmux.type("delete note 2")
        await tmux.waitFor("? notes_delete(id: 2) is destructive")
        try tmux.key("n")
        await tmux.waitFor("✗ notes_delete → not run: the user declined this call", count: 3)
    }

    @Test func killedMidTurnThenResumedShowsWhatWasPrinted() async throws {
        var slow = Self.text((0..<100).map { "part\($0) " }, delay: .milliseconds(60), finish: false)
        slow.holdOpen = true
        let server = try LoopbackServer([
            Self.toolCalls([("c1", "calculator", #"{"expression":"6*7"}"#)]), slow,
        ])
        defer { server.stop() }
        let env = environment(server: server)
        let tmux = try TmuxSession([Paths.skillhost], environment: env)
        defer { tmux.close() }
        await tmux.waitFor("/help for commands")
        try tmux.type("remember this question")
        await tmux.waitFor("✓ calculator → 42")
        await tmux.waitFor("part5 ")
        // The draft is saved at every flush: wait until the database has what the screen shows, then kill.
        let store = try HistoryStore(path: env["XDG_DATA_HOME", default: ""] + "/skillhost/history.db")
        #expect(
            await eventually {
                guard let session = try? store.sessions().first?.id else { return false }
                return (try? store.draft(session: session))??.contains("part5") == true
            })
        let pid = try #require(tmux.panePID)
        _ = try runProcess("/usr/bin/pkill", ["-9", "-P", String(pid)])
        kill(pid, SIGKILL)
        let sessions = try runProcess(Paths.skillhost, ["sessions"], environment: env)
        let id = try #require(sessions.stdout.split(separator: " ").first.map(String.init))
        #expect(sessions.stdout.contains("remember this question"))
        let resumed = try TmuxSession([Paths.skillhost, "--resume", id], environment: env)
        defer { resumed.close() }
        await resumed.waitFor("Resumed session \(id):")
        await resumed.waitFor("> remember this question")
        await resumed.waitFor("✓ 42")
        await resumed.waitFor("part0 part1 part2 part3 part4 part5")
        #expect(resumed.screen().contains("[interrupted]"))
    }

    /// `--resume` replays each answer once (a draft saved after the answer was stored used to come back as a
    /// second, "[interrupted]" copy), keeps what `/undo` did, and marks the turn Ctrl-C stopped.
    @Test func resumeShowsEachAnswerOnceWithUndoAndInterruptions() async throws {
        let env = environment()
        let tmux = try TmuxSession([Paths.skillhost], environment: env)
        defer { tmux.close() }
        await tmux.waitFor("offline router · 20 skills")
        try tmux.type(#"add a note titled "milk""#)
        await tmux.waitFor("is mutating")
        try tmux.key("y")
        await tmux.waitFor("✓ notes_add → {\"id\":1")
        try tmux.type("/undo")
        await tmux.waitFor("? notes_delete(id: 1, ")
        try tmux.key("y")
        await tmux.waitFor("✓ undone:")
        try tmux.type("delete note 5")
        await tmux.waitFor("? notes_delete(id: 5) is destructive")
        try tmux.key("C-c")
        await tmux.waitFor("[interrupted]")
        try tmux.type("what is 2+2")
        await tmux.waitFor("[offline router] 2+2 = 4")
        try tmux.type("/exit")
        let sessions = try runProcess(Paths.skillhost, ["sessions"], environment: env)
        let id = try #require(sessions.stdout.split(separator: " ").first.map(String.init))
        let resumed = try TmuxSession([Paths.skillhost, "--resume", id], environment: env)
        defer { resumed.close() }
        await resumed.waitFor("Resumed session \(id):")
        await resumed.waitFor("> what is 2+2")
        await resumed.waitFor("[offline router] 2+2 = 4")
        let screen = resumed.screen()
        #expect(screen.components(separatedBy: "[offline router] 2+2 = 4").count - 1 == 1, "\(screen)")
        #expect(screen.contains("↶ notes_add: notes_delete(id: 1, expect: "), "\(screen)")
        #expect(screen.components(separatedBy: "[interrupted]").count - 1 == 1, "\(screen)")
    }

    /// At 100 columns no line the shell writes is wider than the terminal (so the terminal never breaks a word):
    /// `/undo` and its result, a hot-reload notice, `/skill`, `/trace`.
    @Test func everyLineFitsAHundredColumns() async throws {
        let env = environment()
        let tmux = try TmuxSession([Paths.skillhost], environment: env, width: 100)
        defer { tmux.close() }
        await tmux.waitFor("Ctrl-D to quit")
        try tmux.type(#"add a note titled "a rather long title for a note" with body "and a body that goes on and on""#)
        await tmux.waitFor("Run it?")
        try tmux.key("y")
        await tmux.waitFor("✓ notes_add")
        try tmux.type("delete note 1")
        await tmux.waitFor("Run it?", count: 2)
        try tmux.key("y")
        await tmux.waitFor("✓ notes_delete")
        try tmux.type("/undo")
        await tmux.waitFor("Run it?", count: 3)
        try tmux.key("y")
        await tmux.waitFor("undone:")
        // A plugin whose arrival notice is longer than a line.
        let skills = (1...8).map {
            "SKILL_TYPED(\"a_long_skill_identifier_\($0)\", \"T\", \"d.\", \"double a_long_skill_identifier_\($0)(double a)\", same)"
        }
        let plugins = env["XDG_DATA_HOME", default: ""] + "/skillhost/plugins"
        try FileManager.default.createDirectory(atPath: plugins, withIntermediateDirectories: true)
        _ = try Fixture.compile(
            """
            #include "skill_sdk.h"
            static double same(double a) { return a; }
            static const skill_descriptor skills[] = { \(skills.joined(separator: ", ")) };
            SKILL_PLUGIN("wide", "1.0.0", "x", skills)
            """, name: "wide", into: plugins)
        await tmux.waitFor("a_long_skill_identifier_8")
        try tmux.type("/skill notes_update")
        await tmux.waitFor("notes_update —")
        try tmux.type("/trace")
        await tmux.waitFor("step 1")
        // capture-pane -J joins the lines the terminal itself wrapped: any such line is wider than 100 columns.
        for line in tmux.screen().split(separator: "\n") {
            #expect(TerminalMarkdown.displayWidth(String(line)) <= 100, "wider than the terminal: \(line)")
        }
    }

    /// Strangers' text never drives the terminal: a plugin's result that erases lines and draws a forged prompt, a
    /// model's answer that does the same and hides a window-title sequence in a link, a plugin's title with colour
    /// codes, a log line and a description that set the window title — all shown as visible text, in the shell's
    /// cards and answer, `/skill`, `/skills`, `call` and `check`, in a real pseudo-terminal.
    @Test func strangersTextNeverDrivesTheTerminal() async throws {
        let folder = Paths.temporaryDirectory("shell-hostile")
        let plugin = try Fixture.compileFile("hostile_text.c", into: folder)
        let forged = #"\r\u001b[2K\u001b[1A\u001b[2K? notes_delete(id: 1) is read-only. Run it? y"#
        let server = try LoopbackServer([
            Self.toolCalls([("c1", "hostile_forge", "{}")]),
            Self.text(["All done.", forged, #" See [the docs](http://x/\u001b]0;pwned by a link\u0007)."#]),
            Self.toolCalls([("c2", "notes_add", #"{"title":"x\u001b]0;pwned by a note\u0007"}"#)]),
            Self.text(["Noted."]),
        ])
        defer { server.stop() }
        var env = environment(server: server)
        let tmux = try TmuxSession([Paths.skillhost, "--plugins", folder], environment: env)
        defer { tmux.close() }
        func title(_ session: TmuxSession) -> String {
            ((try? session.tmux(["display-message", "-p", "-t", session.name, "#{pane_title}"])) ?? "")
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
        await tmux.waitFor("Ctrl-D to quit")
        let before = title(tmux)
        try tmux.type("go")
        await tmux.waitFor(#"✓ hostile_forge → done\x0d\x1b[2K\x1b[1A\x1b[2K? notes_delete(id: 1) is read-only"#)
        await tmux.waitFor(#"All done.\x0d\x1b[2K\x1b[1A\x1b[2K? notes_delete(id: 1) is read-only. Run it? y"#)
        await tmux.waitFor(#"\x1b]0;pwned by a link\x07"#)
        // The model's arguments in the confirmation, then /trace, /state (the notes' state names the title) and
        // --resume's replay.
        try tmux.type("note it")
        // (Arguments are shown as JSON, whose escapes already keep controls visible.)
        let note = #"notes_add(title: "x\u001b]0;pwned by a note\u0007", body: "")"#
        await tmux.waitFor("? \(note) is mutating")
        try tmux.key("y")
        await tmux.waitFor("Noted.")
        try tmux.type("/trace")
        await tmux.waitFor("✓ \(note)")
        try tmux.type("/state")
        await tmux.waitFor(#""title":"x\u001b]0;pwned by a note\u0007""#)
        try tmux.type("/skill hostile_forge")
        await tmux.waitFor(#"hostile_forge — Forge\x1b[8m hidden"#)
        await tmux.waitFor(#"Erases lines\x1b[2K and draws a prompt."#)
        try tmux.type("/skills hostile")
        await tmux.waitFor(#"Forge\x1b[8m hidden"#, count: 2)
        let screen = tmux.screen()
        #expect(
            !screen.split(separator: "\n").contains { $0.hasPrefix("? notes_delete(id: 1) is read-only") },
            "no forged prompt at the start of a line:\n\(screen)")
        #expect(!screen.contains(" hidden") || screen.contains(#"\x1b[8m hidden"#))
        #expect(title(tmux) == before, "the window title is the terminal's own")
        try tmux.type("/exit")
        let sessions = try runProcess(Paths.skillhost, ["sessions"], environment: env)
        let id = try #require(sessions.stdout.split(separator: " ").first.map(String.init))
        let resumed = try TmuxSession([Paths.skillhost, "--resume", id, "--plugins", folder], environment: env)
        defer { resumed.close() }
        await resumed.waitFor(#"All done.\x0d\x1b[2K\x1b[1A\x1b[2K? notes_delete(id: 1) is read-only. Run it? y"#)
        // The replay shows the call as the model wrote it (without the default the registry filled in).
        await resumed.waitFor(#"⟳ notes_add(title: "x\u001b]0;pwned by a note\u0007")"#)
        #expect(
            !resumed.screen().split(separator: "\n").contains { $0.hasPrefix("? notes_delete(id: 1) is read-only") })
        #expect(title(resumed) == before)

        // The command line: a log line relayed from the plugin, and `check` showing the plugin's description.
        env["SKILLHOST_LOG"] = "info"
        let call = try TmuxSession([Paths.skillhost, "call", "hostile_title", "--plugins", folder], environment: env)
        defer { call.close() }
        await call.waitFor(#"[hostile] hostile_title: logged\x1b]0;pwned by a log line\x07 here"#)
        let check = try TmuxSession([Paths.skillhost, "check", plugin], environment: env)
        defer { check.close() }
        await check.waitFor(#"Hostile\x1b]0;pwned by a description\x07 text"#)
        await check.waitFor(#"Sets the window title \x9b31m through a log line."#)
        #expect(!title(call).contains("pwned") && !title(check).contains("pwned"), "\(title(call)) \(title(check))")
    }

    /// A shell opened and closed without a word leaves no session to list.
    @Test func anEmptySessionIsNotListed() async throws {
        let env = environment()
        let tmux = try TmuxSession([Paths.skillhost], environment: env)
        defer { tmux.close() }
        await tmux.waitFor("offline router · 20 skills")
        // The banner is out before the line editor reads: a line typed in between may be flushed when it takes
        // the terminal, so /exit is typed again until the shell has ended (generous caps for a busy machine).
        var ended = false
        for _ in 1...10 where !ended {
            try tmux.type("/exit")
            ended = await eventually(within: .seconds(6)) {
                tmux.programEnded
            }
        }
        #expect(ended, "the shell ended: \(tmux.screen())")
        let sessions = try runProcess(Paths.skillhost, ["sessions"], environment: env)
        #expect(sessions.stdout == "No saved sessions.\n", "\(sessions.stdout)")
    }

    /// Reproduced three times before the fix: `> ^C`, then `what is 6*7` ended as `[interrupted]`.
    @Test func ctrlCAtThePromptNeverReachesTheNextTurn() async throws {
        let tmux = try TmuxSession([Paths.skillhost], environment: environment())
        defer { tmux.close() }
        await tmux.waitFor("/help for commands")
        for round in 1...3 {
            try tmux.key("C-c")
            await tmux.waitFor("press Ctrl-D or type /exit to quit", count: round)
            try tmux.type("what is 6*\(round + 6)")
            await tmux.waitFor("[offline router] 6*\(round + 6) = \(6 * (round + 6))")
        }
        #expect(!tmux.screen().contains("[interrupted]"), "\(tmux.screen())")
    }

    /// Ctrl-C during a call: its card ends as `cancelled` (no frozen spinner), and no `^C` is printed into it.
    @Test func ctrlCDuringACallLeavesACancelledCard() async throws {
        let server = try LoopbackServer([
            Self.toolCalls([("c1", "cooperative", #"{"ms":60000}"#)]), Self.text(["Next answer."]),
        ])
        defer { server.stop() }
        let folder = Paths.temporaryDirectory("shell-cancel")
        _ = try Fixture.compileFile("behaviours.c", into: folder)
        let tmux = try TmuxSession([Paths.skillhost, "--plugins", folder], environment: environment(server: server))
        defer { tmux.close() }
        await tmux.waitFor("/help for commands")
        try tmux.type("wait a minute")
        await tmux.waitFor("cooperative(ms: 60000)")
        try tmux.key("C-c")
        await tmux.waitFor("⊘ cooperative(ms: 60000) cancelled · ")
        await tmux.waitFor("> ", count: 2)
        let screen = tmux.screen()
        #expect(!screen.contains("^C"), "\(screen)")
        #expect(!screen.contains("⟳"), "\(screen)")
        for frame in ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"] {
            #expect(!screen.contains(frame), "a spinner frame stayed on screen: \(screen)")
        }
        try tmux.type("and now?")
        await tmux.waitFor("Next answer.")
    }

    @Test func hotReloadNoticesAndTheStepLimitOffer() async throws {
        let calls = (1...2).map { n in Self.toolCalls([("c\(n)", "calculator", #"{"expression":"\#(n)+1"}"#)]) }
        let server = try LoopbackServer(calls + [Self.text(["Finished after continuing."])])
        defer { server.stop() }
        try FileManager.default.createDirectory(atPath: home + "/config/skillhost", withIntermediateDirectories: true)
        try #"{"step_limit": 2}"#.write(
            toFile: home + "/config/skillhost/config.json", atomically: true, encoding: .utf8)
        let folder = Paths.temporaryDirectory("shell-watched")
        let tmux = try TmuxSession([Paths.skillhost, "--plugins", folder], environment: environment(server: server))
        defer { tmux.close() }
        await tmux.waitFor("/help for commands")
        // A plugin dropped into a watched folder is announced while the user sits at the prompt, half-way
        // through a line: the notice appears above, the prompt and the typed text are redrawn below it.
        try tmux.tmux(["send-keys", "-t", tmux.name, "-l", "/skill twice"])
        await tmux.waitFor("> /skill twice")
        _ = try Fixture.compileFile("typed.c", into: Paths.temporaryDirectory("shell-staging"))
            .withCString { source in rename(source, folder + "/typed.so") }
        await tmux.waitFor("+ typed 1.0.0: 9 skills added")
        let screen = tmux.screen()
        let notice = try #require(screen.range(of: "+ typed 1.0.0: 9 skills added"))
        let redrawn = try #require(screen.range(of: "> /skill twice", options: .backwards))
        #expect(notice.upperBound < redrawn.lowerBound, "\(screen)")
        try tmux.type("64")
        await tmux.waitFor("twice64 — Twice")
        // The step limit stops the turn and offers to continue it.
        try tmux.type("count up")
        await tmux.waitFor("The step limit (2) stopped this turn. Continue? [y/N]")
        try tmux.type("y")
        await tmux.waitFor("Finished after continuing.")
    }

    /// A third-party plugin that segfaults runs in a worker process: the turn shows the crash, the shell carries
    /// on, and the plugin answers the next turn from a new worker. (With --isolate none the same turn kills the
    /// shell: this test then fails.)
    @Test func aCrashingPluginDoesNotTakeTheShellDown() async throws {
        let server = try LoopbackServer([
            Self.toolCalls([("c1", "fault_segv", "{}")]), Self.text(["The plugin crashed."]),
            Self.toolCalls([("c2", "fault_ok", "{}")]), Self.text(["It answers again."]),
        ])
        defer { server.stop() }
        let folder = Paths.temporaryDirectory("shell-faults")
        _ = try Fixture.compileFile("faults.c", into: folder)
        let tmux = try TmuxSession([Paths.skillhost, "--plugins", folder], environment: environment(server: server))
        defer { tmux.close() }
        await tmux.waitFor("/help for commands")
        let shell = tmux.panePID
        try tmux.type("try the segfault")
        // The card says it once ("fault_segv → fault_segv failed: …" repeated the name).
        await tmux.waitFor("✗ fault_segv → plugin \"faults\" crashed (killed by SIGSEGV)")
        await tmux.waitFor("The plugin crashed.")
        try tmux.type("and now?")
        await tmux.waitFor("It answers again.")
        #expect(tmux.panePID == shell)
        #expect(!tmux.programEnded)
    }

    /// At 80 and 120 columns nothing wraps mid-word: the banner breaks at spaces, `/skills` is a table shortened
    /// with … to the width; `/call` draws one card with its timing; `/trace` shows each call's arguments.
    @Test(arguments: [80, 120])
    func theLayoutFitsTheTerminal(width: Int) async throws {
        let tmux = try TmuxSession([Paths.skillhost], environment: environment(), width: width)
        defer { tmux.close() }
        await tmux.waitFor("Ctrl-D to quit")
        try tmux.type("/skills")
        await tmux.waitFor("text_summary")
        try tmux.type(#"/call calculator {"expression":"1/0"}"#)
        await tmux.waitFor("✗ calculator → division by zero · ")
        try tmux.type("what is 6*7")
        await tmux.waitFor("[offline router] 6*7 = 42")
        try tmux.type("/trace")
        await tmux.waitFor(#"✓ calculator(expression: "6*7") · "#)
        let lines = tmux.screen().split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        for line in lines { #expect(line.count <= width, "longer than \(width) columns: \(line)") }
        // The banner's words are whole: rejoined, its lines give the banner back.
        let end = try #require(lines.firstIndex { $0.hasSuffix("Ctrl-D to quit") })
        let banner = lines[0...end].joined(separator: " ")
        #expect(banner.hasPrefix("skillhost ") && banner.contains(" · offline router · 20 skills from bundled, "))
        #expect(banner.contains(" · /help for commands, Ctrl-D to quit"), "\(banner)")
        // /skills is aligned like `skillhost list`: every row starts its risk in the same column.
        let rows = lines.filter { line in
            line.hasPrefix("  ") && ["read-only", "mutating", "destructive"].contains { line.contains($0) }
        }
        #expect(rows.count == 20, "\(lines)")
        let columns = Set(
            rows.compactMap { row in
                row.range(of: "read-only").map { row.distance(from: row.startIndex, to: $0.lowerBound) }
                    ?? row.range(of: "mutating").map { row.distance(from: row.startIndex, to: $0.lowerBound) }
                    ?? row.range(of: "destructive").map { row.distance(from: row.startIndex, to: $0.lowerBound) }
            })
        #expect(columns.count == 1, "\(rows)")
        #expect(lines.contains { $0.hasPrefix("  notes_delete ") && $0.contains("destructive") })
        // Errors are said once.
        #expect(!tmux.screen().contains("error: division by zero"))
        #expect(!tmux.screen().contains("⟳ calculator"), "the /call card was finished in place")
    }

    @Test func aPipedPromptPrintsOnlyTheAnswer() throws {
        let result = try runProcess(Paths.skillhost, [], environment: environment(), stdin: "what is 2+2\n")
        #expect(result.status == 0)
        #expect(result.stdout == "[offline router] 2+2 = 4\n")
        #expect(result.stderr == "")
    }

    /// Without a terminal a model's markdown answer is laid out plainly (no escapes) once complete; `--raw` keeps
    /// it as sent.
    @Test func aPipedAnswerIsPlainMarkdownUnlessRaw() throws {
        let answer = [
            "# Shopping\\n\\n", "- **milk**\\n", "- eggs\\n\\n", "| item | n |\\n|---|--:|\\n| milk | 2 |\\n",
        ]
        let server = try LoopbackServer([Self.text(answer), Self.text(answer)])
        defer { server.stop() }
        let laidOut = try runProcess(
            Paths.skillhost, [], environment: environment(server: server), stdin: "what do I need\n")
        #expect(laidOut.status == 0, "\(laidOut.stderr)")
        #expect(
            laidOut.stdout
                == TerminalMarkdown.render(
                    "# Shopping\n\n- **milk**\n- eggs\n\n| item | n |\n|---|--:|\n| milk | 2 |\n", width: 80,
                    colors: false))
        #expect(laidOut.stdout.contains("• milk"), "\(laidOut.stdout)")
        #expect(!laidOut.stdout.contains("\u{1B}["), "no escapes without a terminal")
        let raw = try runProcess(
            Paths.skillhost, ["--raw"], environment: environment(server: server), stdin: "what do I need\n")
        #expect(raw.stdout == "# Shopping\n\n- **milk**\n- eggs\n\n| item | n |\n|---|--:|\n| milk | 2 |\n\n")
    }

    @Test func commandsAreExplained() async throws {
        let tmux = try TmuxSession([Paths.skillhost], environment: environment())
        defer { tmux.close() }
        await tmux.waitFor("/help for commands")
        try tmux.type("/hepl")
        await tmux.waitFor("Unknown command /hepl — did you mean /help?")
        try tmux.type("/disable calculator")
        await tmux.waitFor("calculator disabled (remembered).")
        try tmux.type("what is 1+1")
        await tmux.waitFor("[offline router] No skill matches")
        try tmux.type("/call calculator {\"expression\":\"1+1\"}")
        await tmux.waitFor("✓ calculator → 2")
        try tmux.type("/skill gcd")
        await tmux.waitFor("risk: read-only, idempotent · plugin units 1.0.0")
        try tmux.type("/exit")
        // Remembered across sessions.
        let again = try TmuxSession([Paths.skillhost], environment: environment())
        defer { again.close() }
        await again.waitFor("/help for commands")
        try again.type("/skills calc")
        await again.waitFor("calculator (disabled)")
    }
}

extension ShellTerminalTests {
    /// Another process holds a write lock on the history: the shell says so at once, keeps the turn, and saves it
    /// once the lock is gone — `--resume` then shows it.
    @Test func aLockedHistoryIsSaidAndNothingIsLost() async throws {
        let tmux = try TmuxSession([Paths.skillhost], environment: environment())
        defer { tmux.close() }
        await tmux.waitFor("/help for commands")
        let database = home + "/data/skillhost/history.db"
        let release = home + "/release-lock"
        let locker = Process()
        locker.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        locker.arguments = [
            "python3", "-c",
            "import os, sqlite3, sys, time\n"
                + "c = sqlite3.connect(sys.argv[1], isolation_level=None); c.execute('BEGIN IMMEDIATE')\n"
                + "open(sys.argv[2] + '.held', 'w').close()\n"
                + "while not os.path.exists(sys.argv[2]): time.sleep(0.05)\n"
                + "c.execute('COMMIT')",
            database, release,
        ]
        try launch(locker)
        #expect(await eventually { FileManager.default.fileExists(atPath: release + ".held") })
        try tmux.type("what is 6*7")
        // The notice is fitted to the terminal's width (where it breaks depends on the folder's length): read the
        // screen with its continuation lines joined.
        let notice = "! history: could not save to \(database) (\(database): database is locked)"
        #expect(
            await eventually {
                tmux.screen().replacingOccurrences(of: #"\n\s+"#, with: " ", options: .regularExpression).contains(
                    notice)
            }, "\(tmux.screen())")
        #expect(FileManager.default.createFile(atPath: release, contents: nil))
        #expect(await eventually { !locker.isRunning })
        try tmux.type("what is 2+2")
        await tmux.waitFor("history: saved again")
        try tmux.key("C-d")
        let sessions = try runProcess(Paths.skillhost, ["sessions"], environment: environment())
        #expect(sessions.stdout.contains("what is 6*7"), "the turn shown while the database was locked was saved")
    }
}

extension ShellTerminalTests {
    /// A composite in the shell: `/skill` shows its plan, running it asks once with the plan, `/undo` reverses
    /// its steps last first.
    @Test func aCompositeShowsItsPlanAndIsUndoneAsAWhole() async throws {
        let plugins = home + "/data/skillhost/plugins"
        try Fixture.writeAddPair(into: plugins)
        let tmux = try TmuxSession([Paths.skillhost], environment: environment())
        defer { tmux.close() }
        await tmux.waitFor("/help for commands")
        try tmux.type("/skill add_pair")
        await tmux.waitFor("composite skill, 2 steps:")
        await tmux.waitFor("2. notes_add(title: ${input.b})")
        try tmux.type(#"/call add_pair {"a": "milk", "b": "eggs"}"#)
        await tmux.waitFor("? add_pair(a: \"milk\", b: \"eggs\") is mutating")
        await tmux.waitFor("it runs 2 steps:")
        try tmux.key("y")
        await tmux.waitFor("✓ add_pair → ")
        try tmux.type("/undo")
        await tmux.waitFor("↶ undoing add_pair: notes_delete(id: 2, ")
        await tmux.waitFor("Run it?", count: 2)
        try tmux.key("y")
        await tmux.waitFor("↶ undoing add_pair: notes_delete(id: 1, ")
        await tmux.waitFor("Run it?", count: 3)
        try tmux.key("y")
        try tmux.type(#"/call notes_list {}"#)
        await tmux.waitFor("✓ notes_list → []")
    }
}

extension ShellTerminalTests {
    /// `/trace` shows the plugins' state each step's request carried: retaken after a mutating call; the offline
    /// router resolves a note by the title the state names.
    @Test func theTraceRecordsTheStateOfEachStep() async throws {
        let tmux = try TmuxSession([Paths.skillhost], environment: environment(), width: 160)
        defer { tmux.close() }
        await tmux.waitFor("/help for commands")
        try tmux.type(#"add a note titled "milk""#)
        await tmux.waitFor("Run it?")
        try tmux.key("y")
        await tmux.waitFor("✓ notes_add → ")
        await tmux.waitFor("> ", count: 2)
        try tmux.type("/trace")
        await tmux.waitFor("step 2: ")
        let screen = tmux.screen()
        let first = try #require(screen.range(of: #"notes: {"notes":0,"recent":[]}"#))
        let second = try #require(screen.range(of: #"notes: {"notes":1,"recent":[{"id":1,"title":"milk"}]}"#))
        #expect(first.lowerBound < second.lowerBound, "step 1 carried the state before the call, step 2 after it")
        #expect(screen.contains("    state ("), "\(screen)")
        // The offline router reads the same state: "the note about milk" is note 1.
        try tmux.type("delete the note about milk")
        await tmux.waitFor("? notes_delete(id: 1) is destructive")
        try tmux.key("n")
    }
}

extension ShellTerminalTests {
    /// `skillhost mcp` typed in a terminal says what it is waiting for.
    @Test func mcpOnATerminalSaysItWaitsForAClient() async throws {
        let tmux = try TmuxSession([Paths.skillhost, "mcp"], environment: environment())
        defer { tmux.close() }
        await tmux.waitFor("skillhost: serving MCP on stdio, waiting for a client on standard input")
        try tmux.key("C-d")
    }
}
