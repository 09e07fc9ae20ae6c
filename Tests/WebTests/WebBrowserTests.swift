import Agent
import Foundation
import History
import SkillJSON
import TestSupport
import Testing

/// The page in a real browser (Debian's chromium through Playwright), against the real binary with the offline
/// router or a loopback OpenAI-compatible model server. Screenshots land in .build/web-screenshots.
@Suite(.serialized)
struct WebBrowserTests {
    static let screenshots = Paths.root.appendingPathComponent(".build/web-screenshots").path

    /// Runs one scenario of Fixtures/browser.py against a fresh `skillhost web` and returns what it saw.
    static func run(
        _ scenario: String, model: LoopbackServer? = nil, signedIn: Bool = true, home: String? = nil,
        scriptEnvironment: [String: String] = [:]
    ) async throws -> JSONValue {
        let python = try await BrowserPeer.ensure()
        let home = home ?? Paths.temporaryDirectory("web-browser-\(scenario)")
        var extra: [String: String?] = [:]
        if let model {
            extra["OPENAI_BASE_URL"] = "http://127.0.0.1:\(model.port)/v1"
            extra["SKILLHOST_MODEL"] = "test-model"
        }
        let server = try await HTTPServerProcess.startWeb(environment: cliEnvironment(home: home, extra))
        defer { server.terminate() }
        try FileManager.default.createDirectory(atPath: screenshots, withIntermediateDirectories: true)
        let url = signedIn ? server.url : "http://127.0.0.1:\(server.port)/"
        let script = Paths.root.appendingPathComponent("Tests/WebTests/Fixtures/browser.py").path
        let result = try await runProcessOffPool(
            python, [script, scenario, url, BrowserPeer.chromium, screenshots],
            environment: userEnvironment().merging(scriptEnvironment) { $1 })
        await server.stop()
        guard result.status == 0 else {
            Issue.record("browser.py \(scenario) failed: \(result.stderr)")
            return .null
        }
        return try JSONValue(parsing: result.stdout)
    }

    @Test func aTurnStreamsIntoCardsAndAnAnswer() async throws {
        let seen = try await Self.run("turn")
        #expect(seen["user"] == "what is (23+7)*2")
        #expect(seen["card"]?["phase"] == "succeeded")
        let summary = seen["card"]?["summary"]?.stringValue ?? ""
        #expect(summary.contains("calculator") && summary.contains("60") && summary.contains("ms"), "\(summary)")
        #expect(seen["detail"]?.stringValue?.contains(#"{"expression":"(23+7)*2"}"#) == true, "\(seen)")
        #expect(seen["answer"]?.stringValue?.contains("60") == true, "\(seen)")
        #expect(seen["second_tab_user"] == "what is (23+7)*2", "a second tab sees the conversation")
        let trace = seen["trace"]?.stringValue ?? ""
        #expect(trace.hasPrefix("Last turn: 2 steps, 1 skill call, "), "\(trace)")
        #expect(trace.contains(#"✓ calculator(expression: "(23+7)*2") · "#), "\(trace)")
        #expect(seen["after_close"] == "[offline router] 2+3 = 5", "\(seen)")
        // Issue #64: the router's answer kept its line breaks (one run-on paragraph before) and reads as a sentence.
        let lines = (seen["two_lines"]?.stringValue ?? "").split(separator: "\n").map(String.init)
        #expect(lines.count == 2 && lines.first == "[offline router] 2*3*4 = 24", "\(seen)")
        #expect(
            lines.last?.hasPrefix("It's ") == true && lines.last?.hasSuffix(" in Tokyo (UTC+9).") == true, "\(lines)")
        #expect(
            seen["description"]?.stringValue?.hasPrefix("[offline router] To run notes_update I need its title")
                == true,
            "\(seen)")
        #expect(seen["description_cards"] == 0, "no call was made: \(seen)")
        #expect(seen["delays"]?.doubleValue ?? 0 > 0)
        #expect(seen["page_errors"] == [])
        #expect(FileManager.default.fileExists(atPath: Self.screenshots + "/web-1280x800.png"))
        #expect(FileManager.default.fileExists(atPath: Self.screenshots + "/web-390x844.png"))
    }

    /// Issue #67: the notes list shows in its view (an MCP App) under its card, from the sandbox's origin; the
    /// view's edits are ordinary calls, asked about in the page and listed under the view.
    @Test func aSkillsViewShowsUnderItsCardAndItsEditsAreAskedAbout() async throws {
        let home = Paths.temporaryDirectory("web-browser-views")
        let seen = try await Self.run("views", home: home)
        // The view's calls are recorded in the history as the model's are.
        let store = try HistoryStore(path: home + "/data/skillhost/history.db")
        let session = try #require(try store.sessions().first?.id)
        let recorded = try store.toolCalls(session: session).map { "\($0.skill) \($0.arguments)" }
        #expect(recorded.contains(#"notes_add {"title":"bread","body":""}"#), "\(recorded)")
        #expect(recorded.contains(#"notes_delete {"id":1}"#), "\(recorded)")
        #expect(seen["titles"] == ["milk"], "\(seen)")
        #expect(seen["outer_sandbox"] == "allow-scripts allow-same-origin allow-forms")
        #expect(seen["outer_origin"] != seen["page_origin"], "the view's frame is of another origin: \(seen)")
        #expect(seen["label"] == "Notes · view of notes")
        #expect(seen["asked"] == "notes_delete", "the view's delete was asked about in the page: \(seen)")
        #expect(seen["asked_title"] == "The view Notes asks: Delete a note: id 1?", "\(seen)")
        #expect(seen["after"] == ["bread"], "\(seen)")
        let calls = seen["calls"]?.arrayValue?.compactMap(\.stringValue) ?? []
        #expect(calls.first == "notes_add · succeeded · Added note 2: bread.", "\(calls)")
        #expect(calls.contains("notes_delete · succeeded · Deleted note 1."), "\(calls)")
        #expect(seen["cards"] == ["notes_add", "notes_list"], "the view's calls are not cards of the turn: \(seen)")
        #expect((seen["rendered_ms"]?.doubleValue ?? -1) >= 0)
        #expect(seen["page_errors"] == [])
    }

    /// Issue #67's hostile list: a stranger's views try the page's cookie and DOM, top navigation, a window, posting
    /// to other frames, a fetch and a script beyond their policy, another plugin's skill, a destructive call,
    /// growing without bound, a link without a click, a flood, a call that never ends. The browser's sandbox refuses
    /// what it enforces (the view's own record says so); the host refuses the rest with a sentence the person reads.
    @Test func aHostileViewReachesNothingOfThePage() async throws {
        let home = Paths.temporaryDirectory("web-browser-hostile-views")
        try FileManager.default.createDirectory(
            atPath: home + "/data/skillhost/plugins", withIntermediateDirectories: true)
        _ = try Fixture.compileFile("hostile_view.c", into: home + "/data/skillhost/plugins")
        let seen = try await Self.run("hostile_views", home: home)
        let results = seen["results"]
        for attempt in ["cookie", "top_dom", "parent_dom", "storage", "navigate_top"] {
            #expect(results?[attempt] == "blocked: SecurityError", "\(attempt): \(seen)")
        }
        #expect(results?["open"] == "blocked: null" && seen["pages"] == 1, "no window opened: \(seen)")
        #expect(seen["url"] == "/", "the page was not navigated away")
        #expect(results?["fetch"] == "blocked: TypeError")
        // Its forged call, posted to every frame, reached only its own proxy: its own call, as its asked-for one
        // is. The person was asked once and said no; the view is asked nothing more, and neither call ran.
        #expect(seen["asked"] == ["hostile_wipe"], "\(seen)")
        let wipes = seen["calls"]?.arrayValue?.filter { $0.stringValue?.hasPrefix("hostile_wipe · declined") == true }
        #expect(wipes?.count == 2, "\(seen)")
        #expect(results?["wipe"] == "not run: the user declined this call")
        #expect(
            results?["other"]
                == "a view of hostile called notes_list, a skill of notes: a view may call only its own plugin's skills"
        )
        #expect(seen["link_asked"] == "The view asks to open http://127.0.0.1:9/elsewhere")
        #expect(results?["link"] == "Link opening denied by user")
        let notices = seen["notices"]?.arrayValue?.compactMap(\.stringValue) ?? []
        #expect(
            notices.contains(
                "the view ui://hostile/probe tried to reach http://127.0.0.1:9/evil.js; its declared content security "
                    + "policy does not allow it (script-src-elem), so it was blocked"), "\(notices)")
        #expect(seen["height"] == 800, "it grew no taller than the page allows")
        #expect(seen["flood"] == ["The view Flood sent more than 200 messages in a second: it was closed."])
        #expect(seen["closed"] == ["it sent too many messages"] && seen["frames_left"] == 1)
        // A view's long call showed as work of the conversation, and Stop stopped it.
        #expect(seen["slow"] == "ended: cancelled by the user", "\(seen)")
        #expect(seen["slow_call"] == "hostile_slow · cancelled · cancelled by the user")
        #expect(seen["page_errors"] == [])
    }

    /// Issue #67: a third-party MCP App server from PyPI (anywidget-mcp serving wigglystuff's ColorPicker, offline)
    /// works end to end: skillhost announces MCP Apps, reads the tool's view, the page shows it, and the view fetches
    /// its widget through the server's app-only tools, called through the host's pipeline.
    @Test func aThirdPartyAppServerWorksEndToEnd() async throws {
        let server = try await AppsPeer.ensure()
        let home = Paths.temporaryDirectory("web-browser-widget")
        try FileManager.default.createDirectory(atPath: home + "/config/skillhost", withIntermediateDirectories: true)
        // The server marks none of its tools read-only: each would be asked about as destructive. Its app-only
        // tools are allowed by a rule — the same rules decide a view's calls as any other.
        let configuration: JSONValue = [
            "policy": ["anywidget_*": "allow"],
            "mcpServers": [
                "widgets": [
                    "command": .string(server),
                    "args": ["serve", "wigglystuff:ColorPicker", "--transport", "stdio", "--log-level", "WARNING"],
                ]
            ],
        ]
        try configuration.jsonText.write(
            toFile: home + "/config/skillhost/config.json", atomically: true, encoding: .utf8)
        let model = try LoopbackServer([
            .chatToolCalls([("c1", "color_picker", ##"{"color":"#ff5733"}"##)]), .chatText(["Here is the picker."]),
        ])
        defer { model.stop() }
        let seen = try await Self.run("widget", model: model, home: home)
        #expect(seen["inputs"]?.arrayValue?.isEmpty == false, "the widget drew its inputs: \(seen)")
        let calls = seen["calls"]?.arrayValue?.compactMap(\.stringValue) ?? []
        #expect(calls.contains("anywidget_bootstrap · succeeded"), "\(calls)")
        #expect(calls.contains("anywidget_read · succeeded"), "\(calls)")
        #expect(seen["cards"] == ["color_picker"], "\(seen)")
        #expect(seen["label"] == "anywidget-mcp/app.html · view of mcp:widgets")
        #expect(seen["page_errors"] == [])
    }

    /// Issue #67: a skill folder's view (`metadata: {skillhost-view: view.html}`) shows where its script ran; its own
    /// runs go through the pipeline (asked about in the page) and another folder is out of its reach.
    @Test func aSkillFoldersViewShowsWhereItsScriptRan() async throws {
        let home = Paths.temporaryDirectory("web-browser-folder-view")
        let folder = home + "/data/skillhost/skills/tally"
        try FileManager.default.createDirectory(atPath: folder + "/scripts", withIntermediateDirectories: true)
        try """
        ---
        name: tally
        description: Counts the words it is given.
        metadata:
          skillhost-view: view.html
        ---
        Run scripts/count.sh with the words.
        """.write(toFile: folder + "/SKILL.md", atomically: true, encoding: .utf8)
        try "#!/bin/sh\necho \"words: $#\"\n".write(
            toFile: folder + "/scripts/count.sh", atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: folder + "/scripts/count.sh")
        try Self.tallyView.write(toFile: folder + "/view.html", atomically: true, encoding: .utf8)
        let model = try LoopbackServer([
            .chatToolCalls([("c1", "skill_run", #"{"name":"tally","script":"scripts/count.sh","arguments":["x","y"]}"#)]
            ),
            .chatText(["Counted."]),
        ])
        defer { model.stop() }
        let seen = try await Self.run("folder_view", model: model, home: home)
        #expect(seen["first"]?.stringValue?.contains("words: 2") == true, "\(seen)")
        let again = seen["again"]?.stringValue ?? ""
        #expect(again.contains("words: 3"), "\(again)")
        #expect(
            again.contains(
                #"other: a view of skill folder tally called skill_read: it may call only skill_run and skill_read with "name": "tally""#
            ), "\(again)")
        #expect(seen["label"] == "tally · view of skills")
        #expect(seen["calls"] == ["skill_run · succeeded"], "\(seen)")
        #expect(seen["page_errors"] == [])
    }

    /// A skill folder's view: it shows the result's text, and runs the script again with three words when asked.
    static let tallyView = """
        <!doctype html><html lang="en"><head><meta charset="utf-8"><title>Tally</title></head>
        <body><pre id="out"></pre><button id="again" type="button">Again</button><script>
        let next = 1;
        const waiting = new Map();
        const send = (message) => window.parent.postMessage({ jsonrpc: "2.0", ...message }, "*");
        const request = (method, params) => new Promise((resolve) => {
          const id = next++;
          waiting.set(id, resolve);
          send({ id, method, params });
        });
        const text = (result) => (result.content || []).map((part) => part.text).join(" ");
        window.addEventListener("message", (event) => {
          const message = event.data;
          if (!message || message.jsonrpc !== "2.0") return;
          if (message.id !== undefined && !message.method) { waiting.get(message.id)?.(message); return; }
          if (message.method === "ui/notifications/tool-result") document.getElementById("out").textContent = text(message.params);
        });
        document.getElementById("again").addEventListener("click", async () => {
          const ran = await request("tools/call", { name: "skill_run", arguments: { name: "tally", script: "scripts/count.sh", arguments: ["a", "b", "c"] } });
          const other = await request("tools/call", { name: "skill_read", arguments: { name: "other", path: "SKILL.md" } });
          document.getElementById("out").textContent = text(ran.result) + "\\nother: " + text(other.result);
        });
        request("ui/initialize", { protocolVersion: "2026-01-26", appInfo: { name: "tally", version: "1" }, appCapabilities: {} })
          .then(() => send({ method: "ui/notifications/initialized" }));
        </script></body></html>
        """

    @Test func withoutTheTokenNothingIsShown() async throws {
        let seen = try await Self.run("anonymous", signedIn: false)
        #expect(seen["status"] == "not signed in: open the address skillhost web printed (it carries the token)")
        #expect(seen["skills_status"] == 401)
    }

    @Test func aDestructiveCallAsksAndBothAnswersWorkFromTheKeyboard() async throws {
        let seen = try await Self.run("confirm")
        #expect(seen["asked"]?["skill"] == "notes_delete", "\(seen)")
        #expect(seen["asked"]?["risk"] == "destructive")
        #expect(seen["asked"]?["arguments"] == #"{"id":5}"#)
        // What will happen in words, and the focus on No (Enter or a message being typed runs nothing).
        #expect(seen["asked"]?["title"] == "Delete a note: id 5?", "\(seen)")
        #expect(seen["asked"]?["focused"] == "no" && seen["focused_again"] == "no", "\(seen)")
        // Issue #66: a no is not a red failure — the card says "Declined" (it said "failed … not run" before).
        #expect(seen["declined"]?["phase"] == "declined")
        #expect(seen["declined"]?["summary"]?.stringValue?.contains("Declined") == true, "\(seen)")
        #expect(seen["accepted"]?["phase"] != "running")
        #expect(seen["accepted"]?["summary"]?.stringValue?.contains("not run") == false, "\(seen)")
        #expect(seen["dialog_open"] == false)
    }

    @Test func stopEndsATurnMidAnswer() async throws {
        let words = (1...60).map { "word\($0) " }
        let model = try LoopbackServer([LoopbackServer.Reply.chatText(words, delay: .milliseconds(100))])
        defer { model.stop() }
        let seen = try await Self.run("stop", model: model)
        #expect(seen["note"] == "interrupted")
        let answer = seen["answer"]?.stringValue ?? ""
        #expect(answer.hasPrefix("word1") && !answer.contains("word60"), "\(answer)")
    }

    /// Issue #66: a reader who scrolled up during a stream stays where they read (it was back at the bottom after a
    /// second); "Jump to latest" takes them down and the stream is followed again.
    @Test func readingWhileItStreamsStaysPut() async throws {
        let words = (1...200).map { "line \($0) of the story\n\n" }
        let model = try LoopbackServer([LoopbackServer.Reply.chatText(words, delay: .milliseconds(40))])
        defer { model.stop() }
        let seen = try await Self.run("reading", model: model)
        #expect(seen["scroll_after_a_second"] == 0, "\(seen)")
        #expect(seen["jump_shown"] == true, "\(seen)")
        #expect(seen["at_bottom"] == true, "\(seen)")
        #expect(seen["jump_after"] == false, "\(seen)")
        #expect(seen["page_errors"] == [])
    }

    /// Issue #66: the answer is laid out as it streams — no raw table pipes until the end, and no jump then.
    @Test func markdownIsLaidOutWhileItStreams() async throws {
        let chunks =
            ["Here:\n\n", "| city | zone |\n", "|---|---|\n", "| Tokyo | UTC+9 |\n", "\n"]
            + (1...30).map { "more \($0) " } + ["\n\n```\nprint(1)\n```\n"]
        let model = try LoopbackServer([LoopbackServer.Reply.chatText(chunks, delay: .milliseconds(60))])
        defer { model.stop() }
        let seen = try await Self.run("layout", model: model)
        #expect(seen["cells"]?.arrayValue?.first == "Tokyo", "\(seen)")
        #expect(seen["streaming_text"]?.stringValue?.contains("|---|") == false, "\(seen)")
        #expect(seen["code_copied"] == "print(1)\n", "a code block's own Copy: \(seen)")
        #expect(seen["page_errors"] == [])
    }

    /// Issue #66: at 390×844 the header is one row with a menu (it wrapped to three, 112 px), the message box is
    /// full width (145 px), and a panel is a sheet with a close button (it overlapped the message box).
    @Test func aPhoneGetsOneRowAFullWidthBoxAndSheets() async throws {
        let seen = try await Self.run("phone")
        #expect((seen["header_height"]?.doubleValue ?? 999) <= 56, "\(seen)")
        #expect((seen["message_width"]?.doubleValue ?? 0) >= 360, "\(seen)")
        #expect(seen["menu_items_hidden"] == true, "\(seen)")
        #expect(seen["sheet"] == [0, 0, 390], "\(seen)")
        #expect(seen["menu_closed"] == true, "\(seen)")
        #expect(seen["sheet_closed"] == true, "\(seen)")
        #expect(seen["page_errors"] == [])
    }

    /// Issue #66: axe-core finds no serious or critical violation on the empty page, a conversation with cards, a
    /// confirmation and each panel, light and dark, desktop and phone.
    @Test func axeFindsNothingSeriousInAnyState() async throws {
        let seen = try await Self.run("a11y")
        #expect(seen["scans"] == 28, "2 themes × 2 sizes × 7 states: \(seen)")
        #expect(seen["violations"] == [], "\(seen["violations"] ?? .null)")
        // Anything lesser axe reports is printed, to see (not a failure).
        print("axe, every kind reported: \(seen["all_kinds"] ?? .null)")
        #expect(seen["page_errors"] == [])
    }

    /// Issue #66: an empty page says what this is and who answers — with no model configured, how to add one — and
    /// offers requests that work with the skills loaded; one click sends it; an answer can be copied.
    @Test func anEmptyPageOffersRequestsThatWork() async throws {
        let seen = try await Self.run("welcome")
        let text = seen["welcome"]?.stringValue ?? ""
        #expect(text.contains("Answering: the offline router."), "\(text)")
        #expect(text.contains("OPENAI_BASE_URL and SKILLHOST_MODEL"), "\(text)")
        #expect(seen["examples"]?.arrayValue?.first == "what is (23+7)*2", "\(seen)")
        #expect(seen["examples"]?.arrayValue?.count == 4, "\(seen)")
        #expect(seen["welcome_after"] == 0, "\(seen)")
        #expect(seen["first_user"] == "what is (23+7)*2", "\(seen)")
        #expect(seen["copied"]?.stringValue?.contains("(23+7)*2 = 60") == true, "\(seen)")
        #expect(seen["page_errors"] == [])
    }

    /// Issue #66: the page says which model answers and lets the person pick among the configured ones (a model
    /// and the offline router); the pick holds from the next turn on.
    @Test func thePersonPicksWhoAnswers() async throws {
        let model = try LoopbackServer([LoopbackServer.Reply.chatText(["never asked"])])
        defer { model.stop() }
        let seen = try await Self.run("models", model: model)
        let options = seen["options"]?.arrayValue?.compactMap(\.stringValue) ?? []
        #expect(options.count == 2 && options.last == "offline router", "\(seen)")
        #expect(seen["chosen"]?.stringValue == options.first, "the configured model answers at first: \(seen)")
        #expect(seen["answer"]?.stringValue?.contains("[offline router] 2+2 = 4") == true, "\(seen)")
        #expect(seen["chosen_after"] == "offline router", "\(seen)")
        #expect(model.requests.isEmpty, "the model was not asked once the router was picked")
        #expect(seen["page_errors"] == [])
    }

    /// Issue #66: Esc stops a turn as Stop does.
    @Test func escapeStopsATurn() async throws {
        let words = (1...60).map { "word\($0) " }
        let model = try LoopbackServer([LoopbackServer.Reply.chatText(words, delay: .milliseconds(100))])
        defer { model.stop() }
        let seen = try await Self.run("escape", model: model)
        #expect(seen["note"] == "interrupted", "\(seen)")
        #expect(seen["page_errors"] == [])
    }

    /// Issue #66: a card's line is a sentence a person reads (the skill's own), the result one click away; a no
    /// is "Declined", not a red failure; the message box has the focus at load; a finished answer is announced
    /// once; Ctrl+/ lists the shortcuts, Ctrl+Shift+O starts a new conversation, Ctrl+Shift+1…4 open the panels and
    /// Ctrl+Shift+K searches the conversations.
    @Test func cardsSayInWordsWhatHappened() async throws {
        let seen = try await Self.run("words")
        #expect(seen["focus_at_load"] == "message", "\(seen)")
        #expect(seen["added"] == "Added note 1: call the plumber.", "\(seen)")
        #expect(seen["added_detail"]?.stringValue?.contains(#""title":"call the plumber""#) == true, "\(seen)")
        #expect(seen["declined"] == "Declined", "\(seen)")
        #expect(seen["declined_state"] == "declined", "\(seen)")
        #expect(seen["announced"]?.stringValue?.isEmpty == false, "\(seen)")
        #expect(seen["shortcuts"]?.stringValue?.contains("a new conversation") == true, "\(seen)")
        #expect(seen["after_new"] == 0, "\(seen)")
        #expect(seen["panel_keys"] == true, "Ctrl+Shift+2 opens and closes the skills, Ctrl+Shift+K searches")
        #expect(seen["page_errors"] == [])
    }

    @Test func aPluginDroppedInAppearsAndABrokenFileShowsItsReasons() async throws {
        let home = Paths.temporaryDirectory("web-browser-plugins")
        let folder = home + "/data/skillhost/plugins"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let staging = Paths.temporaryDirectory("web-browser-staging")
        // Installed before the start: a plugin with a view and a skill only that view may call (ABI 1.4).
        _ = rename(
            try Fixture.compileFile("views.c", into: Paths.temporaryDirectory("web-browser-views")),
            folder + "/views.so")
        let plugin = try Fixture.compileFile("typed.c", into: staging)
        try "not a plugin".write(toFile: staging + "/broken.so", atomically: true, encoding: .utf8)
        let drops = JSONValue.array([
            [.string(plugin), .string(folder + "/typed.so")],
            [.string(staging + "/broken.so"), .string(folder + "/broken.so")],
        ])
        let seen = try await Self.run(
            "plugins", home: home, scriptEnvironment: ["SKILLHOST_TEST_DROP": drops.jsonText])
        let before = seen["before"]?.doubleValue ?? 0
        #expect(seen["after"]?.doubleValue == before + 9, "the typed plugin's 9 skills: \(seen)")
        let twice = seen["twice"]?.stringValue ?? ""
        #expect(twice.contains("typed · process · confined"), "where it runs: \(twice)")
        #expect(seen["notice"]?.stringValue?.hasPrefix("+ typed 1.0.0: 9 skills added (add, ") == true, "\(seen)")
        #expect(seen["failure"]?.stringValue?.hasPrefix("broken.so: ") == true, "\(seen)")
        #expect(seen["enabled_after_switch"] == false)
        // A skill only for its plugin's views has no switch for the model: it is never the model's.
        #expect(seen["view_only"] == "board_refresh · for its views only", "\(seen)")
        #expect(seen["view_only_switch"] == 0)
        #expect(seen["page_errors"] == [])
    }

    @Test func switchingToDarkModeInTheChatTurnsEveryTabDark() async throws {
        let seen = try await Self.run("theme")
        #expect(seen["before"] == "system")
        #expect(seen["card"]?["phase"] == "succeeded", "\(seen)")
        #expect(seen["card"]?["summary"]?.stringValue?.contains("ui_set_theme") == true, "\(seen)")
        #expect(seen["asked"] == false, "the window's own view is never asked about")
        #expect(seen["background"] == "rgb(21, 21, 23)", "the other tab renders the dark theme")
        #expect(seen["states"]?.arrayValue?.contains("ui") == true, "\(seen)")
        let view = try JSONValue(parsing: seen["ui_state"]?.stringValue ?? "")
        #expect(view["theme"] == "dark" && view["panel"] == "state" && view["text_size"] == "normal", "\(view)")
        #expect(view["conversation"]?.stringValue?.isEmpty == false, "the conversation shown: \(view)")
        #expect(seen["page_errors"] == [])
    }

    @Test func theShellsConversationsAreListedOpenedAndContinued() async throws {
        let home = Paths.temporaryDirectory("web-browser-history")
        // A conversation the shell left: the same file, written the way the shell writes it.
        let store = try HistoryStore(path: home + "/data/skillhost/history.db")
        let id = try store.createSession(model: "offline router")
        let call = ToolCall(id: "c1", name: "calculator", arguments: #"{"expression":"6*7"}"#)
        var conversation = Conversation()
        for message in [
            Message(role: .system, content: "You are the assistant."), Message(role: .user, content: "what is 6*7"),
            Message(role: .assistant, content: "", toolCalls: [call]),
            Message(role: .tool, content: "42", toolCallID: "c1"),
            Message(role: .assistant, content: "It is **42**."),
        ] {
            try store.append(conversation.append(message), session: id)
        }
        try store.recordToolCall(
            ToolCallRecord(
                callID: "c1", skill: "calculator", arguments: #"{"expression":"6*7"}"#, result: "42", error: nil,
                durationMilliseconds: 1.5), session: id)
        let seen = try await Self.run("conversations", home: home)
        #expect(seen["toggle_shown"] == false, "a wide window lists the conversations beside the one shown")
        #expect(seen["listed"] == ["what is 6*7"], "\(seen)")
        #expect(seen["opened"]?["user"] == "what is 6*7")
        #expect(seen["opened"]?["card"]?["phase"] == "succeeded")
        #expect(seen["opened"]?["card"]?["summary"]?.stringValue?.contains("1.5 ms") == true, "\(seen)")
        #expect(seen["opened"]?["answer_html"] == "<p>It is <strong>42</strong>.</p>\n")
        #expect(seen["continued"]?.stringValue?.contains("42") == true, "\(seen)")
        #expect(seen["after"] == ["what is 3*3", "what is 6*7"], "\(seen)")
        // Issue #66: counted in turns (the shell's conversation, continued here, holds 2 questions and 7 messages).
        #expect(seen["counts"] == ["1 turn", "2 turns"], "\(seen)")
        // The opened conversation was continued in the history (the shell's --resume sees the new turn).
        let messages = try store.messages(session: id).map(\.content)
        #expect(messages.contains("what is 20+22"), "\(messages)")
        #expect(try store.sessions().count == 2)
        #expect(seen["page_errors"] == [])
    }

    /// Issue #66: each tab its own conversation ("New" in one tab emptied every tab before).
    @Test func eachTabHasItsOwnConversation() async throws {
        let seen = try await Self.run("tabs")
        #expect(seen["second_shows"] == ["what is 6*7"], "a new tab shows the conversation used last: \(seen)")
        #expect(seen["first"] == ["what is 6*7", "what is 2+3"], "\(seen)")
        #expect(seen["second"] == ["what is 3*3"], "\(seen)")
        #expect(seen["first_reloaded"] == seen["first"], "a reload keeps the tab's conversation")
        #expect(seen["second_reloaded"] == seen["second"])
        #expect(seen["list_visible"] == true)
        #expect(seen["groups"] == ["Today"], "\(seen)")
        #expect(seen["marked"] == ["what is 3*3"], "\(seen)")
        #expect(seen["together"] == ["what is 6*7", "what is 2+3", "what is 1+1"], "\(seen)")
        #expect(seen["page_errors"] == [])
    }

    /// Issue #66: search, rename, delete with a moment to take it back — and then really gone from history.db.
    @Test func conversationsAreSearchedRenamedAndDeleted() async throws {
        let home = Paths.temporaryDirectory("web-browser-manage")
        let history = home + "/data/skillhost/history.db"
        let seen = try await Self.run(
            "manage", home: home, scriptEnvironment: ["SKILLHOST_TEST_HISTORY": history])
        #expect(seen["listed"] == ["what time is it in Tokyo", "what is 6*7"], "\(seen)")
        #expect(seen["found"] == ["what time is it in Tokyo"], "\(seen)")
        #expect(seen["match"] == ["what time is it in Tokyo"], "\(seen)")
        #expect(seen["none_found"] == "Nothing said matches “nothing like this”.", "\(seen)")
        #expect(seen["renamed"] == ["what time is it in Tokyo", "Arithmetic"], "\(seen)")
        #expect(seen["toast"] == "Deleted “what time is it in Tokyo”.", "\(seen)")
        #expect(seen["after_delete"] == ["Arithmetic"], "\(seen)")
        #expect(seen["back"] == ["what time is it in Tokyo"], "\(seen)")
        #expect(seen["rows_at_first"] == 1, "kept while it can be brought back: \(seen)")
        #expect(seen["rows_left"] == ["sessions": 0, "messages": 0, "tool_calls": 0], "\(seen)")
        let late = seen["late_undo"]?.arrayValue ?? []
        #expect(late.first == 410, "\(seen)")
        #expect(late.last?.stringValue?.hasSuffix("cannot be brought back: it was removed for good") == true, "\(seen)")
        #expect(seen["kept"] == ["what time is it in Tokyo"], "\(seen)")
        #expect(seen["while_typing"] == "half typed", "the box stays while the list would be drawn again: \(seen)")
        #expect(seen["after_escape"] == ["what is 2+2", "what time is it in Tokyo"], "nothing renamed: \(seen)")
        // Whatever was kept is still whole in the file.
        let store = try HistoryStore(path: history)
        #expect(try store.listing().map(\.title) == ["what is 2+2", "what time is it in Tokyo"])
        #expect(seen["page_errors"] == [])
    }

    /// A tab whose empty conversation was closed (more were opened than are kept) sends into a new one.
    @Test func aMessageToAClosedEmptyConversationLandsInANewOne() async throws {
        let seen = try await Self.run("gone")
        #expect(seen["users"] == ["what is 6*7"], "\(seen)")
        #expect(seen["box"] == "", "\(seen)")
        #expect(seen["status"] == "ready", "\(seen)")
        #expect(seen["page_errors"] == [])
    }

    /// Issue #66: edit and resend the last message, regenerate its answer; going back shows what it undoes first.
    @Test func theLastMessageIsEditedAndItsAnswerWrittenAnew() async throws {
        let seen = try await Self.run("edit")
        #expect(seen["actions"] == ["✎ Edit", "↻ Regenerate"], "\(seen)")
        #expect(seen["edited"]?["users"] == ["what is 6*8"], "\(seen)")
        #expect(seen["edited"]?["answer"]?.stringValue?.contains("6*8 = 48") == true, "\(seen)")
        #expect(seen["edited"]?["cards"] == 1, "\(seen)")
        #expect(seen["regenerated"]?["users"] == ["what is 6*8"], "\(seen)")
        #expect(seen["regenerated"]?["cards"] == 1, "\(seen)")
        #expect(seen["plan_title"] == "Write the answer to message 2 anew?", "\(seen)")
        #expect(seen["plan"]?.stringValue?.contains("notes_add") == true, "\(seen)")
        #expect(seen["plan_button"] == "Undo and send")
        #expect(seen["users_after"] == ["what is 6*8", #"add a note titled "milk""#], "\(seen)")
        let state = seen["state_after"]?.stringValue ?? ""
        #expect(state.components(separatedBy: "milk").count == 2, "one note milk, not two: \(state)")
        #expect(
            seen["notices"]?.arrayValue?.contains { $0.stringValue?.hasPrefix("rewound") == true } == false,
            "an edit is not announced as a rewind: \(seen)")
        #expect(seen["page_errors"] == [])
    }

    @Test func undoReversesTheLastChange() async throws {
        let seen = try await Self.run("undo")
        #expect(seen["undo_before"] == true, "nothing to undo yet")
        #expect(seen["state_before"]?.stringValue?.contains("milk") == true, "\(seen)")
        #expect(seen["notice"]?.stringValue?.hasPrefix("↶ undoing notes_add: notes_delete(") == true, "\(seen)")
        // The reversing call is decided as any call: notes_delete is destructive, so the tab is asked, in words.
        #expect(seen["undo_asked"] == "Undo notes_add — Delete a note: id 1?", "\(seen)")
        #expect(seen["undo_card"]?["phase"] == "succeeded")
        #expect(seen["undo_card"]?["summary"]?.stringValue?.contains("notes_delete") == true, "\(seen)")
        #expect(seen["undo_after"] == true, "undone once")
        #expect(seen["state_after"]?.stringValue?.contains("milk") == false, "\(seen)")
        #expect(seen["page_errors"] == [])
    }

    /// `/rewind` in the browser (issue #65): each message of the person's can be gone back to before; the plan is
    /// shown first, the reversing calls are asked about like any call, and every tab shows the conversation anew.
    @Test func rewindGoesBackToBeforeAMessage() async throws {
        let seen = try await Self.run("rewind")
        #expect(seen["buttons"] == 2, "\(seen)")
        #expect(seen["title"] == "Go back to before message 1?", "\(seen)")
        let plan = seen["plan"]?.stringValue ?? ""
        #expect(plan.hasPrefix("Back to before message 1 (add a note titled \"milk\"):"), "\(plan)")
        #expect(plan.components(separatedBy: "undone by notes_delete").count == 3, "both changes: \(plan)")
        #expect(seen["users_after"] == 0, "\(seen)")
        #expect(
            seen["notices"]?.arrayValue?.last == "rewound: the conversation goes on from before that message",
            "\(seen)")
        #expect(seen["state_after"]?.stringValue?.contains("milk") == false, "\(seen)")
        #expect(seen["state_after"]?.stringValue?.contains("eggs") == false, "\(seen)")
        #expect(
            seen["stale"]
                == [409, "the conversation changed since that plan was shown; choose Rewind again to see it"],
            "\(seen)")
        #expect(seen["page_errors"] == [])
    }

    @Test func aCompositeAsksWithItsPlanAndItsCardListsTheSteps() async throws {
        let home = Paths.temporaryDirectory("web-browser-composite")
        let plugins = home + "/data/skillhost/plugins"
        try Fixture.writeAddPair(into: plugins)
        let model = try LoopbackServer([
            .chatToolCalls([("c1", "add_pair", #"{"a":"milk","b":"eggs"}"#)]), .chatText(["Added both."]),
        ])
        defer { model.stop() }
        let seen = try await Self.run("composite", model: model, home: home)
        let plan: JSONValue = ["1. notes_add(title: ${input.a})", "2. notes_add(title: ${input.b})"]
        #expect(seen["plan"] == plan, "\(seen)")
        #expect(
            seen["steps"]
                == [["1. notes_add(title: ${input.a})", "done"], ["2. notes_add(title: ${input.b})", "done"]], "\(seen)"
        )
        #expect(seen["page_errors"] == [])
    }

    @Test func anotherPageOfThisMachineCannotDriveTheSession() async throws {
        let seen = try await Self.run("foreign")
        // The send went out as an opaque request (the page cannot read the answer); the server refused it by its
        // Origin (403), so no turn started. Reading the skills is blocked as well.
        #expect(seen["outcome"]?["send"] == "opaque", "\(seen)")
        #expect(seen["outcome"]?["skills"] == "blocked", "\(seen)")
        #expect(seen["send_status"] == 403, "refused by the Origin check, before anything else: \(seen)")
        #expect(seen["users"] == 0, "no turn was started")
        // That server received the login cookie; replayed from a plain script it grants nothing.
        #expect(seen["stolen"] == true, "\(seen)")
        #expect(
            seen["with_stolen_cookie"]
                == ["/api/conversations": 401, "/api/events": 401, "/api/send": 401, "/api/confirm": 401], "\(seen)")
        #expect(seen["page_errors"] == [])
    }

    @Test func aHostileAnswerIsInert() async throws {
        let answer = [
            "Hello ", "<script>alert(1)</script> ", "<img src=x onerror=alert(2)> ",
            "[click](javascript:alert(3)) ", "[fine](https://example.org)",
        ]
        let model = try LoopbackServer([LoopbackServer.Reply.chatText(answer)])
        defer { model.stop() }
        let seen = try await Self.run("hostile", model: model)
        #expect(seen["answer"]?.stringValue?.hasPrefix("Hello") == true, "\(seen)")
        #expect(seen["active"] == 0)
        #expect(seen["alerts"] == 0)
        // Issue #66: the javascript: link is its text, no longer an `<a href="">` that reloads the page.
        #expect(seen["links"] == ["https://example.org"], "\(seen)")
        #expect(seen["text"]?.stringValue?.contains("click fine") == true, "\(seen)")
        #expect(seen["page_errors"] == [])
    }
}
