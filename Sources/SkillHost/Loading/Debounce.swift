/// File events waiting out their quiet period, as a pure value: a later event for the same key replaces an earlier
/// one and restarts its quiet period. Every method takes the current instant, so tests drive time directly.
struct Debounce: Sendable {
    let quietPeriod: Duration
    private var pending: [String: (event: WatchEvent, due: ContinuousClock.Instant)] = [:]

    init(quietPeriod: Duration) { self.quietPeriod = quietPeriod }

    var isEmpty: Bool { pending.isEmpty }

    /// Records `event` for `key` at `now`.
    mutating func record(_ event: WatchEvent, key: String, at now: ContinuousClock.Instant) {
        pending[key] = (event, now + quietPeriod)
    }

    /// Removes and returns every event whose quiet period is over at `now` — rescans first, then removals (so a
    /// rename within a folder frees the plugin's name before the new file claims it), then changes, each group in
    /// key order — and how long until the next one is due (nil when none waits).
    mutating func takeDue(at now: ContinuousClock.Instant) -> (events: [WatchEvent], next: Duration?) {
        let ready = pending.filter { $0.value.due <= now }
        for key in ready.keys { pending[key] = nil }
        let events = ready.sorted { ($0.value.event.rank, $0.key) < ($1.value.event.rank, $1.key) }.map(\.value.event)
        return (events, pending.values.map(\.due).min().map { $0 - now })
    }
}

extension WatchEvent {
    /// Delivery order among events due at the same time.
    fileprivate var rank: Int {
        switch self {
        case .rescan: return 0
        case .removed: return 1
        case .changed: return 2
        }
    }
}
