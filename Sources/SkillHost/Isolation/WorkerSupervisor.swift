/// The workers of one process-mode plugin over time, as a pure value: which exits are crashes, when a worker may be
/// started again, and when the plugin is failing. `IsolatedPlugin` keeps it under its lock and carries out what it
/// answers; every method takes the current instant, so tests drive time directly.
///
/// Rules: a worker that crashed once restarts at once; after two crashes in a row the next start waits 50 ms,
/// doubling up to `maximumBackoff`; `maximumCrashes` crashes within `crashWindow` make the plugin failing (calls are
/// refused with a sentence until its file is replaced). A call that succeeds resets the run of consecutive crashes
/// (not the window). Only a worker that described its plugin can crash: one that failed while starting is counted by
/// its starter. An exit the host asked for, or a kill for a call that did not stop after its cancel, is not a crash.
struct WorkerSupervisor: Sendable {
    /// What a call that finds no live worker does.
    enum Start: Equatable, Sendable {
        case now
        /// Wait this long first (a worker that keeps crashing is not restarted in a tight loop).
        case after(Duration)
        /// The plugin takes no calls: the sentence.
        case refused(String)
    }

    /// What the host says about a worker's exit.
    struct ExitNotice: Equatable, Sendable {
        let level: LogRecord.Level
        let message: String
    }

    private(set) var history: CrashHistory
    /// Set when the plugin is failing: the sentence calls get.
    private(set) var failing: String?
    private(set) var stopped = false
    /// Workers that started and described their plugin and have not ended yet: their exit is a crash to count.
    private var established: Set<Int32> = []
    /// The plugin's name, for sentences (the file name until the first worker described it).
    var plugin: String

    init(plugin: String, maximumCrashes: Int, crashWindow: Duration, maximumBackoff: Duration) {
        self.plugin = plugin
        history = CrashHistory(
            maximumCrashes: maximumCrashes, crashWindow: crashWindow, maximumBackoff: maximumBackoff)
    }

    /// Worker `pid` described its plugin: from now on its exit may be a crash.
    mutating func established(_ pid: Int32) { established.insert(pid) }

    /// Whether a worker may start at `now`.
    func start(at now: ContinuousClock.Instant) -> Start {
        if stopped { return .refused("plugin \"\(plugin)\" was unloaded") }
        if let failing { return .refused(failing) }
        return history.backoff(at: now).map { .after($0) } ?? .now
    }

    /// A call the worker answered: the next crash restarts at once again.
    mutating func callSucceeded() { history.recordSuccess() }

    /// A worker could not be started again (`reason`, a sentence): counted as a crash. Returns the failing sentence
    /// when this made the plugin failing.
    mutating func startFailed(_ reason: String, at now: ContinuousClock.Instant) -> String? {
        recordCrash(reason, at: now)
    }

    /// Worker `pid` ended: what to log, and the failing sentence when this crash made the plugin failing. Nothing
    /// for a worker that never described its plugin, one the host stopped, or an exit while the plugin is stopped.
    mutating func exited(
        pid: Int32, reason: String, requested: Bool, killedForStuckCall: Bool, hadCalls: Bool,
        at now: ContinuousClock.Instant
    ) -> (notice: ExitNotice?, failing: String?) {
        guard established.remove(pid) != nil, !stopped, !requested else { return (nil, nil) }
        // A kill for a call that did not stop is the host's doing: it neither counts towards "failing" nor delays
        // the next start.
        let failing = killedForStuckCall ? nil : recordCrash(reason, at: now)
        // Callers already got the reason; a crash outside any call (a plugin's own thread) is news.
        let notice = ExitNotice(
            level: hadCalls ? .info : .warning, message: "\(reason); the worker is restarted on the next call")
        return (notice, failing)
    }

    /// The plugin is unloaded: no worker starts again and no exit counts.
    mutating func stop() { stopped = true }

    private mutating func recordCrash(_ reason: String, at now: ContinuousClock.Instant) -> String? {
        guard let count = history.record(at: now), failing == nil else { return nil }
        failing =
            "plugin \"\(plugin)\" is failing: its worker crashed \(count) times within "
            + "\(humanDuration(history.crashWindow)) (last: \(reason)); fix the plugin and replace its file to load it "
            + "again"
        return failing
    }
}

/// The crash record a `WorkerSupervisor` keeps: recent crashes within the window, and the run of consecutive ones
/// that sets the backoff.
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
