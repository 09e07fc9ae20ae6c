import Foundation
import TestSupport
import Testing

/// `skillhost mcp` driven over its stdio pipes, one JSON-RPC message per line.
final class MCPProcess: @unchecked Sendable {
    // @unchecked: used from one test task at a time.
    let process = Process()
    private let input = privatePipe()
    private let output = privatePipe()
    private var buffer = Data()

    init(arguments: [String] = [], environment: [String: String]) throws {
        process.executableURL = URL(fileURLWithPath: Paths.skillhost)
        process.arguments = ["mcp"] + arguments
        process.environment = environment
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try launch(process)
    }

    func send(_ line: String) { input.fileHandleForWriting.write(Data((line + "\n").utf8)) }

    /// The next message (parsed), or nil after `timeout` (a generous cap for a busy machine).
    func next(timeout: Duration = .seconds(60)) -> [String: Any]? {
        nextLine(timeout: timeout).flatMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    func sendBytes(_ bytes: [UInt8]) { input.fileHandleForWriting.write(Data(bytes + [0x0A])) }

    /// The next line as the server wrote it, or nil after `timeout`.
    func nextLine(timeout: Duration = .seconds(60)) -> String? {
        let deadline = ContinuousClock.now + timeout
        let fd = output.fileHandleForReading.fileDescriptor
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                let line = buffer[buffer.startIndex..<newline]
                buffer.removeSubrange(buffer.startIndex...newline)
                return String(decoding: line, as: UTF8.self)
            }
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return nil }
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard
                poll(
                    &descriptor, 1,
                    Int32(left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000)) > 0
            else { return nil }
            var chunk = [UInt8](repeating: 0, count: 65_536)
            let count = read(fd, &chunk, chunk.count)
            guard count > 0 else { return nil }
            buffer.append(contentsOf: chunk[0..<count])
        }
    }

    /// Sends a request and returns its response, collecting notifications that arrive before it.
    func request(_ id: Int, _ method: String, _ params: String = "{}", notifications: inout [[String: Any]]) -> [String:
        Any]?
    {
        send(#"{"jsonrpc":"2.0","id":\#(id),"method":"\#(method)","params":\#(params)}"#)
        while let message = next() {
            if message["id"] as? Int == id { return message }
            notifications.append(message)
        }
        return nil
    }

    func request(_ id: Int, _ method: String, _ params: String = "{}") -> [String: Any]? {
        var ignored: [[String: Any]] = []
        return request(id, method, params, notifications: &ignored)
    }

    func close() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}

struct MCPServerTests {
    let home = Paths.temporaryDirectory("mcp-home")

    /// Ids come back exactly as sent; invalid UTF-8 is a parse error; batches are answered in 2025-03-26 only.
    @Test func requestsAreAnsweredToTheLetter() throws {
        let server = try MCPProcess(environment: environment)
        defer { server.close() }
        _ = server.request(1, "initialize", #"{"protocolVersion":"2025-11-25","capabilities":{}}"#)
        for id in ["123456789012345678901234567890", "1e400", "-0.50", #""x\u0041""#] {
            server.send(#"{"jsonrpc":"2.0","id":\#(id),"method":"ping"}"#)
            let expected = id.hasPrefix("\"") ? #""xA""# : id
            #expect(server.nextLine() == #"{"jsonrpc":"2.0","id":\#(expected),"result":{}}"#)
        }
        server.sendBytes(Array(#"{"jsonrpc":"2.0","id":2,"method":"ping"#.utf8) + [0xFF] + Array(#""}"#.utf8))
        let invalid = try #require(server.next())
        #expect((invalid["error"] as? [String: Any])?["code"] as? Int == -32700)
        #expect(
            ((invalid["error"] as? [String: Any])?["message"] as? String)?.hasSuffix("string is not valid UTF-8")
                == true)
        server.send(#"[{"jsonrpc":"2.0","id":8,"method":"ping"}]"#)
        let batch = try #require(server.next())
        #expect((batch["error"] as? [String: Any])?["code"] as? Int == -32600)
        #expect(
            ((batch["error"] as? [String: Any])?["message"] as? String)?.hasPrefix(
                "Invalid request: JSON-RPC batches are part of protocol revision 2025-03-26 only") == true)
        // In 2025-03-26, a batch is answered with one array.
        _ = server.request(9, "initialize", #"{"protocolVersion":"2025-03-26","capabilities":{}}"#)
        server.send(
            #"[{"jsonrpc":"2.0","id":10,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},"#
                + #"{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"calculator","arguments":{"expression":"6*7"}}}]"#
        )
        let line = try #require(server.nextLine())
        let answers = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [[String: Any]])
        #expect(Set(answers.compactMap { $0["id"] as? Int }) == [10, 11])
        // An element that is not a request is answered with an error inside the array.
        server.send(#"[{"jsonrpc":"2.0","id":12,"method":"ping"},7]"#)
        let mixedLine = try #require(server.nextLine())
        let mixed = try #require(try JSONSerialization.jsonObject(with: Data(mixedLine.utf8)) as? [[String: Any]])
        #expect(mixed.count == 2)
        #expect(mixed.contains { ($0["error"] as? [String: Any])?["code"] as? Int == -32600 })
    }

    var environment: [String: String] {
        var environment = cliEnvironment(home: home)
        for key in ["SKILLHOST_PLUGINS", "OPENAI_BASE_URL"] { environment[key] = nil }
        return environment
    }

    func result(_ message: [String: Any]?) -> [String: Any]? { message?["result"] as? [String: Any] }
    func text(_ message: [String: Any]?) -> String? {
        ((result(message)?["content"] as? [[String: Any]])?.first)?["text"] as? String
    }

    @Test func handshakeListCallAndErrors() throws {
        let server = try MCPProcess(environment: environment)
        defer { server.close() }
        let initialized = server.request(
            1, "initialize",
            #"{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"test","version":"1"}}"#)
        #expect(result(initialized)?["protocolVersion"] as? String == "2025-11-25")
        #expect(
            (result(initialized)?["capabilities"] as? [String: Any])?["tools"] as? [String: Bool] == [
                "listChanged": true
            ])
        server.send(#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        let old = server.request(2, "initialize", #"{"protocolVersion":"2024-11-05","capabilities":{}}"#)
        #expect(result(old)?["protocolVersion"] as? String == "2024-11-05")
        let unknownVersion = server.request(3, "initialize", #"{"protocolVersion":"1999-01-01","capabilities":{}}"#)
        #expect(result(unknownVersion)?["protocolVersion"] as? String == "2025-11-25")
        #expect(result(server.request(4, "ping")) != nil)

        let tools = try #require(result(server.request(5, "tools/list"))?["tools"] as? [[String: Any]])
        let calculator = try #require(tools.first { $0["name"] as? String == "calculator" })
        #expect(calculator["title"] as? String == "Calculator")
        let annotations = try #require(calculator["annotations"] as? [String: Any])
        #expect(annotations["title"] as? String == "Calculator")
        #expect(annotations["readOnlyHint"] as? Bool == true)
        #expect(annotations["destructiveHint"] as? Bool == false)
        #expect(annotations["idempotentHint"] as? Bool == true)
        #expect(annotations["openWorldHint"] as? Bool == false)
        let delete = try #require(tools.first { $0["name"] as? String == "notes_delete" })
        #expect((delete["annotations"] as? [String: Any])?["destructiveHint"] as? Bool == true)

        let sixty = server.request(6, "tools/call", #"{"name":"calculator","arguments":{"expression":"(23+7)*2"}}"#)
        #expect(text(sixty) == "60")
        #expect(result(sixty)?["isError"] as? Bool == false)
        let structured = server.request(7, "tools/call", #"{"name":"text_stats","arguments":{"text":"a b"}}"#)
        #expect((result(structured)?["structuredContent"] as? [String: Int])?["words"] == 2)
        let failing = server.request(8, "tools/call", #"{"name":"calculator","arguments":{"expression":"1/0"}}"#)
        #expect(text(failing) == "division by zero")
        #expect(result(failing)?["isError"] as? Bool == true)
        let invalid = server.request(9, "tools/call", #"{"name":"calculator","arguments":{"expression":5}}"#)
        #expect(text(invalid) == "$.expression: expected string, got integer")
        let unknown = server.request(10, "tools/call", #"{"name":"no_such_tool","arguments":{}}"#)
        #expect((unknown?["error"] as? [String: Any])?["code"] as? Int == -32602)
        #expect((unknown?["error"] as? [String: Any])?["message"] as? String == "Unknown tool: no_such_tool")
        // A near miss gets the nearest name, as on the command line.
        let typo = server.request(100, "tools/call", #"{"name":"calculater","arguments":{}}"#)
        let typoError = typo?["error"] as? [String: Any]
        #expect(typoError?["message"] as? String == "Unknown tool: calculater (did you mean calculator?)")
        #expect((typoError?["data"] as? [String: Any])?["suggestion"] as? String == "calculator")
        server.send("not json")
        #expect((server.next()?["error"] as? [String: Any])?["code"] as? Int == -32700)
        let missing = server.request(11, "prompts/list")
        #expect((missing?["error"] as? [String: Any])?["code"] as? Int == -32601)
        // Destructive skills are refused unless the configuration allows them.
        let refused = server.request(12, "tools/call", #"{"name":"notes_delete","arguments":{"id":1}}"#)
        #expect(result(refused)?["isError"] as? Bool == true)
        #expect(text(refused)?.hasPrefix("not run: notes_delete is destructive; allow it for MCP clients") == true)
    }

    @Test func theStatelessGeneration() throws {
        let server = try MCPProcess(environment: environment)
        defer { server.close() }
        let meta =
            #""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}"#
        let discovered = result(server.request(1, "server/discover", "{\(meta)}"))
        #expect((discovered?["supportedVersions"] as? [String])?.contains("2026-07-28") == true)
        #expect(discovered?["resultType"] as? String == "complete")
        let serverInfo =
            (discovered?["_meta"] as? [String: Any])?["io.modelcontextprotocol/serverInfo"] as? [String: Any]
        #expect(serverInfo?["name"] as? String == "skillhost")
        #expect(discovered?["serverInfo"] == nil, "serverInfo is in _meta only (top-level is initialize's)")
        let templates = result(server.request(6, "resources/templates/list", "{\(meta)}"))
        #expect(templates?["ttlMs"] as? Int == 0 && templates?["cacheScope"] as? String == "private")
        let tools = result(server.request(2, "tools/list", "{\(meta)}"))
        #expect((tools?["tools"] as? [Any])?.isEmpty == false)
        #expect(tools?["resultType"] as? String == "complete")
        let call = server.request(3, "tools/call", #"{"name":"gcd","arguments":{"a":12,"b":18},\#(meta)}"#)
        #expect(text(call) == "6")
        #expect(
            ((result(call)?["_meta"] as? [String: Any])?["io.modelcontextprotocol/serverInfo"] as? [String: Any])?[
                "name"] as? String == "skillhost", "every stateless result names the server")
        // A stateless request must declare the client's capabilities (an empty object at least).
        let undeclared = server.request(
            5, "tools/list", #"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}"#)
        #expect(
            (undeclared?["error"] as? [String: Any])?["message"] as? String
                == #"Invalid params: a 2026-07-28 request needs _meta["io.modelcontextprotocol/clientCapabilities"] (an object; {} when the client declares none)"#
        )
        let unsupported = server.request(
            4, "tools/list", #"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2030-01-01"}}"#)
        let error = unsupported?["error"] as? [String: Any]
        #expect(error?["code"] as? Int == -32022)
        #expect((error?["data"] as? [String: Any])?["requested"] as? String == "2030-01-01")
        #expect(
            (error?["data"] as? [String: Any])?["supported"] as? [String] == [
                "2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28",
            ])
    }

    /// Every bundled tool declares what it returns (ABI 1.1 result schemas, generated from the signature for typed
    /// skills): MCP clients get an `outputSchema` and `structuredContent` — an object as it is, anything else as
    /// `{"result": …}`.
    @Test func everyBundledToolHasAnOutputSchema() throws {
        let server = try MCPProcess(environment: environment)
        defer { server.close() }
        let meta =
            #""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#
        let tools = try #require(result(server.request(1, "tools/list", "{\(meta)}"))?["tools"] as? [[String: Any]])
        #expect(tools.count == 20)
        let without = tools.filter { ($0["outputSchema"] as? [String: Any])?["type"] as? String != "object" }
        #expect(without.isEmpty, "\(without.map { $0["name"] ?? "" })")
        let calculator = result(
            server.request(2, "tools/call", #"{"name":"calculator","arguments":{"expression":"6*7"},\#(meta)}"#))
        #expect((calculator?["structuredContent"] as? [String: Any])?["result"] as? Int == 42)
        let stats = result(
            server.request(3, "tools/call", #"{"name":"text_stats","arguments":{"text":"a b"},\#(meta)}"#))
        #expect((stats?["structuredContent"] as? [String: Any])?["words"] as? Int == 2)
        let prime = result(server.request(4, "tools/call", #"{"name":"is_prime","arguments":{"n":7},\#(meta)}"#))
        #expect((prime?["structuredContent"] as? [String: Any])?["result"] as? Bool == true)
    }

    @Test func progressCancellationAndListChanged() throws {
        let folder = Paths.temporaryDirectory("mcp-plugins")
        _ = try Fixture.compileFile("behaviours.c", into: folder)
        let server = try MCPProcess(arguments: ["--plugins", folder], environment: environment)
        defer { server.close() }
        _ = server.request(1, "initialize", #"{"protocolVersion":"2025-11-25","capabilities":{}}"#)
        server.send(#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)

        var notifications: [[String: Any]] = []
        let progressed = server.request(
            2, "tools/call", #"{"name":"progress","arguments":{},"_meta":{"progressToken":"p1"}}"#,
            notifications: &notifications)
        #expect(text(progressed) == "3")
        let progress = notifications.filter { $0["method"] as? String == "notifications/progress" }.compactMap {
            $0["params"] as? [String: Any]
        }
        #expect(progress.map { $0["progress"] as? Double } == [1, 2, 3])
        #expect(progress.allSatisfy { $0["progressToken"] as? String == "p1" && $0["total"] as? Double == 3 })

        server.send(
            #"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"cooperative","arguments":{"ms":5000}}}"#)
        Thread.sleep(forTimeInterval: 0.2)
        server.send(#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"reason":"user"}}"#)
        let after = server.request(4, "ping")
        #expect(after?["id"] as? Int == 4, "the cancelled request got no response, the next one did")

        // Hot reload: a plugin dropped into the folder becomes tools/list_changed.
        _ = try Fixture.compileFile("typed.c", into: folder)
        var changed = false
        let deadline = ContinuousClock.now + .seconds(60)
        while !changed, ContinuousClock.now < deadline, let message = server.next() {
            changed = message["method"] as? String == "notifications/tools/list_changed"
        }
        #expect(changed)
        let tools = result(server.request(5, "tools/list"))?["tools"] as? [[String: Any]]
        #expect(tools?.contains { $0["name"] as? String == "twice64" } == true)
    }
}

extension MCPServerTests {
    /// 2026-07-28 on stdio: change notifications only on a `subscriptions/listen` request, acknowledged first,
    /// tagged with its id; none unasked; cancelling the request ends them.
    @Test func subscriptionsListenOnStdio() throws {
        let folder = Paths.temporaryDirectory("mcp-listen")
        let server = try MCPProcess(arguments: ["--no-default-plugins", "--plugins", folder], environment: environment)
        defer { server.close() }
        let meta =
            #""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#
        server.send(
            #"{"jsonrpc":"2.0","id":"watch","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true,"promptsListChanged":true},\#(meta)}}"#
        )
        let acknowledged = server.next()
        #expect(acknowledged?["method"] as? String == "notifications/subscriptions/acknowledged")
        let ackParams = acknowledged?["params"] as? [String: Any]
        #expect(
            (ackParams?["_meta"] as? [String: Any])?["io.modelcontextprotocol/subscriptionId"] as? String == "watch")
        #expect(
            (ackParams?["notifications"] as? [String: Any])?.keys.sorted() == ["toolsListChanged"],
            "only what the server serves is honoured")

        _ = try Fixture.compileFile("typed.c", into: folder)
        var seen: [[String: Any]] = []
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline, let message = server.next() {
            seen.append(message)
            if message["method"] as? String == "notifications/tools/list_changed" { break }
        }
        let changed = seen.last?["params"] as? [String: Any]
        #expect((changed?["_meta"] as? [String: Any])?["io.modelcontextprotocol/subscriptionId"] as? String == "watch")
        var notifications: [[String: Any]] = []
        let tools = result(server.request(2, "tools/list", "{\(meta)}", notifications: &notifications))
        #expect((tools?["tools"] as? [Any])?.count == 9)
        let untagged = (seen + notifications).filter {
            $0["method"] as? String == "notifications/tools/list_changed"
                && (($0["params"] as? [String: Any])?["_meta"] == nil)
        }
        #expect(untagged.isEmpty, "a stateless client gets no notification it did not ask for")

        // Cancelled: the next change is not sent (the reply to a later request comes with nothing before it).
        server.send(#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"watch"}}"#)
        _ = server.request(3, "tools/list", "{\(meta)}", notifications: &notifications)
        try FileManager.default.removeItem(atPath: folder + "/typed.so")
        var emptied = false
        var id = 4
        let cap = ContinuousClock.now + .seconds(60)
        while !emptied, ContinuousClock.now < cap {
            let listed = result(server.request(id, "tools/list", "{\(meta)}", notifications: &notifications))
            emptied = (listed?["tools"] as? [Any])?.isEmpty == true
            id += 1
            if !emptied { Thread.sleep(forTimeInterval: 0.05) }
        }
        #expect(emptied)
        _ = server.request(id, "tools/list", "{\(meta)}", notifications: &notifications)
        #expect(!notifications.contains { $0["method"] as? String == "notifications/tools/list_changed" })
    }
}

/// The official MCP Python SDK (from PyPI) as the client of `skillhost mcp`, in both protocol generations.
struct MCPOfficialClientTests {
    @Test func theOfficialSDKTalksToSkillhost() async throws {
        let python = try await PythonPeers.ensure()
        var environment = ProcessInfo.processInfo.environment
        let home = Paths.temporaryDirectory("mcp-sdk-home")
        environment["HOME"] = home
        environment["XDG_DATA_HOME"] = home + "/data"
        environment["XDG_CONFIG_HOME"] = home + "/config"
        let plugin = try Fixture.compileFile("typed.c", into: Paths.temporaryDirectory("mcp-sdk-staging"))
        let served = Paths.temporaryDirectory("mcp-sdk-served")
        // Off the cooperative pool: the client runs for many seconds.
        let result = try await runProcessOffPool(
            python, [Paths.fixtures + "/mcp_client.py", Paths.skillhost, served, plugin], environment: environment)
        #expect(result.status == 0, "\(result.stderr.suffix(2000))")
        let runs = result.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        #expect(runs.map { $0["mode"] as? String } == ["auto", "legacy"])
        #expect(runs.map { $0["version"] as? String } == ["2026-07-28", "2025-11-25"])
        #expect(
            runs.map { $0["server_info"] as? String } == ["skillhost", "skillhost"],
            "serverInfo reaches the SDK in both generations (2026-07-28: in the results' _meta)")
        for run in runs {
            #expect(run["tools"] as? Int == 20)
            #expect(run["list_changed"] as? Bool == true, "hot reload reached the SDK client")
            #expect(run["tools_after"] as? Int == 29, "the dropped-in plugin's 9 skills are listed")
            #expect(run["calculator_read_only"] as? Bool == true)
            #expect((run["ok"] as? [Any])?.last as? String == "60")
            #expect((run["ok"] as? [Any])?.first as? Bool == false)
            #expect((run["failed"] as? [Any])?.first as? Bool == true)
            #expect((run["failed"] as? [Any])?.last as? String == "division by zero")
            #expect((run["unknown"] as? String)?.contains("Unknown tool: no_such_tool") == true)
            #expect(run["resources"] as? [String] == ["skillhost://state/notes", "ui://notes/list"])
            #expect((run["state"] as? String)?.hasPrefix(#"{"notes":"#) == true)
        }
        #expect(runs.first?["state_updated"] as? [String] == ["ResourceUpdated", "skillhost://state/notes"])
        // The stateless generation hears of a plugin copied over in place and of one removed, not only of one
        // dropped in (reported lost; guarded here).
        #expect(runs.first?["updated_notified"] as? Bool == true, "copied over in place")
        #expect(runs.first?["removed_notified"] as? Bool == true, "removed")
        #expect((runs.first?["state_after"] as? String)?.contains("from the SDK (auto)") == true)
    }
}

/// The official SDK's cancellation (both generations) and FastMCP's client's reach the plugin: `is_cancelled` turns
/// true for the call its client gave up on (reported lost; guarded here).
struct MCPCancellationTests {
    @Test func theOfficialSDKsCancellationReachesThePlugin() async throws {
        let python = try await PythonPeers.ensure()
        let folder = Paths.temporaryDirectory("mcp-cancel")
        _ = try await offPool { try Fixture.compileFile("behaviours.c", into: folder) }
        // The plugin notices a cancellation when it next polls: on a machine busy with the rest of the suite that can
        // take longer than the default 100 ms grace before its worker is restarted, which is not what this tests.
        let home = Paths.temporaryDirectory("mcp-cancel-home")
        try FileManager.default.createDirectory(atPath: home + "/config/skillhost", withIntermediateDirectories: true)
        try #"{"isolation": {"kill_grace_ms": 10000}}"#.write(
            toFile: home + "/config/skillhost/config.json", atomically: true, encoding: .utf8)
        let result = try await runProcessOffPool(
            python, [Paths.fixtures + "/mcp_cancel_client.py", Paths.skillhost, folder],
            environment: cliEnvironment(home: home))
        #expect(
            result.stdout == "auto: gave up\nlegacy: gave up\nfastmcp: gave up\n",
            "\(result.stdout)\(result.stderr.suffix(2000))")
        #expect(
            result.stderr.components(separatedBy: "cooperative: noticed the cancellation").count - 1 == 3,
            "\(result.stderr.suffix(2000))")
    }
}

/// MCP servers from config.json as skill sources of the command line.
struct MCPConfigCLITests {
    /// `list` and `call` start a configured server only when one of its tools is called: its last tool list is
    /// cached by a fingerprint of its configuration (a changed configuration starts it again).
    @Test func serversStartOnFirstUseWithTheirToolsFromTheCache() async throws {
        let python = try await PythonPeers.ensure()
        let home = Paths.temporaryDirectory("mcp-lazy-home")
        try FileManager.default.createDirectory(atPath: home + "/config/skillhost", withIntermediateDirectories: true)
        let server = (python as NSString).deletingLastPathComponent + "/mcp-server-time"
        let starts = home + "/starts"
        func configure(_ zone: String) throws {
            // Each start of the server appends a line to `starts`.
            try
                #"{"mcpServers": {"time": {"command": "/bin/sh", "args": ["-c", "echo started >> \#(starts); exec \#(server) --local-timezone \#(zone)"], "start_timeout_s": 120, "timeout_s": 120}}}"#
                .write(toFile: home + "/config/skillhost/config.json", atomically: true, encoding: .utf8)
        }
        func startCount() -> Int {
            ((try? String(contentsOfFile: starts, encoding: .utf8)) ?? "").split(separator: "\n").count
        }
        try configure("UTC")
        let environment = cliEnvironment(home: home)
        let first = try await runProcessOffPool(Paths.skillhost, ["list"], environment: environment)
        #expect(first.stdout.contains("get_current_time"))
        #expect(startCount() == 1, "nothing cached yet: started")
        // The cache is the user's alone, like the data folders.
        let cache = home + "/cache/skillhost/mcp-tools"
        let folderMode = try FileManager.default.attributesOfItem(atPath: cache)[.posixPermissions] as? Int
        #expect(folderMode.map { $0 & 0o777 } == 0o700)
        for name in try FileManager.default.contentsOfDirectory(atPath: cache) {
            let mode = try FileManager.default.attributesOfItem(atPath: cache + "/" + name)[.posixPermissions] as? Int
            #expect(mode.map { $0 & 0o777 } == 0o600, "\(name)")
        }
        let second = try await runProcessOffPool(Paths.skillhost, ["list"], environment: environment)
        #expect(second.stdout.contains("get_current_time"), "the tools from the cache")
        let native = try await runProcessOffPool(
            Paths.skillhost, ["call", "calculator", #"{"expression":"1+1"}"#], environment: environment)
        #expect(native.stdout == "2\n")
        #expect(startCount() == 1, "list and a native call did not start it")
        let call = try await runProcessOffPool(
            Paths.skillhost, ["call", "get_current_time", #"{"timezone":"UTC"}"#, "--json", "--timeout", "120s"],
            environment: environment)
        #expect(call.stdout.hasPrefix(#"{"status":"ok","result":{"timezone":"UTC","datetime":"#), "\(call)")
        #expect(startCount() == 2, "its first call started it")
        try configure("Europe/Paris")
        _ = try await runProcessOffPool(Paths.skillhost, ["list"], environment: environment)
        #expect(startCount() == 3, "a changed configuration is not served from the old cache")
    }

    @Test func configuredServersToolsAppearAndCanBeCalled() async throws {
        let python = try await PythonPeers.ensure()
        let home = Paths.temporaryDirectory("mcp-config-home")
        try FileManager.default.createDirectory(atPath: home + "/config/skillhost", withIntermediateDirectories: true)
        let server = (python as NSString).deletingLastPathComponent + "/mcp-server-time"
        try
            #"{"mcpServers": {"time": {"command": "\#(server)", "args": ["--local-timezone", "UTC"], "env": {}, "start_timeout_s": 120, "timeout_s": 120}}}"#
            .write(toFile: home + "/config/skillhost/config.json", atomically: true, encoding: .utf8)
        let environment = cliEnvironment(home: home)
        let list = try runProcess(Paths.skillhost, ["list"], environment: environment)
        #expect(list.stdout.contains("get_current_time"))
        #expect(
            list.stdout.range(of: #"\nget_current_time +get_current_time +mcp:time "#, options: .regularExpression)
                != nil)
        let call = try runProcess(
            Paths.skillhost, ["call", "get_current_time", #"{"timezone":"UTC"}"#, "--json", "--timeout", "120s"],
            environment: environment)
        #expect(call.status == 0)
        #expect(call.stdout.hasPrefix(#"{"status":"ok","result":{"timezone":"UTC","datetime":"#))

        // A server that never answers is stopped for sure when skillhost is done with it, and it started with no
        // signal blocked (so it can be stopped at all).
        let report = home + "/silent.json"
        try
            #"{"mcpServers": {"silent": {"command": "\#(python)", "args": ["\#(Paths.fixtures)/silent_mcp_server.py", "\#(report)"], "start_timeout_s": 1}}}"#
            .write(toFile: home + "/config/skillhost/config.json", atomically: true, encoding: .utf8)
        let silent = try runProcess(Paths.skillhost, ["list"], environment: environment)
        #expect(silent.stdout.contains("mcp server silent: "), "\(silent.stdout)")
        let started =
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [String: Any]
        let pid = try #require(started?["pid"] as? Int32)
        #expect(started?["blocked"] as? [Int] == [], "no signal blocked in the server")
        let stopped = await eventually { kill(pid, 0) != 0 }
        if !stopped { kill(pid, SIGKILL) }
        #expect(stopped, "the silent server does not outlive skillhost")

        try #"{"mcpServers": {"broken": {"command": "/nonexistent/server"}}}"#
            .write(toFile: home + "/config/skillhost/config.json", atomically: true, encoding: .utf8)
        let broken = try runProcess(Paths.skillhost, ["list"], environment: environment)
        #expect(broken.stdout.contains("Failed to load (1):\n  mcp server broken: "))
        try #"{"mcpServers": {"nameless": {"args": []}}}"#
            .write(toFile: home + "/config/skillhost/config.json", atomically: true, encoding: .utf8)
        let invalid = try runProcess(Paths.skillhost, ["list"], environment: environment)
        #expect(invalid.status == 2)
        #expect(invalid.stderr.contains("mcpServers.nameless needs a \"command\" (the program that starts the server)"))
    }
}

extension MCPServerTests {
    /// A composite skill is one more tool: listed with its risk as annotations, called with progress by step.
    @Test func compositesAreTools() throws {
        let folder = Paths.temporaryDirectory("mcp-composites")
        try """
        {"id": "add_and_count", "description": "Adds a note and counts the notes.",
         "input_schema": {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]},
         "steps": [{"call": "notes_add", "with": {"title": "${input.title}"}, "as": "note"},
                   {"call": "notes_list", "as": "all"},
                   {"result": {"id": "${note.id}", "count": "${all.length}"}}]}
        """.write(toFile: folder + "/add_and_count.skill.json", atomically: true, encoding: .utf8)
        let server = try MCPProcess(arguments: ["--plugins", folder], environment: environment)
        defer { server.close() }
        _ = server.request(1, "initialize", #"{"protocolVersion":"2025-11-25","capabilities":{}}"#)
        server.send(#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        let tools = try #require(result(server.request(2, "tools/list"))?["tools"] as? [[String: Any]])
        let composite = try #require(tools.first { $0["name"] as? String == "add_and_count" })
        #expect(composite["description"] as? String == "Adds a note and counts the notes.")
        let annotations = composite["annotations"] as? [String: Any]
        #expect(annotations?["readOnlyHint"] as? Bool == false)
        #expect(annotations?["destructiveHint"] as? Bool == false)

        var notifications: [[String: Any]] = []
        let called = server.request(
            3, "tools/call",
            #"{"name":"add_and_count","arguments":{"title":"milk"},"_meta":{"progressToken":"c1"}}"#,
            notifications: &notifications)
        #expect(result(called)?["isError"] as? Bool == false)
        #expect(result(called)?["structuredContent"] as? [String: Int] == ["id": 1, "count": 1])
        let messages = notifications.compactMap { ($0["params"] as? [String: Any])?["message"] as? String }
        #expect(messages == ["step 1 of 3: notes_add", "step 2 of 3: notes_list", "step 3 of 3: result"])
    }
}

extension MCPServerTests {
    /// The plugins' state as resources: listed, read, and — for a `subscriptions/listen` that names it — updated
    /// after a call through this server and after a change made by another skillhost process.
    @Test func theStateOfPluginsIsAResource() async throws {
        let server = try MCPProcess(environment: environment)
        defer { server.close() }
        let meta =
            #""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#
        let discovered = result(server.request(1, "server/discover", "{\(meta)}"))
        #expect(
            (discovered?["capabilities"] as? [String: Any])?["resources"] as? [String: Bool] == [
                "listChanged": true, "subscribe": true,
            ])
        let listed = try #require(
            result(server.request(2, "resources/list", "{\(meta)}"))?["resources"] as? [[String: Any]])
        #expect(
            listed.map { $0["uri"] as? String } == ["skillhost://state/notes", "ui://notes/list"],
            "the one bundled plugin with a snapshot, and its view (an MCP App)")
        #expect(listed.first?["mimeType"] as? String == "application/json")
        let read = result(server.request(3, "resources/read", #"{"uri":"skillhost://state/notes",\#(meta)}"#))
        let contents = read?["contents"] as? [[String: Any]]
        #expect(contents?.first?["text"] as? String == #"{"notes":0,"recent":[]}"#)
        let unknown = server.request(4, "resources/read", #"{"uri":"skillhost://state/nothing",\#(meta)}"#)
        let error = unknown?["error"] as? [String: Any]
        #expect(error?["code"] as? Int == -32602)
        #expect(error?["message"] as? String == "Resource not found")
        #expect((error?["data"] as? [String: Any])?["uri"] as? String == "skillhost://state/nothing")

        server.send(
            #"{"jsonrpc":"2.0","id":"state","method":"subscriptions/listen","params":{"notifications":{"resourceSubscriptions":["skillhost://state/notes","file:///etc/passwd"]},\#(meta)}}"#
        )
        let acknowledged = server.next()?["params"] as? [String: Any]
        #expect(
            (acknowledged?["notifications"] as? [String: Any])?["resourceSubscriptions"] as? [String]
                == ["skillhost://state/notes"], "only the state resources that exist are honoured")
        // A call through this server.
        var notifications: [[String: Any]] = []
        _ = server.request(
            5, "tools/call", #"{"name":"notes_add","arguments":{"title":"milk"},\#(meta)}"#,
            notifications: &notifications)
        func updated() async -> [String: Any]? {
            if let found = notifications.first(where: { $0["method"] as? String == "notifications/resources/updated" })
            {
                return found["params"] as? [String: Any]
            }
            let deadline = ContinuousClock.now + .seconds(60)
            while ContinuousClock.now < deadline, let message = server.next() {
                if message["method"] as? String == "notifications/resources/updated" {
                    return message["params"] as? [String: Any]
                }
            }
            return nil
        }
        let first = await updated()
        #expect(first?["uri"] as? String == "skillhost://state/notes")
        #expect((first?["_meta"] as? [String: Any])?["io.modelcontextprotocol/subscriptionId"] as? String == "state")
        // A change made by another process with the same data: seen by the two-second check.
        notifications = []
        let other = try await runProcessOffPool(
            Paths.skillhost, ["call", "notes_add", #"{"title":"eggs"}"#], environment: environment)
        #expect(other.status == 0)
        #expect(await updated()?["uri"] as? String == "skillhost://state/notes")
        let reread = result(server.request(6, "resources/read", #"{"uri":"skillhost://state/notes",\#(meta)}"#))
        let text = (reread?["contents"] as? [[String: Any]])?.first?["text"] as? String
        #expect(text?.hasPrefix(#"{"notes":2,"recent":[{"id":2,"title":"eggs"}"#) == true, "\(text ?? "")")
    }
}

extension MCPServerTests {
    /// One yes runs the call once: replaying an accepted requestState is refused, never runs it again.
    @Test func anApprovalIsRedeemedOnce() throws {
        let server = try MCPProcess(environment: environment)
        defer { server.close() }
        let meta =
            #""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}"#
        _ = server.request(1, "tools/call", #"{"name":"notes_add","arguments":{"title":"keep"},\#(meta)}"#)
        let asked = result(server.request(2, "tools/call", #"{"name":"notes_delete","arguments":{"id":1},\#(meta)}"#))
        let state = try #require(asked?["requestState"] as? String)
        let yes =
            #"{"name":"notes_delete","arguments":{"id":1},"requestState":"\#(state)","inputResponses":{"confirm":{"action":"accept","content":{"confirm":true}}},\#(meta)}"#
        #expect(text(server.request(3, "tools/call", yes)) == #"{"deleted":1}"#, "the accepted call ran")
        _ = server.request(4, "tools/call", #"{"name":"notes_add","arguments":{"title":"again"},\#(meta)}"#)
        let replayed = server.request(5, "tools/call", yes)
        #expect(
            (replayed?["error"] as? [String: Any])?["message"] as? String
                == "Invalid params: requestState was already used: one yes runs notes_delete once; call the tool "
                + "again without it to ask the user again")
        let listed = text(server.request(6, "tools/call", #"{"name":"notes_list","arguments":{},\#(meta)}"#))
        #expect(listed?.contains(#""title":"again""#) == true, "the replay deleted nothing: \(listed ?? "")")
    }

    /// A destructive composite is put to an MCP client's user once, with its plan in the question.
    @Test func aDestructiveCompositeAsksWithItsPlan() throws {
        let folder = Paths.temporaryDirectory("mcp-composite-ask")
        try
            #"{"id": "add_then_delete", "description": "Adds a note and deletes note 1.", "steps": [{"call": "notes_add", "with": {"title": "x"}}, {"call": "notes_delete", "with": {"id": 1}}]}"#
            .write(toFile: folder + "/add_then_delete.skill.json", atomically: true, encoding: .utf8)
        let server = try MCPProcess(arguments: ["--plugins", folder], environment: environment)
        defer { server.close() }
        let meta =
            #""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}"#
        let asked = result(server.request(1, "tools/call", #"{"name":"add_then_delete","arguments":{},\#(meta)}"#))
        #expect(asked?["resultType"] as? String == "input_required")
        let confirm = (asked?["inputRequests"] as? [String: Any])?["confirm"] as? [String: Any]
        #expect(
            (confirm?["params"] as? [String: Any])?["message"] as? String
                == #"Run add_then_delete (destructive) with {}? It runs 2 steps: 1. notes_add(title: "x"); 2. notes_delete(id: 1)"#
        )
    }
}

extension MCPServerTests {
    /// The handshake generation subscribes to a state resource with resources/subscribe: updates come unasked on
    /// stdio, untagged, until it unsubscribes.
    @Test func resourcesSubscribeInTheHandshakeGeneration() throws {
        let server = try MCPProcess(environment: environment)
        defer { server.close() }
        let initialized = result(
            server.request(1, "initialize", #"{"protocolVersion":"2025-11-25","capabilities":{}}"#))
        #expect(
            (initialized?["capabilities"] as? [String: Any])?["resources"] as? [String: Bool] == [
                "listChanged": true, "subscribe": true,
            ])
        server.send(#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        let unknown = server.request(2, "resources/subscribe", #"{"uri":"skillhost://state/none"}"#)
        #expect((unknown?["error"] as? [String: Any])?["message"] as? String == "Resource not found")
        #expect(
            result(server.request(3, "resources/subscribe", #"{"uri":"skillhost://state/notes"}"#))?.isEmpty == true)
        var notifications: [[String: Any]] = []
        _ = server.request(
            4, "tools/call", #"{"name":"notes_add","arguments":{"title":"milk"}}"#, notifications: &notifications)
        var updated = notifications.first { $0["method"] as? String == "notifications/resources/updated" }
        let deadline = ContinuousClock.now + .seconds(60)
        while updated == nil, ContinuousClock.now < deadline, let message = server.next() {
            if message["method"] as? String == "notifications/resources/updated" { updated = message }
        }
        #expect((updated?["params"] as? [String: Any])?.keys.sorted() == ["uri"], "untagged: no _meta")
        #expect((updated?["params"] as? [String: Any])?["uri"] as? String == "skillhost://state/notes")
        #expect(result(server.request(5, "resources/unsubscribe", #"{"uri":"skillhost://state/notes"}"#)) != nil)
        notifications = []
        _ = server.request(
            6, "tools/call", #"{"name":"notes_add","arguments":{"title":"eggs"}}"#, notifications: &notifications)
        _ = server.request(7, "ping", notifications: &notifications)
        #expect(!notifications.contains { $0["method"] as? String == "notifications/resources/updated" })
    }
}

/// `"budgets": {"mcp_session": {"tool_calls": N}}`: a client session's call past its budget is answered with a tool
/// error that says which budget and what to do; the session's other requests still work.
struct MCPBudgetTests {
    let home = Paths.temporaryDirectory("mcp-budget-home")

    @Test func aSessionPastItsToolCallBudgetGetsAClearError() throws {
        let config = home + "/config/skillhost"
        try FileManager.default.createDirectory(atPath: config, withIntermediateDirectories: true)
        try #"{"budgets": {"mcp_session": {"tool_calls": 2}}}"#.write(
            toFile: config + "/config.json", atomically: true, encoding: .utf8)
        let server = try MCPProcess(environment: cliEnvironment(home: home))
        defer { server.close() }
        _ = server.request(1, "initialize", #"{"protocolVersion":"2025-11-25","capabilities":{}}"#)
        func call(_ id: Int) -> [String: Any]? {
            server.request(id, "tools/call", #"{"name":"calculator","arguments":{"expression":"1+\#(id)"}}"#)?["result"]
                as? [String: Any]
        }
        #expect(call(2)?["isError"] as? Bool == false)
        #expect(call(3)?["isError"] as? Bool == false)
        let refused = call(4)
        #expect(refused?["isError"] as? Bool == true)
        #expect(
            ((refused?["content"] as? [[String: Any]])?.first)?["text"] as? String
                == "Budget reached: this MCP session has made its 2 tool calls (budgets.mcp_session.tool_calls in the "
                + "server's config.json); start a new session, or raise the budget")
        #expect(server.request(5, "tools/list")?["result"] != nil, "the session goes on")

        try #"{"budgets": {"mcp_session": {"tokens": 5}}}"#.write(
            toFile: config + "/config.json", atomically: true, encoding: .utf8)
        let wrong = try runProcess(Paths.skillhost, ["config", "check"], environment: cliEnvironment(home: home))
        #expect(
            wrong.stderr.contains(
                #"budgets.mcp_session counts tool_calls only (an MCP client brings its own model), like {"tool_calls": 1000}"#
            ), "\(wrong.stderr)")
    }
}

extension MCPServerTests {
    /// A call is decided once (issue #65): the question put to the client's user ends the call before it runs, and
    /// costs the session nothing; the yes runs it, counted once.
    @Test func aQuestionPutToTheUserCostsNoBudget() throws {
        let home = Paths.temporaryDirectory("mcp-budget-question-home")
        let config = home + "/config/skillhost"
        try FileManager.default.createDirectory(atPath: config, withIntermediateDirectories: true)
        try #"{"budgets": {"mcp_session": {"tool_calls": 2}}}"#.write(
            toFile: config + "/config.json", atomically: true, encoding: .utf8)
        var environment = cliEnvironment(home: home)
        for key in ["SKILLHOST_PLUGINS", "OPENAI_BASE_URL"] { environment[key] = nil }
        let server = try MCPProcess(environment: environment)
        defer { server.close() }
        let meta =
            #""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}"#
        #expect(
            text(server.request(1, "tools/call", #"{"name":"notes_add","arguments":{"title":"a"},\#(meta)}"#)) != nil)
        // Twice asked, never run: neither counts.
        for id in [2, 3] {
            let asked = result(
                server.request(id, "tools/call", #"{"name":"notes_delete","arguments":{"id":"1"},\#(meta)}"#))
            #expect(asked?["resultType"] as? String == "input_required", "\(asked ?? [:])")
        }
        let asked = result(server.request(4, "tools/call", #"{"name":"notes_delete","arguments":{"id":1},\#(meta)}"#))
        let state = try #require(asked?["requestState"] as? String)
        // The state names the arguments as they run: "1" was coerced to 1 before the question, so it is the same call.
        let yes =
            #"{"name":"notes_delete","arguments":{"id":"1"},"requestState":"\#(state)","inputResponses":{"confirm":{"action":"accept","content":{"confirm":true}}},\#(meta)}"#
        #expect(text(server.request(5, "tools/call", yes)) == #"{"deleted":1}"#, "the second of two calls")
        let third = result(server.request(6, "tools/call", #"{"name":"notes_list","arguments":{},\#(meta)}"#))
        #expect(third?["isError"] as? Bool == true, "the budget of two is used: \(third ?? [:])")
    }
}
