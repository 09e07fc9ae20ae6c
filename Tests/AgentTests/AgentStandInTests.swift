import Foundation
import SkillHost
import TestSupport
import Testing

@testable import Agent
@testable import SkillJSON

/// The agent loop over stand-in skills: no plugin is compiled or loaded.
struct AgentStandInTests {
    @Test func aTurnRunsOnStandInSkills() async {
        let skills = StandInSkills([
            .init("lookup") { arguments in SkillOutcome.success(["found": arguments["q"] ?? .null]) },
            .init(
                "wipe", risk: .destructive, refusal: "not run: wipe is destructive and there is no one to confirm it"),
        ])
        let provider = ScriptedProvider([
            .calls([("lookup", #"{"q":"milk"}"#), ("wipe", "{}"), ("nosuch", "{}")]), .text("Found it."),
        ])
        let session = AgentSession(skills: skills, provider: provider)
        let events = await collect(session.send("find milk"))
        // The model answered, but a call it asked for was refused: the turn says so (ask exits 9 on it).
        #expect(events.last == .finished(.refused(skill: "wipe")))
        #expect(skills.calls.map(\.skill) == ["lookup"], "only the permitted call ran")
        #expect(
            session.conversation.messages.filter { $0.role == .tool }.map(\.content) == [
                #"{"found":"milk"}"#, "error: not run: wipe is destructive and there is no one to confirm it",
                #"error: unknown skill "nosuch"; available skills: lookup, wipe"#,
            ])
        // The model saw both stand-ins as tools.
        #expect(provider.requests.first?.tools.map(\.name).sorted() == ["lookup", "wipe"])
    }
}
