import Foundation
import JSONRPC
import SkillFolders
import SkillHost
import SkillJSON
import Synchronization

/// Serves the live registry over MCP, both protocol generations — the `initialize` handshake (revisions
/// 2024-11-05 … 2025-11-25) and the stateless 2026-07-28 revision with `server/discover`, per-request `_meta`,
/// `subscriptions/listen` and multi-round-trip confirmation of destructive calls — on stdio (`serve`, one message
/// per line) and, through `MCPHTTPService`, over Streamable HTTP. Both transports hand each request here with an
/// `MCPExchange` saying where its answer and its notifications go.
package final class MCPServer: Sendable {
    let registry: SkillRegistry
    /// Standard output, for stdio: responses, progress and the handshake generation's change notifications.
    let output: @Sendable (String) -> Void
    let state = Mutex(State())
    /// stdio: the calls in flight, by request id (the end of `serve` waits for them; `notifications/cancelled`
    /// finds them).
    let admission: MCPAdmission
    /// Tool calls per client session, against `budgets.mcp_session`.
    let callBudget: MCPCallBudget
    /// The skill folders served as resources, and their files' digests.
    let skillFolders: SkillFolderTools?
    let skillDigests = SkillDigests()
    /// Open `subscriptions/listen` streams and older clients' notification streams.
    let subscriptions = MCPSubscriptions()
    /// Signs the state a confirmation round trip hands the client (see `MCPConfirmation`).
    let confirmations = MCPConfirmation()
    /// Skills quick enough to run on an HTTP event thread.
    let quickCalls = QuickCalls()
    /// Notices changes to the state resources subscriptions watch.
    let stateWatch = MCPStateWatch()

    struct State {
        /// stdio: `subscriptions/listen` requests open, by id, so `notifications/cancelled` can end them.
        var listening: [String: Int] = [:]
        /// stdio: the client used the handshake generation, so change notifications go to it unasked.
        var handshaken = false
        /// The revision `initialize` settled on (batches exist in 2025-03-26 only).
        var negotiated: String?
        /// Whether the stdio client announced it renders MCP Apps.
        var hostsApps = false
        /// stdio: the handshake client's stream of `notifications/resources/updated`, once it subscribed.
        var resourceStream: Int?
    }

    /// Calls one client may have in flight; more are answered "busy" (memory and threads stay bounded).
    let maximumCallsInFlight: Int
    /// The longest request line read; longer ones are answered with a parse error and skipped.
    package static let maximumLine = 64 << 20

    /// - Parameters:
    ///   - registry: its policy applies to every call: skills denied by a rule are refused, and so are those it
    ///     would ask about unless the client can ask its user (a 2026-07-28 client that declares elicitation).
    ///   - output: writes one line (the message, without newline) to a stdio client.
    ///   - maximumCallsInFlight: calls running at once for one client before further ones are refused as busy.
    ///   - sessionToolCalls: tool calls one client session may make (`budgets.mcp_session`); nil: no limit.
    ///   - skillFolders: the skill folders served as `skill://` resources (Skills Over MCP).
    package init(
        registry: SkillRegistry, maximumCallsInFlight: Int = 256, sessionToolCalls: Int? = nil,
        skillFolders: SkillFolderTools? = nil, output: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        self.registry = registry
        self.skillFolders = skillFolders
        self.maximumCallsInFlight = maximumCallsInFlight
        callBudget = MCPCallBudget(limit: sessionToolCalls)
        admission = MCPAdmission(limit: maximumCallsInFlight)
        self.output = output
    }

    /// Sends registry changes to subscribers (and, on stdio, to a handshake-generation client) until cancelled.
    func watchChanges() -> Task<Void, Never> {
        let changes = registry.changes()
        return Task { [weak self] in
            for await change in changes {
                if case .failed = change { continue }  // a file that failed to load changes no tool
                guard let self else { return }
                self.subscriptions.toolsChanged()
                self.subscriptions.resourcesChanged()
                self.checkWatchedState()
                if self.state.withLock({ $0.handshaken }) {
                    self.output(
                        JSONRPCMessage.notification(method: "notifications/tools/list_changed", params: nil).line)
                    self.output(
                        JSONRPCMessage.notification(method: "notifications/resources/list_changed", params: nil).line)
                }
            }
        }
    }

    /// A request id as the client wrote it: numbers keep their text (no rounding, no `1e400` → null).
    typealias RequestID = JSONRPCID

    func respond(_ id: RequestID, result: JSONValue, to exchange: MCPExchange) {
        exchange.reply(JSONRPCMessage.response(id: id, result: result).line, 200)
    }

    func respond(
        _ id: RequestID, code: JSONRPCErrorCode, message: String, data: JSONValue? = nil, status: Int? = nil,
        to exchange: MCPExchange
    ) {
        let line = JSONRPCMessage.failure(id: id, error: JSONRPCError(code, message, data: data)).line
        exchange.reply(line, status ?? Self.httpStatus(code))
    }

    func respond(_ id: RequestID, _ error: MCPError, to exchange: MCPExchange) {
        respond(id, code: error.code, message: error.message, data: error.data, status: error.status, to: exchange)
    }

    /// The HTTP status a JSON-RPC error is sent with (Streamable HTTP, 2026-07-28): malformed and refused
    /// requests are 400, an unknown method 404, busy 429; a tool's own failures are results, not errors.
    static func httpStatus(_ code: JSONRPCErrorCode) -> Int {
        switch code {
        case .methodNotFound: return 404
        case .serverBusy: return 429
        case .parseError, .invalidRequest, .unsupportedProtocolVersion, .headerMismatch, .missingClientCapability:
            return 400
        default: return 200
        }
    }

    /// Handles one message (already parsed; `raw` is its text, for ids written as they were). A call runs on this
    /// thread unless `onPool`; `beforeCall` runs just before it starts (the stdio read loop hands reading over
    /// there), and never for anything else.
    func handle(
        _ message: JSONValue, raw: ArraySlice<UInt8>, exchange: MCPExchange, onPool: Bool = false,
        beforeCall: () -> Void = {}
    ) {
        switch MCPIncoming(message, raw: raw) {
        case .request(let request): handle(request, exchange: exchange, onPool: onPool, beforeCall: beforeCall)
        case .notification(let method, let params): notification(method, params)
        case .response: return
        case .invalid(let id):
            respond(
                id, code: .invalidRequest, message: "Invalid request: expected a JSON-RPC request with a method",
                to: exchange)
        }
    }

    /// Handles one request: checked once (revision, capabilities), then answered by its method's entry.
    func handle(_ request: MCPRequest, exchange: MCPExchange, onPool: Bool = false, beforeCall: () -> Void = {}) {
        if let problem = request.problem {
            respond(request.id, problem, to: exchange)
            return
        }
        guard let method = request.entry, method.serves(request, stdio: exchange.isStdio) else {
            respond(request.id, code: .methodNotFound, message: "Method not found: \(request.method)", to: exchange)
            return
        }
        let id = request.id
        let described = request.stateless || method.alwaysDescribed
        let cacheable = method.cacheable
        let finish: @Sendable (JSONValue) -> Void = { [self] result in
            guard described else { return respond(id, result: result, to: exchange) }
            let line =
                Self.describedLine(id, result, cacheable: cacheable)
                ?? JSONRPCMessage.response(id: id, result: Self.described(result, cacheable: cacheable)).line
            exchange.reply(line, 200)
        }
        method.handle(
            self, request, MCPMethod.Context(exchange: exchange, finish: finish, onPool: onPool), beforeCall)
    }

    /// A 2026-07-28 result says it is complete and who answered; a cacheable one carries a cache hint.
    static func described(_ result: JSONValue, cacheable: Bool) -> JSONValue {
        guard case .object(var object) = result else { return result }
        if object["resultType"] == nil { object["resultType"] = "complete" }
        if cacheable {
            object["ttlMs"] = 0
            object["cacheScope"] = "private"
        }
        var resultMeta = object["_meta"]?.objectValue ?? JSONObject()
        resultMeta[MCPProtocol.Meta.serverInfo] = MCPProtocol.implementation
        object["_meta"] = .object(resultMeta)
        return .object(object)
    }

    /// The response line of `described(result)`, written in one buffer (the common case, a call's result): the
    /// result's members, then those `described` would add — in the same order, so the text is the same — from a
    /// suffix rendered once. Nil when the result already has one of them (`described` merges or keeps it).
    static func describedLine(_ id: RequestID, _ result: JSONValue, cacheable: Bool) -> String? {
        guard case .object(let object) = result, object["resultType"] == nil, object["_meta"] == nil,
            !cacheable || (object["ttlMs"] == nil && object["cacheScope"] == nil)
        else { return nil }
        var out = JSONRPCMessage.responseHead(id: id.text)
        result.writeJSONText(into: &out)
        out.removeLast()  // the object's "}": the described members follow
        if object.count > 0 { out.append(UInt8(ascii: ",")) }
        out += cacheable ? describedSuffix.cacheable : describedSuffix.plain
        return String(decoding: out, as: UTF8.self)
    }

    /// What `describedLine` appends (closing the result and the message).
    private static let describedSuffix: (plain: [UInt8], cacheable: [UInt8]) = {
        let meta = JSONValue.object(JSONObject([(key: MCPProtocol.Meta.serverInfo, value: MCPProtocol.implementation)]))
        let tail = #""_meta":\#(meta.jsonText)}}"#
        return (
            Array((#""resultType":"complete","# + tail).utf8),
            Array((#""resultType":"complete","ttlMs":0,"cacheScope":"private","# + tail).utf8)
        )
    }()

    /// `initialize`: the revision the client asked for when this server speaks it, else the newest it does.
    func initialize(_ request: MCPRequest, _ context: MCPMethod.Context) {
        let requested = request.params["protocolVersion"]?.stringValue ?? ""
        let chosen = MCPProtocol.handshakeVersions.contains(requested) ? requested : MCPProtocol.latestHandshakeVersion
        if context.exchange.isStdio {
            let apps = Self.hostsApps(request.params["capabilities"])
            state.withLock {
                $0.handshaken = true
                $0.negotiated = chosen
                $0.hostsApps = apps
            }
        }
        context.finish([
            "protocolVersion": .string(chosen), "capabilities": Self.capabilities,
            "serverInfo": MCPProtocol.implementation,
        ])
    }

    static let capabilities: JSONValue = [
        "tools": ["listChanged": true], "resources": ["listChanged": true, "subscribe": true],
        "extensions": [.init(stringLiteral: skillsExtension): .object(JSONObject())],
    ]

    /// `server/discover`'s result: who answers is in the result's `_meta` (added when it is sent); a top-level
    /// serverInfo is initialize's.
    static var discovery: JSONValue {
        ["supportedVersions": .array(MCPProtocol.allVersions.map { .string($0) }), "capabilities": capabilities]
    }

    private func notification(_ method: String, _ params: JSONValue) {
        switch method {
        case "notifications/initialized": state.withLock { $0.handshaken = true }
        case "notifications/cancelled":
            guard let requestID = params["requestId"] else { return }
            let key = MCPRequest.key(requestID)
            admission.release(client: MCPExchange.stdioClient, key: key)?.cancel()
            if let subscription = state.withLock({ $0.listening.removeValue(forKey: key) }) {
                subscriptions.remove(subscription)
            }
        default: break
        }
    }

    /// `subscriptions/listen` on stdio: acknowledged at once; change notifications follow on the same channel,
    /// tagged with the request's id, until the client cancels the request.
    func listenOnStdio(_ request: MCPRequest) {
        let (id, params, key) = (request.id, request.params, request.key)
        let output = output
        let serial = subscribe(id: id, filter: params["notifications"]) { line in
            output(line)
            return true
        }
        state.withLock { $0.listening[key] = serial }
    }

    /// Opens a `subscriptions/listen` subscription (both transports) and starts watching the state resources it
    /// names: their current state is the one later changes are measured against.
    func subscribe(
        id: RequestID, filter: JSONValue?, send: @escaping @Sendable (String) -> Bool,
        end: (@Sendable () -> Void)? = nil
    ) -> Int {
        let serial = subscriptions.add(id: id, filter: filter, send: send, end: end)
        if filter?["resourceSubscriptions"] != nil {
            checkWatchedState()
            stateWatch.startPolling { [weak self] in self?.checkWatchedState() }
        }
        return serial
    }

    /// Compares the watched state resources with what was last seen; subscribers hear of each that changed.
    func checkWatchedState() {
        let subscriptions = subscriptions
        stateWatch.check(subscriptions.watchedResources, registry: registry) { subscriptions.resourceUpdated($0) }
    }

    /// A call that may change something ended: subscribers of its plugin's state hear of it at once (whatever the
    /// comparison would say: the state seen last may already be the new one), then every watched state is checked.
    func mutatingCallEnded(_ skill: SkillInfo) {
        let uri = Self.stateScheme + skill.plugin
        let watched = subscriptions.watchedResources
        if watched.contains(uri) { subscriptions.resourceUpdated(uri) }
        let subscriptions = subscriptions
        stateWatch.check(watched, registry: registry, recordOnly: [uri]) { subscriptions.resourceUpdated($0) }
    }

    /// A skill as an MCP tool; risk and flags become the annotations.
    /// A skill as an MCP tool. `skill_activate` carries the skill catalogue in its description (a client sees no
    /// system message of ours).
    func tool(_ skill: SkillInfo) -> JSONValue {
        let description =
            skill.id == "skill_activate" && skill.plugin == SkillFolderTools.source
            ? (skillFolders?.activateDescription() ?? skill.description) : skill.description
        return Self.tool(skill, description: description)
    }

    static func tool(_ skill: SkillInfo, description: String? = nil) -> JSONValue {
        var tool = JSONObject([
            (key: "name", value: .string(skill.id)), (key: "title", value: .string(skill.title)),
            (key: "description", value: .string(description ?? skill.description)),
            (key: "inputSchema", value: skill.inputSchema),
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
        // MCP's outputSchema describes structuredContent, which is an object: a result of another type is sent as
        // {"result": …} (the way other servers wrap a scalar or a list), and its schema wrapped to match.
        if let output = skill.outputSchema { tool["outputSchema"] = Self.structuredSchema(output) }
        if let meta = viewMeta(skill) { tool["_meta"] = meta }
        return .object(tool)
    }

    /// The schema of a skill's result as MCP's `outputSchema`: an object schema as it is, any other wrapped as the
    /// `result` member of an object.
    static func structuredSchema(_ output: JSONValue) -> JSONValue {
        if output["type"] == "object" { return output }
        return ["type": "object", "properties": ["result": output], "required": ["result"]]
    }

    /// A result as MCP's `structuredContent`, matching `structuredSchema`: an object as it is, else `{"result": …}`.
    static func structuredContent(_ result: JSONValue, schema: JSONValue) -> JSONValue {
        if schema["type"] == "object", case .object = result { return result }
        return .object(JSONObject(uniqueMembers: [(key: "result", value: result)]))
    }

    static func errorResult(_ message: String) -> JSONValue {
        ["content": [["type": "text", "text": .string(message)]], "isError": true]
    }
}

/// Where the messages about one request go: its answer, and the notifications about it (progress).
struct MCPExchange: Sendable {
    /// Sends the response (once) — a JSON-RPC line, with the HTTP status an HTTP transport answers with.
    let reply: @Sendable (_ line: String, _ status: Int) -> Void
    /// Sends a notification about this request.
    let notify: @Sendable (String) -> Void
    /// HTTP: the call's cancellation handle (a dropped connection cancels it). nil on stdio, where calls are
    /// tracked by id for `notifications/cancelled`.
    let call: CallSlot?
    /// The transport's calls in flight, per client (`principal`).
    let admission: MCPAdmission
    /// HTTP: the notification stream of the session the request belongs to (2025-11-25), for
    /// `resources/subscribe`.
    var sessionStream: Int?
    /// Who asks, as far as the transport knows (a bearer token's hash, else the peer's address): a confirmation
    /// round trip's state is honoured only for the same principal.
    var principal = MCPExchange.stdioClient
    /// HTTP: whether the session's client renders MCP Apps (nil: no session; stdio keeps it in the server).
    var hostsApps: Bool?

    var isStdio: Bool { call == nil }

    /// The principal of the one stdio client.
    static let stdioClient = "stdio"

    /// stdio: everything goes to `output`.
    static func stdio(_ output: @escaping @Sendable (String) -> Void, admission: MCPAdmission) -> MCPExchange {
        MCPExchange(reply: { line, _ in output(line) }, notify: output, call: nil, admission: admission)
    }
}
