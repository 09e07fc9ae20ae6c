import Foundation
import TestSupport
import Testing

/// `skillhost mcp --http` with real peers: the official MCP Python SDK's Streamable HTTP client in both
/// generations, FastMCP's client, and raw HTTP for the transport's refusals.
struct MCPHTTPTests {
    /// A home with config.json holding `config`, a plugins folder with the behaviours fixture, and the environment
    /// the server runs with.
    static func home(_ name: String, config: String) throws -> (environment: [String: String], plugins: String) {
        let home = Paths.temporaryDirectory(name)
        let plugins = home + "/plugins"
        try FileManager.default.createDirectory(atPath: home + "/config/skillhost", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: plugins, withIntermediateDirectories: true)
        try config.write(toFile: home + "/config/skillhost/config.json", atomically: true, encoding: .utf8)
        let environment = cliEnvironment(home: home)
        return (environment, plugins)
    }

    /// The curl example of docs/mcp.md, run as written against a real server (only the port differs), and what a
    /// request without a session or a `_meta` version is told.
    @Test func theDocsCurlExampleWorksAsWritten() async throws {
        let readme = try String(contentsOf: Paths.root.appendingPathComponent("docs/mcp.md"), encoding: .utf8)
        let block = try #require(
            readme.components(separatedBy: "```sh\nskillhost mcp --http 127.0.0.1:8765 &\n").dropFirst().first?
                .components(separatedBy: "```").first)
        let lines = block.split(separator: "\n", omittingEmptySubsequences: false)
        let command = lines.prefix { !$0.hasPrefix("#") }.joined(separator: "\n")
        let shown = try #require(lines.first { $0.hasPrefix("# ") }).dropFirst(2).replacingOccurrences(
            of: "…}", with: "")
        let (environment, _) = try Self.home("mcp-http-readme", config: "{}")
        let server = try await HTTPServerProcess.start(arguments: [], environment: environment)
        let curl = try await runProcessOffPool(
            "/bin/sh", ["-c", command.replacingOccurrences(of: "127.0.0.1:8765", with: "127.0.0.1:\(server.port)")],
            environment: environment)
        #expect(curl.stdout.hasPrefix(shown), "\(curl.stdout)\(curl.stderr)")

        let bare = try await runProcessOffPool(
            "/usr/bin/curl",
            [
                "-s", server.url, "-H", "Content-Type: application/json", "-H",
                "Accept: application/json, text/event-stream",
                "-H", "MCP-Protocol-Version: 2026-07-28", "-d", #"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
            ],
            environment: environment)
        await server.stop()
        #expect(
            bare.stdout.contains(
                #"the MCP-Protocol-Version header says 2026-07-28, but the body has no params._meta[\"io.modelcontextprotocol/protocolVersion\"]"#
            ),
            "\(bare.stdout)")
        // The refusal answers the request it refuses (it said "id":null to request 2).
        #expect(bare.stdout.hasPrefix(#"{"jsonrpc":"2.0","id":2,"error":"#), "\(bare.stdout)")
    }

    @Test func theOfficialSDKAndFastMCPOverHTTP() async throws {
        let python = try await PythonPeers.ensure()
        // One call in flight per client: a call abandoned by its client must end before the next is admitted.
        let (home, plugins) = try Self.home("mcp-http-sdk", config: #"{"mcp": {"calls_per_client": 1}}"#)
        var environment = home
        _ = try await offPool { try Fixture.compileFile("behaviours.c", into: plugins) }
        _ = try await offPool { try Fixture.compileFile("patient.c", into: plugins) }
        let plugin = try await offPool {
            try Fixture.compileFile("typed.c", into: Paths.temporaryDirectory("mcp-http-staging"))
        }
        environment["SKILLHOST_MCP_TOKEN"] = "s3cret-token"
        let server = try await HTTPServerProcess.start(arguments: ["--plugins", plugins], environment: environment)
        let result = try await runProcessOffPool(
            python, [Paths.fixtures + "/mcp_http_client.py", server.url, "s3cret-token", plugins, plugin],
            environment: environment)
        await server.stop()
        #expect(result.status == 0, "\(result.stderr.suffix(3000))")
        let runs = result.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        #expect(runs.map { $0["mode"] as? String } == ["auto", "legacy", "raw", "fastmcp"])
        let sdkRuns = runs.filter { $0["mode"] as? String == "auto" || $0["mode"] as? String == "legacy" }
        #expect(sdkRuns.map { $0["version"] as? String } == ["2026-07-28", "2025-11-25"])
        for run in sdkRuns {
            #expect(run["server_info"] as? String == "skillhost")
            #expect(run["list_changed"] as? Bool == true, "a plugin dropped in reached the client")
            #expect((run["tools_after"] as? Int ?? 0) == (run["tools"] as? Int ?? 0) + 9)
            #expect((run["ok"] as? [Any])?.last as? String == "60")
            #expect((run["failed"] as? [Any])?.last as? String == "division by zero")
            #expect(run["unknown"] as? String == "Unknown tool: no_such_tool")
            #expect(run["progress"] as? [Double] == [1, 2, 3])
            #expect(run["progressed"] as? String == "3")
        }
        // 2026-07-28: the destructive call asks the user through the client (yes runs it, no does not); the
        // handshake generation has no such round trip and refuses as on stdio.
        let modern = sdkRuns.first
        #expect(
            modern?["questions"] as? [String] == [
                #"Run notes_delete (destructive) with {"id":999999}?"#,
                #"Run notes_delete (destructive) with {"id":999999}?"#,
            ])
        #expect((modern?["confirmed"] as? [Any])?.last as? String == "there is no note 999999", "it ran")
        #expect((modern?["declined"] as? [Any])?.last as? String == "not run: the user declined notes_delete")
        let legacy = sdkRuns.last
        #expect(
            ((legacy?["confirmed"] as? [Any])?.last as? String)?.hasPrefix("not run: notes_delete is destructive")
                == true)

        // FastMCP's client: the same tools, answers, progress and confirmation round trip.
        let fast = runs.last
        #expect(fast?["tools"] as? Int == sdkRuns.first?["tools"] as? Int)
        #expect((fast?["ok"] as? [Any])?.last as? String == "60")
        #expect((fast?["failed"] as? [Any])?.last as? String == "division by zero")
        #expect(fast?["progress"] as? [Double] == [1, 2, 3])
        #expect((fast?["confirmed"] as? [Any])?.last as? String == "there is no note 999999")
        #expect((fast?["declined"] as? [Any])?.last as? String == "not run: the user declined notes_delete")

        let raw = runs.first { $0["mode"] as? String == "raw" }
        #expect((raw?["no_token"] as? [Any])?.first as? Int == 401)
        #expect((raw?["no_token"] as? [Any])?.last as? String == "Bearer")
        #expect(raw?["foreign_origin"] as? Int == 403)
        #expect(raw?["mismatch"] as? [Int] == [400, -32020])
        #expect(raw?["get_without_session"] as? Int == 400)
        #expect(raw?["huge_body"] as? Int == 413, "a body beyond 4 MiB")
        let headerSizes = raw?["headers_12k_17k"] as? [Any]
        #expect(headerSizes?.first as? Int == 200, "12 KiB of request headers are served")
        #expect(
            headerSizes?.last as? Int == 431 || headerSizes?.last as? String == "reset",
            "17 KiB of request headers are refused (431, or a reset when the client is still sending)")
        #expect(raw?["slow_opened"] as? String == "gave up")
        #expect(raw?["after_disconnect"] as? String == "2", "the abandoned ten-minute call was cancelled")
    }

    /// The session form: a session minted by initialize, a change kept while no stream is open and replayed on
    /// a GET with Last-Event-ID, unknown and deleted sessions refused; RFC 9728 metadata; HTTPS with a certificate.
    @Test func sessionsResumeAndHTTPS() async throws {
        let python = try await PythonPeers.ensure()
        let (environment, plugins) = try Self.home(
            "mcp-http-sessions", config: #"{"mcp": {"authorization_servers": ["https://auth.example"]}}"#)
        let plugin = try await offPool {
            try Fixture.compileFile("typed.c", into: Paths.temporaryDirectory("mcp-http-sessions-staging"))
        }
        // The notes plugin served from the folder (so from a worker): its state for resources/subscribe.
        try FileManager.default.copyItem(atPath: Paths.products + "/libskill-notes.so", toPath: plugins + "/notes.so")
        let tls = Paths.temporaryDirectory("mcp-http-tls")
        let generated = try await runProcessOffPool(
            "/usr/bin/openssl",
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", tls + "/key.pem", "-out", tls + "/cert.pem",
                "-days", "1", "-subj", "/CN=127.0.0.1",
            ], environment: environment)
        #expect(generated.status == 0, "\(generated.stderr)")
        let server = try await HTTPServerProcess.start(
            arguments: ["--no-default-plugins", "--plugins", plugins], environment: environment)
        defer { server.terminate() }
        let secure = try await HTTPServerProcess.start(
            arguments: ["--tls-cert", tls + "/cert.pem", "--tls-key", tls + "/key.pem"], environment: environment)
        defer { secure.terminate() }
        #expect(secure.url.hasPrefix("https://"))
        let result = try await runProcessOffPool(
            python, [Paths.fixtures + "/mcp_http_sessions.py", server.url, plugins, plugin, secure.url],
            environment: environment)
        #expect(result.status == 0, "\(result.stderr.suffix(3000))")
        let report = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        #expect(report?["session_minted"] as? Bool == true)
        #expect(report?["get_status"] as? Int == 200)
        let replayed = report?["replayed"] as? [String] ?? []
        #expect(replayed.contains("id: 1"), "\(replayed)")
        #expect(replayed.last == #"data: {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#)
        #expect((report?["subscribe"] as? [String: Any])?.isEmpty == true)
        #expect(
            report?["resource_updated"] as? String
                == #"data: {"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"skillhost://state/notes"}}"#
        )
        #expect(report?["unknown_session"] as? Int == 404)
        #expect(report?["delete"] as? Int == 200)
        #expect(report?["after_delete"] as? Int == 404)
        #expect(report?["https"] as? String == "42")
        // RFC 9728: where clients find the authorization server.
        let metadata = report?["metadata"] as? [Any]
        #expect(metadata?.first as? Int == 200)
        let document = metadata?.last as? [String: Any]
        #expect(document?["resource"] as? String == server.url)
        #expect(document?["authorization_servers"] as? [String] == ["https://auth.example"])
    }

    /// skillhost as the client of an HTTPS server (libcurl): a certificate it cannot verify is refused with the
    /// reason; trusted through SSL_CERT_FILE (a private authority, here the self-signed certificate itself), the
    /// server's tools are called.
    @Test func skillhostCallsAnHTTPSServer() async throws {
        let (environment, _) = try Self.home("mcp-https-served", config: "{}")
        let tls = Paths.temporaryDirectory("mcp-https-tls")
        let generated = try await runProcessOffPool(
            "/usr/bin/openssl",
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", tls + "/key.pem", "-out", tls + "/cert.pem",
                "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
            ], environment: environment)
        #expect(generated.status == 0, "\(generated.stderr)")
        let secure = try await HTTPServerProcess.start(
            arguments: ["--tls-cert", tls + "/cert.pem", "--tls-key", tls + "/key.pem"], environment: environment)
        defer { secure.terminate() }
        let (client, _) = try Self.home(
            "mcp-https-client", config: #"{"mcpServers": {"secure": {"url": "\#(secure.url)"}}}"#)
        let arguments = ["--no-default-plugins", "call", "calculator", #"{"expression":"6*7"}"#, "--timeout", "60s"]
        let refused = try await runProcessOffPool(Paths.skillhost, arguments, environment: client)
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("certificate"), "\(refused.stderr)")
        var trusting = client
        trusting["SSL_CERT_FILE"] = tls + "/cert.pem"
        let answered = try await runProcessOffPool(Paths.skillhost, arguments, environment: trusting)
        #expect(answered.stdout == "42\n", "\(answered.stdout)\(answered.stderr)")
    }

    /// Serving anything but loopback without a token is refused with what to do; a bad `mcp` setting names itself.
    @Test func aNetworkFacingServerNeedsAToken() async throws {
        let (environment, _) = try Self.home("mcp-http-open", config: "{}")
        let refused = try await runProcessOffPool(
            Paths.skillhost, ["mcp", "--no-default-plugins", "--http", "0.0.0.0:0"], environment: environment)
        #expect(refused.status == 1)
        #expect(
            refused.stderr.contains(
                "refusing to serve MCP on 0.0.0.0 without authentication: set SKILLHOST_MCP_TOKEN or \"mcp\": "
                    + "{\"tokens\": [\"<sha256 hex of a token>\"]} in config.json, or serve on 127.0.0.1"),
            "\(refused.stderr)")
        let (badEnvironment, _) = try Self.home("mcp-http-bad", config: #"{"mcp": {"tokens": ["s3cret"]}}"#)
        let bad = try await runProcessOffPool(
            Paths.skillhost, ["mcp", "--no-default-plugins", "--http", "127.0.0.1:0"], environment: badEnvironment)
        #expect(bad.status == 2)
        #expect(
            bad.stderr.contains(
                "mcp.tokens[0] is not a SHA-256 digest (64 hex digits); store the hash, never the token: printf %s "
                    + "\"$TOKEN\" | sha256sum"), "\(bad.stderr)")
        #expect(!bad.stderr.contains("s3cret"), "the secret is never echoed")
    }
}
