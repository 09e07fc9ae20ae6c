import Dispatch
import Foundation
import SkillJSON
import Synchronization

/// Runs plugin code on its own bounded pool of threads, never on the Swift cooperative pool.
///
/// Each call has a deadline. The awaiting task resumes exactly once: with the outcome, at the deadline (status
/// `timeout`) or when it is cancelled — even if the plugin never returns. A call that outlives its deadline is
/// *abandoned*: its thread no longer counts against the pool (a replacement may start), `is_cancelled` turns true
/// for it, and when it finally returns its result is dropped. A plugin with too many abandoned calls still stuck
/// is unhealthy and refuses new calls until they return.
///
/// Scheduling rules: at most `maximumThreads` live threads; at most `perPluginConcurrency` running calls per
/// plugin; a `SKILL_SERIAL` skill runs one call at a time (a stuck serial call keeps the skill busy). Excess calls
/// wait in FIFO order.
final class InvocationRunner: Sendable {
    /// Limits of the pool.
    struct Limits: Sendable {
        var maximumThreads = 64
        var perPluginConcurrency = 8
        /// Abandoned calls still stuck in one plugin before it refuses new calls.
        var unhealthyAfterStuckCalls = 4
    }

    /// Counters for `skillhost list --json` and tests.
    struct Statistics: Sendable, Equatable {
        var liveThreads: Int
        var idleThreads: Int
        var abandonedThreads: Int
        var queued: Int
    }

    private struct State {
        var idle: [PoolThread] = []
        var liveThreads = 0
        var abandonedThreads = 0
        var queue: [Job] = []
        var running: [ObjectIdentifier: Job] = [:]
        var abandoned: Set<ObjectIdentifier> = []
        var inFlight: [ObjectIdentifier: Int] = [:]
        var stuck: [ObjectIdentifier: Int] = [:]
        var serialBusy: Set<ObjectIdentifier> = []

        /// Decrements a per-plugin counter, dropping it at zero so retired plugins leave nothing behind.
        mutating func decrement(_ counter: WritableKeyPath<State, [ObjectIdentifier: Int]>, _ plugin: ObjectIdentifier)
        {
            let value = self[keyPath: counter][plugin, default: 1] - 1
            self[keyPath: counter][plugin] = value > 0 ? value : nil
        }
    }

    private enum Action {
        case assign(PoolThread, Job)
        case spawn(Job)
    }

    let limits: Limits
    /// Where deadlines come from (tests drive a manual clock).
    let clock: any HostClock
    private let state = Mutex(State())

    init(limits: Limits = Limits(), clock: any HostClock = SystemClock()) {
        self.limits = limits
        self.clock = clock
    }

    var statistics: Statistics {
        state.withLock {
            Statistics(
                liveThreads: $0.liveThreads, idleThreads: $0.idle.count, abandonedThreads: $0.abandonedThreads,
                queued: $0.queue.count)
        }
    }

    /// Abandoned calls of `plugin` that have not returned yet.
    func stuckCalls(of plugin: LoadedPlugin) -> Int {
        state.withLock { $0.stuck[ObjectIdentifier(plugin), default: 0] }
    }

    /// Running and queued calls of `plugin`, for draining before unload.
    func activeCalls(of plugin: LoadedPlugin) -> Int {
        let key = ObjectIdentifier(plugin)
        return state.withLock { state in
            state.inFlight[key, default: 0] + state.queue.filter { ObjectIdentifier($0.skill.plugin) == key }.count
        }
    }

    /// Runs `job` on a pool thread and waits for its outcome, the deadline or cancellation of the calling task.
    func run(_ job: Job) async -> SkillOutcome {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<SkillOutcome, Never>) in
                start(job) { continuation.resume(returning: $0) }
            }
        } onCancel: {
            finish(job, .cancelled)
        }
    }

    /// Runs `job` on a pool thread; `completion` receives the outcome, the deadline's `timeout` or `cancelled`
    /// (see `cancel`) exactly once, on whichever thread ends the job. For callers that are threads, not tasks.
    func start(_ job: Job, completion: @escaping @Sendable (SkillOutcome) -> Void) {
        guard arm(job, completion) else { return }
        admit(job, runHere: false)
    }

    /// Ends a started job with `cancelled` (its caller stopped waiting).
    func cancel(_ job: Job) { finish(job, .cancelled) }

    /// Like `start`, but the calling thread runs the job itself when it may run at once (no thread hand-off):
    /// for the time of the call the thread counts as one of the pool's, with the same deadline and abandonment
    /// rules — at the deadline `completion` gets `timeout` from the timer while this thread stays inside the plugin.
    /// When the job has to wait its turn it is queued as usual and this returns at once.
    ///
    /// - Important: blocks in plugin code; call it only from a thread that may block (never the cooperative pool).
    func runOnCallingThread(_ job: Job, completion: @escaping @Sendable (SkillOutcome) -> Void) {
        guard arm(job, completion), admit(job, runHere: true) else { return }
        if !job.isFinished { finish(job, outcome: job.execute()) }
        let actions = state.withLock { state -> [Action] in
            // An abandoned call's thread was already taken out of the live count at its deadline.
            if !returned(job, &state) { state.liveThreads -= 1 }
            return dispatch(&state)
        }
        job.skill.plugin.drain.notify()
        perform(actions)
    }

    /// Stores `completion` and starts the deadline; false when the job already ended.
    private func arm(_ job: Job, _ completion: @escaping @Sendable (SkillOutcome) -> Void) -> Bool {
        guard job.install(completion) else { return false }
        let timer = clock.schedule(after: job.remaining) { [weak self, weak job] in
            guard let self, let job else { return }
            self.finish(job, .timeout)
        }
        job.attach(timer)
        return true
    }

    /// Refuses the job when its plugin is unhealthy; otherwise, with `runHere`, marks it running on the calling
    /// thread when it may run at once (returns true: the caller runs it), else queues it and dispatches.
    @discardableResult
    private func admit(_ job: Job, runHere: Bool) -> Bool {
        let key = ObjectIdentifier(job.skill.plugin)
        enum Admission {
            case here
            case queued([Action])
            case rejected(String)
        }
        let admission = state.withLock { state -> Admission in
            let stuck = state.stuck[key, default: 0]
            if stuck >= limits.unhealthyAfterStuckCalls {
                return .rejected(
                    "plugin \"\(job.skill.info.plugin)\" is unhealthy: \(stuck) calls are still stuck after timing out; "
                        + "fix or remove the plugin, then reload it")
            }
            if runHere, state.queue.isEmpty, isEligible(job, state), state.liveThreads < limits.maximumThreads {
                state.liveThreads += 1
                markRunning(job, &state)
                return .here
            }
            state.queue.append(job)
            return .queued(dispatch(&state))
        }
        switch admission {
        case .here: return true
        case .queued(let actions): perform(actions)
        case .rejected(let message): finish(job, outcome: .failure(.error, message))
        }
        return false
    }

    /// Hands eligible queued jobs to idle workers or new threads. Called with the lock held.
    private func dispatch(_ state: inout State) -> [Action] {
        var actions: [Action] = []
        var index = 0
        while index < state.queue.count {
            let job = state.queue[index]
            if job.isFinished {
                state.queue.remove(at: index)
                continue
            }
            guard isEligible(job, state) else {
                index += 1
                continue
            }
            let worker = state.idle.popLast()
            if worker == nil {
                guard state.liveThreads < limits.maximumThreads else { break }
                state.liveThreads += 1
            }
            state.queue.remove(at: index)
            markRunning(job, &state)
            actions.append(worker.map { .assign($0, job) } ?? .spawn(job))
        }
        return actions
    }

    private func isEligible(_ job: Job, _ state: State) -> Bool {
        if state.inFlight[ObjectIdentifier(job.skill.plugin), default: 0] >= limits.perPluginConcurrency {
            return false
        }
        if job.skill.info.flags.contains(.serial), state.serialBusy.contains(ObjectIdentifier(job.skill)) {
            return false
        }
        return true
    }

    private func markRunning(_ job: Job, _ state: inout State) {
        state.running[ObjectIdentifier(job)] = job
        state.inFlight[ObjectIdentifier(job.skill.plugin), default: 0] += 1
        if job.skill.info.flags.contains(.serial) { state.serialBusy.insert(ObjectIdentifier(job.skill)) }
        job.markStarted()
    }

    private func perform(_ actions: [Action]) {
        for action in actions {
            switch action {
            case .assign(let worker, let job): worker.hand(job)
            case .spawn(let job):
                let worker = PoolThread()
                let thread = Thread { [self] in self.workerLoop(worker, first: job) }
                thread.name = "skillhost.call"
                thread.stackSize = 8 << 20
                thread.start()
            }
        }
    }

    private enum Next {
        case run(Job)
        case wait
        case exit
    }

    private func workerLoop(_ worker: PoolThread, first: Job) {
        var current: Job? = first
        while let job = current {
            // A job that ended between dispatch and now (deadline, cancellation) is not started at all.
            if !job.isFinished { finish(job, outcome: job.execute()) }
            let (next, actions) = state.withLock { state -> (Next, [Action]) in
                let next = release(job, worker: worker, &state)
                return (next, dispatch(&state))
            }
            job.skill.plugin.drain.notify()
            perform(actions)
            switch next {
            case .run(let following): current = following
            case .exit: current = nil
            case .wait: current = worker.waitForJob()
            }
        }
    }

    /// Accounts for a job whose plugin code returned, and picks this worker's next step. Lock held.
    private func release(_ job: Job, worker: PoolThread, _ state: inout State) -> Next {
        if returned(job, &state) {
            // The thread of an abandoned call rejoins the pool if there is room.
            guard state.liveThreads < limits.maximumThreads else { return .exit }
            state.liveThreads += 1
        }
        // Take the first eligible job directly, without a round trip through the idle list.
        if let index = state.queue.firstIndex(where: { !$0.isFinished && isEligible($0, state) }) {
            let next = state.queue.remove(at: index)
            markRunning(next, &state)
            return .run(next)
        }
        state.idle.append(worker)
        return .wait
    }

    /// Accounts for a job whose plugin code returned (the thread's count is the caller's business). Returns whether
    /// the job had been abandoned. Lock held.
    private func returned(_ job: Job, _ state: inout State) -> Bool {
        let key = ObjectIdentifier(job)
        let plugin = ObjectIdentifier(job.skill.plugin)
        if job.skill.info.flags.contains(.serial) { state.serialBusy.remove(ObjectIdentifier(job.skill)) }
        if state.abandoned.remove(key) != nil {
            state.decrement(\.stuck, plugin)
            state.abandonedThreads -= 1
            return true
        }
        state.running[key] = nil
        state.decrement(\.inFlight, plugin)
        return false
    }

    enum Ending {
        case timeout
        case cancelled
        /// Cancelled by the host (the plugin is being retired); the payload completes "<skill id> …".
        case cancelledByHost(String)
    }

    /// Cancels every queued and running call of `plugin` (a replaced or removed plugin whose drain timed out).
    /// Callers get `cancelled` with "<skill> <message>"; running calls are abandoned.
    func cancelCalls(of plugin: LoadedPlugin, message: String) {
        let key = ObjectIdentifier(plugin)
        let jobs = state.withLock { state in
            state.running.values.filter { ObjectIdentifier($0.skill.plugin) == key }
                + state.queue.filter { ObjectIdentifier($0.skill.plugin) == key }
        }
        for job in jobs { finish(job, .cancelledByHost(message)) }
    }

    /// Ends `job` at its deadline or on cancellation: the caller resumes now; a running call is abandoned.
    private func finish(_ job: Job, _ ending: Ending) {
        let started = job.hasStarted
        let message: String
        switch ending {
        case .timeout:
            message =
                "\(job.skill.info.id) timed out after \(humanDuration(job.timeout))"
                + (started
                    ? "" : " while waiting for a free slot (too many calls to plugin \"\(job.skill.info.plugin)\")")
        case .cancelled:
            message = "\(job.skill.info.id) was cancelled"
        case .cancelledByHost(let reason):
            message = "\(job.skill.info.id) \(reason)"
        }
        // Account for the abandoned call before the caller resumes, so what it does next sees a consistent pool.
        var actions: [Action] = []
        let status: SkillOutcome.Status
        if case .timeout = ending { status = .timeout } else { status = .cancelled }
        let won = job.complete(.failure(status, message)) {
            job.context.cancel()
            actions = state.withLock { state -> [Action] in
                let key = ObjectIdentifier(job)
                if state.running.removeValue(forKey: key) != nil {
                    let plugin = ObjectIdentifier(job.skill.plugin)
                    state.abandoned.insert(key)
                    state.decrement(\.inFlight, plugin)
                    state.stuck[plugin, default: 0] += 1
                    state.liveThreads -= 1
                    state.abandonedThreads += 1
                } else if let index = state.queue.firstIndex(where: { $0 === job }) {
                    state.queue.remove(at: index)
                }
                return dispatch(&state)
            }
        }
        if won {
            job.skill.plugin.drain.notify()
            perform(actions)
        }
    }

    /// Resumes the caller with `outcome` unless someone else already did. Returns whether this call won.
    @discardableResult
    private func finish(_ job: Job, outcome: SkillOutcome) -> Bool {
        job.complete(outcome)
    }
}
