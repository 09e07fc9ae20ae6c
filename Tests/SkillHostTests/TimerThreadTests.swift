import CProcess
import CTestSandbox
import Foundation
import JSONRPC
import SkillJSON
import Support
import Synchronization
import TestSupport
import Testing

@testable import SkillHost

/// The system clock's timer thread, busy-waiting and the rendezvous of a call's outcome with its task. No test
/// asserts how precisely a timer fires: they wait for events with generous caps.
struct TimerThreadTests {
    @Test func timersFireInTheOrderOfTheirDeadlinesAndCancelledOnesNever() async {
        let timers = TimerThread()
        let fired = Mutex<[Int]>([])
        // Cancelled right away, long before it is due (a busy machine cannot delay the cancel past its deadline).
        let cancelled = timers.schedule(after: .milliseconds(300)) { fired.withLock { $0.append(99) } }
        timers.cancel(cancelled)
        _ = timers.schedule(after: .milliseconds(400)) { fired.withLock { $0.append(3) } }
        _ = timers.schedule(after: .milliseconds(40)) { fired.withLock { $0.append(2) } }
        _ = timers.schedule(after: .zero) { fired.withLock { $0.append(1) } }
        // The last one is due after the cancelled one was: had the cancel not held, 99 would be in the list.
        #expect(await eventually { fired.withLock { $0.count } >= 3 })
        #expect(fired.withLock { $0 } == [1, 2, 3])
    }

    /// The system clock arms a timer on the timers of the CPU its caller runs on: a thread held on each CPU in
    /// turn arms one there, and each fires (the two CPUs' calls share no timer lock).
    @Test func theSystemClockArmsTimersOnTheCallersCPU() async throws {
        var allowed: UInt64 = 0
        guard skillhost_test_affinity(0, &allowed) == 0, allowed.nonzeroBitCount >= 2 else { return }
        let cpus = (0..<64).filter { allowed & (1 << UInt64($0)) != 0 }.prefix(2)
        let fired = Mutex<[Int]>([])
        let everywhere = allowed
        let armed = try await offPool { () -> [Int] in
            var armed: [Int] = []
            for cpu in cpus {
                // Held on `cpu` from now on (setting the affinity moves the thread there before it returns).
                guard skillhost_test_set_affinity(0, 1 << UInt64(cpu)) == 0 else { return [] }
                if TimerThread.local === TimerThread.shards[cpu % TimerThread.shards.count] { armed.append(cpu) }
                _ = SystemClock().schedule(after: .milliseconds(5)) { fired.withLock { $0.append(cpu) } }
            }
            _ = skillhost_test_set_affinity(0, everywhere)
            return armed
        }
        #expect(armed == Array(cpus), "each CPU's timers are its own shard")
        #expect(await eventually { fired.withLock { Set($0) } == Set(cpus) })
    }

    @Test func aTimerDueBeforeTheOneTheThreadSleepsForWakesIt() async {
        let timers = TimerThread()
        let fired = Atomic<Bool>(false)
        _ = timers.schedule(after: .seconds(3600)) {}
        // Give the thread time to fall asleep until the hour is up.
        try? await Task.sleep(for: .milliseconds(20))
        _ = timers.schedule(after: .milliseconds(10)) { fired.store(true, ordering: .relaxed) }
        #expect(await eventually { fired.load(ordering: .relaxed) }, "it would otherwise fire in an hour")
    }

    @Test func cancelledTimersDoNotPileUpAndTheirActionsAreReleased() {
        final class Probe: Sendable {}
        let timers = TimerThread()
        for _ in 0..<100 { _ = timers.schedule(after: .seconds(3600)) {} }
        weak var released: Probe?
        for index in 0..<10_000 {
            let probe = Probe()
            if index == 0 { released = probe }
            let id = timers.schedule(after: .seconds(3600)) { _ = probe }
            timers.cancel(id)
        }
        #expect(released == nil, "a cancelled timer lets go of its action")
        #expect(timers.heapCount <= 2 * 100 + 65, "cancelled timers are dropped once they outnumber the live ones")
    }

    @Test func aDeadlineBeyondTheEndOfTimeNeverComes() async {
        let timers = TimerThread()
        let fired = Atomic<Int>(0)
        _ = timers.schedule(after: .seconds(Int64.max / 2)) { fired.add(1, ordering: .relaxed) }
        _ = timers.schedule(after: .milliseconds(1)) { fired.add(10, ordering: .relaxed) }
        #expect(await eventually { fired.load(ordering: .relaxed) == 10 })
        let sleeps = timers.sleepCount
        try? await Task.sleep(for: .milliseconds(20))
        #expect(fired.load(ordering: .relaxed) == 10)
        // Waiting for the far deadline, the thread sleeps (a wait that returned at once spun it, 1,000 times and
        // more in these 20 ms).
        #expect(timers.sleepCount - sleeps <= 2)
        #expect(TimerThread.wakeUp(for: .max / 2, now: 1_000) == 60_000_001_000)
        #expect(TimerThread.wakeUp(for: 5_000, now: 1_000) == 5_000)
    }

    @Test func spinningSeesAConditionTurnTrueOnAnotherThreadAndGivesUpAfterItsBudget() async throws {
        #expect(!Spinning.until(.microseconds(200)) { false })
        #expect(Spinning.until(.zero) { true })
        let flag = Atomic<Bool>(false)
        Thread {
            usleep(1000)
            flag.store(true, ordering: .releasing)
        }.start()
        let seen = try await offPool { Spinning.until(.seconds(60)) { flag.load(ordering: .acquiring) } }
        #expect(seen)
    }

    @Test func anOutcomeReachesItsTaskWhetherItArrivesBeforeOrAfterTheTaskSuspends() async throws {
        let jobs = try InvocationStateMachineTests.Jobs()
        let early = jobs.job("echo")
        early.complete(SkillOutcome.success(.int(1)))
        #expect(early.outcome(within: .zero)?.result == .int(1))
        #expect(await early.outcome().result == .int(1))

        let late = jobs.job("echo")
        #expect(late.outcome(within: .microseconds(100)) == nil)
        Thread {
            usleep(5000)
            late.complete(SkillOutcome.success(.int(2)))
            late.complete(SkillOutcome.success(.int(3)))  // only the first counts
        }.start()
        #expect(await late.outcome().result == .int(2))
    }
}

/// The call context is made once per second and per caller: what a call sees is what it would see made anew.
struct CallContextCacheTests {
    @Test func theContextIsRemadeForAnotherSecondClientOrSession() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000.25)
        let first = CallContext.callerContext(client: "cache-test", session: "s1", now: now)
        #expect(CallContext.callerContext(client: "cache-test", session: "s1", now: now + 0.5) == first)
        let other = try JSONValue(parsing: CallContext.callerContext(client: "cache-test", session: "s2", now: now))
        #expect(other["session"] == "s2")
        let client = try JSONValue(parsing: CallContext.callerContext(client: "other", session: "s1", now: now))
        #expect(client["client"] == "other")
        let later = try JSONValue(parsing: CallContext.callerContext(client: "cache-test", session: "s1", now: now + 1))
        let before = try JSONValue(parsing: first)
        #expect(later["now"] != before["now"], "a new second, a new time stamp")
        #expect(later["time_zone"] == before["time_zone"])
        #expect(try JSONValue(parsing: CallContext.callerContext(client: "c", now: now))["session"] == .null)
    }
}
