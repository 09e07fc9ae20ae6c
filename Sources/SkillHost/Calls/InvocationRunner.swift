import Dispatch
import Foundation
import JSONRPC
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
///
/// The bookkeeping is `InvocationStateMachine`, kept under one lock; this class applies what it decides (starting
/// threads, handing jobs over, resuming callers) outside the lock.
final class InvocationRunner: Sendable {
    typealias Limits = InvocationStateMachine.Limits
    typealias Statistics = InvocationStateMachine.Statistics

    let limits: Limits
    /// Where deadlines come from (tests drive a manual clock).
    let clock: any HostClock
    private let state: Mutex<InvocationStateMachine>
    private let spinPermit = SpinPermit()

    init(limits: Limits = Limits(), clock: any HostClock = SystemClock()) {
        self.limits = limits
        self.clock = clock
        state = Mutex(InvocationStateMachine(limits: limits))
    }

    var statistics: Statistics { state.withLock { $0.statistics } }

    /// Abandoned calls of `plugin` that have not returned yet.
    func stuckCalls(of plugin: LoadedPlugin) -> Int { state.withLock { $0.stuckCalls(of: ObjectIdentifier(plugin)) } }

    /// Running and queued calls of `plugin`, for draining before unload.
    func activeCalls(of plugin: LoadedPlugin) -> Int {
        state.withLock { $0.activeCalls(of: ObjectIdentifier(plugin)) }
    }

    /// Runs `job` on a pool thread and waits for its outcome, the deadline or cancellation of the calling task.
    ///
    /// When the skill's last call took no longer than `limits.callerSpin`, the task first checks for the outcome
    /// that long without suspending (a short call then costs no resumption through the executor, which wakes a
    /// sleeping thread); it does not see its cancellation during that time.
    func run(_ job: Job) async -> SkillOutcome {
        let outcome: SkillOutcome
        if job.skill.recentDuration.load(ordering: .relaxed) <= limits.callerSpin.wholeNanoseconds, !Task.isCancelled {
            if arm(job, nil) { submit(job, runHere: false) }
            if let early = job.outcome(within: limits.callerSpin) {
                outcome = early
            } else {
                outcome = await withTaskCancellationHandler {
                    await job.outcome()
                } onCancel: {
                    end(job, .cancelled)
                }
            }
        } else {
            outcome = await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<SkillOutcome, Never>) in
                    start(job) { continuation.resume(returning: $0) }
                }
            } onCancel: {
                end(job, .cancelled)
            }
        }
        return job.skill.noted(outcome)
    }

    /// Runs `job` on a pool thread; `completion` receives the outcome, the deadline's `timeout` or `cancelled`
    /// (see `cancel`) exactly once, on whichever thread ends the job. For callers that are threads, not tasks.
    func start(_ job: Job, completion: @escaping @Sendable (SkillOutcome) -> Void) {
        guard arm(job, completion) else { return }
        submit(job, runHere: false)
    }

    /// Ends a started job with `cancelled` (its caller stopped waiting).
    func cancel(_ job: Job) { end(job, .cancelled) }

    /// Like `start`, but the calling thread runs the job itself when it may run at once (no thread hand-off):
    /// for the time of the call the thread counts as one of the pool's, with the same deadline and abandonment
    /// rules — at the deadline `completion` gets `timeout` from the timer while this thread stays inside the plugin.
    /// When the job has to wait its turn it is queued as usual and this returns at once.
    ///
    /// - Important: blocks in plugin code; call it only from a thread that may block (never the cooperative pool).
    func runOnCallingThread(_ job: Job, completion: @escaping @Sendable (SkillOutcome) -> Void) {
        guard arm(job, completion), submit(job, runHere: true) else { return }
        let outcome = job.isFinished ? nil : job.execute()
        let (delivery, _, dispatches) = state.withLock { $0.returned(job, thread: nil) }
        if delivery == .deliver, let outcome { job.complete(outcome) }
        job.skill.plugin.drain.notify()
        perform(dispatches)
    }

    /// Stores `completion` (none: the caller asks the job for its outcome) and starts the deadline; false when the
    /// job already ended.
    private func arm(_ job: Job, _ completion: (@Sendable (SkillOutcome) -> Void)?) -> Bool {
        if let completion {
            guard job.install(completion) else { return false }
        } else if job.isFinished {
            return false
        }
        // The timer holds the job (no weak reference to form per call): completing the job cancels the timer,
        // which lets go of it.
        let timer = clock.schedule(after: job.remaining) { [weak self] in
            self?.end(job, .timeout)
        }
        job.attach(timer)
        return true
    }

    /// Hands the job to the machine; true when the calling thread is to run it now.
    @discardableResult
    private func submit(_ job: Job, runHere: Bool) -> Bool {
        switch state.withLock({ $0.submit(job, runHere: runHere) }) {
        case .runHere: return true
        case .queued(let dispatches): perform(dispatches)
        case .rejected(let message): job.complete(.failure(code: .failed, message))
        }
        return false
    }

    private func perform(_ dispatches: [InvocationStateMachine.Dispatch]) {
        for dispatch in dispatches {
            switch dispatch {
            case .assign(let thread, let job): thread.hand(job)
            case .spawn(let job):
                let poolThread = PoolThread(idleSpin: limits.idleSpin, permit: spinPermit)
                let thread = Thread { [self] in self.threadLoop(poolThread, first: job) }
                thread.name = "skillhost.call"
                thread.stackSize = 8 << 20
                thread.start()
            }
        }
    }

    private func threadLoop(_ thread: PoolThread, first: Job) {
        var current: Job? = first
        while let job = current {
            // A job that ended between dispatch and now (deadline, cancellation) is not started at all.
            let outcome = job.isFinished ? nil : job.execute()
            let (delivery, next, dispatches) = state.withLock { $0.returned(job, thread: thread) }
            if delivery == .deliver, let outcome { job.complete(outcome) }
            job.skill.plugin.drain.notify()
            perform(dispatches)
            switch next {
            case .run(let following): current = following
            case .exit: current = nil
            case .wait: current = thread.waitForJob()
            }
        }
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
        let jobs = state.withLock { $0.jobs(of: ObjectIdentifier(plugin)) }
        for job in jobs { end(job, .cancelledByHost(message)) }
    }

    /// Ends `job` at its deadline or on cancellation: the machine accounts for it first (so what the caller does
    /// next sees a consistent pool), then the caller resumes; a running call is abandoned and told to stop.
    private func end(_ job: Job, _ ending: Ending) {
        let ended = state.withLock { $0.end(job) }
        let dispatches: [InvocationStateMachine.Dispatch]
        let started: Bool
        switch ended {
        case .alreadyAbandoned: return
        case .untracked:
            dispatches = []
            started = true
        case .dequeued(let d):
            dispatches = d
            started = false
        case .abandoned(let d):
            dispatches = d
            started = true
            job.context.cancel()
        }
        let message: String
        switch ending {
        case .timeout:
            message =
                Deadline.timedOut(job.skill.info.id, after: job.timeout)
                + (started
                    ? "" : " while waiting for a free slot (too many calls to plugin \"\(job.skill.info.plugin)\")")
        case .cancelled:
            message = "\(job.skill.info.id) was cancelled"
        case .cancelledByHost(let reason):
            message = "\(job.skill.info.id) \(reason)"
        }
        let code: FailureCode
        if case .timeout = ending { code = .timeout } else { code = .cancelled }
        job.complete(.failure(code: code, message))
        if case .dequeued = ended { job.skill.plugin.drain.notify() }
        perform(dispatches)
    }
}
