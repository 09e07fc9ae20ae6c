import Foundation
import SkillHost
import TestSupport
import Testing

@testable import Agent
@testable import SkillJSON

/// The bundled plugins and the third-party `household` fixture, as the model sees them.
let routerTools: [ToolDefinition] = {
    guard let registry = try? makeRegistry() else { return [] }
    registry.loadFolder(Paths.products) { $0.hasPrefix("libskill-") }
    if let file = try? Fixture.compileFile("household.c", into: Paths.temporaryDirectory("router")) {
        _ = registry.load(file: file)
    }
    return registry.skills.map(ToolDefinition.init)
}()

/// A fixed "now" (2026-07-04 12:00 UTC) for "today" and "tomorrow".
let routerNow = Date(timeIntervalSince1970: 1_783_166_400)

/// The skills a model is offered when there are many: every labelled request's skill is among the 24 picked from
/// the bundled skills and a thousand others (issue #64: "calculate 17% of 240", "how many feet are in 3 meters" and
/// "convert 12 ounces to grams" were not — their words matched a thousand skills' as well, what they hold for the
/// skill's arguments counted for nothing).
struct SkillSelectionTests {
    @Test func everyLabelledRequestsSkillIsAmongTheTwentyFourPicked() async throws {
        let others = SyntheticSkills.make(1_000).map { (id: $0.0, text: "\($0.0) \($0.0) \($0.1) \($0.1) \($0.2)") }
        let selector = SkillSelector(tools: routerTools, others: others)
        var requests = SyntheticSkills.labelled.map { (request: $0.0, skill: $0.1) }
        for item in RouterCorpus.cases {
            if case .call(let alternatives) = item.expected, alternatives.count == 1, let skill = alternatives.first {
                requests.append((item.request, skill.0))
            }
        }
        let labelled = requests
        let misses = try await offPool {
            labelled.filter { !selector.select($0.request, limit: 24, keep: []).contains($0.skill) }
        }
        #expect(requests.count > 150)
        // Where each missed skill ranked, and the 24th score it had to beat.
        let ranks = misses.map { miss in
            let ranked = selector.rank(miss.request)
            let place = (ranked.firstIndex { $0.id == miss.skill } ?? -1) + 1
            return "\(miss.skill) ranked \(place), the 24th scored \(ranked.count > 23 ? ranked[23].score : 0)"
        }
        #expect(misses.isEmpty, "\(misses.count) of \(requests.count) not among the 24: \(misses) \(ranks)")
    }
}

/// The offline router against the labelled set: the figures the issue asks for, and each miss by name.
struct OfflineRouterCorpusTests {
    @Test func theLabelledSetMeetsItsTargets() async throws {
        #expect(routerTools.contains { $0.name == "todo_clear" }, "the household fixture did not load")
        let score = try await RouterScore.of(RouterCorpus.cases, tools: routerTools)
        print("offline router, labelled set: \(score.report)")
        for miss in score.misses { print("  miss: \(miss)") }
        #expect(score.requests >= 150)
        #expect(score.nonChange >= 50)
        #expect(score.wrongWrites.isEmpty, "\(score.wrongWrites)")
        #expect(score.rightShare >= 0.90)
        #expect(score.honestShare >= 0.95)
    }
}

/// The offline router end to end: its answers, its honesty, its exit.
struct OfflineRouterTests {
    @Test func saysPlainlyWhenNothingMatches() async throws {
        let request = ModelRequest(
            messages: [Message(role: .user, content: "write me a poem about autumn")], tools: routerTools)
        let chunks = OfflineRouter().respond(to: request)
        guard case .text(let answer)? = chunks.first else {
            Issue.record("expected a text answer")
            return
        }
        #expect(answer.hasPrefix("[offline router] No skill matches “write me a poem about autumn”."))
        #expect(chunks.last == .noSkillMatched)
    }

    @Test func aChangeWithoutItsIdAsksForIt() {
        let request = ModelRequest(messages: [Message(role: .user, content: "delete my note")], tools: routerTools)
        let chunks = OfflineRouter().respond(to: request)
        #expect(
            chunks.first
                == .text(
                    "[offline router] To run notes_delete I need its id in the request (for example “… note 3”); "
                        + "without a model I do not guess it."))
        #expect(chunks.last == .noSkillMatched)
        let task = OfflineRouter().respond(
            to: ModelRequest(messages: [Message(role: .user, content: "mark my task as done")], tools: routerTools))
        #expect(
            task.first
                == .text(
                    "[offline router] To run todo_done I need its task_id in the request (for example “… task 3”); "
                        + "without a model I do not guess it."))
    }

    /// The plugins' state names the notes: "the note about milk" is note 1 — when exactly one title matches.
    @Test func anIDByTitleComesFromThePluginsState() {
        let state = StateSnapshots.message(
            [
                (
                    "notes",
                    [
                        "notes": 3,
                        "recent": [
                            ["id": 3, "title": "oat milk"], ["id": 2, "title": "eggs"], ["id": 1, "title": "milk"],
                        ],
                    ]
                )
            ],
            budget: 2000)
        func route(_ text: String) -> [ModelChunk] {
            OfflineRouter().respond(
                to: ModelRequest(
                    messages: [Message(role: .system, content: state ?? ""), Message(role: .user, content: text)],
                    tools: routerTools))
        }
        func call(_ chunks: [ModelChunk]) -> String? {
            guard case .toolCall(let call)? = chunks.first else { return nil }
            return "\(call.name) \(call.arguments)"
        }
        #expect(call(route("delete the note about eggs")) == #"notes_delete {"id":2}"#)
        #expect(
            call(route("delete the oat milk note")) == #"notes_delete {"id":3}"#, "the longer title that matches wins")
        // "milk" alone names both "milk" and (part of) "oat milk": only the exact match of every word counts.
        #expect(call(route("delete the note about milk")) == #"notes_delete {"id":1}"#)
        // A title the state does not name, or no state at all: the id is asked for, never guessed.
        #expect(call(route("delete the note about bread")) == nil)
        let stateless = OfflineRouter().respond(
            to: ModelRequest(
                messages: [Message(role: .user, content: "delete the note about eggs")], tools: routerTools))
        #expect(call(stateless) == nil)
        // Two items with the same title: ambiguous, so nothing is resolved.
        let twice = KnownItems(items: [
            .init(plugin: "notes", id: 1, title: "eggs"), .init(plugin: "notes", id: 2, title: "eggs"),
        ])
        #expect(twice.id(named: RouterRequest("delete the note about eggs"), nouns: ["note"]) == nil)
    }

    /// Requests and schemas are strangers' text: a huge request of number words neither crashes (it overflowed
    /// Int before) nor costs more than its first 2,000 characters, and a property name that is a pathological
    /// pattern is matched literally (as a pattern, 40 a's would backtrack for hours). The cap is the hazard's
    /// scale, minutes — never a timing.
    @Test(.timeLimit(.minutes(3))) func hostileTextStaysCheap() async throws {
        let huge = "convert " + String(repeating: "twenty one hundred and ", count: 5_000) + "km to miles"
        _ = try await offPool { OfflineRouter().route(huge, tools: routerTools) }
        // A request of endless clauses is read as at most 8, each routed once.
        let clauses = try await offPool {
            OfflineRouter().plan(String(repeating: "what's 1 plus 1 and ", count: 2_000), tools: routerTools)
        }
        #expect(clauses.count == Clauses.limit)
        let evil = ToolDefinition(
            name: "evil", description: "Evil text tool.",
            parameters: [
                "type": "object", "properties": ["(a+)+$": ["type": "string"], "b": ["type": "string"]],
                "required": ["(a+)+$"],
            ], risk: .readOnly)
        let routed = try await offPool {
            OfflineRouter().route("evil " + String(repeating: "a", count: 40) + "!", tools: [evil])
        }
        #expect(routed?.name == "evil")
    }

    @Test func aSettingIsSwitchedByNamingTheChoice() {
        // The browser's view skills: "switch", "set", "turn" ask for a change like "change" does.
        let theme = ToolDefinition(
            name: "ui_set_theme", description: "Switches the browser window's colour theme: dark, light or system.",
            parameters: [
                "type": "object", "properties": ["theme": ["type": "string", "enum": ["light", "dark", "system"]]],
                "required": ["theme"],
            ], title: "Window theme: dark mode, light mode", risk: .mutating)
        let tools = routerTools + [theme]
        for text in ["switch to dark mode", "set the theme to light", "turn on dark mode"] {
            let routed = OfflineRouter().route(text, tools: tools)
            #expect(routed?.name == "ui_set_theme", "\(text)")
        }
        #expect(OfflineRouter().route("switch to dark mode", tools: tools)?.arguments == ["theme": "dark"])
        #expect(OfflineRouter().route("what is 23 plus 7", tools: tools)?.name == "calculator")
    }

    @Test func answersWithTheResultLabelledOffline() async throws {
        let registry = try agentRegistry()
        let session = AgentSession(skills: registry, provider: OfflineRouter())
        let events = await collect(session.send("what is (23+7)*2"))
        #expect(events.last == .finished(.answered))
        #expect(session.conversation.messages.last?.content == "[offline router] (23+7)*2 = 60")
        let failing = await collect(session.send("what is 1/0"))
        #expect(failing.last == .finished(.answered))
        #expect(session.conversation.messages.last?.content == "[offline router] calculator failed: division by zero")
        let nothing = await collect(session.send("tell me a joke"))
        #expect(nothing.last == .finished(.nothingMatched))
    }

    @Test(arguments: [
        ("22.22222222222223", "convert_temperature", #"{"value":72,"from":"f","to":"c"}"#, "72 °F = 22.2222 °C"),
        ("1.3607771100000001", "convert_mass", #"{"value":3,"from":"kg","to":"lb"}"#, "3 kg = 1.36078 lb"),
        ("161.6", "celsius_to_fahrenheit", #"{"celsius":72}"#, "72 °C = 161.6 °F"),
        ("65536", "calculator", #"{"expression":"2^16"}"#, "2^16 = 65536"),
        ("1e+21", "calculator", #"{"expression":"10^21"}"#, "10^21 = 1e+21"),
        ("0.000123456789", "calculator", #"{"expression":"x"}"#, "x = 0.000123457"),
        ("true", "is_prime", #"{"n":97}"#, "yes"),
        ("[]", "notes_list", "{}", "none"),
        (
            #"{"date":"2026-12-01","time":"21:05:25","utc_offset":"+09:00"}"#, "clock_now", #"{}"#,
            "date 2026-12-01, time 21:05:25, utc offset +09:00"
        ),
        (
            #"[{"id":1,"title":"milk"},{"id":2,"title":"eggs","body":""}]"#, "notes_list", "{}",
            "\n  - id: 1, title: milk\n  - id: 2, title: eggs, body: "
        ),
    ])
    func answersReadAsAPersonWouldWriteThem(result: String, skill: String, arguments: String, expected: String) {
        let tool = routerTools.first { $0.name == skill }
        let call = ToolCall(id: "c", name: skill, arguments: arguments)
        #expect(RouterAnswer.render(result, call: call, tool: tool) == expected)
    }

    @Test func wordsBecomeArithmetic() {
        #expect(Arithmetic.expression(in: "note 3") == nil)
        #expect(Arithmetic.expression(in: "convert 5 km to miles") == nil)
        #expect(Arithmetic.expression(in: "on 2026-11-30 at 15:00") == nil)
        #expect(Arithmetic.expression(in: "what is 2+2 and then some") == "2+2")
        #expect(Arithmetic.expression(in: "sqrt of 81") == "sqrt(81)")
        #expect(Arithmetic.expression(in: "ten squared") == "10^2")
        #expect(Arithmetic.expression(in: "(1 + 2") == "1+2")
    }

    @Test func zonesFromCitiesAndCountries() {
        #expect(
            ZoneNames.mentions(in: "from New York to São Paulo").map(\.zone) == [
                "America/New_York", "America/Sao_Paulo",
            ])
        #expect(ZoneNames.mentions(in: "Asia/Tokyo then paris").map(\.zone) == ["Asia/Tokyo", "Europe/Paris"])
        #expect(ZoneNames.mentions(in: "what do I get for christmas").isEmpty)
        #expect(ZoneNames.mentions(in: "time on Christmas Island").map(\.zone) == ["Indian/Christmas"])
    }
}

/// A schema as a model server is sent it: lengths, patterns and counts in words, never as grammar material (issue
/// #64: llama.cpp's server died of the calculator's `maxLength: 4096`).
struct ModelSchemaTests {
    @Test func boundsAServerCannotBuildAGrammarFromAreSaidInWords() throws {
        let schema = try JSONValue(
            parsing: #"""
                {"type": "object", "properties": {
                   "expression": {"type": "string", "description": "The expression.", "maxLength": 4096},
                   "tags": {"type": "array", "items": {"type": "string", "pattern": "^[a-z]+$"}, "maxItems": 8},
                   "pattern": {"type": "string", "minLength": 1}},
                 "required": ["expression"], "additionalProperties": false}
                """#)
        let sent = ModelSchema.forModel(schema)
        #expect(!sent.jsonText.contains("maxLength") && !sent.jsonText.contains("maxItems"), "\(sent.jsonText)")
        #expect(sent["properties"]?["expression"]?["description"] == "The expression. (at most 4096 characters)")
        #expect(sent["properties"]?["tags"]?["description"] == "at most 8 items")
        #expect(sent["properties"]?["tags"]?["items"]?["description"] == "matching the pattern ^[a-z]+$")
        #expect(sent["properties"]?["pattern"]?["description"] == "at least 1 character", "a property's name is kept")
        #expect(sent["required"] == ["expression"] && sent["additionalProperties"] == false)
        // Members named by a pattern: said in words, and the object left open (else a grammar allows only `{}`).
        let mapped = ModelSchema.forModel(
            try JSONValue(
                parsing: #"{"type": "object", "patternProperties": {"^x_": {"type": "string", "maxLength": 9}},"#
                    + #" "additionalProperties": false, "items": [{"type": "string", "maxLength": 3}]}"#))
        #expect(mapped["additionalProperties"] == nil && mapped["description"] == "members whose names match ^x_")
        #expect(!mapped.jsonText.contains("maxLength"), "\(mapped.jsonText)")
        // A stranger's schema nested past 64 levels is sent as it is below that depth, not walked further.
        var deep: JSONValue = ["type": "string", "maxLength": 5]
        for _ in 0..<300 { deep = ["type": "object", "properties": ["x": deep]] }
        let walked = ModelSchema.forModel(deep)
        #expect(walked.jsonText.contains("maxLength"), "the part below 64 levels is left as it was")
        #expect(walked["properties"]?["x"]?["type"] == "object")
        // What the model is sent with every request.
        let body = OpenAIProvider.body(
            ModelRequest(
                messages: [], tools: [ToolDefinition(name: "calculator", description: "", parameters: schema)]),
            model: "m")
        #expect(!body.jsonText.contains("maxLength"))
    }
}
