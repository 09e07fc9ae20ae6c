import Agent
import Foundation
import SessionUI
import SkillHost
import SkillJSON
import Synchronization
import TestSupport
import Testing

/// The conversation's owner, as every front end uses it (issue #65): one stream per verb, a question sent only once
/// its answer is awaited and in the turn's order, each of several calls asked, a stop that answers no, undo and a
/// direct call through the same pipeline, one piece of work at a time.
struct ConversationOwnerTests {
    static func owner(_ responses: [ScriptedProvider.Response], policy: Policy = Policy()) throws -> ConversationOwner {
        ConversationOwner(
            nil,
            setup: ConversationSetup(
                skills: try agentRegistry(policy: policy), provider: ScriptedProvider(responses),
                configuration: AgentConfiguration(), person: true))
    }

    /// Follows `stream` to its end, answering each question with `answer` the moment it arrives.
    static func follow(
        _ stream: AsyncStream<ConversationEvent>, owner: ConversationOwner,
        answer: ConfirmationAnswer? = .allowOnce
    ) async -> [ConversationEvent] {
        var events: [ConversationEvent] = []
        for await event in stream {
            events.append(event)
            if case .asked(let request) = event, let answer {
                #expect(owner.confirm(id: request.callID, answer: answer), "asked: something waits for it already")
            }
        }
        return events
    }

    static func names(_ events: [ConversationEvent]) -> [String] {
        events.compactMap { event in
            switch event {
            case .agent(.toolCall(let call)):
                switch call.phase {
                case .started: return "started \(call.id)"
                case .finished: return "finished \(call.id)"
                case .failed(let failure, _): return "failed \(call.id): \(failure.message)"
                case .progress: return nil
                }
            case .asked(let request): return "asked \(request.callID)"
            case .settled(let id): return "settled \(id)"
            case .agent(.finished(let reason)): return "finished: \(reason.name)"
            default: return nil
            }
        }
    }

    @Test func aQuestionGoesOutOnlyOnceItsAnswerIsAwaitedInTheTurnsOrder() async throws {
        let owner = try Self.owner([.calls([("wipe_notes", "{}")]), .text("Wiped.")])
        #expect(!owner.confirm(id: "call_1", answer: .allowOnce), "nothing asked yet: the answer is refused")
        let events = await Self.follow(try owner.send("wipe my notes"), owner: owner)
        // Confirmed before it starts: its card follows the answer.
        #expect(
            Self.names(events) == [
                "asked call_1", "settled call_1", "started call_1", "finished call_1", "finished: answered",
            ])
        #expect(!owner.confirm(id: "call_1", answer: .deny), "answered once")
        #expect(!owner.isBusy, "free again before the stream ended")
    }

    @Test func aStopAnswersNoToWhatIsOpenAndToWhatIsAskedAfterIt() async throws {
        let owner = try Self.owner([.calls([("wipe_notes", "{}")]), .text("(after)")])
        var events: [ConversationEvent] = []
        for await event in try owner.send("wipe my notes") {
            events.append(event)
            if case .asked = event { owner.stop() }
        }
        let names = Self.names(events)
        #expect(names.contains("settled call_1"), "the open question is withdrawn: \(names)")
        #expect(names.last == "finished: cancelled", "\(names)")
        #expect(!names.contains("finished call_1"), "the stopped call did not run: \(names)")
        #expect(!owner.confirm(id: "call_1", answer: .allowOnce))
    }

    @Test func eachOfSeveralCallsIsAskedAndAnswered() async throws {
        // Read-only calls that run together; a rule asks about each, one after another in the model's order.
        let owner = try Self.owner(
            [.calls([("echo", #"{"n":1}"#), ("echo", #"{"n":2}"#)]), .text("Both echoed.")],
            policy: Policy(rules: [PolicyRule("echo", .ask)]))
        let events = await Self.follow(try owner.send("echo twice"), owner: owner)
        let names = Self.names(events)
        #expect(names.filter { $0.hasPrefix("asked") } == ["asked call_1", "asked call_2"], "\(names)")
        #expect(names.contains("finished call_1") && names.contains("finished call_2"), "\(names)")
        #expect(names.last == "finished: answered")
    }

    @Test func oneThingRunsAtATime() async throws {
        let owner = try Self.owner([.calls([("wipe_notes", "{}")]), .text("Wiped.")])
        let stream = try owner.send("wipe my notes")
        #expect(throws: ConversationOwner.Busy.running) { _ = try owner.send("and again") }
        #expect(throws: ConversationOwner.Busy.running) { _ = try owner.undo() }
        _ = await Self.follow(stream, owner: owner)
        #expect(try owner.undo() == nil, "the wipe registered no way back: nothing to undo")
    }

    @Test func aDirectCallIsUndoneThroughTheSamePipeline() async throws {
        let owner = try Self.owner([])
        let add = SkillInvocation(skill: "notes_add", argumentText: #"{"title":"milk"}"#)
        let events = await Self.follow(try owner.call(add, id: "call"), owner: owner)
        #expect(Self.names(events) == ["asked call", "settled call"], "the person is asked about a mutating call")
        guard case .called(let outcome) = events.last else {
            Issue.record("the call's outcome comes last: \(events)")
            return
        }
        #expect(outcome.status == .ok)
        #expect(owner.agent.canUndo)
        guard let undo = try owner.undo() else {
            Issue.record("the added note has a way back")
            return
        }
        let undone = await Self.follow(undo, owner: owner)
        let steps = undone.compactMap { event -> String? in
            switch event {
            case .undoing(let shown, let index, let count): return "undoing \(shown) \(index + 1)/\(count)"
            case .undid(.undone, let index, _): return "undone \(index + 1)"
            case .undid(let step, _, _): return "\(step)"
            default: return nil
            }
        }
        #expect(steps.count == 2 && steps.first?.hasPrefix("undoing notes_add: notes_delete(") == true, "\(steps)")
        #expect(steps.last == "undone 1")
        #expect(!owner.agent.canUndo)
        #expect(owner.agent.conversation.messages.last?.content.hasPrefix("[undo] notes_add: notes_delete(") == true)
    }

    @Test func aRetiredConversationStartsNothingAndAStalePlanIsRefused() async throws {
        let owner = try Self.owner([.text("One."), .text("Two.")])
        _ = await Self.follow(try owner.send("first"), owner: owner)
        let plan = try #require(owner.rewindPlan(to: 1))
        _ = await Self.follow(try owner.send("second"), owner: owner)
        let stale = try #require(owner.rewindPlan(to: 2))
        _ = await Self.follow(try owner.send("third"), owner: owner)
        // Message 1's plan still names the same changes (none): it is the same plan.
        #expect(plan.sameAs(try #require(owner.rewindPlan(to: 1))))
        #expect(stale.sameAs(try #require(owner.rewindPlan(to: 2))))
        #expect(owner.retire())
        #expect(throws: ConversationOwner.Busy.retired) { _ = try owner.send("fourth") }
        #expect(throws: ConversationOwner.Busy.retired) { _ = try owner.rewind(plan) }
    }

    @Test func aRewindCarriesOutOnlyThePlanThatWasShown() async throws {
        let owner = try Self.owner([
            .calls([("notes_add", #"{"title":"milk"}"#)]), .text("Added."),
            .calls([("notes_add", #"{"title":"eggs"}"#)]), .text("Added too."),
        ])
        _ = await Self.follow(try owner.send("add milk"), owner: owner)
        let shown = try #require(owner.rewindPlan(to: 1))
        #expect(shown.undoable.count == 1)
        // Another change after the plan was shown (another tab's turn): the plan no longer says what going back does.
        _ = await Self.follow(try owner.send("add eggs"), owner: owner)
        #expect(owner.rewindPlan(to: 1)?.sameAs(shown) == false)
        #expect(throws: ConversationOwner.Busy.changed) { _ = try owner.rewind(shown) }
        let now = try #require(owner.rewindPlan(to: 1))
        #expect(now.undoable.count == 2)
        let events = await Self.follow(try owner.rewind(now), owner: owner)
        guard case .rewindEnded(nil) = events.last else {
            Issue.record("rewound: \(events)")
            return
        }
        #expect(owner.agent.userMessages.isEmpty)
    }

    /// Another model for the same conversation keeps the way back of the last change, and what was used.
    @Test func anotherModelKeepsTheWayBackAndTheUse() async throws {
        let owner = try Self.owner([])
        let add = SkillInvocation(skill: "notes_add", argumentText: #"{"title":"milk"}"#)
        _ = await Self.follow(try owner.call(add, id: "call"), owner: owner)
        let used = owner.agent.use.session.toolCalls
        try owner.switchProvider(ScriptedProvider([]))
        #expect(owner.agent.provider.displayName == "scripted")
        #expect(owner.agent.canUndo, "the added note can still be undone")
        #expect(owner.agent.use.session.toolCalls == used)
        guard let undo = try owner.undo() else {
            Issue.record("nothing to undo after the switch")
            return
        }
        let events = await Self.follow(undo, owner: owner)
        guard case .undid(.undone, _, _) = events.last(where: { if case .undid = $0 { true } else { false } }) else {
            Issue.record("not undone: \(events)")
            return
        }
    }
}
