import Testing

@testable import SkillHost

/// The restart rules of a process-mode plugin's workers, with time driven by the test.
struct WorkerSupervisorTests {
    let t0 = ContinuousClock.now

    func supervisor(crashes: Int = 3) -> WorkerSupervisor {
        WorkerSupervisor(
            plugin: "crashy", maximumCrashes: crashes, crashWindow: .seconds(60), maximumBackoff: .seconds(5))
    }

    @Test func crashesDelayTheNextStartUntilACallSucceeds() {
        var plugin = supervisor(crashes: 100)
        #expect(plugin.start(at: t0) == .now)
        for pid: Int32 in [10, 11] {
            plugin.established(pid)
            _ = plugin.exited(
                pid: pid, reason: "plugin \"crashy\" crashed (killed by SIGSEGV)", requested: false,
                killedForStuckCall: false, hadCalls: true, at: t0)
        }
        #expect(plugin.start(at: t0) == .after(.milliseconds(50)), "two crashes in a row: wait")
        #expect(plugin.start(at: t0 + .milliseconds(50)) == .now)
        plugin.callSucceeded()
        plugin.established(12)
        _ = plugin.exited(
            pid: 12, reason: "crashed", requested: false, killedForStuckCall: false, hadCalls: true, at: t0)
        #expect(plugin.start(at: t0) == .now, "a call that succeeded resets the run")
    }

    @Test func onlyCrashesOfEstablishedWorkersCount() {
        var plugin = supervisor(crashes: 1)
        let notStarted = plugin.exited(
            pid: 20, reason: "crashed", requested: false, killedForStuckCall: false, hadCalls: false, at: t0)
        #expect(notStarted.notice == nil && notStarted.failing == nil, "its starter counted it")
        plugin.established(21)
        let asked = plugin.exited(
            pid: 21, reason: "stopped", requested: true, killedForStuckCall: false, hadCalls: false, at: t0)
        #expect(asked.notice == nil && asked.failing == nil, "the host asked it to stop")
        plugin.established(22)
        let stuck = plugin.exited(
            pid: 22, reason: "plugin \"crashy\" was restarted because slow did not stop", requested: false,
            killedForStuckCall: true, hadCalls: true, at: t0)
        #expect(stuck.failing == nil, "a kill for a stuck call is not a crash")
        #expect(stuck.notice?.level == .info)
        #expect(plugin.start(at: t0) == .now, "nor does it delay the next start")
    }

    @Test func tooManyCrashesMakeThePluginFailingOnce() {
        var plugin = supervisor(crashes: 2)
        plugin.established(30)
        let first = plugin.exited(
            pid: 30, reason: "plugin \"crashy\" crashed (killed by SIGSEGV)", requested: false,
            killedForStuckCall: false, hadCalls: false, at: t0)
        #expect(
            first.notice
                == .init(
                    level: .warning,
                    message: "plugin \"crashy\" crashed (killed by SIGSEGV); the worker is restarted on the next call"),
            "a crash outside any call is news")
        #expect(first.failing == nil)
        let failing = plugin.startFailed(
            "plugin \"crashy\" could not be restarted: it crashed while loading", at: t0 + .seconds(1))
        let sentence =
            "plugin \"crashy\" is failing: its worker crashed 2 times within 60 s (last: plugin \"crashy\" could not "
            + "be restarted: it crashed while loading); fix the plugin and replace its file to load it again"
        #expect(failing == sentence)
        #expect(plugin.start(at: t0 + .seconds(2)) == .refused(sentence))
        #expect(plugin.startFailed("again", at: t0 + .seconds(3)) == nil, "said once")
        plugin.stop()
        #expect(plugin.start(at: t0) == .refused("plugin \"crashy\" was unloaded"))
    }
}
