import Dispatch
import Foundation
import JSONRPC
import SkillJSON
import Support
import Synchronization

/// Lets one idle pool thread at a time spin, so a busy machine loses at most one thread's spinning per runner. (In a
/// stream of calls one after another, one thread runs them all, and it is the one that spins.)
final class SpinPermit: Sendable {
    private let taken = Atomic<Bool>(false)

    func take() -> Bool { !taken.exchange(true, ordering: .acquiring) }
    func giveBack() { taken.store(false, ordering: .releasing) }
}

/// One thread of the invocation pool, as its mailbox ("worker" names a plugin's process, never this). An idle
/// thread holding the runner's spin permit checks its mailbox for a while before it sleeps, so a stream of calls
/// needs no wake-ups; `phase` tells whoever hands a job whether the thread sleeps and must be woken.
final class PoolThread: Sendable {
    private static let spinning = 0
    private static let parked = 1
    private static let handed = 2

    private let semaphore = DispatchSemaphore(value: 0)
    private let mailbox = Mutex<Job?>(nil)
    private let phase = Atomic<Int>(0)
    private let idleSpin: Duration
    private let permit: SpinPermit

    init(idleSpin: Duration = .zero, permit: SpinPermit = SpinPermit()) {
        self.idleSpin = idleSpin
        self.permit = permit
    }

    func hand(_ job: Job) {
        mailbox.withLock { $0 = job }
        if phase.exchange(Self.handed, ordering: .acquiringAndReleasing) == Self.parked { semaphore.signal() }
    }

    func waitForJob() -> Job? {
        var arrived = false
        if idleSpin > .zero, permit.take() {
            arrived = Spinning.until(idleSpin) { phase.load(ordering: .acquiring) == Self.handed }
            permit.giveBack()
        }
        if !arrived,
            phase.compareExchange(expected: Self.spinning, desired: Self.parked, ordering: .acquiringAndReleasing)
                .exchanged
        {
            semaphore.wait()
        }
        phase.store(Self.spinning, ordering: .releasing)
        return mailbox.withLock { box in
            let job = box
            box = nil
            return job
        }
    }
}

/// One invocation on its way through the runner.
final class Job: Sendable {
    private struct Completion {
        var resume: (@Sendable (SkillOutcome) -> Void)?
        var outcome: SkillOutcome?
        var timer: ScheduledTimer?
    }

    let skill: Skill
    let arguments: JSONValue
    let argumentText: String?
    let context: CallContext
    /// The call's deadline as the caller gave it (messages name it).
    let timeout: Duration
    /// What is left of it when the job starts (validation already spent the rest).
    let remaining: Duration
    let start: ContinuousClock.Instant
    private let completion = Mutex(Completion())
    /// Set once the outcome is there: what a caller checking for it without suspending looks at.
    private let finished = Atomic<Bool>(false)

    init(
        skill: Skill, arguments: JSONValue, argumentText: String?, context: CallContext, timeout: Duration,
        spent: Duration = .zero
    ) {
        self.skill = skill
        self.arguments = arguments
        self.argumentText = argumentText
        self.context = context
        self.timeout = timeout
        self.remaining = max(timeout - spent, .zero)
        self.start = .now
    }

    var isFinished: Bool { finished.load(ordering: .acquiring) }

    /// The outcome, if the job ends within `budget` (checked without suspending, see `Spinning`).
    func outcome(within budget: Duration) -> SkillOutcome? {
        guard Spinning.until(budget, { finished.load(ordering: .acquiring) }) else { return nil }
        return completion.withLock { $0.outcome }
    }

    /// Suspends until the job ended (resumes at once when it has), for a caller that installed no completion.
    func outcome() async -> SkillOutcome {
        await withCheckedContinuation { continuation in
            _ = install { continuation.resume(returning: $0) }
        }
    }
    /// Runs the plugin code on the current (pool) thread.
    func execute() -> SkillOutcome {
        skill.execute(
            arguments: arguments, argumentText: argumentText, resultLimit: context.resultLimit, context: context)
    }

    /// Stores what receives the outcome; returns false (after calling it) if the job already ended.
    func install(_ resume: @escaping @Sendable (SkillOutcome) -> Void) -> Bool {
        let finished = completion.withLock { state -> SkillOutcome? in
            if let outcome = state.outcome { return outcome }
            state.resume = resume
            return nil
        }
        if let finished {
            resume(finished)
            return false
        }
        return true
    }

    func attach(_ timer: ScheduledTimer) {
        let alreadyDone = completion.withLock { state -> Bool in
            if state.outcome != nil { return true }
            state.timer = timer
            return false
        }
        if alreadyDone { timer.cancel() }
    }

    /// Sets the outcome once (later attempts are ignored) and resumes the caller. Returns whether this call won.
    /// The runner's state machine decides who delivers; this guard makes a late ending harmless.
    @discardableResult
    func complete(_ outcome: SkillOutcome) -> Bool {
        var final = outcome
        final.duration = ContinuousClock.now - start
        let (won, resume, timer) = completion.withLock { state in
            guard state.outcome == nil else {
                return (false, nil, nil) as (Bool, (@Sendable (SkillOutcome) -> Void)?, ScheduledTimer?)
            }
            state.outcome = final
            finished.store(true, ordering: .releasing)
            let pending = (true, state.resume, state.timer)
            state.resume = nil
            state.timer = nil
            return pending
        }
        guard won else { return false }
        timer?.cancel()
        resume?(final)
        return true
    }
}
