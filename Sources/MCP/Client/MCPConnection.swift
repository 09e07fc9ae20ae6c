import Foundation
import JSONRPC
import SkillHost
import SkillJSON
import Synchronization

/// Why a request to an MCP server failed, as a sentence.
package struct MCPClientError: Error, Sendable, CustomStringConvertible {
    package let message: String
    /// The JSON-RPC error code when the server answered with an error.
    package let code: Int?
    /// The server did not answer within the request's time.
    package let timedOut: Bool

    package init(_ message: String, code: Int? = nil, timedOut: Bool = false) {
        self.message = message
        self.code = code
        self.timedOut = timedOut
    }

    package var description: String { message }
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
    private let process: ChildProcess

    /// The server's process id (tests use it to simulate a crash).
    var processIdentifier: Int32 { process.pid }

    /// The protocol generation in use: "2026-07-28" (stateless) or nil (initialize handshake).
    var statelessVersion: String? { state.withLock { $0.statelessVersion } }
    private let input: LineWriter
    private let state = Mutex(State())

    /// Starts the server. `onNotification` gets server notifications; `onExit` the exit status, once.
    init(
        name: String, command: String, arguments: [String], environment: [String: String],
        sandbox: (Sandbox, launcher: String)? = nil, onNotification: @escaping @Sendable (String, JSONValue) -> Void,
        onExit: @escaping @Sendable (Int32) -> Void
    ) throws(MCPClientError) {
        self.name = name
        // Writing to a server that has exited must be an error for that server, not the end of the host.
        signal(SIGPIPE, SIG_IGN)
        // Started like a worker (own process group, clean signal mask, no inherited descriptors) so it can be
        // stopped for sure; only what a program needs plus what config.json passes: never the host's secrets.
        // With a sandbox, the skillhost binary's sandbox role confines itself and then becomes the server.
        let (program, argv) =
            sandbox.map { ($0.launcher, $0.0.launcherArguments(command: command, arguments: arguments)) }
            ?? ("/usr/bin/env", [command] + arguments)
        switch ChildProcess.spawn(program, argv, environment: ChildEnvironment.minimal(adding: environment)) {
        case .failure(let reason): throw MCPClientError("cannot start MCP server \(name) (\(command)): \(reason)")
        case .success(let child): process = child
        }
        input = LineWriter(descriptor: process.input)
        let child = process
        // The server's standard error is passed through to the host's.
        let errors = Thread {
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = read(child.errors, &chunk, chunk.count)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { break }
                FileHandle.standardError.write(Data(chunk[0..<count]))
            }
            Glibc.close(child.errors)
        }
        errors.name = "skillhost.mcp.\(name).stderr"
        errors.start()
        let thread = Thread { [self] in
            let reader = LineReader(descriptor: child.output, limit: 64 << 20)
            reading: while true {
                switch reader.next() {
                case .end: break reading
                case .tooLong: continue
                case .line(let line): self.receive(line, onNotification: onNotification)
                }
            }
            Glibc.close(child.output)
            var raw: Int32 = 0
            while waitpid(child.pid, &raw, 0) < 0, errno == EINTR {}
            let status = raw & 0x7f == 0 ? (raw >> 8) & 0xff : 128 + (raw & 0x7f)
            let waiting = self.state.withLock { state -> [CheckedContinuation<Reply, Never>] in
                state.exited = status
                defer { state.pending = [:] }
                return Array(state.pending.values)
            }
            self.input.close()
            for continuation in waiting {
                continuation.resume(returning: .failure(MCPClientError("MCP server \(name) exited (status \(status))")))
            }
            onExit(status)
        }
        thread.name = "skillhost.mcp.\(name)"
        thread.start()
    }

    private func receive(_ line: [UInt8], onNotification: @Sendable (String, JSONValue) -> Void) {
        guard let value = try? JSONValue(parsing: line), let message = JSONRPCMessage(value) else { return }
        let id: JSONRPCID
        let reply: Reply
        switch message {
        case .notification(let method, let params):
            onNotification(method, params ?? .null)
            return
        case .request: return  // this client serves no requests
        case .response(let answered, let result): (id, reply) = (answered, .success(result))
        case .failure(let answered, let error):
            (id, reply) = (answered, .failure(MCPClientError(error.message, code: error.code.rawValue)))
        }
        guard let number = id.integer, let key = Int(exactly: number) else { return }
        state.withLock { $0.pending.removeValue(forKey: key) }?.resume(returning: reply)
    }

    private func write(_ message: JSONRPCMessage) throws(MCPClientError) {
        guard input.write(message.line) else {
            throw MCPClientError("MCP server \(name) is not accepting input (it exited?)")
        }
    }

    func notify(_ method: String, _ params: JSONValue? = nil) {
        try? write(.notification(method: method, params: params))
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
        if let version { params["_meta"] = MCPProtocol.clientMeta(version, merging: params["_meta"]) }
        let message = JSONRPCMessage.request(id: JSONRPCID(Int64(id)), method: method, params: .object(params))
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

    /// Opens a `subscriptions/listen` stream for tool list changes (stateless generation only; the older one sends
    /// them unasked): its acknowledgment and notifications arrive as notifications, its end (a response, at the
    /// server's graceful close) is not waited for. A server that does not know the method answers with an error
    /// nobody waits for either, and its tools are then refreshed only on restart.
    func listenForToolChanges() {
        let (id, version) = state.withLock { state -> (Int, String?) in
            defer { state.nextID += 1 }
            return (state.nextID, state.statelessVersion)
        }
        guard let version else { return }
        try? write(
            .request(id: JSONRPCID(Int64(id)), method: "subscriptions/listen", params: MCPProtocol.listen(version)))
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
        // A timeout names the handshake's whole time, not what was left of it after the probe.
        let name = name
        func whole(_ error: MCPClientError) -> MCPClientError {
            error.timedOut
                ? MCPClientError("MCP server \(name) did not answer initialize within \(timeout)", timedOut: true)
                : error
        }
        switch await discover(timeout: min(timeout, .seconds(3))) {
        case .stateless(let info): return info
        case .legacy:
            do throws(MCPClientError) { return try await initialize(timeout: deadline - .now) } catch {
                throw whole(error)
            }
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
                } catch { return .initialized(.failure(whole(error))) }
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
        let stateless = MCPProtocol.statelessVersion
        do throws(MCPClientError) {
            let discovered = try await request(
                "server/discover", JSONObject([(key: "_meta", value: MCPProtocol.clientMeta(stateless))]),
                timeout: timeout)
            guard discovered["supportedVersions"]?.arrayValue?.contains(.string(stateless)) == true else {
                return .legacy
            }
            state.withLock { $0.statelessVersion = stateless }
            let info = discovered["serverInfo"] ?? discovered["_meta"]?[MCPProtocol.Meta.serverInfo]
            return .stateless((info?["name"]?.stringValue ?? name, info?["version"]?.stringValue ?? ""))
        } catch {
            return error.code == nil && error.timedOut ? .silent : .legacy
        }
    }

    private func initialize(timeout: Duration) async throws(MCPClientError) -> (name: String, version: String) {
        let result = try await request("initialize", MCPProtocol.initializeParams, timeout: timeout)
        notify("notifications/initialized")
        let info = result["serverInfo"]
        return (info?["name"]?.stringValue ?? name, info?["version"]?.stringValue ?? "")
    }

    /// Closes the server's input and makes sure it ends: 1 s to exit by itself, then SIGTERM to its process group,
    /// 1 s more, then SIGKILL. Blocks (at most about 2 s, only for a server that ignores its closed input).
    func close() {
        input.close()
        process.stop(grace: .seconds(1)) { state.withLock { $0.exited != nil } }
    }
}
