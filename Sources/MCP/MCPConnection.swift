import Foundation
import SkillHost
import SkillJSON
import Synchronization

/// Why a request to an MCP server failed, as a sentence.
public struct MCPClientError: Error, Sendable, CustomStringConvertible {
    public let message: String
    /// The JSON-RPC error code when the server answered with an error.
    public let code: Int?
    /// The server did not answer within the request's time.
    public let timedOut: Bool

    public init(_ message: String, code: Int? = nil, timedOut: Bool = false) {
        self.message = message
        self.code = code
        self.timedOut = timedOut
    }

    public var description: String { message }
}

/// One running MCP server process spoken to over stdio (one JSON-RPC message per line), either protocol
/// generation: `server/discover` first (2026-07-28, `_meta` on every request), else the `initialize` handshake.
final class MCPConnection: Sendable {
    private typealias Reply = Result<JSONValue, MCPClientError>

    private struct State {
        var pending: [Int: CheckedContinuation<Reply, Never>] = [:]
        var nextID = 1
        /// Set when the server speaks the stateless generation.
        var statelessVersion: String?
        var exited: Int32?
    }

    let name: String
    private let process: Process

    /// The server's process id (tests use it to simulate a crash).
    var processIdentifier: Int32 { process.processIdentifier }

    /// The protocol generation in use: "2026-07-28" (stateless) or nil (initialize handshake).
    var statelessVersion: String? { state.withLock { $0.statelessVersion } }
    private let input: FileHandle
    private let state = Mutex(State())

    /// Starts the server. `onNotification` gets server notifications; `onExit` the exit status, once.
    init(
        name: String, command: String, arguments: [String], environment: [String: String],
        onNotification: @escaping @Sendable (String, JSONValue) -> Void,
        onExit: @escaping @Sendable (Int32) -> Void
    ) throws(MCPClientError) {
        self.name = name
        // Writing to a server that has exited must be an error for that server, not the end of the host.
        signal(SIGPIPE, SIG_IGN)
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [command] + arguments
        // Only what a program needs plus what config.json passes: never the host's secrets.
        process.environment = ChildEnvironment.minimal(adding: environment)
        let stdin = Pipe()
        let stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = FileHandle.standardError
        input = stdin.fileHandleForWriting
        do { try process.run() } catch {
            throw MCPClientError("cannot start MCP server \(name) (\(command)): \(error.localizedDescription)")
        }
        let output = stdout.fileHandleForReading
        let thread = Thread { [self] in
            var buffer = Data()
            while true {
                let chunk = output.availableData
                if chunk.isEmpty { break }
                buffer.append(chunk)
                while let newline = buffer.firstIndex(of: 0x0A) {
                    let line = buffer[buffer.startIndex..<newline]
                    buffer.removeSubrange(buffer.startIndex...newline)
                    self.receive(Array(line), onNotification: onNotification)
                }
            }
            self.process.waitUntilExit()
            let status = self.process.terminationStatus
            let waiting = self.state.withLock { state -> [CheckedContinuation<Reply, Never>] in
                state.exited = status
                defer { state.pending = [:] }
                return Array(state.pending.values)
            }
            for continuation in waiting {
                continuation.resume(returning: .failure(MCPClientError("MCP server \(name) exited (status \(status))")))
            }
            onExit(status)
        }
        thread.name = "skillhost.mcp.\(name)"
        thread.start()
    }

    private func receive(_ line: [UInt8], onNotification: @Sendable (String, JSONValue) -> Void) {
        guard let message = try? JSONValue(parsing: line) else { return }
        if case .string(let method)? = message["method"] {
            if message["id"] == nil { onNotification(method, message["params"] ?? .null) }
            return
        }
        guard case .int(let id)? = message["id"] else { return }
        let continuation = state.withLock { $0.pending.removeValue(forKey: Int(id)) }
        if let error = message["error"] {
            let code = error["code"]?.doubleValue.map { Int($0) }
            continuation?.resume(
                returning: .failure(MCPClientError(error["message"]?.stringValue ?? error.jsonText, code: code)))
        } else {
            continuation?.resume(returning: .success(message["result"] ?? .null))
        }
    }

    private func write(_ message: JSONValue) throws(MCPClientError) {
        do { try input.write(contentsOf: Data((message.jsonText + "\n").utf8)) } catch {
            throw MCPClientError("MCP server \(name) is not accepting input (it exited?)")
        }
    }

    func notify(_ method: String, _ params: JSONValue? = nil) {
        var message = JSONObject([(key: "jsonrpc", value: "2.0"), (key: "method", value: .string(method))])
        if let params { message["params"] = params }
        try? write(.object(message))
    }

    /// Sends a request and waits for its answer, at most `timeout`; cancelling the caller sends
    /// `notifications/cancelled`.
    func request(_ method: String, _ params: JSONObject = JSONObject(), timeout: Duration) async throws(MCPClientError)
        -> JSONValue
    {
        var params = params
        let (id, version, exited) = state.withLock { state -> (Int, String?, Int32?) in
            defer { state.nextID += 1 }
            return (state.nextID, state.statelessVersion, state.exited)
        }
        if let exited { throw MCPClientError("MCP server \(name) is not running (it exited with status \(exited))") }
        if let version {
            var meta = params["_meta"]?.objectValue ?? JSONObject()
            meta["io.modelcontextprotocol/protocolVersion"] = .string(version)
            meta["io.modelcontextprotocol/clientInfo"] = ["name": "skillhost", "version": "0.1.0"]
            meta["io.modelcontextprotocol/clientCapabilities"] = .object(JSONObject())
            params["_meta"] = .object(meta)
        }
        let message: JSONValue = [
            "jsonrpc": "2.0", "id": .int(Int64(id)), "method": .string(method), "params": .object(params),
        ]
        let name = self.name
        let reply: Reply = await withTaskCancellationHandler {
            await withTaskGroup(of: Reply?.self) { group in
                group.addTask {
                    let reply: Reply = await withCheckedContinuation { continuation in
                        self.state.withLock { $0.pending[id] = continuation }
                        do throws(MCPClientError) { try self.write(message) } catch {
                            if let waiting = self.state.withLock({ $0.pending.removeValue(forKey: id) }) {
                                waiting.resume(returning: .failure(error))
                            }
                        }
                    }
                    return reply
                }
                group.addTask {
                    try? await Task.sleep(for: timeout)
                    return Task.isCancelled
                        ? nil
                        : .failure(
                            MCPClientError(
                                "MCP server \(name) did not answer \(method) within \(timeout)", timedOut: true))
                }
                var first: Reply = .failure(MCPClientError("cancelled"))
                for await result in group {
                    if let result {
                        first = result
                        break
                    }
                }
                // Whoever lost: stop waiting for the answer.
                if let waiting = self.state.withLock({ $0.pending.removeValue(forKey: id) }) {
                    waiting.resume(returning: first)
                }
                group.cancelAll()
                return first
            }
        } onCancel: {
            self.notify("notifications/cancelled", ["requestId": .int(Int64(id)), "reason": "cancelled by the client"])
            if let waiting = self.state.withLock({ $0.pending.removeValue(forKey: id) }) {
                waiting.resume(returning: .failure(MCPClientError("cancelled")))
            }
        }
        return try reply.get()
    }

    /// Negotiates the protocol: `server/discover` (stateless 2026-07-28) when the server knows it, else
    /// `initialize` + `notifications/initialized`. Returns the server's name and version.
    ///
    /// A server that has not answered the probe within 3 s is either still starting or ignores unknown methods:
    /// then both are asked at once — the probe again and `initialize` — and the first useful answer within what is
    /// left of `timeout` wins (an `initialize` refused with -32022, "use the stateless revision", waits for the
    /// probe). So a slow starter is not dropped and a server that ignores the probe is not waited on for long.
    func handshake(timeout: Duration) async throws(MCPClientError) -> (name: String, version: String) {
        let deadline = ContinuousClock.now + timeout
        switch await discover(timeout: min(timeout, .seconds(3))) {
        case .stateless(let info): return info
        case .legacy: return try await initialize(timeout: deadline - .now)
        case .silent: break
        }
        enum Answer: Sendable {
            case discovered(Probe)
            case initialized(Result<(name: String, version: String), MCPClientError>)
        }
        let remaining = max(deadline - .now, .milliseconds(1))
        let outcome = await withTaskGroup(of: Answer.self) {
            group -> Result<(name: String, version: String), MCPClientError> in
            group.addTask { .discovered(await self.discover(timeout: remaining)) }
            group.addTask {
                do throws(MCPClientError) {
                    return .initialized(.success(try await self.initialize(timeout: remaining)))
                } catch { return .initialized(.failure(error)) }
            }
            var initialized: Result<(name: String, version: String), MCPClientError>?
            var probed = false
            for await answer in group {
                switch answer {
                case .discovered(.stateless(let info)):
                    group.cancelAll()
                    return .success(info)
                case .discovered: probed = true
                case .initialized(.success(let info)):
                    group.cancelAll()
                    return .success(info)
                case .initialized(let failure): initialized = failure
                }
                if probed, let initialized { return initialized }
            }
            return initialized ?? .failure(MCPClientError("MCP server \(name) did not answer within \(timeout)"))
        }
        return try outcome.get()
    }

    /// What a `server/discover` probe found.
    private enum Probe: Sendable {
        case stateless((name: String, version: String))
        /// The server answered without offering the stateless revision (or with an error): use `initialize`.
        case legacy
        /// No answer within the time given.
        case silent
    }

    private func discover(timeout: Duration) async -> Probe {
        let stateless = "2026-07-28"
        let meta: JSONObject = JSONObject([
            (key: "io.modelcontextprotocol/protocolVersion", value: .string(stateless)),
            (key: "io.modelcontextprotocol/clientInfo", value: ["name": "skillhost", "version": "0.1.0"]),
            (key: "io.modelcontextprotocol/clientCapabilities", value: .object(JSONObject())),
        ])
        do throws(MCPClientError) {
            let discovered = try await request(
                "server/discover", JSONObject([(key: "_meta", value: .object(meta))]), timeout: timeout)
            guard discovered["supportedVersions"]?.arrayValue?.contains(.string(stateless)) == true else {
                return .legacy
            }
            state.withLock { $0.statelessVersion = stateless }
            let info = discovered["serverInfo"] ?? discovered["_meta"]?["io.modelcontextprotocol/serverInfo"]
            return .stateless((info?["name"]?.stringValue ?? name, info?["version"]?.stringValue ?? ""))
        } catch {
            return error.code == nil && error.timedOut ? .silent : .legacy
        }
    }

    private func initialize(timeout: Duration) async throws(MCPClientError) -> (name: String, version: String) {
        let result = try await request(
            "initialize",
            JSONObject([
                (key: "protocolVersion", value: "2025-11-25"), (key: "capabilities", value: .object(JSONObject())),
                (key: "clientInfo", value: ["name": "skillhost", "version": "0.1.0"]),
            ]), timeout: timeout)
        notify("notifications/initialized")
        let info = result["serverInfo"]
        return (info?["name"]?.stringValue ?? name, info?["version"]?.stringValue ?? "")
    }

    /// Closes the server's input, then terminates it if it does not exit.
    func close() {
        try? input.close()
        let process = self.process
        DispatchQueue.global().asyncAfter(deadline: .now() + 2) {
            if process.isRunning { process.terminate() }
        }
    }
}
