import Foundation
import SkillHost
import TestSupport
import Testing

@testable import Agent
@testable import SkillJSON

/// The offline router against the bundled plugins: request → chosen skill and arguments.
struct OfflineRouterTests {
    static let tools: [ToolDefinition] = {
        let registry = try? makeRegistry()
        registry?.loadFolder(Paths.products) { $0.hasPrefix("libskill-") }
        return (registry?.skills ?? []).map {
            ToolDefinition(name: $0.id, description: $0.description, parameters: $0.inputSchema)
        }
    }()

    @Test(arguments: [
        ("what is (23+7)*2?", "calculator", #"{"expression":"(23+7)*2"}"#),
        ("calculate sqrt(16) + 2^3", "calculator", #"{"expression":"sqrt(16) + 2^3"}"#),
        ("convert 100 fahrenheit to celsius", "convert_temperature", #"{"value":100,"from":"f","to":"c"}"#),
        ("convert 5 km to miles", "convert_length", #"{"value":5,"from":"km","to":"mi"}"#),
        ("how many pounds is 3 kg", "convert_mass", #"{"value":3,"from":"kg","to":"lb"}"#),
        ("greatest common divisor of 12 and 18", "gcd", #"{"a":12,"b":18}"#),
        ("is 97 a prime number", "is_prime", #"{"n":97}"#),
        ("slugify \"Hello, World!\"", "slugify", #"{"text":"Hello, World!"}"#),
        ("what time is it in Asia/Tokyo", "clock_now", #"{"time_zone":"Asia/Tokyo"}"#),
        ("which day of the week was 1969-07-20", "clock_weekday", #"{"date":"1969-07-20"}"#),
        (
            "convert time 2026-11-30T15:00 from Europe/Paris to America/New_York", "clock_convert",
            #"{"time":"2026-11-30T15:00","from":"Europe/Paris","to":"America/New_York"}"#
        ),
        ("count the words in: the quick brown fox", "text_stats", #"{"text":"the quick brown fox"}"#),
        ("summarize in 2 sentences: One. Two. Three.", "text_summary", #"{"text":"One. Two. Three.","sentences":2}"#),
    ])
    func routes(request: String, skill: String, arguments: String) throws {
        let routed = try #require(OfflineRouter().route(request, tools: Self.tools))
        #expect(routed.name == skill)
        #expect(routed.arguments == (try JSONValue(parsing: arguments)), "got \(routed.arguments.jsonText)")
    }

    @Test func saysPlainlyWhenNothingMatches() async throws {
        let request = ModelRequest(
            messages: [Message(role: .user, content: "write me a poem about autumn")], tools: Self.tools)
        guard case .text(let answer)? = OfflineRouter().respond(to: request).first else {
            Issue.record("expected a text answer")
            return
        }
        #expect(answer.hasPrefix("[offline router] No skill matches “write me a poem about autumn”."))
    }

    @Test func answersWithTheResultLabelledOffline() async throws {
        let registry = try agentRegistry()
        let session = AgentSession(registry: registry, provider: OfflineRouter())
        let events = await collect(session.send("what is (23+7)*2"))
        #expect(events.last == .finished(.answered))
        #expect(session.conversation.messages.last?.content == "[offline router] calculator: 60")
        let failing = await collect(session.send("what is 1/0"))
        #expect(failing.last == .finished(.answered))
        #expect(
            session.conversation.messages.last?.content
                == "[offline router] calculator failed — error: division by zero")
    }
}
