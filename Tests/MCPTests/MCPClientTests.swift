import Foundation
import SkillHost
import Synchronization
import TestSupport
import Testing

@testable import Agent
@testable import MCP
@testable import SkillJSON

/// MCP servers as skill sources: the reference `mcp-server-time` from PyPI, a handshake-only server, and
/// `skillhost mcp` itself (for list_changed).
@Suite(.serialized)
struct MCPClientTests {
    /// Restart waits, recorded instead of slept: a wait lasts until the test calls `release()`.
    final class Waits: Sendable {
        let recorded = Mutex<[Duration]>([])
        private let released = Mutex(false)

        func release() { released.withLock { $0 = true } }

        func wait(_ duration: Duration) async {
            recorded.withLock { $0.append(duration) }
            while !released.withLock({ $0 }) { try? await Task.sleep(for: .milliseconds(10)) }
        }
    }

    func source(
        _ name: String, _ command: String, _ arguments: [String] = [], registry: SkillRegistry, waits: Waits = Waits()
    ) -> MCPSkillSource {
        MCPSkillSource(
            name: name, configuration: .patient(command: command, arguments: arguments), registry: registry,
            sleep: { await waits.wait($0) })
    }

    @Test func mcpServerTimeToolsJoinTheRegistryAndAnAgentCallsOne() async throws {
        let python = try await PythonPeers.ensure()
        let registry = try makeRegistry()
        registry.loadFolder(Paths.products) { $0.hasPrefix("libskill-") }
        let time = source(
            "time", (python as NSString).deletingLastPathComponent + "/mcp-server-time", ["--local-timezone", "UTC"],
            registry: registry)
        try await time.start()
        defer { time.stop() }
        #expect(time.connection?.statelessVersion == "2026-07-28", "the modern generation after server/discover")
        let info = try #require(registry.skill("get_current_time"))
        #expect(info.plugin == "mcp:time")
        #expect(info.risk == .readOnly)
        #expect(info.flags.contains(.idempotent))
        #expect(info.kind == .external)
        let now = await registry.invoke("get_current_time", arguments: #"{"timezone":"Asia/Tokyo"}"#)
        #expect(now.status == .ok)
        #expect(now.result?["timezone"] == "Asia/Tokyo")
        let bad = await registry.invoke("get_current_time", arguments: #"{"timezone":"Mars/Olympus"}"#)
        #expect(bad.status == .error)
        #expect(bad.error?.contains("Mars/Olympus") == true)
        let missing = await registry.invoke("get_current_time", arguments: "{}")
        #expect(missing.status == .invalidArgs)
        #expect(missing.error == #"$: missing required property "timezone""#)

        let provider = ScriptedProvider([
            .calls([("get_current_time", #"{"timezone":"Europe/Paris"}"#)]), .text("done"),
        ])
        let session = AgentSession(skills: registry, provider: provider)
        let events = await collect(session.send("what time is it in Paris"))
        #expect(
            events.contains {
                if case .toolCall(let call) = $0, call.skill == "get_current_time",
                    case .finished(let result, _) = call.phase
                {
                    result["timezone"] == "Europe/Paris"
                } else {
                    false
                }
            })
        #expect(events.last == .finished(.answered))
    }

    @Test func handshakeOnlyServersRestartsAndNames() async throws {
        let python = try await PythonPeers.ensure()
        let registry = try makeRegistry()
        registry.loadFolder(Paths.products) { $0.hasPrefix("libskill-") }
        let waits = Waits()  // a restart waits until the test releases it
        let legacy = source(
            "legacy", python, [Paths.fixtures + "/legacy_mcp_server.py"], registry: registry, waits: waits)
        try await legacy.start()
        defer { legacy.stop() }
        #expect(legacy.connection?.statelessVersion == nil, "fell back to initialize")
        #expect(await registry.invoke("echo_text", arguments: #"{"text":"hi"}"#).result == "hi")
        // A tool without annotations is treated as destructive (untrusted: ask before running it).
        #expect(registry.skill("crash")?.risk == .destructive)

        let crashed = await registry.invoke(SkillInvocation(skill: "crash", confirmer: .confirmed))
        #expect(crashed.status == .error)
        #expect(crashed.error?.hasPrefix("MCP server legacy exited") == true)
        let meanwhile = await registry.invoke("echo_text", arguments: #"{"text":"x"}"#)
        #expect(meanwhile.status == .error)
        #expect(meanwhile.error?.contains("not running") == true || meanwhile.error?.contains("exited") == true)
        waits.release()
        #expect(
            await eventually { await registry.invoke("echo_text", arguments: #"{"text":"again"}"#).result == "again" },
            "restarted after the crash")
        #expect(waits.recorded.withLock { $0 } == [.milliseconds(500)], "the first restart waits 0.5 s")
        #expect(
            (1...8).map { MCPSkillSource.restartDelay(afterFailures: $0) } == [
                .milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(16), .seconds(30),
                .seconds(30),
            ])

        // A name that a native skill already has gets the server's prefix.
        #expect(MCPSkillSource.skillID(for: "calculator", server: "other", taken: ["calculator"]) == "other_calculator")
        #expect(MCPSkillSource.skillID(for: "Get-Time", server: "x", taken: []) == "x_get_time")
        // Two names that sanitise alike both stay reachable: the later one, in the server's order, gets a suffix.
        #expect(
            MCPSkillSource.skillIDs(for: ["x-y", "x.y", "plain", "x y"], server: "fm", taken: []) == [
                "fm_x_y", "fm_x_y_2", "plain", "fm_x_y_3",
            ])
        #expect(MCPSkillSource.skillIDs(for: ["plain"], server: "fm", taken: ["plain"]) == ["fm_plain"])
    }

    /// A server slower to start than the 3 s probe is not dropped: the probe is asked again (with `initialize`
    /// beside it) within the start timeout, and the stateless server's late answer wins over its refusal of
    /// `initialize`.
    @Test func aSlowStartingStatelessServerIsProbedAgain() async throws {
        let python = try await PythonPeers.ensure()
        let registry = try makeRegistry()
        let slow = source("slow", python, [Paths.fixtures + "/slow_stateless_server.py"], registry: registry)
        try await slow.start()
        defer { slow.stop() }
        #expect(slow.connection?.statelessVersion == "2026-07-28")
        #expect(await registry.invoke("slow_echo", arguments: #"{"text":"late"}"#).result == "late")
    }

    /// A 2026-07-28 server on the official SDK 2.x announces tool changes only on subscriptions/listen: the
    /// client's stream brings them.
    @Test func anOfficialSDKServerAnnouncesNewToolsThroughListen() async throws {
        let python = try await PythonPeers.ensure()
        let registry = try makeRegistry()
        let changing = source(
            "changing", python, [Paths.fixtures + "/sdk_changing_server.py"], registry: registry)
        try await changing.start()
        defer { changing.stop() }
        #expect(changing.connection?.statelessVersion == "2026-07-28")
        #expect(registry.skill("extra") == nil)
        #expect(await registry.invoke("grow", arguments: "{}").status == .ok)
        #expect(await eventually { registry.skill("extra") != nil }, "the listen stream brought the change")
    }

    /// A server that floods list_changed gets one tools/list after another, not one per notification.
    @Test func aFloodOfListChangedIsCoalesced() async throws {
        let python = try await PythonPeers.ensure()
        let registry = try makeRegistry()
        let flood = source("flood", python, [Paths.fixtures + "/flooding_mcp_server.py"], registry: registry)
        try await flood.start()
        defer { flood.stop() }
        // The count settles once the flood has been read; a generous cap, not a timing.
        var last = -1
        var served = 0
        let settled = await eventually {
            if case .int(let count)? = await registry.invoke("lists", arguments: "{}").result { served = Int(count) }
            defer { last = served }
            return served == last && served > 0
        }
        #expect(settled)
        #expect(served < 1000, "10,000 notifications made \(served) tools/list requests")
    }

    /// Issue #67: a server's views (MCP Apps) are read once and bounded — a 50 MB page and a page of the wrong type
    /// are left out with a sentence, their tools working without them — and its tools' visibility is honoured.
    @Test func aServersViewsAreReadBoundedAndItsVisibilityHonoured() async throws {
        let python = try await PythonPeers.ensure()
        let registry = try makeRegistry()
        let logged = Mutex<[String]>([])
        let apps = MCPSkillSource(
            name: "apps", configuration: .patient(command: python, arguments: [Paths.fixtures + "/apps_mcp_server.py"]),
            registry: registry, log: { record in logged.withLock { $0.append(record.message) } })
        try await apps.start()
        defer { apps.stop() }
        #expect(await registry.invoke("announced", arguments: "{}").result == "yes", "the client announced MCP Apps")
        let small = try #require(registry.skill("show_small")?.view)
        #expect(small.uri == "ui://apps/small" && small.plugin == "mcp:apps" && small.prefersBorder)
        #expect(small.html == "<!doctype html><title>small</title><p>small</p>")
        #expect(small.csp == ["connectDomains": ["https://api.example.com"]])
        #expect(registry.skill("show_big")?.view == nil && registry.skill("show_typed")?.view == nil)
        #expect(
            logged.withLock { $0 }.sorted() == [
                "MCP server apps's view ui://apps/big is 50.0 MB; a view is at most 4 MB; its tools are shown without it",
                "MCP server apps's view ui://apps/typed is text/html, not text/html;profile=mcp-app; its tools are "
                    + "shown without it",
            ], "\(logged.withLock { $0 })")
        #expect(registry.skill("refresh")?.audience == [.view])
        #expect(registry.skill("model_only")?.audience == [.model])
        #expect(registry.skill("announced")?.audience == [.model, .view])
        // A tool with a view, or only for views, gives the whole result, as its view takes it; another the value.
        let shown = await registry.invoke("show_small", arguments: "{}").result
        #expect(shown?["content"] == [["type": "text", "text": "show_small"]], "\(String(describing: shown))")
        #expect(await registry.invoke("refresh", arguments: "{}").result?["content"] != nil)
        #expect(await registry.invoke("model_only", arguments: "{}").result == "model_only")
    }

    @Test func listChangedRefreshesTheTools() async throws {
        let folder = Paths.temporaryDirectory("mcp-served")
        let home = Paths.temporaryDirectory("mcp-served-home")
        let registry = try makeRegistry()
        var configuration = MCPServerConfiguration.patient(
            command: Paths.skillhost, arguments: ["mcp", "--no-default-plugins", "--plugins", folder])
        configuration.environment = ["XDG_DATA_HOME": home, "XDG_CONFIG_HOME": home, "HOME": home]
        let served = MCPSkillSource(name: "served", configuration: configuration, registry: registry)
        try await served.start()
        defer { served.stop() }
        #expect(registry.skills.isEmpty)
        _ = try Fixture.compileFile("typed.c", into: folder)
        #expect(
            await eventually { registry.skill("twice64") != nil },
            "tools/list_changed made the client list the tools again")
        #expect(await registry.invoke("twice64", arguments: #"{"x":21}"#).result == .int(42))
    }
}

extension MCPServerConfiguration {
    /// A server started with deadlines for a machine that may be very busy (two cores, both saturated): a Python
    /// peer can take tens of seconds to import its SDK there. Limits, not measurements — the tests wait for events.
    static func patient(command: String, arguments: [String] = []) -> MCPServerConfiguration {
        var configuration = MCPServerConfiguration(command: command, arguments: arguments)
        configuration.startTimeout = .seconds(120)
        configuration.callTimeout = .seconds(120)
        // A third-party server keeps its own caches in a home of its own, never the suite's.
        let home = Paths.temporaryDirectory("server-home")
        configuration.environment = ["HOME": home, "XDG_DATA_HOME": home + "/data", "XDG_CACHE_HOME": home + "/cache"]
        return configuration
    }
}
