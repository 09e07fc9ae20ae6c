import Foundation
import MCP
import TestSupport
import Testing

/// The HTTP server's guards against another client and against a hostile page: a session belongs to the token
/// that opened it, a token can only push out its own sessions, and a loopback server answers only loopback names.
struct MCPHTTPGuardTests {
    struct Reply {
        let status: Int
        let headers: String
        let body: String

        func header(_ name: String) -> String? {
            headers.split(separator: "\r\n").first { $0.lowercased().hasPrefix(name.lowercased() + ":") }
                .map { String($0.dropFirst(name.count + 1)).trimmingCharacters(in: .whitespaces) }
        }
    }

    /// One request with curl: `method` to `url` with the headers given, the body when there is one.
    static func send(
        _ method: String, _ url: String, _ headers: [String: String], body: String? = nil, maxTime: Int? = nil
    ) async throws -> Reply {
        var arguments = ["-s", "-i", "-X", method, url, "-H", "Accept: application/json, text/event-stream"]
        if let maxTime { arguments += ["--max-time", String(maxTime)] }
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { arguments += ["-H", "\(name): \(value)"] }
        if let body { arguments += ["-H", "Content-Type: application/json", "--data-binary", body] }
        // A GET stream that is served stays open: a short cap ends it (curl exits 28), the headers are in.
        if method == "GET" { arguments += ["--max-time", "3"] }
        let result = try await runProcessOffPool("/usr/bin/curl", arguments)
        let parts = result.stdout.components(separatedBy: "\r\n\r\n")
        let head = parts.first ?? ""
        let status = head.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        return Reply(status: status, headers: head, body: parts.dropFirst().joined(separator: "\r\n\r\n"))
    }

    static let initialize =
        #"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#
    static let list = #"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}"#

    /// Runs the slow-client fixture in the background: `count` connections trickling a header byte a second for at
    /// most `seconds`; returns once they are open, with the task that ends with its report.
    static func slowClients(port: Int, count: Int, seconds: Int, environment: [String: String]) async throws
        -> Task<String, any Error>
    {
        let ready = Paths.temporaryDirectory("slow-ready") + "/opened"
        let attack = Task {
            try await runProcessOffPool(
                "/usr/bin/env",
                ["python3", Paths.fixtures + "/slowloris.py", String(port), String(count), String(seconds), ready],
                environment: environment
            ).stdout
        }
        #expect(await eventually { FileManager.default.fileExists(atPath: ready) }, "the slow clients connected")
        return attack
    }

    static let call =
        #"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"calculator","arguments":{"expression":"6*7"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#
    static let callHeaders = [
        "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "calculator",
    ]

    /// Slowloris, part one: while more slow clients than the server takes trickle their headers (and the header
    /// deadline is far off), a new client is still served — the slowest make room for it.
    @Test func aNewClientIsServedWhileTheServerIsFullOfSlowOnes() async throws {
        let (environment, _) = try MCPHTTPTests.home(
            "mcp-http-slow", config: #"{"mcp": {"header_timeout_s": 120, "max_connections": 200}}"#)
        let server = try await HTTPServerProcess.start(arguments: [], environment: environment)
        defer { server.terminate() }
        let attack = try await Self.slowClients(port: server.port, count: 300, seconds: 40, environment: environment)
        // Each try gives up after 8 s, all of them well before the slow clients would (without room made for it,
        // the request waits in the listen queue until they leave).
        var answered = false
        for _ in 1...3 where !answered {
            let reply = try await Self.send("POST", server.url, Self.callHeaders, body: Self.call, maxTime: 8)
            answered = reply.status == 200 && reply.body.contains(#""text":"42""#)
            if !answered { try await Task.sleep(for: .seconds(1)) }
        }
        #expect(answered, "a new client was served while the server was full of slow ones")
        _ = try await attack.value
    }

    /// Slowloris, part two: a connection that trickles a header byte a second is cut at the header deadline, not
    /// held for ever (each byte resets the idle timer).
    @Test func slowHeadersAreCutAtTheirDeadline() async throws {
        let (environment, _) = try MCPHTTPTests.home("mcp-http-slow-cut", config: #"{"mcp": {"header_timeout_s": 2}}"#)
        let server = try await HTTPServerProcess.start(arguments: [], environment: environment)
        defer { server.terminate() }
        let started = ContinuousClock.now
        let attack = try await Self.slowClients(port: server.port, count: 50, seconds: 60, environment: environment)
        let report = try await attack.value
        #expect(report.hasSuffix("opened 50\nclosed 50\n"), "\(report)")
        #expect(ContinuousClock.now - started < .seconds(60), "cut before the slow clients gave up")
    }

    @Test func sessionsBelongToTheirTokenAndForeignHostsAreRefused() async throws {
        let (a, b) = ("token-a-\(UUID().uuidString)", "token-b-\(UUID().uuidString)")
        let digests = [a, b].map { "\"" + MCPHTTPConfiguration.hex(MCPHTTPConfiguration.digest(of: $0)) + "\"" }
        let (environment, _) = try MCPHTTPTests.home(
            "mcp-http-guards",
            config:
                #"{"mcp": {"tokens": [\#(digests.joined(separator: ","))], "sessions_per_client": 5, "allowed_hosts": ["mcp.test"]}}"#
        )
        let server = try await HTTPServerProcess.start(arguments: ["--no-default-plugins"], environment: environment)
        defer { server.terminate() }
        let url = server.url
        let asA = ["Authorization": "Bearer \(a)"]
        let asB = ["Authorization": "Bearer \(b)"]

        let opened = try await Self.send("POST", url, asA, body: Self.initialize)
        #expect(opened.status == 200, "\(opened)")
        let session = try #require(opened.header("Mcp-Session-Id"))
        // Token B gets A's session id: unknown to it, whatever it does with it.
        let unknown = "Session not found: \(session) has ended; initialize a new session"
        var withA = asB
        withA["Mcp-Session-Id"] = session
        let listed = try await Self.send("POST", url, withA, body: Self.list)
        #expect(listed.status == 404)
        #expect(listed.body.contains(unknown), "\(listed.body)")
        #expect(try await Self.send("GET", url, withA).status == 404)
        #expect(try await Self.send("DELETE", url, withA).status == 404)
        var mine = asA
        mine["Mcp-Session-Id"] = session
        #expect(try await Self.send("POST", url, mine, body: Self.list).status == 200, "A's session is intact")

        // B opens more sessions than its cap: it loses its own oldest, never A's.
        var opening: [String] = []
        for _ in 1...8 {
            let reply = try await Self.send("POST", url, asB, body: Self.initialize)
            #expect(reply.status == 200)
            if let id = reply.header("Mcp-Session-Id") { opening.append(id) }
        }
        #expect(try await Self.send("POST", url, mine, body: Self.list).status == 200, "A's session survived B's")
        var oldest = asB
        oldest["Mcp-Session-Id"] = opening.first
        #expect(try await Self.send("POST", url, oldest, body: Self.list).status == 404, "B's own oldest went")
        var newest = asB
        newest["Mcp-Session-Id"] = opening.last
        #expect(try await Self.send("POST", url, newest, body: Self.list).status == 200)

        // DNS rebinding: a name that is not this server's is refused before anything runs; loopback names and
        // configured ones are served.
        let port = server.port
        var foreign = mine
        foreign["Host"] = "evil.example:\(port)"
        let refused = try await Self.send("POST", url, foreign, body: Self.list)
        #expect(refused.status == 421)
        #expect(
            refused.body.contains(
                "Misdirected request: Host evil.example:\(port) is not a name of this server; a loopback server answers "
                    + "only localhost, 127.0.0.1 and [::1]"), "\(refused.body)")
        for name in ["localhost:\(port)", "127.0.0.1:\(port)", "mcp.test:\(port)"] {
            var named = mine
            named["Host"] = name
            #expect(try await Self.send("POST", url, named, body: Self.list).status == 200, "\(name)")
        }
    }
}
