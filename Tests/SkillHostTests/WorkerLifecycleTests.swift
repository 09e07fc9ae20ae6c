import JSONRPC
import Testing

@testable import SkillHost

/// One worker process's life as the host sees it, transition by transition.
struct WorkerLifecycleTests {
    let crashed = WorkerTermination(waitStatus: 11, recentErrors: ["boom", "  "])

    func explain(_ termination: WorkerTermination) -> String {
        termination.explanation(plugin: "p", memoryLimit: nil, cpuLimit: nil)
    }

    @Test func aCrashIsExplainedFromHowTheProcessEnded() {
        var life = WorkerLifecycle()
        #expect(life.refusal == nil)
        life.described()
        let ending = life.reaped(crashed, closedChannelReason: "closed", explain: explain)
        #expect(
            ending
                == .init(
                    reason: "plugin \"p\" crashed (killed by SIGSEGV); its last words: boom", requested: false,
                    killed: false, forStuckCall: false))
        #expect(life.refusal == ending.reason, "later requests get the reason")
        #expect(life.termination?.signal == 11)
    }

    @Test func aKillIsToldAsTheKillerSaidAndOnlyOnce() {
        var life = WorkerLifecycle()
        let first = life.kill(because: "did not stop", forStuckCall: true)
        let second = life.kill(because: "again", forStuckCall: false)
        #expect(first)
        #expect(!second, "already being killed")
        #expect(life.refusal == "did not stop")
        let ending = life.reaped(crashed, closedChannelReason: "closed", explain: explain)
        #expect(ending == .init(reason: "did not stop", requested: false, killed: true, forStuckCall: true))
        #expect(life.termination == nil, "the host's kill is not how it ended by itself")
    }

    @Test func aRequestedStopIsNotACrashAndAClosedChannelIsSaid() {
        var stopping = WorkerLifecycle()
        let close = stopping.stop()
        #expect(close, "close its input")
        #expect(stopping.refusal == nil, "calls still in it may finish")
        let ended = stopping.reaped(crashed, closedChannelReason: "closed", explain: explain)
        #expect(ended.requested)
        let again = stopping.stop()
        #expect(!again, "gone already: nothing to close")

        var closed = WorkerLifecycle()
        closed.channelClosedWhileRunning()
        let ending = closed.reaped(crashed, closedChannelReason: "closed", explain: explain)
        #expect(ending.reason == "closed")
    }

    @Test func doomedCallsHoldNewCallsBackUntilResolved() {
        var life = WorkerLifecycle()
        life.doom(JSONRPCID(3))
        life.doom(JSONRPCID(4))
        #expect(life.hasKillPending)
        life.resolve(JSONRPCID(3))
        #expect(life.hasKillPending)
        life.resolve(JSONRPCID(4))
        #expect(!life.hasKillPending)
    }
}
