import Foundation
import SkillJSON
import TestSupport
import Testing

/// Budgets through the real binary: `ask` stops with its own exit code and says which budget; `--json`'s finished
/// event names it; a budget that cannot be used is refused with the sentence naming it.
struct BudgetCLITests {
    let home = Paths.temporaryDirectory("budget-home")

    func configure(_ text: String) throws {
        try FileManager.default.createDirectory(atPath: home + "/config/skillhost", withIntermediateDirectories: true)
        try text.write(toFile: home + "/config/skillhost/config.json", atomically: true, encoding: .utf8)
    }

    /// A model that asks for one calculator call and reports 80 + 40 tokens, then answers.
    static func model() throws -> LoopbackServer {
        let call =
            #"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"calculator","arguments":"{\"expression\":\"1+1\"}"}}]},"finish_reason":null}]}"#
        return try LoopbackServer([
            .events([
                call, #"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
                #"{"choices":[],"usage":{"prompt_tokens":80,"completion_tokens":40,"total_tokens":120}}"#, "[DONE]",
            ]),
            .chatText(["It is 2."]),
        ])
    }

    @Test func askStopsAtABudgetWithItsOwnExitCode() throws {
        try configure(#"{"budgets": {"turn": {"tokens": 100}}, "prices": {"m": {"input": 2.5, "output": 10}}}"#)
        for json in [false, true] {
            let server = try Self.model()
            defer { server.stop() }
            let environment = cliEnvironment(
                home: home, ["OPENAI_BASE_URL": server.baseURL.absoluteString, "SKILLHOST_MODEL": "m"])
            let result = try runProcess(
                Paths.skillhost, ["ask", "what is 1+1"] + (json ? ["--json"] : []), environment: environment)
            #expect(result.status == 10, "\(result.stderr)")
            if json {
                let finished = try result.stdout.split(separator: "\n").map { try JSONValue(parsing: String($0)) }
                    .last { $0["event"] == "finished" }
                #expect(finished?["reason"] == "budget")
                #expect(
                    finished?["budget"] == ["scope": "turn", "kind": "tokens", "used": 120.0, "limit": 100.0],
                    "\(String(describing: finished))")
            } else {
                #expect(
                    result.stderr.hasSuffix(
                        "skillhost: stopped: this turn has used 120 tokens of 100 (the turn.tokens budget)\n"),
                    "\(result.stderr)")
            }
        }
    }

    @Test func aBudgetThatCannotBeUsedIsRefused() throws {
        let file = home + "/config/skillhost/config.json"
        let cases: [(String, String)] = [
            (
                #"{"budgets": {"week": {}}}"#,
                #""budgets" has "week"; budgets are for a "turn", the "session" or an "mcp_session""#
            ),
            (
                #"{"budgets": {"turn": {"tokens": -5}}}"#,
                "budgets.turn.tokens must be a positive number, or null for no limit"
            ),
            (
                #"{"budgets": {"session": {"dollars": 5}}}"#,
                #"budgets.session has "dollars"; a budget counts tokens, tool_calls, seconds or cost"#
            ),
            (
                #"{"budgets": {"turn": {"tool_call": 3}}}"#,
                #"budgets.turn has "tool_call" (did you mean "tool_calls"?); a budget counts tokens, tool_calls, seconds or cost"#
            ),
            (
                #"{"prices": {"m": {"input": 1}}}"#,
                #"prices.m must be {"input": <per million>, "output": <per million>}"#
            ),
        ]
        for (text, sentence) in cases {
            try configure(text)
            let result = try runProcess(
                Paths.skillhost, ["ask", "hi"], environment: cliEnvironment(home: home))
            #expect(result.status == 2)
            #expect(result.stderr.hasPrefix("skillhost: \(file): \(sentence)\n"), "\(result.stderr)")
        }
    }
}
