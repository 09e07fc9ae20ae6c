import Synchronization

/// One deadline for every wait that can outlast its caller's patience — a plugin call, an external tool, an MCP
/// server's answer — on the host's clock (`HostClock`: tests move it by hand, a busy machine does not fire it
/// early), and one wording for it.
public enum Deadline: Sendable {
    /// What a person reads when `subject` ran out of time: "calculator timed out after 2 s".
    public static func timedOut(_ subject: String, after limit: Duration) -> String {
        "\(subject) timed out after \(humanDuration(limit))"
    }
}

extension HostClock {
    /// The value of `work`, or of `expired` when `limit` passes on this clock first; the loser is cancelled.
    ///
    /// - Important: the race returns once `work` has ended too, so `work` must end when its task is cancelled — or
    ///   `expired` must make it end (a wait on a continuation that only an answer resumes: resume it there).
    public func race<T: Sendable>(
        _ limit: Duration, _ work: @escaping @Sendable () async -> T, expired: @escaping @Sendable () -> T
    ) async -> T {
        await withTaskGroup(of: T?.self) { group in
            group.addTask { await work() }
            group.addTask { await self.sleep(for: limit) ? expired() : nil }
            var first: T?
            for await result in group {
                if let result {
                    first = result
                    break
                }
            }
            group.cancelAll()
            // Both ended without a value only if `work` did, which it cannot (T is its own): the expiry stands in.
            return first ?? expired()
        }
    }

    /// Waits `duration` as this clock counts it: true when it passed, false when the task was cancelled first.
    public func sleep(for duration: Duration) async -> Bool {
        let sleeper = Sleeper()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                guard sleeper.start(continuation) else { return }
                sleeper.arm(schedule(after: duration) { sleeper.finish(true) })
            }
        } onCancel: {
            sleeper.finish(false)
        }
    }
}

/// One `sleep(for:)`: its continuation, resumed once, by the timer or by cancellation, and its timer.
private final class Sleeper: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Bool, Never>?
        var timer: ScheduledTimer?
        /// Set once: by the timer (true) or by cancellation (false), possibly before the continuation exists.
        var finished: Bool?
    }
    private let state = Mutex(State())

    /// Keeps the continuation; false (and resumed at once) when the sleep already ended.
    func start(_ continuation: CheckedContinuation<Bool, Never>) -> Bool {
        let ended: Bool? = state.withLock { state in
            if let finished = state.finished { return finished }
            state.continuation = continuation
            return nil
        }
        if let ended { continuation.resume(returning: ended) }
        return ended == nil
    }

    /// Keeps the timer so that cancelling can stop it (or stops it now when the sleep already ended). Called
    /// outside the lock: a clock may run a timer of no delay within `schedule`.
    func arm(_ timer: ScheduledTimer) {
        let ended = state.withLock { state in
            if state.finished == nil { state.timer = timer }
            return state.finished != nil
        }
        if ended { timer.cancel() }
    }

    func finish(_ passed: Bool) {
        let (continuation, timer): (CheckedContinuation<Bool, Never>?, ScheduledTimer?) = state.withLock { state in
            guard state.finished == nil else { return (nil, nil) }
            state.finished = passed
            defer { (state.continuation, state.timer) = (nil, nil) }
            return (state.continuation, state.timer)
        }
        timer?.cancel()
        continuation?.resume(returning: passed)
    }
}
