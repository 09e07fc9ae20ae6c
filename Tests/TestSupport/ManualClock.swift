import SkillHost
import Synchronization

/// A `HostClock` that stands still until a test moves it: `advance(by:)` runs every timer that falls due, in due
/// order, on the calling thread, before it returns — so a test sees a deadline's effect at once and never depends on
/// how busy the machine is.
package final class ManualClock: HostClock {
    private struct Timer {
        let due: ContinuousClock.Instant
        let action: @Sendable () -> Void
    }

    private struct State {
        var offset: Duration = .zero
        var timers: [Int: Timer] = [:]
        var nextID = 0
    }

    private let base = ContinuousClock.now
    private let state = Mutex(State())

    package init() {}

    package var now: ContinuousClock.Instant { base + state.withLock { $0.offset } }

    /// Timers scheduled and neither run nor cancelled yet.
    package var pendingTimers: Int { state.withLock { $0.timers.count } }

    package func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> ScheduledTimer {
        let id = state.withLock { state -> Int in
            defer { state.nextID += 1 }
            state.timers[state.nextID] = Timer(due: base + state.offset + max(delay, .zero), action: action)
            return state.nextID
        }
        return ScheduledTimer { [weak self] in self?.state.withLock { _ = $0.timers.removeValue(forKey: id) } }
    }

    /// Moves time forward by `duration` and runs the timers that fall due (a timer scheduled with no delay runs on
    /// the next call, even `advance(by: .zero)`).
    package func advance(by duration: Duration) {
        let target = state.withLock { state -> ContinuousClock.Instant in
            state.offset += duration
            return base + state.offset
        }
        while let next = state.withLock({ state -> Timer? in
            guard
                let (id, timer) = state.timers.filter({ $0.value.due <= target }).min(by: {
                    $0.value.due < $1.value.due
                })
            else { return nil }
            state.timers[id] = nil
            return timer
        }) {
            next.action()
        }
    }
}
