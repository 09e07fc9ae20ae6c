import Foundation
import Synchronization
import TestSupport
import Testing

@testable import SkillHost
@testable import SkillJSON

/// The invocation runner: deadlines, abandonment, cancellation, concurrency limits, SKILL_SERIAL.
/// Deadlines are driven by a manual clock and stuck calls by the fixture's `hold` (it returns when the test calls
/// `release`), so no test here depends on how busy the machine is; the precise figures come from the benchmark.
@Suite(.serialized)
struct RunnerTests {
    static func registry(
        timeout: Duration = .seconds(10), threads: Int = 64, perPlugin: Int = 8, unhealthyAfter: Int = 4,
        clock: any HostClock = SystemClock()
    ) throws -> SkillRegistry {
        let registry = try makeRegistry(
            timeout: timeout, maximumThreads: threads, perPluginConcurrency: perPlugin, unhealthyAfter: unhealthyAfter,
            clock: clock)
        _ = try registry.load(file: try Fixture.compileFile("behaviours.c")).get()
        return registry
    }

    /// Waits until `count` calls of `hold` are inside the plugin.
    static func holding(_ count: Int, _ registry: SkillRegistry) async -> Bool {
        await eventually { await registry.invoke("held", arguments: "{}").result == .int(Int64(count)) }
    }

    @Test func aStuckCallTimesOutAtItsDeadlineWhileOtherCallsKeepWorking() async throws {
        let clock = ManualClock()
        let registry = try Self.registry(clock: clock)
        let stuck = StartedCall(registry, "hold", timeout: .milliseconds(200))
        #expect(await Self.holding(1, registry))
        // Other calls run normally while the stuck one holds its thread.
        for _ in 0..<20 { #expect(await registry.invoke("echo", arguments: #"{"k":1}"#).status == .ok) }
        clock.advance(by: .milliseconds(199))
        #expect(stuck.outcome == nil, "the deadline has not passed yet")
        clock.advance(by: .milliseconds(1))
        #expect(stuck.outcome?.status == .timeout)
        #expect(stuck.outcome?.error == "hold timed out after 200 ms")
        #expect(registry.poolStatistics.abandonedThreads == 1, "the plugin is still inside the call")
        #expect(await registry.invoke("echo", arguments: "{}").status == .ok)
        _ = await registry.invoke("release", arguments: "{}")
        #expect(await eventually { registry.poolStatistics.abandonedThreads == 0 }, "the stuck thread came back")
        #expect(stuck.outcome?.status == .timeout, "the late result is dropped")
    }

    /// With the real clock: the deadline's timer does not need the cooperative pool.
    @Test func theDeadlineHoldsWhenTheCooperativePoolIsBusy() async throws {
        let registry = try Self.registry()
        // Saturate the cooperative pool's threads with blocking work for a moment (what plugin code must never do).
        let hogs = (0..<4).map { _ in Task.detached { _ = usleep(150_000) } }
        let outcome = await registry.invoke("hold", arguments: "{}", timeout: .milliseconds(100))
        for hog in hogs { await hog.value }
        #expect(outcome.status == .timeout)
        _ = await registry.invoke("release", arguments: "{}")
    }

    @Test func cooperativeSkillsSeeIsCancelled() async throws {
        let clock = ManualClock()
        let registry = try Self.registry(clock: clock)
        let call = StartedCall(registry, "cooperative", #"{"ms": 600000}"#, timeout: .milliseconds(100))
        #expect(
            await eventually { registry.poolStatistics.liveThreads == 1 && registry.poolStatistics.idleThreads == 0 })
        clock.advance(by: .milliseconds(100))
        #expect(call.outcome?.status == .timeout)
        // The plugin notices is_cancelled and returns (long before its 10 minutes), so its thread comes back.
        #expect(await eventually { registry.poolStatistics.abandonedThreads == 0 })
    }

    @Test func cancellingTheCallerCancelsTheCall() async throws {
        let registry = try Self.registry()
        let task = Task { await registry.invoke("hold", arguments: "{}") }
        #expect(await Self.holding(1, registry))
        task.cancel()
        let outcome = await task.value
        #expect(outcome.status == .cancelled)
        #expect(outcome.error == "hold was cancelled")
        _ = await registry.invoke("release", arguments: "{}")
    }

    /// The first call of a skill is awaited by checking for its outcome for a moment before suspending; once a
    /// call took longer than that, the next one suspends at once. Cancellation reaches the call on either path.
    @Test func aSkillWhoseLastCallWasSlowIsAwaitedBySuspending() async throws {
        let registry = try Self.registry()
        guard case .plugin(let skill)? = registry.catalog.entry("hold") else {
            Issue.record("hold is not a plugin skill")
            return
        }
        #expect(skill.recentDuration.load(ordering: .relaxed) == 0, "no call yet: the caller spins first")
        let folder = Paths.temporaryDirectory("spin")
        for round in 0..<2 {
            // Held until its file exists ("release" would open the gate for good).
            let until = folder + "/release-\(round)"
            let task = Task { await registry.invoke("hold", arguments: #"{"until":"\#(until)"}"#) }
            #expect(await Self.holding(1, registry))
            // The call is held for 5 ms at least (a sleep only makes it longer): slower than the 50 µs spin.
            try await Task.sleep(for: .milliseconds(5))
            task.cancel()
            #expect(await task.value.status == .cancelled, "round \(round)")
            #expect(FileManager.default.createFile(atPath: until, contents: Data()))
            #expect(await eventually { registry.poolStatistics.abandonedThreads == 0 })
            #expect(
                skill.recentDuration.load(ordering: .relaxed) > 50_000,
                "a call that was held is slow: the next caller suspends at once")
        }
        #expect(await registry.invoke("echo", arguments: "{}").status == .ok)
        #expect(await registry.invoke("echo", arguments: "{}").status == .ok)
    }

    @Test func anAlreadyCancelledTaskDoesNotRunTheSkill() async throws {
        let registry = try Self.registry()
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await registry.invoke("echo", arguments: "{}")
        }
        #expect(await task.value.status == .cancelled)
    }

    @Test func twoHundredConcurrentInvocations() async throws {
        let registry = try Self.registry()
        let results = await withTaskGroup(of: (Int, SkillOutcome).self) { group in
            for index in 0..<200 {
                group.addTask { (index, await registry.invoke("echo", arguments: #"{"i":\#(index)}"#)) }
            }
            var all: [Int: SkillOutcome] = [:]
            for await (index, outcome) in group { all[index] = outcome }
            return all
        }
        #expect(results.count == 200)
        for (index, outcome) in results { #expect(outcome.result == ["i": .int(Int64(index))]) }
        #expect(registry.poolStatistics.liveThreads <= 8, "the per-plugin limit bounds the threads used")
    }

    @Test func serialSkillsNeverOverlap() async throws {
        let registry = try Self.registry()
        let outcomes = await withTaskGroup(of: SkillOutcome.self) { group in
            for _ in 0..<24 { group.addTask { await registry.invoke("serial_probe", arguments: "{}") } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(outcomes.allSatisfy { $0.status == .ok })
        #expect(outcomes.compactMap(\.result).allSatisfy { $0 == .int(1) }, "a second invocation ran concurrently")
    }

    @Test func excessCallsQueueInsteadOfSpawningThreads() async throws {
        let registry = try Self.registry(perPlugin: 2)
        let start = ContinuousClock.now
        let outcomes = await withTaskGroup(of: SkillOutcome.self) { group in
            for _ in 0..<6 { group.addTask { await registry.invoke("block", arguments: #"{"ms": 100}"#) } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(outcomes.allSatisfy { $0.status == .ok })
        #expect(ContinuousClock.now - start >= .milliseconds(300), "6 calls at 2 at a time take 3 rounds")
        #expect(registry.poolStatistics.liveThreads == 2)
    }

    @Test func aQueuedCallTimesOutWithoutStarting() async throws {
        let clock = ManualClock()
        let registry = try Self.registry(perPlugin: 1, clock: clock)
        let first = StartedCall(registry, "hold")
        #expect(
            await eventually { registry.poolStatistics.liveThreads == 1 && registry.poolStatistics.idleThreads == 0 })
        let second = StartedCall(registry, "echo", timeout: .milliseconds(100))
        #expect(registry.poolStatistics.queued == 1)
        clock.advance(by: .milliseconds(100))
        #expect(second.outcome?.status == .timeout)
        #expect(
            second.outcome?.error
                == #"echo timed out after 100 ms while waiting for a free slot (too many calls to plugin "behaviours")"#
        )
        #expect(first.outcome == nil)
        // `release` would queue behind `hold` as well: let the stuck call reach its deadline first.
        clock.advance(by: .seconds(10))
        #expect(first.outcome?.status == .timeout)
        #expect(await registry.invoke("release", arguments: "{}").status == .ok)
    }

    @Test func abandonedCallsDoNotShrinkThePool() async throws {
        let clock = ManualClock()
        let registry = try Self.registry(threads: 2, unhealthyAfter: 10, clock: clock)
        for count in 1...3 {
            let call = StartedCall(registry, "hold", timeout: .milliseconds(50))
            #expect(await Self.holding(count, registry))
            clock.advance(by: .milliseconds(50))
            #expect(call.outcome?.status == .timeout)
        }
        // Three threads are stuck, yet two live threads still serve new calls.
        #expect(await registry.invoke("echo", arguments: "{}").status == .ok)
        #expect(registry.poolStatistics.abandonedThreads == 3)
        _ = await registry.invoke("release", arguments: "{}")
        #expect(await eventually { registry.poolStatistics.abandonedThreads == 0 })
    }

    @Test func aPluginWithTooManyStuckCallsIsUnhealthy() async throws {
        let clock = ManualClock()
        let registry = try Self.registry(unhealthyAfter: 2, clock: clock)
        let gate = Paths.temporaryDirectory("gate") + "/open"
        for count in 1...2 {
            let call = StartedCall(registry, "hold", #"{"until": "\#(gate)"}"#, timeout: .milliseconds(50))
            #expect(await Self.holding(count, registry))
            clock.advance(by: .milliseconds(50))
            #expect(call.outcome?.status == .timeout)
        }
        let refused = await registry.invoke("echo", arguments: "{}")
        #expect(refused.status == .error)
        #expect(
            refused.error
                == #"plugin "behaviours" is unhealthy: 2 calls are still stuck after timing out; fix or remove the plugin, then reload it"#
        )
        // Once the stuck calls return, the plugin serves again.
        #expect(FileManager.default.createFile(atPath: gate, contents: Data()))
        #expect(await eventually { await registry.invoke("echo", arguments: "{}").status == .ok })
    }

    @Test func perCallTimeoutOverridesTheDefault() async throws {
        let clock = ManualClock()
        let registry = try Self.registry(timeout: .milliseconds(80), clock: clock)
        let byDefault = StartedCall(registry, "cooperative", #"{"ms": 600000}"#)
        let overridden = StartedCall(registry, "cooperative", #"{"ms": 600000}"#, timeout: .seconds(5))
        clock.advance(by: .milliseconds(80))
        #expect(byDefault.outcome?.error == "cooperative timed out after 80 ms")
        #expect(overridden.outcome == nil)
        clock.advance(by: .seconds(5))
        #expect(overridden.outcome?.error == "cooperative timed out after 5 s")
    }

    /// `start(onCallingThread:)`: the calling thread runs the call itself, under the same deadline; it counts as a
    /// pool thread only while inside the plugin.
    @Test func callsOnTheCallingThreadKeepTheDeadlineAndTheAccounting() async throws {
        let clock = ManualClock()
        let registry = try Self.registry(clock: clock)
        final class Pending: Sendable {
            let box = Mutex<SkillOutcome?>(nil)
            var outcome: SkillOutcome? { box.withLock { $0 } }
        }
        func startOnThread(_ skill: String, timeout: Duration) -> Pending {
            let pending = Pending()
            Thread {
                registry.start(SkillInvocation(skill: skill, timeout: timeout), onCallingThread: true) { outcome in
                    pending.box.withLock { $0 = outcome }
                }
            }.start()
            return pending
        }
        let echo = startOnThread("echo", timeout: .seconds(5))
        #expect(await eventually { echo.outcome != nil })
        #expect(echo.outcome?.result == [:])
        // The thread leaves the pool's count right after the completion ran.
        #expect(await eventually { registry.poolStatistics.liveThreads == 0 })
        let stuck = startOnThread("hold", timeout: .milliseconds(100))
        #expect(await Self.holding(1, registry))  // (a pool thread answers `held`, then idles)
        func busy() -> Int { registry.poolStatistics.liveThreads - registry.poolStatistics.idleThreads }
        // (The pool thread that answered `held` becomes idle a moment after its caller resumed.)
        #expect(await eventually { busy() == 1 }, "the calling thread counts while inside the plugin")
        clock.advance(by: .milliseconds(100))
        #expect(stuck.outcome?.error == "hold timed out after 100 ms", "the timer ends the call, not the thread")
        #expect(registry.poolStatistics.abandonedThreads == 1)
        #expect(busy() == 0)
        _ = await registry.invoke("release", arguments: "{}")
        #expect(await eventually { registry.poolStatistics.abandonedThreads == 0 })
        #expect(await eventually { busy() == 0 }, "the calling thread returned without joining the pool")
    }
}
