import Agent

/// The shell's side of a turn as an explicit state: what the shell's thread is waiting for, and what each event
/// (the turn's end, Ctrl-C, a confirmation asked and answered) does. Pure: the shell keeps it in its shared state
/// and carries out the returned actions.
package struct TurnController {
    package enum TurnState: Equatable, CustomStringConvertible {
        /// No turn: the prompt is waiting.
        case idle
        /// The turn's task runs; the thread waits for its end, Ctrl-C and confirmations.
        case running
        /// A confirmation is on screen; the turn's task waits for the answer.
        case asking
        /// Ctrl-C cancelled the turn; the thread waits for its task to finish.
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

    /// What Ctrl-C makes the shell do.
    package enum Interruption: Equatable {
        /// Cancel the turn's task and answer a pending confirmation with no.
        case cancelTurn
        /// Nothing more: the turn is already being cancelled or is over.
        case ignore
    }

    package private(set) var state = TurnState.idle

    package init() {}

    /// Whether the shell's thread can stop waiting.
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
        case .idle, .finished: state = .running
        case .running, .asking, .cancelling:
            preconditionFailure("a turn was started while another was \(state)")
        }
    }

    /// A confirmation is about to be asked; false when the turn is being cancelled (the answer is no).
    package mutating func beginAsking() -> Bool {
        switch state {
        case .running:
            state = .asking
            return true
        case .cancelling, .finished: return false
        case .idle, .asking: preconditionFailure("a confirmation was asked while the turn was \(state)")
        }
    }

    /// The person answered.
    package mutating func endAsking() {
        if state == .asking { state = .running }
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
