import Foundation
import JSONRPC
import SkillHost
import SkillJSON
import Synchronization

/// One running MCP server process spoken to over stdio: one JSON-RPC message per line, answers matched to their
/// requests by id, the server's standard error passed through, its exit noticed.
final class MCPStdioTransport: MCPTransport {
    private typealias Reply = Result<JSONValue, MCPClientError>

    private struct State {
        var pending = PendingRequests<CheckedContinuation<Reply, Never>>()
        /// Requests whose deadline passed before their wait was registered: registering one ends it at once.
        var expired: [JSONRPCID: Reply] = [:]
        var exited: Int32?
    }

    let name: String
    /// Whose timers end a request that waited too long (the registry's: tests move it by hand).
    let clock: any HostClock
    private let process: ChildProcess

    private let input: LineWriter
    private let state = Mutex(State())

    /// Starts the server. `onNotification` gets server notifications; `onExit` the exit status, once.
    init(
        name: String, command: String, arguments: [String], environment: [String: String],
        sandbox: (Sandbox, launcher: String)? = nil, clock: any HostClock = SystemClock(),
        onNotification: @escaping @Sendable (String, JSONValue) -> Void, onExit: @escaping @Sendable (Int32) -> Void
    ) throws(MCPClientError) {
        self.name = name
        self.clock = clock
        // Writing to a server that has exited must be an error for that server, not the end of the host.
        signal(SIGPIPE, SIG_IGN)
        // Started like a worker (own process group, clean signal mask, no inherited descriptors) so it can be
        // stopped for sure; only what a program needs plus what config.json passes: never the host's secrets.
        // With a sandbox, the skillhost binary's sandbox role confines itself and then becomes the server.
        // Its command line is the person's (config.json), so a file it names is read with its folder.
        let (program, argv) =
            sandbox.map { sandbox, launcher in
                var confined = sandbox
                confined.readsArgumentFiles = true
                return (launcher, confined.launcherArguments(command: command, arguments: arguments))
            } ?? ("/usr/bin/env", [command] + arguments)
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
                _ = chunk.withUnsafeBytes { Glibc.write(2, $0.baseAddress, count) }
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
            // What the server started and left behind (its children that regrouped) ends with it.
            ProcessTree.reaped(child.pid)
            let status = raw & 0x7f == 0 ? (raw >> 8) & 0xff : 128 + (raw & 0x7f)
            let waiting = self.state.withLock { state -> [CheckedContinuation<Reply, Never>] in
                state.exited = status
                return state.pending.removeAll()
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
        if case .notification(let method, let params) = message {
            onNotification(method, params ?? .null)
            return
        }
        // This client serves no requests.
        guard let (id, reply) = message.answer else { return }
        state.withLock { $0.pending.remove(id) }?.resume(
            returning: reply.mapError { MCPClientError($0.message, code: $0.code.rawValue) })
    }

    private func write(_ message: JSONRPCMessage) throws(MCPClientError) {
        guard input.write(message.line) else {
            throw MCPClientError("MCP server \(name) is not accepting input (it exited?)")
        }
    }

    func notify(_ method: String, _ params: JSONValue?, timeout: Duration) async {
        try? write(.notification(method: method, params: params))
    }

    /// A stateless server's `subscriptions/listen` request: its acknowledgment and notifications arrive as
    /// notifications, its end (a response, at the server's graceful close) is not waited for. A server that does
    /// not know the method answers with an error nobody waits for either, and its tools are then refreshed only on
    /// restart. The older generation sends its notifications unasked.
    func listen(_ params: JSONValue?) {
        guard let params else { return }
        let id = state.withLock { $0.pending.nextID() }
        try? write(.request(id: id, method: "subscriptions/listen", params: params))
    }

    /// A process has no session to forget.
    func forgotSession(_ error: MCPClientError) -> Bool { false }

    /// Sends a request and waits for its answer, at most `timeout`; cancelling the caller sends
    /// `notifications/cancelled`.
    func request(_ method: String, _ params: JSONObject, timeout: Duration) async throws(MCPClientError) -> JSONValue {
        if let exited = state.withLock({ $0.exited }) {
            throw MCPClientError("MCP server \(name) is not running (it exited with status \(exited))")
        }
        let name = self.name
        let id = state.withLock { $0.pending.nextID() }
        let reply: Reply = await withTaskCancellationHandler {
            let first: Reply = await clock.race(timeout) {
                await withCheckedContinuation { continuation in
                    let expired = self.state.withLock { state -> Reply? in
                        if let expired = state.expired.removeValue(forKey: id) { return expired }
                        state.pending.add(continuation, for: id)
                        return nil
                    }
                    if let expired {
                        continuation.resume(returning: expired)
                        return
                    }
                    // Cancelled before it was registered: the cancellation handler found nothing to end.
                    if Task.isCancelled {
                        self.settle(id, .failure(MCPClientError("cancelled")))
                        return
                    }
                    do throws(MCPClientError) {
                        try self.write(.request(id: id, method: method, params: .object(params)))
                    } catch {
                        self.settle(id, .failure(error))
                    }
                }
            } expired: {
                // The wait for the answer is a continuation that only this transport ends: end it here — or, when it
                // is not registered yet, as soon as it is — or the race would wait for it forever.
                let expired: Reply = .failure(
                    MCPClientError(
                        Deadline.timedOut("MCP server \(name)'s answer to \(method)", after: timeout)
                            + "; give it longer with timeout_s in config.json", timedOut: true))
                let waiting = self.state.withLock { state in
                    let waiting = state.pending.remove(id)
                    if waiting == nil { state.expired[id] = expired }
                    return waiting
                }
                waiting?.resume(returning: expired)
                return expired
            }
            // Whoever lost: stop waiting for the answer (and forget an expiry nothing came to collect).
            self.settle(id, first)
            self.state.withLock { _ = $0.expired.removeValue(forKey: id) }
            return first
        } onCancel: {
            try? self.write(
                .notification(
                    method: "notifications/cancelled",
                    params: ["requestId": .int(id.integer ?? 0), "reason": "cancelled by the client"]))
            self.settle(id, .failure(MCPClientError("cancelled")))
        }
        return try reply.get()
    }

    /// Ends the wait for request `id` with `reply`, unless its answer came first.
    private func settle(_ id: JSONRPCID, _ reply: Reply) {
        state.withLock { $0.pending.remove(id) }?.resume(returning: reply)
    }

    /// Closes the server's input and makes sure it ends: 1 s to exit by itself, then SIGTERM to its process group,
    /// 1 s more, then SIGKILL. Blocks (at most about 2 s, only for a server that ignores its closed input).
    func close() {
        input.close()
        process.stop(grace: .seconds(1)) { state.withLock { $0.exited != nil } }
    }
}
