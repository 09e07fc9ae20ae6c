/// File events waiting out their quiet period, as a pure value. Every method takes the current instant, so tests
/// drive time directly.
///
/// Leading edge: a file's first event is due at once (a plugin renamed into place loads without waiting). A burst
/// is coalesced: an event for a file that was delivered or recorded within the quiet period replaces what waits
/// for it and is due when the file has been quiet for the whole period — one load for many writes.
struct Debounce: Sendable {
    let quietPeriod: Duration
    private var pending: [String: (event: WatchEvent, due: ContinuousClock.Instant)] = [:]
    /// When each recently delivered file was delivered; older than the quiet period is forgotten.
    private var delivered: [String: ContinuousClock.Instant] = [:]

    init(quietPeriod: Duration) { self.quietPeriod = quietPeriod }

    var isEmpty: Bool { pending.isEmpty }

    /// Records `event` for `key` at `now`.
    mutating func record(_ event: WatchEvent, key: String, at now: ContinuousClock.Instant) {
        let inBurst = pending[key] != nil || delivered[key].map { now - $0 < quietPeriod } ?? false
        pending[key] = (event, inBurst ? now + quietPeriod : now)
    }

    /// Removes and returns every event whose time has come at `now` — rescans first, then removals (so a rename
    /// within a folder frees the plugin's name before the new file claims it), then changes, each group in key
    /// order — and how long until the next one is due (nil when none waits).
    mutating func takeDue(at now: ContinuousClock.Instant) -> (events: [WatchEvent], next: Duration?) {
        delivered = delivered.filter { now - $0.value < quietPeriod }
        let ready = pending.filter { $0.value.due <= now }
        for key in ready.keys {
            pending[key] = nil
            delivered[key] = now
        }
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
