import Foundation
import SkillJSON
import TestSupport
import Testing

/// `skillhost ask` end to end: the offline router by default, an OpenAI-compatible server on loopback when
/// configured, and the config file's errors as exact text.
struct AskCLITests {
    let home = Paths.temporaryDirectory("ask-home")

    func environment(_ extra: [String: String] = [:]) -> [String: String] {
        cliEnvironment(home: home, extra.mapValues { $0 })
    }

    @Test func answersOfflineWithToolActivityOnStderr() throws {
        let result = try runProcess(Paths.skillhost, ["ask", "what is (23+7)*2"], environment: environment())
        #expect(result.status == 0)
        #expect(result.stdout == "[offline router] (23+7)*2 = 60\n")
        let lines = result.stderr.split(separator: "\n").map(String.init)
        #expect(lines.first == "⟳ calculator(expression: \"(23+7)*2\")")
        #expect(lines.last?.hasPrefix("✓ calculator → 60 · ") == true)
    }

    /// Nothing matched is its own exit code (8), with the router's sentence on stdout and nothing on stderr
    /// beyond it; `--json` says `nothing_matched`.
    /// The zone a time is given in is where it is converted from, wherever the request names it (issue #64: 9am in
    /// London was taken as 9am in New York, the first zone named, and answered 14:00).
    @Test func aTimeIsConvertedFromTheZoneItIsGivenIn() throws {
        let run = try runProcess(
            Paths.skillhost, ["ask", "what time is it in New York when it is 9am in London"],
            environment: environment())
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains(#"clock_convert(time: "09:00", from: "Europe/London", to: "America/New_York")"#))
        // 04:00 most of the year; 05:00 in the weeks when only one of the two has moved its clocks.
        var london = Calendar(identifier: .gregorian)
        london.timeZone = try #require(TimeZone(identifier: "Europe/London"))
        let nine = try #require(london.date(bySettingHour: 9, minute: 0, second: 0, of: Date()))
        var newYork = Calendar(identifier: .gregorian)
        newYork.timeZone = try #require(TimeZone(identifier: "America/New_York"))
        let hour = newYork.component(.hour, from: nine)
        // Answered in the sentence the clock plugin declares (issue #64: the result's fields one per line before).
        let said = String(format: "[offline router] 09:00 in London is %02d:00 on ", hour)
        #expect(run.stdout.hasPrefix(said), "\(run.stdout)")
        #expect(run.stdout.contains(" in New York (UTC-"), "\(run.stdout)")
    }

    /// Issue #64: a tip, a height in two units and "rounded" are ordinary requests, answered as asked.
    @Test func percentagesCompoundQuantitiesAndRoundingAreAnswered() throws {
        for (request, answer): (String, String?) in [
            ("what's 20% tip on a $45 bill", "[offline router] 20/100*45 = 9\n"),
            ("5 feet 10 inches in cm", "[offline router] 70 in = 177.8 cm\n"),
            ("what's 100 divided by 7 rounded", "[offline router] 100/7 = 14\n"),
            ("100 divided by 7 rounded to 2 decimal places", "[offline router] 100/7 = 14.29\n"),
            ("100 divided by 7", "[offline router] 100/7 = 14.2857\n"),
            ("what is 5 divided by 2, rounded", "[offline router] 5/2 = 3\n"),
            ("count the words in this: Dear John: I am leaving. Bye.", nil),
        ] {
            let run = try runProcess(Paths.skillhost, ["ask", request], environment: environment())
            #expect(
                run.status == 0 && (answer == nil || run.stdout == answer), "\(request): \(run.stdout)\(run.stderr)")
            if answer == nil {  // the text after the first colon is the text, colons in it included
                #expect(run.stderr.contains(#"text_stats(text: "Dear John: I am leaving. Bye.")"#), "\(run.stderr)")
            }
        }
    }

    /// Issue #64: a skill the user just wrote is reached from its name and its arguments' names alone — a typed
    /// `days_between(date1, date2)` answered "No skill matches", and "how many days" went to a counter.
    @Test func aThirdPartyTypedSkillIsReachedByWhatItsNamesSay() throws {
        let plugins = Paths.temporaryDirectory("ask-days-between")
        _ = try Fixture.compileFile("typed_errors.c", into: plugins)
        for request in [
            "how many days between 2026-01-01 and 2026-12-25", "days_between date1: 2026-01-01 date2: 2026-12-25",
            "how many days from January 1, 2026 to December 25, 2026",
        ] {
            let run = try runProcess(
                Paths.skillhost, ["ask", request, "--plugins", plugins], environment: environment())
            #expect(run.status == 0, "\(request): \(run.stdout)\(run.stderr)")
            #expect(run.stdout == "[offline router] Days between: 358\n", "\(request): \(run.stdout)")
        }
    }

    @Test func nothingMatchedExitsWithEight() throws {
        let result = try runProcess(Paths.skillhost, ["ask", "tell me a joke"], environment: environment())
        #expect(result.status == 8)
        #expect(result.stdout.hasPrefix("[offline router] No skill matches “tell me a joke”."))
        #expect(result.stderr == "")
        let json = try runProcess(Paths.skillhost, ["ask", "--json", "tell me a joke"], environment: environment())
        #expect(json.status == 8)
        #expect(json.stdout.contains(#""reason":"nothing_matched""#))
    }

    /// A call `ask` may not run (destructive, no one to confirm it) is a refusal: exit 9, not an answer (0) and not
    /// nothing-matched (8); a request of several clauses serves each in order and names what it left out.
    @Test func aRefusalExitsWithNineAndEveryClauseIsServedInOrder() throws {
        let refused = try runProcess(Paths.skillhost, ["ask", "delete note 5"], environment: environment())
        #expect(refused.status == 9)
        #expect(
            refused.stdout
                == "[offline router] notes_delete failed: not run: notes_delete is destructive and there is no one to "
                + "confirm it (allow it with a rule in the configuration)\n")
        let json = try runProcess(Paths.skillhost, ["ask", "--json", "delete note 5"], environment: environment())
        #expect(json.status == 9)
        #expect(json.stdout.contains(#""reason":"refused""#))
        // The failure's code travels with its sentence: clients branch on it, never on the words.
        #expect(
            json.stdout.contains(#""event":"tool_call_failed""#) && json.stdout.contains(#""code":"not_permitted""#))

        let both = try runProcess(
            Paths.skillhost, ["ask", "what's 3 plus 3 and delete note 2"], environment: environment())
        #expect(both.status == 9)
        #expect(
            both.stdout
                == "[offline router] 3+3 = 6\nnotes_delete failed: not run: notes_delete is destructive and "
                + "there is no one to confirm it (allow it with a rule in the configuration)\n")
        let partly = try runProcess(
            Paths.skillhost, ["ask", "what's 3 plus 3 and write me a poem"], environment: environment())
        #expect(partly.status == 0)
        #expect(
            partly.stdout
                == "[offline router] 3+3 = 6\nLeft out “write me a poem”: no skill matches it.\n")
    }

    /// Each text goes to its own argument, or the router says what it needs: never a value in the wrong field.
    @Test func notesKeepTheirBodies() throws {
        let env = environment()
        let added = try runProcess(
            Paths.skillhost, ["ask", "--json", #"add a note titled "call the plumber" with body "Tuesday after 5pm""#],
            environment: env)
        #expect(added.status == 0)
        #expect(added.stdout.contains(#""body":"Tuesday after 5pm""#), "\(added.stdout)")
        let updated = try runProcess(
            Paths.skillhost, ["ask", "--json", #"update note 1 body to "sourdough""#], environment: env)
        #expect(updated.status == 0)
        let listed = try runProcess(Paths.skillhost, ["call", "notes_list"], environment: env)
        #expect(listed.stdout.contains(#""title":"call the plumber","body":"sourdough""#), "\(listed.stdout)")
        // Unquoted, quoted and after a colon (issue #64: the quoted value overwrote the title, unasked).
        for request in [
            "update note 1 description to x", #"update note 1 description to "bring insurance card""#,
            "update note 1 description: bring insurance card",
        ] {
            let unnamed = try runProcess(Paths.skillhost, ["ask", request], environment: env)
            #expect(unnamed.status == 8, "\(request)")
            #expect(
                unnamed.stdout
                    == "[offline router] To run notes_update I need its title in the request (for example “title: …”); "
                    + "without a model I do not guess it.\n")
        }
        let untouched = try runProcess(Paths.skillhost, ["call", "notes_list"], environment: env)
        #expect(untouched.stdout.contains(#""title":"call the plumber","body":"sourdough""#), "\(untouched.stdout)")
    }

    /// A Swift skill's object result reads the same on every run: its keys come sorted.
    @Test func aSwiftSkillsObjectResultHasAStableKeyOrder() throws {
        for _ in 1...3 {
            let result = try runProcess(
                Paths.skillhost, ["call", "clock_now", #"{"time_zone":"Asia/Tokyo"}"#], environment: environment())
            // SkillJSON keeps the order of the text.
            let keys = try #require(try JSONValue(parsing: result.stdout).objectValue?.keys)
            #expect(
                Array(keys) == ["date", "iso8601", "time", "time_zone", "utc_offset", "weekday"], "\(result.stdout)")
        }
    }

    @Test func readsThePromptFromStdinAndPrintsJSONEvents() throws {
        let result = try runProcess(
            Paths.skillhost, ["ask", "--json"], environment: environment(), stdin: "is 97 a prime number\n")
        let events = result.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        #expect(
            events.map { $0["event"] as? String } == [
                "thinking", "tool_call_started", "tool_call_finished", "thinking", "text", "finished",
            ])
        #expect(events[2]["result"] as? Bool == true)
        // The arguments as the skill received them, as a value.
        #expect(events[1]["arguments"] as? [String: Int] == ["n": 97], "\(events[1])")
        #expect(events.last?["reason"] as? String == "answered")
    }

    @Test func usesAConfiguredServerAndNeverShowsTheKey() throws {
        let server = try LoopbackServer([
            .status(401, #"{"error":{"message":"invalid key"}}"#),
            .events([
                #"{"choices":[{"index":0,"delta":{"content":"Hello from the model."},"finish_reason":"stop"}]}"#,
                "[DONE]",
            ]),
        ])
        defer { server.stop() }
        let env = environment([
            "OPENAI_BASE_URL": server.baseURL.absoluteString, "OPENAI_API_KEY": "sk-very-secret",
            "SKILLHOST_MODEL": "m1",
        ])
        let refused = try runProcess(Paths.skillhost, ["ask", "hello"], environment: env)
        #expect(refused.status == 1)
        #expect(
            refused.stderr
                == "skillhost: the model server answered 401 Unauthorized: invalid key — check OPENAI_API_KEY\n")
        #expect(!(refused.stdout + refused.stderr).contains("sk-very-secret"))
        let answered = try runProcess(Paths.skillhost, ["ask", "hello"], environment: env)
        #expect(answered.stdout == "Hello from the model.\n")
        #expect(server.requests.last?.header("Authorization") == "Bearer sk-very-secret")
        #expect(server.requests.last?.body.contains(#""model":"m1""#) == true)
    }

    @Test func explainsConfigurationMistakes() throws {
        let folder = home + "/config/skillhost"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let file = folder + "/config.json"
        try #"{"modle": "x"}"#.write(toFile: file, atomically: true, encoding: .utf8)
        let typo = try runProcess(Paths.skillhost, ["ask", "hi"], environment: environment())
        #expect(typo.status == 2)
        #expect(
            typo.stderr == """
                skillhost: \(file): unknown setting "modle" (did you mean "model"?); known settings: base_url, api_key, model, step_limit, max_tools, request_timeout_s, policy, disabled_skills, mcpServers, isolation, max_result_mb, max_plugin_mb, mcp, snapshot_budget_bytes, web, hooks, budgets, prices, record, skills
                hint: fix the file or remove it

                """)
        // A huge file is refused from its size, before a byte is read (a sparse gigabyte costs nothing here).
        try "{}".write(toFile: file, atomically: true, encoding: .utf8)
        #expect(truncate(file, 1 << 30) == 0)
        let huge = try runProcess(Paths.skillhost, ["ask", "hi"], environment: environment())
        #expect(huge.status == 2)
        #expect(
            huge.stderr
                == "skillhost: \(file) is 1024.0 MB; at most 1.0 MB is read (is it the right file?)\nhint: fix the file or remove it\n"
        )
        // A file cut off while it was written says where, by line and column, and that it ends early.
        try "{\n  \"model\": \"qwen\",\n  \"policy\": {\"notes_*\": ".write(
            toFile: file, atomically: true, encoding: .utf8)
        let truncated = try runProcess(Paths.skillhost, ["ask", "hi"], environment: environment())
        #expect(truncated.status == 2)
        #expect(
            truncated.stderr == """
                skillhost: \(file): invalid JSON at line 3, column 25 (byte 45): unexpected end of input, expected a value; the text ends early (is the file cut off?)
                hint: fix the file or remove it

                """)
        try "{\"model\": \"qwen\" \"x\": 1}".write(toFile: file, atomically: true, encoding: .utf8)
        let misplaced = try runProcess(Paths.skillhost, ["ask", "hi"], environment: environment())
        #expect(
            misplaced.stderr.hasPrefix(
                "skillhost: \(file): invalid JSON at line 1, column 18 (byte 17): expected ',' or '}'"))
        try #"{"policy": {"wipe_*": "never"}}"#.write(toFile: file, atomically: true, encoding: .utf8)
        let policy = try runProcess(Paths.skillhost, ["ask", "hi"], environment: environment())
        #expect(
            policy.stderr.hasPrefix(
                "skillhost: \(file): policy for \"wipe_*\" must be \"allow\", \"ask\" or \"deny\"\n"))
        for setting in [#""request_timeout_s": 1e19"#, #""mcpServers": {"t": {"command": "x", "timeout_s": -1}}"#] {
            try "{\(setting)}".write(toFile: file, atomically: true, encoding: .utf8)
            let huge = try runProcess(Paths.skillhost, ["ask", "hi"], environment: environment())
            #expect(huge.status == 2)
            let key = setting.contains("request") ? "request_timeout_s" : "mcpServers.t.timeout_s"
            #expect(
                huge.stderr == """
                    skillhost: \(file): "\(key)" must be a number of seconds from 0.001 to 86400 (a day)
                    hint: fix the file or remove it

                    """)
        }
        try #"{"base_url": "http://localhost:11434/v1"}"#.write(toFile: file, atomically: true, encoding: .utf8)
        let noModel = try runProcess(Paths.skillhost, ["ask", "hi"], environment: environment())
        #expect(
            noModel.stderr == """
                skillhost: a model endpoint is set (http://localhost:11434/v1) but no model
                hint: set SKILLHOST_MODEL or "model" in \(file)

                """)
    }

    @Test func exitCodesFollowTheFinishReason() throws {
        let calls = (1...3).map { n in
            LoopbackServer.Reply.events([
                #"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c\#(n)","type":"function","function":{"name":"calculator","arguments":"{\"expression\":\"1+\#(n)\"}"}}]},"finish_reason":"tool_calls"}]}"#,
                "[DONE]",
            ])
        }
        let server = try LoopbackServer(calls)
        defer { server.stop() }
        let env = environment(["OPENAI_BASE_URL": server.baseURL.absoluteString, "SKILLHOST_MODEL": "m"])
        let limited = try runProcess(Paths.skillhost, ["ask", "count", "--step-limit", "2"], environment: env)
        #expect(limited.status == 6)
        #expect(
            limited.stderr.hasSuffix("skillhost: stopped after 2 steps (the step limit); continue the turn to go on\n"))
    }
}
