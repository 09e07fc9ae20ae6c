import Foundation
import Synchronization
import TestSupport
import Testing

@testable import SkillHost
@testable import SkillJSON

/// The invocation runner: deadlines, abandonment, cancellation, concurrency limits, SKILL_SERIAL.
/// Time bounds here are generous upper limits for a loaded 2-core machine; the precise figures come from the
/// benchmark, not from tests. Serialized so the suite's own calls do not compete for the two cores.
@Suite(.serialized)
struct RunnerTests {
    static func registry(
        timeout: Duration = .seconds(10), threads: Int = 64, perPlugin: Int = 8, unhealthyAfter: Int = 4
    ) throws -> SkillRegistry {
        let registry = try makeRegistry(
            timeout: timeout, maximumThreads: threads, perPluginConcurrency: perPlugin, unhealthyAfter: unhealthyAfter)
        _ = try registry.load(file: try Fixture.compileFile("behaviours.c")).get()
        return registry
    }

    @Test func aBlockingCallTimesOutPromptlyWhileOtherCallsKeepWorking() async throws {
        let registry = try Self.registry()
        let blocked = Task {
            let start = ContinuousClock.now
            let outcome = await registry.invoke("block", arguments: #"{"ms": 3000}"#, timeout: .milliseconds(200))
            return (outcome, ContinuousClock.now - start)
        }
        // Other calls run normally while the blocked one is stuck.
        for _ in 0..<20 { #expect(await registry.invoke("echo", arguments: #"{"k":1}"#).status == .ok) }
        let (outcome, waited) = await blocked.value
        #expect(outcome.status == .timeout)
        #expect(outcome.error == "block timed out after 200 ms")
        #expect(waited >= .milliseconds(200))
        #expect(
            waited < .seconds(3),
            "resumed \(waited) after the call started (a loaded machine; the benchmark measures it precisely)")
        #expect(registry.poolStatistics.abandonedThreads == 1)
        #expect(await registry.invoke("echo", arguments: "{}").status == .ok)
    }

    @Test func theDeadlineHoldsWhenTheCooperativePoolIsBusy() async throws {
        let registry = try Self.registry()
        // Saturate the cooperative pool's threads with blocking work for a moment (what plugin code must never do).
        let hogs = (0..<4).map { _ in Task.detached { _ = usleep(150_000) } }
        let outcome = await registry.invoke("block", arguments: #"{"ms": 2000}"#, timeout: .milliseconds(100))
        for hog in hogs { await hog.value }
        #expect(outcome.status == .timeout)
    }

    @Test func cooperativeSkillsSeeIsCancelled() async throws {
        let registry = try Self.registry()
        let outcome = await registry.invoke("cooperative", arguments: #"{"ms": 5000}"#, timeout: .milliseconds(100))
        #expect(outcome.status == .timeout)
        // The plugin notices is_cancelled and returns, so its thread comes back to the pool.
        var returned = false
        for _ in 0..<100 where !returned {
            try await Task.sleep(for: .milliseconds(20))
            returned = registry.poolStatistics.abandonedThreads == 0
        }
        #expect(returned)
    }

    @Test func cancellingTheCallerCancelsTheCall() async throws {
        let registry = try Self.registry()
        let task = Task { await registry.invoke("block", arguments: #"{"ms": 3000}"#) }
        try await Task.sleep(for: .milliseconds(50))
        let start = ContinuousClock.now
        task.cancel()
        let outcome = await task.value
        #expect(outcome.status == .cancelled)
        #expect(outcome.error == "block was cancelled")
        #expect(ContinuousClock.now - start < .seconds(1))
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
        let registry = try Self.registry(perPlugin: 1)
        async let first = registry.invoke("block", arguments: #"{"ms": 1500}"#)
        while registry.poolStatistics.liveThreads == 0 || registry.poolStatistics.idleThreads > 0 {
            try await Task.sleep(for: .milliseconds(5))
        }
        let second = await registry.invoke("echo", arguments: "{}", timeout: .milliseconds(100))
        #expect(second.status == .timeout)
        #expect(
            second.error
                == #"echo timed out after 100 ms while waiting for a free slot (too many calls to plugin "behaviours")"#
        )
        #expect(await first.status == .ok)
    }

    @Test func abandonedCallsDoNotShrinkThePool() async throws {
        let registry = try Self.registry(threads: 2, unhealthyAfter: 10)
        for _ in 0..<3 {
            #expect(
                await registry.invoke("block", arguments: #"{"ms": 5000}"#, timeout: .milliseconds(50)).status
                    == .timeout)
        }
        // Three threads are stuck, yet two live threads still serve new calls.
        #expect(await registry.invoke("echo", arguments: "{}").status == .ok)
        #expect(registry.poolStatistics.abandonedThreads == 3)
    }

    @Test func aPluginWithTooManyStuckCallsIsUnhealthy() async throws {
        let registry = try Self.registry(unhealthyAfter: 2)
        for _ in 0..<2 {
            #expect(
                await registry.invoke("block", arguments: #"{"ms": 2500}"#, timeout: .milliseconds(50)).status
                    == .timeout)
        }
        let refused = await registry.invoke("echo", arguments: "{}")
        #expect(refused.status == .error)
        #expect(
            refused.error
                == #"plugin "behaviours" is unhealthy: 2 calls are still stuck after timing out; fix or remove the plugin, then reload it"#
        )
        // Once the stuck calls return, the plugin serves again.
        var recovered = false
        for _ in 0..<400 where !recovered {
            try await Task.sleep(for: .milliseconds(20))
            recovered = await registry.invoke("echo", arguments: "{}").status == .ok
        }
        #expect(recovered)
    }

    @Test func perCallTimeoutOverridesTheDefault() async throws {
        let registry = try Self.registry(timeout: .milliseconds(80))
        #expect(await registry.invoke("cooperative", arguments: #"{"ms": 300}"#).status == .timeout)
        #expect(await registry.invoke("cooperative", arguments: #"{"ms": 30}"#, timeout: .seconds(5)).status == .ok)
    }

    /// `start(onCallingThread:)`: the calling thread runs the call itself, under the same deadline; it counts as a
    /// pool thread only while inside the plugin.
    @Test func callsOnTheCallingThreadKeepTheDeadlineAndTheAccounting() async throws {
        let registry = try Self.registry()
        func startOnThread(_ skill: String, _ arguments: String, timeout: Duration) async -> (SkillOutcome, Duration) {
            await withCheckedContinuation { continuation in
                let thread = Thread {
                    let start = ContinuousClock.now
                    registry.start(skill, arguments: arguments, timeout: timeout, onCallingThread: true) { outcome in
                        continuation.resume(returning: (outcome, ContinuousClock.now - start))
                    }
                }
                thread.start()
            }
        }
        let (echo, _) = await startOnThread("echo", #"{"k": 1}"#, timeout: .seconds(5))
        #expect(echo.result == ["k": 1])
        // The thread leaves the pool's count right after the completion ran.
        for _ in 0..<200 where registry.poolStatistics.liveThreads > 0 { try await Task.sleep(for: .milliseconds(5)) }
        #expect(registry.poolStatistics.liveThreads == 0)
        let (stuck, waited) = await startOnThread("block", #"{"ms": 600}"#, timeout: .milliseconds(100))
        #expect(stuck.error == "block timed out after 100 ms")
        #expect(waited < .milliseconds(400), "the completion came \(waited) after the start")
        #expect(registry.poolStatistics.abandonedThreads == 1)
        for _ in 0..<200 where registry.poolStatistics.abandonedThreads > 0 {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(registry.poolStatistics.abandonedThreads == 0)
        #expect(registry.poolStatistics.liveThreads == 0)
    }
}
