/// How many log lines a plugin may send, as a pure value (a token bucket): `burst` at once, then `perSecond`.
/// Lines over the budget are dropped and counted; the next line let through after a drop says how many went.
/// Every method takes the current instant, so tests drive time directly.
struct LogThrottle: Sendable {
    let perSecond: Double
    let burst: Double
    private var tokens: Double
    private var last: ContinuousClock.Instant?
    private(set) var dropped = 0

    init(perSecond: Double = 200, burst: Double = 400) {
        self.perSecond = perSecond
        self.burst = burst
        tokens = burst
    }

    /// Whether a line may go out at `now`; when it may and lines were dropped before it, also how many (then the
    /// count starts again).
    mutating func admit(at now: ContinuousClock.Instant) -> (allowed: Bool, droppedBefore: Int) {
        if let last {
            let elapsed = now - last
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            tokens = min(burst, tokens + max(0, seconds) * perSecond)
        }
        last = now
        guard tokens >= 1 else {
            dropped += 1
            return (false, 0)
        }
        tokens -= 1
        defer { dropped = 0 }
        return (true, dropped)
    }
}
