import Agent
import Foundation
import History
import SkillHost
import SkillJSON

/// The verbs that change what was done rather than ask the model: undo, rewind, and a direct call.
extension ConversationOwner {
    /// Reverses the last change a mutating skill made: its reversing calls (a composite's, last step first) run in
    /// order, each through the call pipeline — asked about where the policy asks — each shown as a card
    /// (`.agent(.toolCall)`) between `.undoing` and `.undid`, stopping at a failure or a no. The conversation records
    /// what was undone, so the model sees it. Nil when there is nothing to undo.
    package func undo() throws(Busy) -> AsyncStream<ConversationEvent>? {
        let (stream, continuation) = AsyncStream<ConversationEvent>.makeStream()
        let agent = try startOperation(continuation)
        guard let run = UndoRun(agent) else {
            end(.answered, continuation)
            return nil
        }
        let session = id
        operation(continuation) { [self] in
            let count = run.calls.count
            for (index, call) in run.calls.enumerated() {
                let id = "undo-\(UInt32.random(in: .min ... .max))-\(index)"
                continuation.yield(.undoing(run.shown(index), index: index, count: count))
                continuation.yield(card(id, call.skillID, .started(arguments: .value(call.arguments))))
                let outcome = await skills.invoke(
                    run.invocation(index, session: session, confirmer: confirmer(id, undoing: run.skill)))
                switch outcome.ending {
                case .success(let value):
                    continuation.yield(card(id, call.skillID, .finished(result: value, duration: outcome.duration)))
                case .failure(let failure):
                    continuation.yield(card(id, call.skillID, .failed(failure, duration: outcome.duration)))
                }
                continuation.yield(.undid(run.settle(index, outcome), index: index, count: count))
                if outcome.failure != nil { break }
            }
        }
        return stream
    }

    /// Going back to before the person's message `number` (1 is the first): what it undoes and what it cannot.
    /// Nil when there is no such message. Show it, and `rewind(_:)` once the person agrees.
    package func rewindPlan(to number: Int) -> RewindPlan? { RewindPlan(agent, number: number) }

    /// Carries out `plan`: undoes its changes newest first (each through the call pipeline, asked about where the
    /// policy asks — or answered by `consent`, when showing the plan was the consent: `ask --rewind`), each said as
    /// `.rewound` and forgotten here and in the history, then forgets the conversation from the message on. An undo
    /// that fails stops it before anything is forgotten: `.rewindEnded` says why.
    package func rewind(_ plan: RewindPlan, consent: Confirmer? = nil) throws(Busy) -> AsyncStream<ConversationEvent> {
        let (stream, continuation) = AsyncStream<ConversationEvent>.makeStream()
        // Checked as the work starts: the plan carried out is the plan that was shown, or none.
        let agent = try startOperation(continuation) { agent throws(Busy) in
            guard let now = RewindPlan(agent, number: plan.number), now.sameAs(plan) else { throw .changed }
        }
        let confirmer = consent ?? confirmer("rewind-\(UInt32.random(in: .min ... .max))")
        let stored = stored
        operation(continuation) { [skills] in
            let failure = await plan.undo(with: skills, session: stored?.id, confirmer: confirmer) { change in
                continuation.yield(.rewound(change))
                if let stored { stored.journal.write(.changeUndone(change, session: stored.id)) }
            }
            if failure == nil {
                plan.apply(to: agent)
                if let stored { stored.journal.write(.truncate(from: plan.target.sequence, session: stored.id)) }
            }
            continuation.yield(.rewindEnded(failure: failure))
        }
        return stream
    }

    /// Runs one call the person typed (`/call`), through the pipeline as the model's are (asked about, as the
    /// call `id`, where the policy asks); `.called` ends the stream. `/undo` reverses it as it does a call of the
    /// model's.
    package func call(_ invocation: SkillInvocation, id: String) throws(Busy) -> AsyncStream<ConversationEvent> {
        let (stream, continuation) = AsyncStream<ConversationEvent>.makeStream()
        let agent = try startOperation(continuation)
        var invocation = invocation
        invocation.confirmer = confirmer(id)
        invocation.session = self.id
        let call = invocation
        operation(continuation) { [skills] in
            let outcome = await skills.invoke(call)
            if outcome.status == .ok, let undo = outcome.undo { agent.recordUndo(undo, skill: call.skill) }
            continuation.yield(.called(outcome))
        }
        return stream
    }

    /// Takes the conversation for work outside a turn; its agent session.
    private func startOperation(
        _ continuation: AsyncStream<ConversationEvent>.Continuation,
        check: (AgentSession) throws(Busy) -> Void = { _ in }
    ) throws(Busy) -> AgentSession {
        try state.withLock { state throws(Busy) in
            guard !state.retired else { throw .retired }
            guard state.turn.isOver else { throw .running }
            try check(state.agent)
            state.turn.start()
            state.work += 1
            state.events = continuation
            return state.agent
        }
    }

    /// Runs `work` as the operation `stop` cancels, and ends it.
    private func operation(
        _ continuation: AsyncStream<ConversationEvent>.Continuation, _ work: @escaping @Sendable () async -> Void
    ) {
        let started = state.withLock { $0.work }
        let task = Task { [self] in
            await work()
            end(.answered, continuation)
        }
        state.withLock { state in
            guard state.work == started, state.events != nil else { return }
            // A stop that came before the task was kept had nothing to cancel: cancel it now.
            if state.turn.state == .cancelling { task.cancel() }
            state.operation = task
        }
    }

    private func card(_ id: String, _ skill: String, _ phase: ToolCallEvent.Phase) -> ConversationEvent {
        .agent(.toolCall(ToolCallEvent(id: id, skill: skill, phase: phase)))
    }
}

/// What the history keeps of a turn as it streams: the calls and usage (`StoredConversation.record`), and the
/// answer written so far as a draft at most every `draftInterval`, so a killed host loses little of it.
struct TurnRecorder {
    static let draftInterval = Duration.milliseconds(250)

    let history: StoredConversation?
    /// The current step's answer text so far.
    private var answer = ""
    private var arguments: [String: String] = [:]
    private var lastDraft = ContinuousClock.now

    init(_ history: StoredConversation?) { self.history = history }

    mutating func record(_ event: AgentEvent) {
        guard let history else { return }
        switch event {
        case .thinking: answer = ""
        case .textDelta(let delta): answer += delta
        default: break
        }
        history.record(event, arguments: &arguments)
        if case .textDelta = event, ContinuousClock.now - lastDraft >= Self.draftInterval {
            lastDraft = .now
            history.draft(answer)
        }
    }

    /// The turn's messages are all recorded: no draft is left to come back as an unfinished answer.
    func finish() { history?.turnEnded() }
}
