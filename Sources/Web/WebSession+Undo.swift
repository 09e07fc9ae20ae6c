import Agent
import Foundation
import SessionUI
import SkillHost
import SkillJSON

extension WebSession {
    /// Reverses the last change a mutating skill made, as the shell's `/undo` does: its reversing calls (a
    /// composite's, last step first) run in order through the call pipeline — each a call like any other, the tabs
    /// asked where the policy asks — each shown as a card, stopping at a failure or a no. The conversation records what was
    /// undone, so the model sees it. Refused while a turn runs, or when there is nothing to undo.
    package func undo() throws(WebRefusal) {
        let agent = state.withLock { state -> AgentSession? in
            guard !state.running, let agent = state.agent else { return nil }
            state.running = true
            state.stopped = false
            return agent
        }
        guard let agent else {
            throw WebRefusal(status: 409, sentence: "a turn is running; wait for its answer or stop it first")
        }
        guard let run = UndoRun(agent) else {
            state.withLock { $0.running = false }
            throw WebRefusal(status: 409, sentence: "nothing to undo: no mutating call registered a way back")
        }
        publish(WebEvent.running(true))
        let session = conversationID
        Task { [self] in
            for (index, call) in run.calls.enumerated() {
                let id = "undo-\(UInt32.random(in: .min ... .max))-\(index)"
                publish(WebEvent.notice("↶ undoing \(run.shown(index))"))
                publish(card(id, call.skillID, .started(arguments: .value(call.arguments))))
                let outcome = await invoke(
                    run.invocation(index, session: session, confirmer: confirmer(id, undoing: run.skill)))
                switch outcome.ending {
                case .success(let value):
                    publish(card(id, call.skillID, .finished(result: value, duration: outcome.duration)))
                case .failure(let failure):
                    publish(card(id, call.skillID, .failed(failure, duration: outcome.duration)))
                }
                if run.settle(index, outcome) == .declined { publish(WebEvent.notice("↶ not undone: you said no")) }
                if outcome.failure != nil { break }
            }
            state.withLock { $0.running = false }
            publish(WebEvent.running(false))
            publish(WebEvent.undoable(agent.canUndo))
        }
    }

    /// The tabs, asked about the reversing call `id` as about a turn's call (the question goes out on the stream),
    /// told it undoes `undoing`.
    private func confirmer(_ id: String, undoing: String) -> Confirmer {
        .person { [self] skill, arguments in
            await ask(ConfirmationRequest(callID: id, skill: skill, arguments: arguments, undoing: undoing))
        }
    }

    /// Runs a call through the pipeline (lookup, validation, policy) as any call is.
    private func invoke(_ invocation: SkillInvocation) async -> SkillOutcome {
        switch await skills.prepareCall(invocation) {
        case .success(let ready): return await ready.run()
        case .failure(let refusal): return SkillOutcome(.failure(refusal.failure))
        }
    }

    private func card(_ id: String, _ skill: String, _ phase: ToolCallEvent.Phase) -> JSONValue {
        WebEvent.encode(.toolCall(ToolCallEvent(id: id, skill: skill, phase: phase)))
    }
}
