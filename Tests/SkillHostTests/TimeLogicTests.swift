import Foundation
import Synchronization
import TestSupport
import Testing

@testable import SkillHost

/// The host's time-dependent logic with time driven by the test: restart backoff and the crash window, the
/// hot-reload debounce, and the manual clock itself.
struct TimeLogicTests {
    let t0 = ContinuousClock.now

    @Test func restartsWaitLongerWhileAPluginKeepsCrashing() {
        var history = CrashHistory(maximumCrashes: 100, crashWindow: .seconds(60), maximumBackoff: .seconds(5))
        #expect(history.backoff(at: t0) == nil, "a plugin that never crashed starts at once")
        _ = history.record(at: t0)
        #expect(history.backoff(at: t0) == nil, "the first restart is immediate")
        _ = history.record(at: t0)
        #expect(history.backoff(at: t0) == .milliseconds(50))
        #expect(history.backoff(at: t0 + .milliseconds(20)) == .milliseconds(30), "what is left of the wait")
        #expect(history.backoff(at: t0 + .milliseconds(50)) == nil)
        _ = history.record(at: t0)
        #expect(history.backoff(at: t0) == .milliseconds(100))
        for _ in 0..<20 { _ = history.record(at: t0) }
        #expect(history.backoff(at: t0) == .seconds(5), "capped")
        history.recordSuccess()
        _ = history.record(at: t0)
        #expect(history.backoff(at: t0) == nil, "a call that succeeded resets the run")
    }

    @Test func aPluginIsFailingAfterTooManyCrashesWithinTheWindow() {
        var history = CrashHistory(maximumCrashes: 3, crashWindow: .seconds(60), maximumBackoff: .seconds(5))
        #expect(history.record(at: t0) == nil)
        #expect(history.record(at: t0 + .seconds(30)) == nil)
        // The first crash has left the window by now: two recent ones, not three.
        #expect(history.record(at: t0 + .seconds(61)) == nil)
        #expect(history.crashes.count == 2)
        #expect(history.record(at: t0 + .seconds(62)) == 3)
    }

    @Test func aFilesFirstEventIsDueAtOnce() {
        var debounce = Debounce(quietPeriod: .milliseconds(30))
        debounce.record(.changed("/p/a.so"), key: "/p/a.so", at: t0)
        let due = debounce.takeDue(at: t0)
        #expect(due.events == [.changed("/p/a.so")], "a rename into place loads without waiting")
        #expect(due.next == nil)
        #expect(debounce.isEmpty)
    }

    @Test func aBurstCollapsesIntoItsLastEventAfterTheQuietPeriod() {
        var debounce = Debounce(quietPeriod: .milliseconds(30))
        debounce.record(.changed("/p/a.so"), key: "/p/a.so", at: t0)
        #expect(debounce.takeDue(at: t0).events == [.changed("/p/a.so")], "the leading edge")
        debounce.record(.removed("/p/b.so"), key: "/p/b.so", at: t0 + .milliseconds(5))
        debounce.record(.changed("/p/a.so"), key: "/p/a.so", at: t0 + .milliseconds(10))  // a burst: waits
        debounce.record(.changed("/p/a.so"), key: "/p/a.so", at: t0 + .milliseconds(20))  // restarts a's period
        var due = debounce.takeDue(at: t0 + .milliseconds(21))
        #expect(due.events == [.removed("/p/b.so")], "another file's first event is not held back")
        #expect(due.next == .milliseconds(29))
        due = debounce.takeDue(at: t0 + .milliseconds(49))
        #expect(due.events.isEmpty)
        due = debounce.takeDue(at: t0 + .milliseconds(50))
        #expect(due.events == [.changed("/p/a.so")], "one load for two writes")
        #expect(due.next == nil)
        // Quiet for a whole period after its delivery: the next event is a new leading edge.
        debounce.record(.changed("/p/a.so"), key: "/p/a.so", at: t0 + .milliseconds(80))
        #expect(debounce.takeDue(at: t0 + .milliseconds(80)).events == [.changed("/p/a.so")])
    }

    @Test func dueEventsComeRescansFirstThenRemovalsThenChanges() {
        var debounce = Debounce(quietPeriod: .milliseconds(30))
        debounce.record(.changed("/p/new.so"), key: "/p/new.so", at: t0)
        debounce.record(.removed("/p/old.so"), key: "/p/old.so", at: t0)
        debounce.record(.rescan("/q"), key: "/q", at: t0)
        debounce.record(.changed("/p/a.so"), key: "/p/a.so", at: t0)
        #expect(
            debounce.takeDue(at: t0 + .seconds(1)).events == [
                .rescan("/q"), .removed("/p/old.so"), .changed("/p/a.so"), .changed("/p/new.so"),
            ])
    }

    @Test func logLinesBeyondTheBudgetAreDroppedAndCounted() {
        var throttle = LogThrottle(perSecond: 10, burst: 3)
        #expect((0..<3).map { _ in throttle.admit(at: t0).allowed } == [true, true, true])
        #expect(throttle.admit(at: t0) == (false, 0))
        #expect(throttle.admit(at: t0 + .milliseconds(50)) == (false, 0), "half a token is not a line")
        #expect(throttle.admit(at: t0 + .milliseconds(100)) == (true, 2), "the next line says two were dropped")
        #expect(throttle.admit(at: t0 + .seconds(10)) == (true, 0))
        #expect(throttle.admit(at: t0 + .seconds(10)).allowed, "refilled up to the burst, no further")
    }

    /// A timer nobody keeps a reference to still fires (a fire-and-forget kill grace), and a cancelled one does not.
    @Test func systemClockTimersFireWithoutBeingKept() async {
        let fired = Mutex<[String]>([])
        _ = SystemClock().schedule(after: .milliseconds(5)) { fired.withLock { $0.append("kept by no one") } }
        let cancelled = SystemClock().schedule(after: .milliseconds(5)) { fired.withLock { $0.append("cancelled") } }
        cancelled.cancel()
        #expect(await eventually { fired.withLock { $0 } == ["kept by no one"] })
    }

    @Test func theManualClockRunsTimersInDueOrderAndHonoursCancel() {
        let clock = ManualClock()
        let fired = Mutex<[String]>([])
        _ = clock.schedule(after: .seconds(2)) { fired.withLock { $0.append("2s") } }
        _ = clock.schedule(after: .seconds(1)) { fired.withLock { $0.append("1s") } }
        let cancelled = clock.schedule(after: .milliseconds(500)) { fired.withLock { $0.append("never") } }
        cancelled.cancel()
        let start = clock.now
        clock.advance(by: .milliseconds(1500))
        #expect(fired.withLock { $0 } == ["1s"])
        #expect(clock.now - start == .milliseconds(1500))
        clock.advance(by: .seconds(1))
        #expect(fired.withLock { $0 } == ["1s", "2s"])
        #expect(clock.pendingTimers == 0)
    }

    @Test func waitingOnAClockEndsWhenItsTimeHasPassedOrWhenStopped() async {
        let clock = ManualClock()
        let passed = Mutex<Bool?>(nil)
        let thread = Thread { passed.withLock { $0 = clock.wait(for: .seconds(5), unless: { false }) } }
        thread.start()
        #expect(await eventually { clock.pendingTimers == 1 })
        clock.advance(by: .seconds(5))
        #expect(await eventually { passed.withLock { $0 } == true })
        #expect(clock.wait(for: .seconds(5), unless: { true }) == false, "a stop ends the wait early")
    }
}
