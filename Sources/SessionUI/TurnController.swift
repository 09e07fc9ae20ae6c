import Agent

/// A conversation's work as an explicit state: whether a turn (or an undo, a rewind, a direct call) runs, whether it
/// waits for the person, and what each event (its end, a stop, a confirmation asked and answered) does. Pure: the
/// conversation's owner (`ConversationOwner`) keeps it under its lock and carries out the returned actions.
package struct TurnController {
    package enum TurnState: Equatable, CustomStringConvertible {
        /// Nothing runs.
        case idle
        /// The work runs.
        case running
        /// Confirmations are open (`questions` of them: read-only calls run together and may each be asked about);
        /// the turn waits for the answers.
        case asking
        /// The turn was stopped (Ctrl-C, Stop); the front end waits for its task to finish.
        case cancelling
        /// The turn ended, with this reason.
        case finished(FinishReason)

        package var description: String {
            switch self {
            case .idle: return "idle"
            case .running: return "running"
            case .asking: return "asking"
            case .cancelling: return "cancelling"
            case .finished(let reason): return "finished (\(reason))"
            }
        }
    }

    /// What a stop (Ctrl-C, the page's Stop) makes the owner do.
    package enum Interruption: Equatable {
        /// Cancel the turn's task and answer a pending confirmation with no.
        case cancelTurn
        /// Nothing more: the turn is already being cancelled or is over.
        case ignore
    }

    package private(set) var state = TurnState.idle
    /// How many confirmations are open.
    package private(set) var questions = 0

    package init() {}

    /// Whether nothing runs (any more).
    package var isOver: Bool {
        if case .finished = state { return true }
        return state == .idle
    }

    /// The reason the turn ended (cancelled when it never finished by itself).
    package var reason: FinishReason {
        if case .finished(let reason) = state { return reason }
        return .cancelled
    }

    package mutating func start() {
        switch state {
        case .idle, .finished:
            state = .running
            questions = 0
        case .running, .asking, .cancelling:
            preconditionFailure("a turn was started while another was \(state)")
        }
    }

    /// A confirmation is about to be asked (another may be open); false when the turn is being cancelled or is
    /// over (the answer is no).
    package mutating func beginAsking() -> Bool {
        switch state {
        case .running, .asking:
            state = .asking
            questions += 1
            return true
        case .cancelling, .finished, .idle: return false
        }
    }

    /// A confirmation was answered (or withdrawn).
    package mutating func endAsking() {
        questions = max(0, questions - 1)
        if state == .asking, questions == 0 { state = .running }
    }

    package mutating func interrupt() -> Interruption {
        switch state {
        case .running, .asking:
            state = .cancelling
            return .cancelTurn
        case .cancelling, .finished, .idle: return .ignore
        }
    }

    /// The turn's task returned.
    package mutating func finish(_ reason: FinishReason) {
        switch state {
        case .running, .asking, .cancelling: state = .finished(reason)
        case .idle, .finished: preconditionFailure("a turn finished that was \(state)")
        }
    }
}
