import Agent
import Foundation
import SkillHost
import SkillJSON
import Synchronization
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

    /// A view's call (MCP Apps' `tools/call` from a view) goes through the pipeline a model's does, and only to its
    /// own plugin's skills that let views call them; each refusal is one sentence, and each call counts against the
    /// budgets of skill calls.
    @Test func aViewCallsOnlyItsOwnPluginsSkillsForViews() async throws {
        let registry = try makeRegistry()
        defer { registry.shutdown() }
        _ = try registry.load(file: try Fixture.compileFile("views.c", into: Paths.temporaryDirectory("views-call")))
            .get()
        var configuration = AgentConfiguration()
        configuration.budgets.session.toolCalls = 4
        let session = AgentSession(
            skills: registry, provider: ScriptedProvider([]), configuration: configuration)
        func call(_ skill: String, from plugin: String) async -> (phases: [String], finished: [FinishReason]) {
            var phases: [String] = []
            var finished: [FinishReason] = []
            let id = "view-\(skill)-\(plugin)"
            for await event in session.callFromView(skill, arguments: [:], id: id, plugin: plugin) {
                switch event {
                case .toolCall(let call) where call.id == id:
                    switch call.phase {
                    case .started: phases.append("started")
                    case .finished: phases.append("finished")
                    case .failed(let failure, _): phases.append(failure.message)
                    case .progress: break
                    }
                case .finished(let reason): finished.append(reason)
                default: break
                }
            }
            return (phases, finished)
        }
        let refresh = await call("board_refresh", from: "board")
        #expect(refresh.phases == ["started", "finished"] && refresh.finished == [.answered], "\(refresh)")
        #expect(await call("board_show", from: "board").phases == ["started", "finished"])
        #expect(
            await call("board_model", from: "board").phases == [
                "started",
                "a view of board called board_model, which is for the model only: its plugin does not let views call it",
            ])
        #expect(
            await call("board_refresh", from: "notes").phases == [
                "started",
                "a view of notes called board_refresh, a skill of board: a view may call only its own plugin's skills",
            ])
        #expect(
            await call("nothing_here", from: "board").phases == [
                "started", "a view of board called nothing_here, which is no skill here",
            ])
        // Two calls ran, two more may; the fifth is refused before it runs.
        #expect(await call("board_refresh", from: "board").phases == ["started", "finished"])
        #expect(await call("board_refresh", from: "board").phases == ["started", "finished"])
        let spent = await call("board_refresh", from: "board").phases
        #expect(spent.last?.hasPrefix("not run: the session's budget of 4 skill calls is used up") == true, "\(spent)")
        #expect(session.conversation.messages.count == 1, "a view's calls leave the conversation's messages be")
    }

    /// Once the person said no to a view, it asks no more: its calls that need a yes are refused without a question
    /// (a view asking again and again would hold the page under its question); what needs none still runs.
    @Test func aViewThePersonRefusedAsksNoMore() async throws {
        let registry = try agentRegistry()
        defer { registry.shutdown() }
        let asked = Mutex(0)
        let session = AgentSession(
            skills: registry, provider: ScriptedProvider([]), configuration: AgentConfiguration(),
            confirm: { _ in
                asked.withLock { $0 += 1 }
                return .allowOnce
            })
        func ending(_ skill: String, _ arguments: JSONValue, mayAsk: Bool) async -> String {
            var ending = ""
            for await event in session.callFromView(
                skill, arguments: arguments, id: "v-\(skill)-\(mayAsk)", plugin: "notes", mayAsk: mayAsk)
            {
                if case .toolCall(let call) = event {
                    switch call.phase {
                    case .finished: ending = "finished"
                    case .failed(let failure, _): ending = failure.message
                    default: break
                    }
                }
            }
            return ending
        }
        #expect(await ending("notes_add", ["title": "milk"], mayAsk: true) == "finished")
        #expect(asked.withLock { $0 } == 1)
        #expect(await ending("notes_add", ["title": "eggs"], mayAsk: false) == "not run: the user declined this call")
        #expect(asked.withLock { $0 } == 1, "not asked again")
        #expect(await ending("notes_list", [:], mayAsk: false) == "finished")
    }
}
