import Foundation
import TestSupport
import Testing

@testable import SkillHost
@testable import SkillJSON

/// The runner's bookkeeping driven event by event, with no threads and no clock.
struct InvocationStateMachineTests {
    typealias Machine = InvocationStateMachine

    /// Jobs for skills of the behaviours fixture (the machine reads their plugin and flags only).
    final class Jobs: Sendable {
        let registry: SkillRegistry

        init() throws {
            registry = try makeRegistry()
            _ = try registry.load(file: try Fixture.compileFile("behaviours.c")).get()
        }

        func job(_ id: String) -> Job {
            guard case .plugin(let skill)? = registry.catalog.entry(id) else { preconditionFailure("no skill \(id)") }
            let context = CallContext(
                skill: skill, onProgress: nil, log: { _ in }, resultLimit: 1 << 20, client: "test")
            return Job(skill: skill, arguments: [:], argumentText: nil, context: context, timeout: .seconds(1))
        }
    }

    static func spawned(_ dispatches: [Machine.Dispatch]) -> [ObjectIdentifier] {
        dispatches.compactMap { if case .spawn(let job) = $0 { ObjectIdentifier(job) } else { nil } }
    }

    @Test func jobsQueueRunAndFinishWithinTheLimits() throws {
        let jobs = try Jobs()
        var machine = Machine(limits: .init(maximumThreads: 2, perPluginConcurrency: 1, unhealthyAfterStuckCalls: 2))
        let first = jobs.job("echo")
        let second = jobs.job("echo")
        guard case .queued(let started) = machine.submit(first, runHere: false) else {
            Issue.record("the first job did not queue")
            return
        }
        #expect(Self.spawned(started) == [ObjectIdentifier(first)])
        #expect(machine.phase(of: first) == .running)
        // One call per plugin at a time: the second waits.
        guard case .queued(let none) = machine.submit(second, runHere: false) else {
            Issue.record("the second job did not queue")
            return
        }
        #expect(none.isEmpty)
        #expect(machine.phase(of: second) == .queued)
        #expect(machine.activeCalls(of: ObjectIdentifier(first.skill.plugin)) == 2)
        // The first returns on its thread, which takes the second directly.
        let thread = PoolThread()
        let (delivery, next, more) = machine.returned(first, thread: thread)
        #expect(delivery == .deliver)
        guard case .run(let following) = next else {
            Issue.record("the thread did not take the waiting job")
            return
        }
        #expect(following === second)
        #expect(more.isEmpty)
        #expect(machine.phase(of: first) == nil, "a finished job leaves the machine")
        let (_, after, _) = machine.returned(second, thread: thread)
        guard case .wait = after else {
            Issue.record("an idle thread should wait")
            return
        }
        #expect(machine.statistics == .init(liveThreads: 1, idleThreads: 1, abandonedThreads: 0, queued: 0))
    }

    @Test func deadlinesAbandonRunningJobsAndDequeueWaitingOnes() throws {
        let jobs = try Jobs()
        var machine = Machine(limits: .init(maximumThreads: 4, perPluginConcurrency: 1, unhealthyAfterStuckCalls: 1))
        let running = jobs.job("hold")
        let waiting = jobs.job("echo")
        _ = machine.submit(running, runHere: false)
        _ = machine.submit(waiting, runHere: false)
        guard case .dequeued(let none) = machine.end(waiting) else {
            Issue.record("a queued job should leave the queue")
            return
        }
        #expect(none.isEmpty)
        #expect(machine.phase(of: waiting) == nil)
        #expect(machine.end(waiting).isUntracked, "a late second ending is harmless")
        guard case .abandoned = machine.end(running) else {
            Issue.record("a running job should be abandoned")
            return
        }
        #expect(machine.phase(of: running) == .abandoned)
        #expect(machine.end(running).isAlreadyAbandoned)
        #expect(machine.stuckCalls(of: ObjectIdentifier(running.skill.plugin)) == 1)
        #expect(machine.statistics == .init(liveThreads: 0, idleThreads: 0, abandonedThreads: 1, queued: 0))
        // With one stuck call the plugin is unhealthy: new calls are refused with a sentence.
        guard case .rejected(let message) = machine.submit(jobs.job("echo"), runHere: false) else {
            Issue.record("an unhealthy plugin should refuse")
            return
        }
        #expect(
            message
                == #"plugin "behaviours" is unhealthy: 1 call is still stuck after timing out; fix or remove the plugin, then reload it"#
        )
        // The abandoned call finally returns: its result is dropped and its thread rejoins the pool.
        let (delivery, next, _) = machine.returned(running, thread: PoolThread())
        #expect(delivery == .drop)
        guard case .wait = next else {
            Issue.record("the thread should rejoin the pool")
            return
        }
        #expect(machine.statistics == .init(liveThreads: 1, idleThreads: 1, abandonedThreads: 0, queued: 0))
        #expect(machine.stuckCalls(of: ObjectIdentifier(running.skill.plugin)) == 0)
    }

    @Test func aSerialSkillRunsOneCallAtATimeAndTheCallingThreadCanRunAJob() throws {
        let jobs = try Jobs()
        var machine = Machine(limits: .init(maximumThreads: 4, perPluginConcurrency: 8, unhealthyAfterStuckCalls: 4))
        let first = jobs.job("serial_probe")
        let second = jobs.job("serial_probe")
        guard case .runHere = machine.submit(first, runHere: true) else {
            Issue.record("the calling thread should run a job that may run at once")
            return
        }
        guard case .queued(let none) = machine.submit(second, runHere: true) else {
            Issue.record("a second serial call should queue")
            return
        }
        #expect(none.isEmpty)
        // The calling thread leaves the pool's count; the waiting call gets a thread of its own.
        let (delivery, next, dispatches) = machine.returned(first, thread: nil)
        #expect(delivery == .deliver)
        guard case .exit = next else {
            Issue.record("the calling thread should go back to its caller")
            return
        }
        #expect(Self.spawned(dispatches) == [ObjectIdentifier(second)])
        #expect(machine.statistics.liveThreads == 1)
    }

    @Test func aReturnFromAJobThatNeverRanIsAProgrammingError() async {
        await #expect(processExitsWith: .failure) {
            let jobs = try Jobs()
            var machine = Machine(
                limits: .init(maximumThreads: 1, perPluginConcurrency: 1, unhealthyAfterStuckCalls: 1))
            _ = machine.returned(jobs.job("echo"), thread: nil)
        }
    }
}

extension InvocationStateMachine.Ended {
    var isUntracked: Bool { if case .untracked = self { true } else { false } }
    var isAlreadyAbandoned: Bool { if case .alreadyAbandoned = self { true } else { false } }
}
