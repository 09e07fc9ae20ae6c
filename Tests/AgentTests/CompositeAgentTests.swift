import Foundation
import SkillHost
import Synchronization
import TestSupport
import Testing

@testable import Agent
@testable import SkillJSON

/// The agent sees a composite skill as one tool: offered with its description and schema, asked about once with
/// its plan when a step is destructive, and undone as a whole.
struct CompositeAgentTests {
    @Test func theModelCallsACompositeLikeAnyOtherSkill() async throws {
        let registry = try agentRegistry()
        let file = Paths.temporaryDirectory("agent-composite") + "/change_twice.skill.json"
        try """
        {"id": "change_twice", "description": "Changes two things, then wipes the notes.",
         "input_schema": {"type": "object", "properties": {"label": {"type": "string"}}, "required": ["label"]},
         "steps": [{"call": "undoable", "with": {"label": "${input.label}"}, "as": "first"},
                   {"call": "undoable"}, {"call": "wipe_notes"},
                   {"result": {"first": "${first}", "label": "${input.label}"}}]}
        """.write(toFile: file, atomically: true, encoding: .utf8)
        _ = try registry.load(file: file).get()

        let asked = Mutex<[ConfirmationRequest]>([])
        let provider = ScriptedProvider([.calls([("change_twice", #"{"label": "x"}"#)]), .text("Done.")])
        let session = AgentSession(
            skills: registry, provider: provider, configuration: AgentConfiguration(),
            confirm: { request in
                asked.withLock { $0.append(request) }
                return .allowOnce
            })
        let events = await collect(session.send("change it twice"))
        #expect(events.last == .finished(.answered))

        let offered = try #require(provider.requests.first?.tools.first { $0.name == "change_twice" })
        #expect(offered.description == "Changes two things, then wipes the notes.")
        // One question for the whole plan.
        let requests = asked.withLock { $0 }
        #expect(requests.map(\.skill.id) == ["change_twice"])
        guard let plan = requests.first?.skill.kind.compositePlan else {
            Issue.record("the request does not carry the plan")
            return
        }
        #expect(
            plan.lines == [
                "1. undoable(label: ${input.label}) → first", "2. undoable()", "3. wipe_notes()",
                #"4. result: {"first":"${first}","label":"${input.label}"}"#,
            ])
        let result = session.conversation.messages.first { $0.role == .tool }
        #expect(result?.content == #"{"first":{"changed":true},"label":"x"}"#)
        // wipe_notes registered no undo: the composite has none.
        #expect(session.takeUndo() == nil)
    }
}
