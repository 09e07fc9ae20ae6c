import JSONRPC

/// One worker process's life as the host sees it, as a pure value: its phase, the calls doomed to a kill, and how
/// its end is to be told. `WorkerProcess` keeps it under its lock beside the requests in flight and carries out
/// what it answers.
///
/// Phases move only forward: starting → running → stopping → exited, or from any live phase to killed → exited.
struct WorkerLifecycle: Sendable {
    enum Phase: Sendable {
        /// Spawned; loading its plugin (until it answered `describe`).
        case starting
        case running
        /// The host asked it to exit (its input is closed; it is `deinit`ing the plugin).
        case stopping
        /// The host killed its group; `reason` is what calls still pending are told. `forStuckCall`: because a call
        /// did not stop after its cancel — not a crash of the plugin's.
        case killed(reason: String, forStuckCall: Bool)
        /// Reaped. `reason` answers every later request; `termination` is set when it ended by itself.
        case exited(reason: String, termination: WorkerTermination?)
    }

    private(set) var phase = Phase.starting
    /// Calls that were cancelled or timed out and are still running: the worker is killed if one is still there
    /// when its grace ends. A worker with one takes no new calls until it returned or the kill happened.
    private(set) var doomed: Set<JSONRPCID> = []
    /// The protocol pipe closed while the worker was still running (the host then stopped it).
    private(set) var channelClosed = false

    /// Why requests are refused now; nil while the process takes them.
    var refusal: String? {
        switch phase {
        case .starting, .running, .stopping: return nil
        case .killed(let reason, _), .exited(let reason, _): return reason
        }
    }

    /// Whether a kill is scheduled for a call that did not stop yet.
    var hasKillPending: Bool { !doomed.isEmpty }

    /// How the process ended by itself, once it has (nil while it runs, or when the host killed it).
    var termination: WorkerTermination? {
        if case .exited(_, let termination) = phase { return termination }
        return nil
    }

    /// The worker described its plugin.
    mutating func described() {
        if case .starting = phase { phase = .running }
    }

    /// Call `id` was cancelled or timed out while in flight: it is killed with its worker unless it returns first.
    mutating func doom(_ id: JSONRPCID) { doomed.insert(id) }

    /// Call `id` returned, or its grace ended: it no longer holds new calls back.
    mutating func resolve(_ id: JSONRPCID) {
        // Every answer passes here: the common case, no call doomed, costs no hashing.
        if !doomed.isEmpty { doomed.remove(id) }
    }

    /// The host kills the process for `reason`. False when it is already being killed or gone (nothing to do).
    mutating func kill(because reason: String, forStuckCall: Bool) -> Bool {
        switch phase {
        case .killed, .exited: return false
        case .starting, .running, .stopping:
            phase = .killed(reason: reason, forStuckCall: forStuckCall)
            return true
        }
    }

    /// The host asks the process to exit. False when it is gone already (nothing to close).
    mutating func stop() -> Bool {
        switch phase {
        case .starting, .running:
            phase = .stopping
            return true
        case .stopping, .killed: return true
        case .exited: return false
        }
    }

    /// The protocol pipe closed and the process did not end within a second.
    mutating func channelClosedWhileRunning() {
        switch phase {
        case .starting, .running: channelClosed = true
        case .stopping, .killed, .exited: break
        }
    }

    /// How an end is told: the sentence, and what kind of end it was.
    struct Ending: Sendable, Equatable {
        let reason: String
        /// The host asked it to stop.
        let requested: Bool
        /// The host killed it.
        let killed: Bool
        /// … because a call did not stop in time (not a crash).
        let forStuckCall: Bool
    }

    /// The process was reaped. `ended` is how it ended by itself; `explain` words a crash (used only when the host
    /// neither killed it nor lost its channel).
    mutating func reaped(
        _ ended: WorkerTermination, closedChannelReason: String, explain: (WorkerTermination) -> String
    ) -> Ending {
        let ending: Ending
        var termination: WorkerTermination?
        switch phase {
        case .killed(let why, let stuck):
            ending = Ending(reason: why, requested: false, killed: true, forStuckCall: stuck)
        case .exited(let why, let earlier):
            termination = earlier
            ending = Ending(reason: why, requested: false, killed: false, forStuckCall: false)
        case .starting, .running, .stopping:
            termination = ended
            var requested = false
            if case .stopping = phase { requested = true }
            ending = Ending(
                reason: channelClosed ? closedChannelReason : explain(ended), requested: requested, killed: false,
                forStuckCall: false)
        }
        phase = .exited(reason: ending.reason, termination: termination)
        return ending
    }
}
