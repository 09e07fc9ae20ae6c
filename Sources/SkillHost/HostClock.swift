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
    private let cancellation: @Sendable () -> Void

    /// Wraps what cancelling means for the clock that made the timer.
    public init(cancel: @escaping @Sendable () -> Void) { cancellation = cancel }

    /// Keeps the action from running; harmless after it ran or when called twice.
    public func cancel() { cancellation() }
}

/// The system's monotonic clock with Dispatch timers on a queue of the host's own.
public struct SystemClock: HostClock {
    private static let queue = DispatchQueue(label: "skillhost.timers", qos: .userInteractive)

    public init() {}

    public var now: ContinuousClock.Instant { .now }

    public func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> ScheduledTimer {
        let timer = DispatchTimer(after: delay, on: Self.queue, handler: action)
        return ScheduledTimer { timer.cancel() }
    }
}

/// A one-shot Dispatch timer that stays alive until it fired or was cancelled, whether or not anyone keeps the
/// `ScheduledTimer` (a fire-and-forget kill grace must still fire).
///
/// - Important: `@unchecked Sendable` is safe because Dispatch sources are thread-safe objects: `cancel()` may be
///   called from any thread, and the source is configured completely in `init` before it is shared.
private final class DispatchTimer: @unchecked Sendable {
    private let source: DispatchSourceTimer

    init(after duration: Duration, on queue: DispatchQueue, handler: @escaping @Sendable () -> Void) {
        source = DispatchSource.makeTimerSource(queue: queue)
        source.schedule(deadline: .now() + duration.dispatchInterval, leeway: .milliseconds(1))
        // The handler holds the timer (and so the source) until the source is cancelled, which releases the
        // handler: after it fired, or when the timer is cancelled first.
        source.setEventHandler { [self] in
            handler()
            source.cancel()
        }
        source.resume()
    }

    func cancel() { source.cancel() }
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
