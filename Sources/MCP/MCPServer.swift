import Agent
import Foundation
import JSONRPC
import SkillHost
import SkillJSON
import Synchronization

/// Serves the live registry over MCP (stdio, one JSON-RPC message per line): both protocol generations — the
/// `initialize` handshake (revisions 2024-11-05 … 2025-11-25) and the stateless 2026-07-28 revision with
/// `server/discover` and per-request `_meta` — `tools/list`, `tools/call` (with progress and cancellation), `ping`,
/// and `notifications/tools/list_changed` on hot reload. Protocol messages only on stdout.
public final class MCPServer: Sendable {
    let registry: SkillRegistry
    let output: @Sendable (String) -> Void
    private let state = Mutex(State())
    /// Signalled whenever the last call in flight is taken out of `running` (the end of `serve` waits for it).
    private let drained = DispatchSemaphore(value: 0)

    struct State {
        /// Requests in flight, by JSON-RPC id (as JSON text), so `notifications/cancelled` can stop them.
        var running: [String: CallSlot] = [:]
        /// The client has initialised (or discovered), so change notifications may be sent.
        var ready = false
        /// The revision `initialize` settled on (batches exist in 2025-03-26 only).
        var negotiated: String?
    }

    /// Calls one client may have in flight; more are answered "busy" (memory and threads stay bounded).
    let maximumCallsInFlight: Int
    /// The longest request line read; longer ones are answered with a parse error and skipped.
    package static let maximumLine = 64 << 20

    /// - Parameters:
    ///   - registry: its policy applies to every call: skills denied by a rule are refused, and so are those it
    ///     would ask about (nobody can confirm for a client) — destructive skills need a rule that allows them.
    ///   - output: writes one line (the message, without newline) to the client.
    ///   - maximumCallsInFlight: calls running at once before further ones are refused as busy.
    public init(
        registry: SkillRegistry, maximumCallsInFlight: Int = 256,
        output: @escaping @Sendable (String) -> Void
    ) {
        self.registry = registry
        self.maximumCallsInFlight = maximumCallsInFlight
        self.output = output
    }

    /// Reads messages until `nextLine` returns nil (standard input closed), on threads of its own; blocks the
    /// calling thread (never call it on the cooperative pool) until then. Threads follow the leader/follower pattern: the thread that
    /// reads a `tools/call` hands reading over to another thread and runs the call itself, so a request is
    /// answered without a single thread hand-off. Hot reload changes become `list_changed` notifications. Returns
    /// once the calls still running at the end have been answered.
    package func serve(_ reader: LineReader) {
        let changes = registry.changes()
        let notifier = Task { [weak self] in
            for await change in changes {
                if case .failed = change { continue }  // a file that failed to load changes no tool
                guard let self, self.state.withLock({ $0.ready }) else { continue }
                self.send(["jsonrpc": "2.0", "method": "notifications/tools/list_changed"])
            }
        }
        defer { notifier.cancel() }
        // The loop runs on threads of its own: a thread stuck in a plugin call past its deadline must not keep
        // the server from ending.
        let loop = ReadLoop(reader: reader, threadName: "skillhost.mcp.reader") { [self] line, handOff in
            switch line {
            case .end: return
            case .tooLong:
                respond(
                    .null, code: .parseError,
                    message: "Parse error: a message longer than \(MCPServer.maximumLine >> 20) MB was skipped",
                    reply: output)
            case .line(let bytes):
                if bytes.allSatisfy({ [0x20, 0x09, 0x0D].contains($0) }) { return }
                handle(bytes, beforeCall: handOff)
            }
        }
        loop.start()
        loop.waitForEnd()
        // The client closed its side: calls still running are answered (each ends by its deadline at the latest).
        while state.withLock({ !$0.running.isEmpty }) { _ = drained.wait(timeout: .now() + .seconds(1)) }
    }

    func send(_ message: JSONValue) { output(message.jsonText) }

    /// Takes a call out of `running`, telling the end of `serve` when none is left.
    private func removeRunning(_ key: String) -> CallSlot? {
        let (slot, empty) = state.withLock { state in (state.running.removeValue(forKey: key), state.running.isEmpty) }
        if slot != nil, empty { drained.signal() }
        return slot
    }

    /// A request id as the client wrote it: numbers keep their text (no rounding, no `1e400` → null).
    typealias RequestID = JSONRPCID

    /// Where the responses to one line go: straight out, or into the array answering a batch.
    typealias Reply = @Sendable (String) -> Void

    func respond(_ id: RequestID, result: JSONValue, reply: Reply) {
        reply(JSONRPCMessage.response(id: id, result: result).line)
    }

    func respond(_ id: RequestID, code: JSONRPCErrorCode, message: String, data: JSONValue? = nil, reply: Reply) {
        reply(JSONRPCMessage.failure(id: id, error: JSONRPCError(code, message, data: data)).line)
    }

    /// Handles one line: a request, a notification, a batch (in 2025-03-26 only), or garbage. A call runs on this
    /// thread; `beforeCall` runs just before it starts (the read loop hands reading over there), and never for
    /// anything else. The line's bytes are parsed as they are: invalid UTF-8 is a parse error, not replaced.
    func handle(_ line: [UInt8], beforeCall: () -> Void = {}) {
        let message: JSONValue
        do throws(JSONParseError) { message = try JSONValue(parsing: line) } catch {
            respond(.null, code: .parseError, message: "Parse error: \(error)", reply: output)
            return
        }
        guard case .array(let elements) = message else {
            handle(message, raw: line[...], beforeCall: beforeCall, reply: output)
            return
        }
        guard state.withLock({ $0.negotiated }) == MCPProtocol.batchVersion else {
            respond(
                .null, code: .invalidRequest,
                message: "Invalid request: JSON-RPC batches are part of protocol revision 2025-03-26 only, and this "
                    + "session negotiated another; send one message per line", reply: output)
            return
        }
        guard !elements.isEmpty else {
            respond(.null, code: .invalidRequest, message: "Invalid request: an empty batch", reply: output)
            return
        }
        // Every request of the batch is answered in one array, once the last one is done; calls run on the pool.
        // What gets an answer: everything but notifications and responses (an invalid element gets an error).
        let requests = elements.filter { element in
            let notification = element["method"]?.stringValue != nil && element["id"] == nil
            let response = element["id"] != nil && (element["result"] != nil || element["error"] != nil)
            return !notification && !response
        }.count
        let batch = BatchReply(expected: requests, output: output)
        beforeCall()
        for (element, raw) in zip(elements, RawJSON.elements(in: line[...])) {
            handle(element, raw: raw, onPool: true, reply: batch.add)
        }
    }

    /// Handles one message of a line (the line itself, or an element of a batch).
    private func handle(
        _ message: JSONValue, raw: ArraySlice<UInt8>, onPool: Bool = false, beforeCall: () -> Void = {},
        reply: @escaping Reply
    ) {
        let rawID = message["id"].map { value -> RequestID in
            switch value {
            case .int, .double: return RequestID(rawText: RawJSON.member("id", in: raw) ?? value.jsonText)
            default: return RequestID(rawText: value.jsonText)
            }
        }
        guard case .object = message, case .string(let method)? = message["method"] else {
            if message["id"] != nil, message["result"] != nil || message["error"] != nil { return }  // a response
            respond(
                rawID ?? .null, code: .invalidRequest,
                message: "Invalid request: expected a JSON-RPC request with a method",
                reply: reply)
            return
        }
        let params = message["params"] ?? .object(JSONObject())
        guard let id = rawID else {
            notification(method, params)
            return
        }
        // The stateless generation names its version in every request.
        let version = params["_meta"]?[MCPProtocol.Meta.protocolVersion]?.stringValue
        if let version, !MCPProtocol.allVersions.contains(version) {
            respond(
                id, code: .unsupportedProtocolVersion, message: "Unsupported protocol version \(version)",
                data: ["supported": .array(MCPProtocol.allVersions.map { .string($0) })], reply: reply)
            return
        }
        let stateless = version != nil
        // 2026-07-28 results say they are complete; cacheable ones (discover, lists) carry a cache hint — zero,
        // since hot reload can change the tools at any moment.
        let cacheable = method == "server/discover" || method == "tools/list"
        let finish: @Sendable (JSONValue) -> Void = { [self] result in
            var result = result
            if stateless || method == "server/discover", case .object(var object) = result {
                object["resultType"] = "complete"
                if cacheable {
                    object["ttlMs"] = 0
                    object["cacheScope"] = "private"
                }
                result = .object(object)
            }
            respond(id, result: result, reply: reply)
        }
        switch method {
        case "initialize":
            let requested = params["protocolVersion"]?.stringValue ?? ""
            let chosen =
                MCPProtocol.handshakeVersions.contains(requested) ? requested : MCPProtocol.handshakeVersions.last ?? ""
            state.withLock {
                $0.ready = true
                $0.negotiated = chosen
            }
            finish([
                "protocolVersion": .string(chosen), "capabilities": ["tools": ["listChanged": true]],
                "serverInfo": MCPProtocol.implementation,
            ])
        case "server/discover":
            state.withLock { $0.ready = true }
            finish([
                "supportedVersions": .array(MCPProtocol.allVersions.map { .string($0) }),
                "capabilities": ["tools": ["listChanged": true]],
                "serverInfo": MCPProtocol.implementation,
            ])
        case "ping" where !stateless:
            finish(.object(JSONObject()))
        case "tools/list":
            if stateless { state.withLock { $0.ready = true } }
            finish(["tools": .array(registry.skills.map(Self.tool))])
        case "tools/call":
            call(id: id, params: params, onPool: onPool, finish: finish, beforeCall: beforeCall, reply: reply)
        default:
            respond(id, code: .methodNotFound, message: "Method not found: \(method)", reply: reply)
        }
    }

    private func notification(_ method: String, _ params: JSONValue) {
        switch method {
        case "notifications/initialized": state.withLock { $0.ready = true }
        case "notifications/cancelled":
            guard let requestID = params["requestId"] else { return }
            removeRunning(Self.key(requestID))?.cancel()
        default: break
        }
    }

    /// A skill as an MCP tool; risk and flags become the annotations.
    static func tool(_ skill: SkillInfo) -> JSONValue {
        var tool = JSONObject([
            (key: "name", value: .string(skill.id)), (key: "title", value: .string(skill.title)),
            (key: "description", value: .string(skill.description)), (key: "inputSchema", value: skill.inputSchema),
            (
                key: "annotations",
                value: [
                    "title": .string(skill.title), "readOnlyHint": .bool(skill.risk == .readOnly),
                    "destructiveHint": .bool(skill.risk == .destructive),
                    "idempotentHint": .bool(skill.flags.contains(.idempotent)),
                    "openWorldHint": .bool(skill.flags.contains(.openWorld)),
                ]
            ),
        ])
        // MCP's outputSchema describes structuredContent, which is an object: other result schemas are not sent.
        if let output = skill.outputSchema, output["type"] == "object" { tool["outputSchema"] = output }
        return .object(tool)
    }

    /// How a request id is told apart from others in flight (and how `notifications/cancelled` names it): by
    /// value, so `1` and `1.0` are the same request.
    static func key(_ id: JSONValue) -> String { id.jsonText }

    private func call(
        id: RequestID, params: JSONValue, onPool: Bool, finish: @escaping @Sendable (JSONValue) -> Void,
        beforeCall: () -> Void, reply: @escaping Reply
    ) {
        guard case .string(let name)? = params["name"] else {
            respond(id, code: .invalidParams, message: "Invalid params: tools/call needs a tool name", reply: reply)
            return
        }
        guard registry.skill(name) != nil else {
            respond(id, code: .invalidParams, message: "Unknown tool: \(name)", reply: reply)
            return
        }
        let arguments = params["arguments"] ?? .object(JSONObject())
        guard arguments.objectValue != nil else {
            respond(id, code: .invalidParams, message: "Invalid params: arguments must be an object", reply: reply)
            return
        }
        let token = params["_meta"]?[MCPProtocol.Meta.progressToken]
        let key = Self.key((try? JSONValue(parsing: id.text)) ?? .null)
        // Registered before the call starts, so a fast call that ends at once still finds (and removes) it.
        let slot = CallSlot()
        enum Admission { case admitted, duplicate, busy(Int) }
        let admission = state.withLock { state -> Admission in
            if state.running[key] != nil { return .duplicate }
            if state.running.count >= maximumCallsInFlight { return .busy(state.running.count) }
            state.running[key] = slot
            return .admitted
        }
        switch admission {
        case .admitted: break
        case .duplicate:
            respond(
                id, code: .invalidRequest,
                message: "Invalid request: id \(id.text) is already used by a request in flight; give every request "
                    + "its own id", reply: reply)
            return
        case .busy(let count):
            respond(
                id, code: .serverBusy,
                message: "Server busy: \(count) calls are already running for this client; retry when one has "
                    + "finished", reply: reply)
            return
        }
        let onProgress: @Sendable (SkillProgress) -> Void = { [weak self] progress in
            guard let self, let token else { return }
            var body = JSONObject([
                (key: "progressToken", value: token), (key: "progress", value: .double(progress.done)),
            ])
            if let total = progress.total { body["total"] = .double(total) }
            if let message = progress.message { body["message"] = .string(message) }
            self.send(["jsonrpc": "2.0", "method": "notifications/progress", "params": .object(body)])
        }
        beforeCall()
        // The registry applies the policy: nobody can confirm for an MCP client.
        let invocation = SkillInvocation(
            skill: name, arguments: arguments, confirmer: Self.confirmer, onProgress: onProgress)
        registry.start(invocation, onCallingThread: !onPool, onHandle: { slot.attach($0) }) { [weak self] outcome in
            guard let self else { return }
            // A cancelled request gets no response (the client stopped waiting for it).
            guard self.removeRunning(key) != nil else { return }
            if outcome.status == .ok {
                let result = outcome.result ?? .null
                var object = JSONObject([
                    (key: "content", value: [["type": "text", "text": .string(result.displayText)]])
                ])
                if case .object = result { object["structuredContent"] = result }
                object["isError"] = false
                finish(.object(object))
            } else {
                finish(Self.errorResult(outcome.error ?? outcome.status.rawValue))
            }
        }
    }

    /// Nobody answers for an MCP client: what the policy would ask about is refused, with the rule that allows it.
    static let confirmer = Confirmer.nobody { skill in
        "not run: \(skill.id) is \(skill.risk == .destructive ? "destructive" : "set to ask"); allow it for MCP "
            + "clients with a policy rule in config.json (\"policy\": {\"\(skill.id)\": \"allow\"})"
    }

    static func errorResult(_ message: String) -> JSONValue {
        ["content": [["type": "text", "text": .string(message)]], "isError": true]
    }
}

/// Collects the responses to a batch and writes them as one array once every request has been answered.
final class BatchReply: Sendable {
    private let state: Mutex<(expected: Int, responses: [String])>
    private let output: @Sendable (String) -> Void

    init(expected: Int, output: @escaping @Sendable (String) -> Void) {
        state = Mutex((expected, []))
        self.output = output
    }

    @Sendable func add(_ response: String) {
        let complete = state.withLock { state -> [String]? in
            state.responses.append(response)
            return state.responses.count == state.expected ? state.responses : nil
        }
        if let complete { output("[" + complete.joined(separator: ",") + "]") }
    }
}

/// Where a cancellation that arrives before the call's handle exists waits for it.
final class CallSlot: Sendable {
    private let state = Mutex<(handle: CallHandle?, cancelled: Bool)>((nil, false))

    func attach(_ handle: CallHandle) {
        let cancelled = state.withLock { state in
            state.handle = handle
            return state.cancelled
        }
        if cancelled { handle.cancel() }
    }

    func cancel() {
        let handle = state.withLock { state in
            state.cancelled = true
            return state.handle
        }
        handle?.cancel()
    }
}
