import Dispatch
import Foundation
import Synchronization

/// Time as the host's logic sees it: the current instant and one-shot timers.
///
/// Everything whose behaviour depends on time — call deadlines, the kill grace after a timeout, the restart backoff
/// and crash window of process-mode plugins, the hot-reload debounce — reads this instead of the system clock, so
/// tests can move time by hand (see `ManualClock` in the test support) and never depend on how busy the machine is.
/// `SystemClock` is the real one.
///
/// - Important: actions run on a thread that may block briefly (never the Swift cooperative pool); they must not
///   block for long, since timers share that thread.
public protocol HostClock: Sendable {
    /// The current instant.
    var now: ContinuousClock.Instant { get }

    /// Runs `action` once, `delay` from now (at once for a delay of zero or less), unless the returned timer is
    /// cancelled first.
    func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> ScheduledTimer
}

/// A timer scheduled on a `HostClock`; `cancel()` (from any thread) keeps its action from running if it has not
/// started yet.
public final class ScheduledTimer: Sendable {
    /// What cancelling means: the system clock's timers are named by their id (no closure allocated per timer —
    /// every call arms one).
    private enum Cancellation: Sendable {
        case action(@Sendable () -> Void)
        case timerThread(TimerThread, UInt64)
    }

    private let cancellation: Cancellation

    /// Wraps what cancelling means for the clock that made the timer.
    public init(cancel: @escaping @Sendable () -> Void) { cancellation = .action(cancel) }

    init(_ timers: TimerThread, id: UInt64) { cancellation = .timerThread(timers, id) }

    /// Keeps the action from running; harmless after it ran or when called twice.
    public func cancel() {
        switch cancellation {
        case .action(let action): action()
        case .timerThread(let timers, let id): timers.cancel(id)
        }
    }
}

/// The system's monotonic clock, its timers on the host's timer threads (`TimerThread`, one per CPU).
public struct SystemClock: HostClock {
    public init() {}

    public var now: ContinuousClock.Instant { .now }

    public func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> ScheduledTimer {
        let timers = TimerThread.local
        return ScheduledTimer(timers, id: timers.schedule(after: delay, action))
    }
}

extension HostClock {
    /// Blocks the calling thread for `duration` as this clock counts it, returning early (false) when `stop` turns
    /// true (checked every few milliseconds). True when the whole duration passed.
    ///
    /// - Important: blocks; call it only from a thread that may block (never the cooperative pool).
    func wait(for duration: Duration, unless stop: () -> Bool) -> Bool {
        guard duration > .zero else { return true }
        let passed = DispatchSemaphore(value: 0)
        let timer = schedule(after: duration) { passed.signal() }
        defer { timer.cancel() }
        while passed.wait(timeout: .now() + .milliseconds(5)) == .timedOut {
            if stop() { return false }
        }
        return true
    }
}

extension Duration {
    /// The duration as a Dispatch interval (nanosecond precision, clamped to a year).
    var dispatchInterval: DispatchTimeInterval {
        let components = self.components
        let nanoseconds =
            min(components.seconds, 365 * 24 * 3600) * 1_000_000_000 + components.attoseconds / 1_000_000_000
        return .nanoseconds(Int(max(0, nanoseconds)))
    }
}
