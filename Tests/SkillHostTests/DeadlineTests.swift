import Foundation
import SkillJSON
import TestSupport
import Testing

@testable import SkillHost

/// One deadline on the host's clock for every wait (issue #65: external tools and both MCP transports raced
/// `Task.sleep`, ignoring the injected clock): driven here by a manual clock, so no test waits for real time.
struct DeadlineTests {
    /// Waits (with a generous cap) until `condition` holds, yielding meanwhile.
    func until(_ condition: () -> Bool) async {
        var deadline = PatientDeadline(.seconds(60))
        while !condition(), !deadline.passed() { try? await Task.sleep(for: .milliseconds(1)) }
    }

    @Test func aRaceEndsWhenTheClockSaysSoAndNotBefore() async {
        let clock = ManualClock()
        let race = Task {
            await clock.race(.seconds(30)) {
                // Never answers unless cancelled: only the clock can end this race.
                _ = await clock.sleep(for: .seconds(3600))
                return "answered"
            } expired: {
                "expired"
            }
        }
        await until { clock.pendingTimers == 2 }
        clock.advance(by: .seconds(29))
        #expect(clock.pendingTimers == 2, "29 s of 30: both still waiting")
        clock.advance(by: .seconds(1))
        #expect(await race.value == "expired")
        // The loser's timer went with it.
        await until { clock.pendingTimers == 0 }
        #expect(clock.pendingTimers == 0)
    }

    @Test func workThatAnswersFirstWinsAndCancelsTheTimer() async {
        let clock = ManualClock()
        let value = await clock.race(.seconds(30)) {
            "answered"
        } expired: {
            "expired"
        }
        #expect(value == "answered")
        await until { clock.pendingTimers == 0 }
        #expect(clock.pendingTimers == 0)
    }

    @Test func aCancelledSleepEndsAtOnce() async {
        let clock = ManualClock()
        let sleeper = Task { await clock.sleep(for: .seconds(60)) }
        sleeper.cancel()
        #expect(await sleeper.value == false)
        #expect(clock.pendingTimers == 0)
    }

    /// An external tool (an MCP server's, through the registry) times out by the registry's clock, worded as a
    /// plugin call's timeout is.
    @Test func anExternalToolTimesOutByTheRegistrysClock() async throws {
        let clock = ManualClock()
        let registry = try makeRegistry("deadline") { configuration in
            configuration.clock = clock
            configuration.defaultTimeout = .seconds(10)
        }
        defer { registry.shutdown() }
        let hang = ExternalSkill(
            info: SkillInfo(
                id: "remote_hang", title: "Hang", description: "Never answers.", plugin: "remote", pluginVersion: "1",
                file: "mcp server remote", risk: .readOnly, flags: [], timeout: nil,
                inputSchema: ["type": "object"], schemaIsGenerated: false, kind: .external)
        ) { _ in
            _ = await clock.sleep(for: .seconds(3600))
            return .success("late")
        }
        #expect(
            registry.registerExternal(
                source: "remote", version: "1", description: "", location: "mcp server remote", skills: [hang]
            ).isEmpty)
        let call = Task { await registry.invoke("remote_hang", arguments: "{}") }
        await until { clock.pendingTimers >= 2 }
        clock.advance(by: .seconds(10))
        let outcome = await call.value
        #expect(outcome.code == .timeout)
        #expect(outcome.error == "remote_hang timed out after 10 s")
    }
}
