import Synchronization

/// Where a call's outcome meets the task awaiting it: the task first checks for it for a short while (no
/// suspension, no resumption through the executor), then suspends until it arrives.
final class Rendezvous: Sendable {
    private enum State {
        case empty
        case done(SkillOutcome)
        case waiting(CheckedContinuation<SkillOutcome, Never>)
        case taken
    }
    private let state = Mutex(State.empty)
    private let delivered = Atomic<Bool>(false)

    /// Hands the outcome over (the first one counts) and resumes the task if it suspended.
    func deliver(_ outcome: SkillOutcome) {
        let waiter = state.withLock { state -> CheckedContinuation<SkillOutcome, Never>? in
            switch state {
            case .empty:
                state = .done(outcome)
                return nil
            case .waiting(let continuation):
                state = .taken
                return continuation
            case .done, .taken: return nil
            }
        }
        delivered.store(true, ordering: .releasing)
        waiter?.resume(returning: outcome)
    }

    /// The outcome, if it arrives within `budget`.
    func spin(_ budget: Duration) -> SkillOutcome? {
        guard Spinning.until(budget, { delivered.load(ordering: .acquiring) }) else { return nil }
        return take()
    }

    private func take() -> SkillOutcome? {
        state.withLock { state in
            if case .done(let outcome) = state {
                state = .taken
                return outcome
            }
            return nil
        }
    }

    /// Suspends until the outcome arrives (at once when it is there).
    func wait() async -> SkillOutcome {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> SkillOutcome? in
                if case .done(let outcome) = state {
                    state = .taken
                    return outcome
                }
                state = .waiting(continuation)
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}
