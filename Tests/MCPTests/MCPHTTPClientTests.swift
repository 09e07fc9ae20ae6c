import Foundation
import TestSupport
import Testing

@testable import MCP
@testable import SkillHost

/// skillhost as the client of MCP servers over Streamable HTTP: servers built on FastMCP and on the official SDK
/// (both from PyPI), and `skillhost mcp --http` itself (with a token, and tool changes over subscriptions/listen).
struct MCPHTTPClientTests {
    /// Starts `http_mcp_server.py <kind>` and returns the process and its endpoint.
    static func peer(_ kind: String) async throws -> (Process, URL) {
        let python = try await PythonPeers.ensure()
        return try await offPool {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: python)
            process.arguments =
                kind == "legacy"
                ? [Paths.fixtures + "/legacy_http_server.py"] : [Paths.fixtures + "/http_mcp_server.py", kind]
            // A third-party server keeps its own caches (FastMCP's version check) in a home of its own.
            process.environment = cliEnvironment(home: Paths.temporaryDirectory("peer-home"))
            let errors = privatePipe()
            process.standardError = errors
            process.standardOutput = FileHandle.nullDevice
            try launch(process)
            var text = ""
            let handle = errors.fileHandleForReading
            let deadline = ContinuousClock.now + .seconds(120)
            while ContinuousClock.now < deadline {
                let data = handle.availableData
                if data.isEmpty { break }
                text += String(decoding: data, as: UTF8.self)
                if let range = text.range(of: #"listening on 127\.0\.0\.1:\d+"#, options: .regularExpression),
                    let port = text[range].split(separator: ":").last
                {
                    Thread { while !handle.availableData.isEmpty {} }.start()
                    guard let url = URL(string: "http://127.0.0.1:\(port)/mcp") else { break }
                    return (process, url)
                }
            }
            process.terminate()
            throw FixtureError.compileFailed("\(kind) server did not start: \(text)")
        }
    }

    /// Ends a peer at once (SIGKILL: a test peer needs no graceful shutdown, and uvicorn's waits for open
    /// connections) and reaps it.
    static func stop(_ process: Process) {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    static func source(_ name: String, _ url: URL, registry: SkillRegistry, token: String? = nil) -> MCPSkillSource {
        var configuration = MCPServerConfiguration.patient(command: "")
        configuration.url = url
        if token != nil { configuration.bearerTokenEnvironment = "SKILLHOST_TEST_PEER_TOKEN" }
        return MCPSkillSource(name: name, configuration: configuration, registry: registry)
    }

    @Test(arguments: ["fastmcp", "sdk"])
    func aPythonServerOverHTTPBecomesSkills(kind: String) async throws {
        let (process, url) = try await Self.peer(kind)
        defer { Self.stop(process) }
        let registry = try makeRegistry()
        let source = Self.source(kind, url, registry: registry)
        try await source.start()
        defer { source.stop() }
        let shout = registry.skills.first { $0.id.hasSuffix("shout") && !$0.id.contains("slow") }
        #expect(shout != nil, "\(registry.skills.map(\.id))")
        #expect(shout?.risk == .readOnly)
        let shouted = await registry.invoke(shout?.id ?? "", arguments: #"{"text":"hi"}"#)
        #expect(shouted.result == "HI!" || shouted.result == ["result": "HI!"], "\(shouted)")
        // A call past its deadline is cancelled (the connection is closed) and reported as a timeout.
        let slow = registry.skills.first { $0.id.hasSuffix("slow_shout") }?.id ?? ""
        let timedOut = await registry.invoke(
            slow, arguments: #"{"text":"x","seconds":30}"#, timeout: .milliseconds(300))
        #expect(timedOut.status == .timeout, "\(timedOut)")
        let summary = registry.plugins.first { $0.name == "mcp:\(kind)" }
        #expect(summary?.placementText == "remote (MCP over HTTP)")
    }

    /// A server of the 2025-11-25 form only: the probe fails, `initialize` mints a session, later requests name it.
    /// The session-only peer (which also has the hostile tools), started and registered as the source "legacy".
    static func legacyPeer() async throws -> (process: Process, registry: SkillRegistry, source: MCPSkillSource) {
        let (process, url) = try await Self.peer("legacy")
        let registry = try makeRegistry()
        let source = Self.source("legacy", url, registry: registry)
        do { try await source.start() } catch {
            Self.stop(process)
            throw error
        }
        return (process, registry, source)
    }

    @Test func aSessionOnlyServerIsSpokenToInItsForm() async throws {
        let (process, registry, source) = try await Self.legacyPeer()
        defer { Self.stop(process) }
        defer { source.stop() }
        #expect(source.connection?.statelessVersion == nil, "fell back to the session form")
        #expect(await registry.invoke("legacy_echo", arguments: #"{"text":"old"}"#).result == "old")
    }

    /// A hostile server's answers are read only up to a bound: an SSE data line that never ends is refused at 16 MB,
    /// a 1 GB Content-Length before a byte of it is read — long before the deadline (memory: see the next test).
    @Test func aHostileServersAnswersAreBounded() async throws {
        let (process, registry, source) = try await Self.legacyPeer()
        defer { Self.stop(process) }
        defer { source.stop() }
        let started = ContinuousClock.now
        let flood = await registry.invoke(
            SkillInvocation(skill: "flood_sse", argumentText: "{}", timeout: .seconds(90)))
        #expect(flood.status == .error)
        #expect(
            flood.error?.hasSuffix("MCP server legacy sent an event of more than 16 MB without ending it") == true,
            "\(flood.error ?? "")")
        let huge = await registry.invoke(
            SkillInvocation(skill: "huge_length", argumentText: "{}", timeout: .seconds(90)))
        #expect(
            huge.error?.hasSuffix(
                "MCP server legacy announced 1073741824 bytes (Content-Length), more than the 64 MB read") == true,
            "\(huge.error ?? "")")
        #expect(ContinuousClock.now - started < .seconds(90), "refused, not timed out")
    }

    /// The endless event costs a bounded amount of memory, not what the server manages to send before the cut: the
    /// transport pauses reading while the consumer is behind. The peak resident size of `skillhost call` is read by
    /// its parent (getrusage of the waited child); it was 1.1 GB with Foundation's URLSession, about 70–90 MB now.
    @Test func anEndlessEventCostsBoundedMemory() async throws {
        let (process, url) = try await Self.peer("legacy")
        defer { Self.stop(process) }
        let home = Paths.temporaryDirectory("mcp-flood")
        try FileManager.default.createDirectory(atPath: home + "/config/skillhost", withIntermediateDirectories: true)
        let config = #"{"mcpServers": {"legacy": {"url": "\#(url.absoluteString)"}}}"#
        try config.write(toFile: home + "/config/skillhost/config.json", atomically: true, encoding: .utf8)
        let measure = """
            import resource, subprocess, sys
            run = subprocess.run(sys.argv[1:], capture_output=True, text=True)
            sys.stdout.write(run.stderr)
            print("peak-kb", resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
            """
        let result = try await runProcessOffPool(
            "/usr/bin/env",
            ["python3", "-c", measure, Paths.skillhost, "call", "flood_sse", "{}", "--timeout", "90s"],
            environment: cliEnvironment(home: home))
        #expect(result.stdout.contains("MCP server legacy sent an event of more than 16 MB without ending it"))
        let peak = result.stdout.split(separator: "\n").last { $0.hasPrefix("peak-kb ") }
            .flatMap { Int($0.dropFirst("peak-kb ".count)) }
        #expect(peak != nil, "\(result.stdout)")
        #expect((peak ?? .max) < 128 << 10, "peak resident \((peak ?? 0) >> 10) MB")
    }

    @Test func skillhostOverHTTPWithATokenAndToolChanges() async throws {
        let home = Paths.temporaryDirectory("mcp-http-served")
        let plugins = home + "/plugins"
        try FileManager.default.createDirectory(atPath: plugins, withIntermediateDirectories: true)
        var environment = cliEnvironment(home: home)
        environment["SKILLHOST_MCP_TOKEN"] = "a-long-test-token"
        let server = try await HTTPServerProcess.start(
            arguments: ["--no-default-plugins", "--plugins", plugins], environment: environment)
        defer { server.terminate() }
        let registry = try makeRegistry()
        // Without the token: refused, with what to check.
        let refused = Self.source("served", URL(string: server.url)!, registry: registry)
        await #expect(throws: MCPClientError.self) { try await refused.start() }
        setenv("SKILLHOST_TEST_PEER_TOKEN", "a-long-test-token", 1)
        let served = Self.source("served", URL(string: server.url)!, registry: registry, token: "set")
        try await served.start()
        defer { served.stop() }
        #expect(served.connection?.statelessVersion == "2026-07-28")
        #expect(registry.skills.isEmpty)
        _ = try await offPool { try Fixture.compileFile("typed.c", into: plugins) }
        #expect(
            await eventually { registry.skill("twice64") != nil },
            "the subscriptions/listen stream over HTTP brought the change")
        #expect(await registry.invoke("twice64", arguments: #"{"x":21}"#).result == .int(42))
    }
}
