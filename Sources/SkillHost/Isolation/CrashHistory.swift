/// The crash record of one process-mode plugin, as a pure value: when to restart its worker and when to give up.
///
/// A worker that crashed once restarts at once; after two crashes in a row the next start waits 50 ms, doubling
/// up to `maximumBackoff`; `maximumCrashes` crashes within `crashWindow` make the plugin failing. A call that
/// succeeds resets the run of consecutive crashes (not the window). Every method takes the current instant, so
/// tests drive time directly.
struct CrashHistory: Sendable {
    let maximumCrashes: Int
    let crashWindow: Duration
    let maximumBackoff: Duration

    /// When recent crashes happened (oldest first), within the window.
    private(set) var crashes: [ContinuousClock.Instant] = []
    /// Crashes since the last call that succeeded.
    private(set) var consecutive = 0
    private var lastCrash: ContinuousClock.Instant?

    init(maximumCrashes: Int, crashWindow: Duration, maximumBackoff: Duration) {
        self.maximumCrashes = maximumCrashes
        self.crashWindow = crashWindow
        self.maximumBackoff = maximumBackoff
    }

    /// Records a crash at `now`; returns the number of crashes within the window when that reaches the limit (the
    /// plugin is failing from now on), else nil.
    mutating func record(at now: ContinuousClock.Instant) -> Int? {
        crashes = crashes.filter { now - $0 < crashWindow } + [now]
        consecutive += 1
        lastCrash = now
        return crashes.count >= maximumCrashes ? crashes.count : nil
    }

    /// A call succeeded: the next crash restarts at once again.
    mutating func recordSuccess() { consecutive = 0 }

    /// How long to wait at `now` before starting a worker again (nil: start at once).
    func backoff(at now: ContinuousClock.Instant) -> Duration? {
        guard consecutive >= 2, let lastCrash else { return nil }
        let exponent = min(consecutive - 2, 16)
        let wait = min(.milliseconds(50) * (1 << exponent), maximumBackoff)
        let remaining = lastCrash + wait - now
        return remaining > .zero ? remaining : nil
    }
}
