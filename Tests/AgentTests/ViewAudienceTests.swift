import Agent
import Foundation
import SkillHost
import TestSupport
import Testing

/// Who may call a skill (ABI 1.4) as the agent keeps it.
struct ViewAudienceTests {
    /// A skill only its plugin's views may call is never offered to a model, and a model that names it anyway is
    /// told why it is not run.
    @Test func aModelIsNeverOfferedASkillForViews() async throws {
        let registry = try makeRegistry()
        defer { registry.shutdown() }
        _ = try registry.load(file: try Fixture.compileFile("views.c", into: Paths.temporaryDirectory("views-agent")))
            .get()
        let provider = ScriptedProvider([.calls([("board_refresh", "{}")]), .text("done")])
        let session = AgentSession(skills: registry, provider: provider, configuration: AgentConfiguration())
        var results: [String] = []
        for await event in session.send("refresh the board") {
            if case .toolCall(let call) = event, case .failed(let failure, _) = call.phase {
                results.append(failure.message)
            }
        }
        let offered = provider.requests.first?.tools.map(\.name) ?? []
        #expect(offered.contains("board_show") && offered.contains("board_model"))
        #expect(!offered.contains("board_refresh"))
        #expect(results == ["board_refresh is for plugin board's views only: a model cannot call it"], "\(results)")
    }
}
