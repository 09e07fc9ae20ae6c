import Agent
import SkillHost
import SkillJSON

/// `/undo` as every front end runs it (the shell's `/undo`, the browser's Undo): the last change's reversing
/// calls — a composite's, last step first — each a call like any other, run in order. The front end runs each
/// `invocation` its own way (asking its person where the policy asks, showing it as it shows calls) and hands the
/// outcome to `settle`, which keeps the conversation's record of what was undone and the way back: a no, or a
/// failure before anything was undone, keeps it for another try. After `.declined` or `.failed` the run stops.
package struct UndoRun: Sendable {
    /// The skill whose change is undone.
    package let skill: String
    /// The reversing calls, in the order they run.
    package let calls: [UndoAction]
    private let undo: UndoAction
    private let agent: AgentSession

    /// What one reversing call's outcome means.
    package enum Step: Sendable, Equatable {
        case undone(JSONValue)
        /// The person said no to the first call: nothing changed, and the way back is kept.
        case declined
        case failed(String)
    }

    /// The way back of `agent`'s last change, taken from it; nil when there is none.
    package init?(_ agent: AgentSession) {
        guard let (skill, undo) = agent.takeUndo() else { return nil }
        self.skill = skill
        self.undo = undo
        self.agent = agent
        calls = undo.calls
    }

    /// What step `index` is, for people and for the conversation: `notes_add: notes_delete(id: 1)`.
    package func shown(_ index: Int) -> String {
        "\(skill): \(calls[index].skillID)(\(SessionViewModel.arguments(calls[index].arguments.jsonText)))"
    }

    /// Step `index` as a call of conversation `session`, asked about through `confirmer` where the policy asks.
    package func invocation(_ index: Int, session: String?, confirmer: Confirmer) -> SkillInvocation {
        var invocation = SkillInvocation(
            skill: calls[index].skillID, arguments: calls[index].arguments, confirmer: confirmer)
        invocation.session = session
        return invocation
    }

    /// Records what step `index` did in the conversation (the model sees what was undone, and what failed).
    package func settle(_ index: Int, _ outcome: SkillOutcome) -> Step {
        switch outcome.ending {
        case .success(let value):
            agent.recordUndone("\(shown(index)) → \(CardText.shorten(value.displayText, 200))")
            return .undone(value)
        case .failure(let failure):
            // Nothing undone yet: the way back is kept for another /undo.
            if index == 0 { agent.putBackUndo(undo, skill: skill) }
            if index == 0, failure.message == Refusal.declined(skill: calls[index].skillID).sentence(for: .embedder) {
                return .declined
            }
            agent.recordUndone("\(shown(index)) failed: \(failure.message)")
            return .failed(failure.message)
        }
    }
}
