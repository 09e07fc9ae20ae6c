/// The invocation runner's bookkeeping as a pure state machine: which jobs wait, run or are abandoned, which pool
/// threads idle, and what each event makes the runner do. No locks, no threads, no clock — `InvocationRunner`
/// keeps it under its one lock and carries the returned actions out after unlocking.
///
/// A job's phase: `queued` → `running` → finished (it leaves the machine); `running` → `abandoned` at its
/// deadline or on cancellation (its thread no longer counts, its result will be dropped) → finished when the
/// plugin finally returns. A queued job that ends leaves the queue at once. An impossible event — a return from a
/// job that never ran — is a `preconditionFailure` naming the phase.
struct InvocationStateMachine {
    struct Limits: Sendable {
        var maximumThreads = 64
        var perPluginConcurrency = 8
        /// Abandoned calls still stuck in one plugin before it refuses new calls.
        var unhealthyAfterStuckCalls = 4
        /// How long an idle pool thread checks for a new job before it sleeps (see `Spinning`); one at a time.
        var idleSpin: Duration = .microseconds(50)
        /// How long an awaiting task checks for its outcome before it suspends, when the skill's last call took no
        /// longer than that (a slower skill's caller suspends at once).
        var callerSpin: Duration = .microseconds(50)
    }

    enum Phase: Equatable, CustomStringConvertible {
        case queued
        case running
        case abandoned

        var description: String {
            switch self {
            case .queued: return "queued"
            case .running: return "running"
            case .abandoned: return "abandoned"
            }
        }
    }

    /// Work for a pool thread.
    enum Dispatch {
        /// Hand the job to an idle thread.
        case assign(PoolThread, Job)
        /// Start a thread for the job.
        case spawn(Job)
    }

    enum Submission {
        /// The calling thread runs the job now (it counts as a pool thread meanwhile).
        case runHere
        case queued([Dispatch])
        /// The plugin is unhealthy; the sentence says why.
        case rejected(String)
    }

    /// What a pool thread does after its job returned.
    enum Next {
        case run(Job)
        case wait
        case exit
    }

    /// Whether the plugin's outcome reaches the caller.
    enum Delivery {
        case deliver
        /// The job was abandoned; its caller already has the deadline's or the cancellation's outcome.
        case drop
    }

    /// What an ending (deadline, cancellation, retirement) did.
    enum Ended {
        /// The job was not in the machine (not submitted yet, or finished): the caller gets the ending unless it
        /// already has an outcome.
        case untracked
        /// It left the queue without running.
        case dequeued([Dispatch])
        /// It was running and is abandoned now.
        case abandoned([Dispatch])
        /// It had already been abandoned.
        case alreadyAbandoned
    }

    struct Statistics: Sendable, Equatable {
        var liveThreads: Int
        var idleThreads: Int
        var abandonedThreads: Int
        var queued: Int
    }

    let limits: Limits
    private var phases: [ObjectIdentifier: (job: Job, phase: Phase)] = [:]
    private var queue: [Job] = []
    private var idle: [PoolThread] = []
    private var liveThreads = 0
    private var abandonedThreads = 0
    /// Running calls per plugin, abandoned calls still inside each plugin, serial skills with a call inside.
    private var inFlight: [ObjectIdentifier: Int] = [:]
    private var stuck: [ObjectIdentifier: Int] = [:]
    private var serialBusy: Set<ObjectIdentifier> = []

    init(limits: Limits) { self.limits = limits }

    // MARK: Queries

    var statistics: Statistics {
        Statistics(
            liveThreads: liveThreads, idleThreads: idle.count, abandonedThreads: abandonedThreads, queued: queue.count)
    }

    func phase(of job: Job) -> Phase? { phases[ObjectIdentifier(job)]?.phase }

    /// Abandoned calls of the plugin that have not returned yet.
    func stuckCalls(of plugin: ObjectIdentifier) -> Int { stuck[plugin, default: 0] }

    /// Running and queued calls of the plugin.
    func activeCalls(of plugin: ObjectIdentifier) -> Int {
        inFlight[plugin, default: 0] + queue.count(where: { ObjectIdentifier($0.skill.plugin) == plugin })
    }

    /// Queued and running jobs of the plugin (abandoned ones are already over for their callers).
    func jobs(of plugin: ObjectIdentifier) -> [Job] {
        phases.values.filter { $0.phase != .abandoned && ObjectIdentifier($0.job.skill.plugin) == plugin }.map(\.job)
    }

    // MARK: Events

    /// A job arrives. With `runHere` the calling thread runs it when it may run at once; otherwise it queues.
    mutating func submit(_ job: Job, runHere: Bool) -> Submission {
        let key = ObjectIdentifier(job)
        precondition(phases[key] == nil, "a job was submitted twice (it is \(phases[key]?.phase.description ?? ""))")
        let stuckHere = stuck[ObjectIdentifier(job.skill.plugin), default: 0]
        if stuckHere >= limits.unhealthyAfterStuckCalls {
            return .rejected(
                "plugin \"\(job.skill.info.plugin)\" is unhealthy: \(stuckHere) call\(stuckHere == 1 ? " is" : "s are") "
                    + "still stuck after timing out; "
                    + "fix or remove the plugin, then reload it")
        }
        if runHere, queue.isEmpty, isEligible(job), liveThreads < limits.maximumThreads {
            liveThreads += 1
            markRunning(job)
            return .runHere
        }
        phases[key] = (job, .queued)
        queue.append(job)
        return .queued(dispatch())
    }

    /// The plugin code of `job` returned on `thread` (nil: on the thread that submitted it with `runHere`, which
    /// leaves the pool's count now).
    mutating func returned(_ job: Job, thread: PoolThread?) -> (Delivery, Next, [Dispatch]) {
        let key = ObjectIdentifier(job)
        guard let record = phases.removeValue(forKey: key) else {
            preconditionFailure("a job returned that the runner does not know (finished, or never submitted)")
        }
        let plugin = ObjectIdentifier(job.skill.plugin)
        if job.skill.info.flags.contains(.serial) { serialBusy.remove(ObjectIdentifier(job.skill)) }
        let delivery: Delivery
        switch record.phase {
        case .queued: preconditionFailure("a job returned while it was queued")
        case .running:
            Self.decrement(&inFlight, plugin)
            delivery = .deliver
            // The thread still counts as live; the calling thread's count ends here.
            if thread == nil { liveThreads -= 1 }
        case .abandoned:
            Self.decrement(&stuck, plugin)
            abandonedThreads -= 1
            delivery = .drop
            // The abandoned call's thread was taken out of the live count at its deadline; a pool thread rejoins
            // the pool if there is room.
            if thread != nil {
                guard liveThreads < limits.maximumThreads else { return (delivery, .exit, dispatch()) }
                liveThreads += 1
            }
        }
        guard let thread else { return (delivery, .exit, dispatch()) }
        // Take the first eligible job directly, without a round trip through the idle list.
        if let index = queue.firstIndex(where: isEligible) {
            let next = queue.remove(at: index)
            markRunning(next)
            return (delivery, .run(next), dispatch())
        }
        idle.append(thread)
        return (delivery, .wait, dispatch())
    }

    /// The job's deadline passed, its caller cancelled it, or its plugin is being retired.
    mutating func end(_ job: Job) -> Ended {
        let key = ObjectIdentifier(job)
        guard let record = phases[key] else { return .untracked }
        switch record.phase {
        case .queued:
            phases[key] = nil
            if let index = queue.firstIndex(where: { $0 === job }) { queue.remove(at: index) }
            return .dequeued(dispatch())
        case .running:
            let plugin = ObjectIdentifier(job.skill.plugin)
            phases[key] = (job, .abandoned)
            Self.decrement(&inFlight, plugin)
            stuck[plugin, default: 0] += 1
            liveThreads -= 1
            abandonedThreads += 1
            return .abandoned(dispatch())
        case .abandoned:
            return .alreadyAbandoned
        }
    }

    // MARK: Scheduling

    /// Hands eligible queued jobs to idle threads or new ones, in FIFO order.
    private mutating func dispatch() -> [Dispatch] {
        var actions: [Dispatch] = []
        var index = 0
        while index < queue.count {
            let job = queue[index]
            guard isEligible(job) else {
                index += 1
                continue
            }
            let thread = idle.popLast()
            if thread == nil {
                guard liveThreads < limits.maximumThreads else { break }
                liveThreads += 1
            }
            queue.remove(at: index)
            markRunning(job)
            actions.append(thread.map { .assign($0, job) } ?? .spawn(job))
        }
        return actions
    }

    private func isEligible(_ job: Job) -> Bool {
        if inFlight[ObjectIdentifier(job.skill.plugin), default: 0] >= limits.perPluginConcurrency { return false }
        if job.skill.info.flags.contains(.serial), serialBusy.contains(ObjectIdentifier(job.skill)) { return false }
        return true
    }

    private mutating func markRunning(_ job: Job) {
        phases[ObjectIdentifier(job)] = (job, .running)
        inFlight[ObjectIdentifier(job.skill.plugin), default: 0] += 1
        if job.skill.info.flags.contains(.serial) { serialBusy.insert(ObjectIdentifier(job.skill)) }
    }

    /// Decrements a per-plugin counter, dropping it at zero so retired plugins leave nothing behind.
    private static func decrement(_ counter: inout [ObjectIdentifier: Int], _ plugin: ObjectIdentifier) {
        let value = counter[plugin, default: 1] - 1
        counter[plugin] = value > 0 ? value : nil
    }
}
