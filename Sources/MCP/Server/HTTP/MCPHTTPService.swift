import CHTTP
import Foundation
import JSONRPC
import SkillJSON
import Support
import Synchronization

/// MCP over Streamable HTTP: the 2026-07-28 stateless form (a POST per request, answered with JSON or, for
/// progress and `subscriptions/listen`, an SSE stream; the standard headers checked against the body; closing a
/// stream cancels its request) and the 2025-11-25 session form for older clients (`MCPHTTPSessions`). In front of
/// both: the Origin allow-list, bearer tokens, size limits and a per-client limit on calls in flight.
package final class MCPHTTPService: Sendable {
    let server: MCPServer
    let configuration: MCPHTTPConfiguration
    let sessions: MCPHTTPSessions
    private let http: Mutex<HTTPServer?>
    /// Calls in flight per client (a token's digest, else the peer's address).
    private let admission: MCPAdmission
    /// Open SSE streams that wait for something to send (listen and GET streams), for keep-alive comments.
    let openStreams = Mutex<(next: Int, streams: [Int: HTTPExchange])>((1, [:]))
    private let notifier = Mutex<Task<Void, Never>?>(nil)
    private let keepAlive = Mutex<Task<Void, Never>?>(nil)

    /// The port served (the system's choice when the configuration said 0).
    package let port: UInt16
    /// Host and Origin checks, the same for every HTTP server of skillhost's.
    private let guardRules: HTTPGuard

    /// Starts serving. Throws a sentence when the address cannot be listened on, or when it is not a loopback
    /// address and no token is configured (a network-facing server needs authentication).
    package init(server: MCPServer, configuration: MCPHTTPConfiguration) throws(MCPHTTPError) {
        if !configuration.isLoopback, configuration.tokenDigests.isEmpty {
            throw MCPHTTPError(
                "refusing to serve MCP on \(configuration.address) without authentication: set SKILLHOST_MCP_TOKEN or "
                    + "\"mcp\": {\"tokens\": [\"<sha256 hex of a token>\"]} in config.json, or serve on 127.0.0.1")
        }
        self.server = server
        self.configuration = configuration
        admission = MCPAdmission(limit: configuration.callsPerClient)
        sessions = MCPHTTPSessions(
            maximum: configuration.maximumSessions, perPrincipal: configuration.maximumSessionsPerClient,
            idle: .seconds(configuration.sessionIdleSeconds), tokens: !configuration.tokenDigests.isEmpty)
        let box = Mutex<MCPHTTPService?>(nil)
        do {
            let started = try HTTPServer(
                address: configuration.address, port: configuration.port, limits: configuration.limits,
                tls: configuration.tls
            ) { request, exchange in
                guard let service = box.withLock({ $0 }) else {
                    exchange.respond(503, body: Array("starting".utf8))
                    return
                }
                service.handle(request, exchange)
            }
            port = started.port
            guardRules = HTTPGuard(
                isLoopback: configuration.isLoopback, port: started.port, allowedHosts: configuration.allowedHosts,
                allowedOrigins: configuration.allowedOrigins)
            http = Mutex(started)
        } catch {
            throw MCPHTTPError("cannot serve MCP over HTTP: \(error.message)")
        }
        box.withLock { $0 = self }
        notifier.withLock { $0 = server.watchChanges() }
        // Writes to streams never block (CHTTP queues them), so the cooperative pool may send keep-alives.
        let interval = Duration.seconds(max(1, configuration.keepAliveSeconds))
        let pinger = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                self?.sendKeepAlive()
            }
        }
        keepAlive.withLock { $0 = pinger }
    }

    /// Ends every subscription gracefully, then stops the server (waiting requests are cancelled).
    package func stop() {
        keepAlive.withLock { $0?.cancel() }
        notifier.withLock { $0?.cancel() }
        server.subscriptions.closeAll()
        http.withLock { server in
            server?.stop()
            server = nil
        }
    }

    deinit { stop() }

    private func sendKeepAlive() {
        let streams = openStreams.withLock { Array($0.streams.values) }
        for stream in streams { stream.write(":\n\n") }
    }

    /// Registers a waiting stream for keep-alives; the returned handle removes it.
    func track(_ stream: HTTPExchange) -> Int {
        openStreams.withLock { state in
            defer { state.next += 1 }
            state.streams[state.next] = stream
            return state.next
        }
    }

    func untrack(_ handle: Int) { _ = openStreams.withLock { $0.streams.removeValue(forKey: handle) } }

    static let jsonHeaders = [("Content-Type", "application/json")]
    static let streamHeaders = [
        ("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache"), ("X-Accel-Buffering", "no"),
    ]

    /// One SSE event carrying a JSON-RPC message.
    static func event(_ line: String, id: Int? = nil) -> String {
        (id.map { "id: \($0)\n" } ?? "") + "event: message\ndata: " + line + "\n\n"
    }

    /// An error answered without a request id (a refusal before the body was read).
    /// `id`: the request's, when it was read (a refusal about its session answers the request it refuses).
    static func refusal(
        _ exchange: HTTPExchange, _ status: Int, _ code: JSONRPCErrorCode, _ message: String,
        headers: [(String, String)] = [], id: JSONRPCID = .null
    ) {
        let line = JSONRPCMessage.failure(id: id, error: JSONRPCError(code, message)).line
        exchange.respond(status, headers: jsonHeaders + headers, text: line)
    }

    // MARK: Requests

    private func handle(_ request: HTTPServer.Request, _ exchange: HTTPExchange) {
        if request.path.hasPrefix("/.well-known/oauth-protected-resource") {
            protectedResourceMetadata(request, exchange)
            return
        }
        guard request.path == configuration.path else {
            Self.refusal(
                exchange, 404, .invalidRequest, "Not found: the MCP endpoint is \(configuration.path)")
            return
        }
        // DNS rebinding: a page that made evil.example resolve to 127.0.0.1 still sends Host: evil.example. A
        // loopback server answers only loopback names (and the ones configured).
        if configuration.isLoopback, let host = request.header("host"), !guardRules.hostAllowed(host) {
            Self.refusal(
                exchange, 421, .invalidRequest,
                "Misdirected request: Host \(host) is not a name of this server; a loopback server answers only "
                    + "localhost, 127.0.0.1 and [::1] (add names to \"mcp\": {\"allowed_hosts\": […]} in config.json)")
            return
        }
        if let origin = request.header("origin"), !guardRules.originAllowed(origin) {
            Self.refusal(
                exchange, 403, .invalidRequest,
                "Forbidden: origin \(origin) is not allowed; add it to \"mcp\": {\"allowed_origins\": […]} in "
                    + "config.json")
            return
        }
        guard let principal = authenticate(request) else {
            var challenge = "Bearer"
            if !configuration.authorizationServers.isEmpty {
                challenge += " resource_metadata=\"\(metadataURL)\""
            }
            Self.refusal(
                exchange, 401, .invalidRequest,
                "Unauthorized: send Authorization: Bearer <token> with a token this server accepts",
                headers: [("WWW-Authenticate", challenge)])
            return
        }
        switch request.method {
        case "POST": post(request, exchange, principal: principal)
        case "GET" where configuration.sessions:
            sessions.openStream(request, exchange, service: self, principal: principal)
        case "DELETE" where configuration.sessions:
            sessions.delete(request, exchange, service: self, principal: principal)
        default:
            Self.refusal(
                exchange, 405, .invalidRequest, "Method not allowed: send JSON-RPC messages with POST",
                headers: [("Allow", configuration.sessions ? "POST, GET, DELETE" : "POST")])
        }
    }

    /// The caller's identity for limits and confirmations: the token's digest, or the address when no token is
    /// configured. nil: refused.
    private func authenticate(_ request: HTTPServer.Request) -> String? {
        guard !configuration.tokenDigests.isEmpty else { return request.peer }
        guard let value = request.header("authorization"), value.count > 7,
            value.prefix(7).lowercased() == "bearer "
        else { return nil }
        return HTTPGuard.match(String(value.dropFirst(7)), among: configuration.tokenDigests).map {
            "token:" + MCPHTTPConfiguration.hex($0).prefix(16)
        }
    }

    private var metadataURL: String {
        let base = resourceURL
        guard let url = URL(string: base), let host = url.host else { return base }
        let port = url.port.map { ":\($0)" } ?? ""
        return "\(url.scheme ?? "http")://\(host)\(port)/.well-known/oauth-protected-resource\(url.path)"
    }

    private var resourceURL: String {
        if let resource = configuration.resource { return resource }
        let host = configuration.address.contains(":") ? "[\(configuration.address)]" : configuration.address
        return "\(configuration.tls == nil ? "http" : "https")://\(host):\(port)\(configuration.path)"
    }

    /// RFC 9728 protected-resource metadata, when authorization servers are configured.
    private func protectedResourceMetadata(_ request: HTTPServer.Request, _ exchange: HTTPExchange) {
        guard !configuration.authorizationServers.isEmpty, request.method == "GET" else {
            Self.refusal(exchange, 404, .invalidRequest, "Not found: no authorization server is configured")
            return
        }
        let metadata: JSONValue = [
            "resource": .string(resourceURL),
            "authorization_servers": .array(configuration.authorizationServers.map { .string($0) }),
            "bearer_methods_supported": ["header"],
        ]
        exchange.respond(200, headers: Self.jsonHeaders, body: Array(metadata.jsonText.utf8))
    }

    private func post(_ httpRequest: HTTPServer.Request, _ exchange: HTTPExchange, principal: String) {
        let json = httpRequest.withHeader("content-type") { value in
            value.map { Self.startsWith($0, "application/json", anyCase: true) } ?? false
        }
        guard json else {
            Self.refusal(
                exchange, 415, .invalidRequest,
                "Unsupported media type: send the JSON-RPC message as Content-Type: application/json")
            return
        }
        let message: JSONValue
        do throws(JSONParseError) { message = try JSONValue(parsing: httpRequest.body) } catch {
            Self.refusal(exchange, 400, .parseError, "Parse error: \(error)")
            return
        }
        guard case .object = message else {
            Self.refusal(
                exchange, 400, .invalidRequest,
                "Invalid request: send one JSON-RPC message per POST (batches are not accepted over HTTP)")
            return
        }
        let request: MCPRequest
        switch MCPIncoming(message, raw: httpRequest.body[...]) {
        case .request(let read): request = read
        case .response:
            // A response from the client: nothing here awaits one.
            exchange.respond(202)
            return
        case .notification(let method, let params):
            if params["_meta"]?[MCPProtocol.Meta.protocolVersion] == nil, configuration.sessions {
                sessions.notification(method, params, httpRequest, principal: principal)
            }
            exchange.respond(202)
            return
        case .invalid(let id):
            let line = JSONRPCMessage.failure(
                id: id,
                error: JSONRPCError(.invalidRequest, "Invalid request: expected a JSON-RPC request with a method")
            ).line
            exchange.respond(400, headers: Self.jsonHeaders, text: line)
            return
        }
        if let version = request.version, MCPProtocol.allVersions.contains(version) {
            if let mismatch = Self.headerMismatch(httpRequest, request) {
                let line = JSONRPCMessage.failure(id: request.id, error: JSONRPCError(.headerMismatch, mismatch)).line
                exchange.respond(400, headers: Self.jsonHeaders, text: line)
                return
            }
            answer(request, httpRequest, exchange, principal: principal, session: nil)
            return
        }
        // The session form (or a stateless request naming a version this server does not speak: the server
        // refuses it with the supported list).
        guard request.version == nil, configuration.sessions else {
            answer(request, httpRequest, exchange, principal: principal, session: nil)
            return
        }
        switch sessions.admit(
            httpRequest, method: request.method, id: request.id, exchange: exchange, service: self,
            principal: principal)
        {
        case .refused: return
        case .session(let session): answer(request, httpRequest, exchange, principal: principal, session: session)
        }
    }

    /// Where the mirrored headers of a 2026-07-28 request disagree with its body, as the error's sentence.
    static func headerMismatch(_ request: HTTPServer.Request, _ mcp: MCPRequest) -> String? {
        let (method, params, version) = (mcp.method, mcp.params, mcp.version ?? "")
        guard let header = request.header("mcp-protocol-version") else {
            return "Header mismatch: the MCP-Protocol-Version header is missing (the body says \(version))"
        }
        guard header == version else {
            return
                "Header mismatch: MCP-Protocol-Version header value '\(header)' does not match body value '\(version)'"
        }
        guard let methodHeader = request.header("mcp-method") else {
            return "Header mismatch: the Mcp-Method header is missing (the body says \(method))"
        }
        guard methodHeader == method else {
            return "Header mismatch: Mcp-Method header value '\(methodHeader)' does not match body value '\(method)'"
        }
        if let field = mcp.entry?.mirroredName, let value = params[field]?.stringValue {
            guard let nameHeader = request.header("mcp-name") else {
                return "Header mismatch: the Mcp-Name header is missing (the body says \(value))"
            }
            let decoded = decodeSentinel(nameHeader)
            guard decoded == value else {
                return
                    "Header mismatch: Mcp-Name header value '\(decoded ?? nameHeader)' does not match body value '\(value)'"
            }
        }
        return nil
    }

    /// A header value in the Base64 sentinel form (`=?base64?…?=`) decoded; plain values as they are.
    static func decodeSentinel(_ value: String) -> String? {
        guard value.hasPrefix("=?base64?"), value.hasSuffix("?="), value.count >= 11 else { return value }
        let inner = String(value.dropFirst(9).dropLast(2))
        guard let data = Data(base64Encoded: inner) else { return nil }
        return String(data: data, encoding: .utf8)
    }

    /// Whether `word` occurs in `bytes` (a header's value, looked at in place: no string per check).
    static func mentions(_ bytes: UnsafeBufferPointer<UInt8>, _ word: StaticString) -> Bool {
        let target = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
        guard let first = target.first, bytes.count >= target.count else { return false }
        return (0...(bytes.count - target.count)).contains { index in
            bytes[index] == first && startsWith(UnsafeBufferPointer(rebasing: bytes[index...]), word, anyCase: false)
        }
    }

    /// Whether `bytes` begin with `prefix` (ASCII; `anyCase`: letters compared without their case).
    static func startsWith(_ bytes: UnsafeBufferPointer<UInt8>, _ prefix: StaticString, anyCase: Bool) -> Bool {
        guard bytes.count >= prefix.utf8CodeUnitCount else { return false }
        for index in 0..<prefix.utf8CodeUnitCount {
            var byte = bytes[index]
            if anyCase, byte >= UInt8(ascii: "A"), byte <= UInt8(ascii: "Z") { byte += 32 }
            guard byte == prefix.utf8Start[index] else { return false }
        }
        return true
    }

    /// Whether a request's Accept header allows an SSE answer (no header: anything goes).
    static func acceptsEvents(_ request: HTTPServer.Request) -> Bool {
        request.withHeader("accept") { value in
            value.map { mentions($0, "text/event-stream") || mentions($0, "*/*") } ?? true
        }
    }

    /// Hands a request to the server with where its answer goes: JSON, or an SSE stream when it reports progress
    /// or is a subscription.
    private func answer(
        _ request: MCPRequest, _ httpRequest: HTTPServer.Request, _ exchange: HTTPExchange, principal: String,
        session: MCPHTTPSession?
    ) {
        let headers: [(String, String)] = session.map { [("Mcp-Session-Id", $0.id)] } ?? []
        let canStream = Self.acceptsEvents(httpRequest)
        let role = MCPMethod.httpRole(of: request.method)
        if role == .listen, session == nil, request.meta != nil {
            listen(request, exchange)
            return
        }
        let isCall = role == .call
        let streamed = isCall && canStream && request.meta?[MCPProtocol.Meta.progressToken] != nil
        let slot = CallSlot()
        if isCall { exchange.onAbort { slot.cancel() } }
        let callKey = isCall ? request.key : nil
        if let session, let callKey { session.track(call: callKey, slot) }
        let finished: @Sendable () -> Void = {
            if let session, let callKey { session.untrack(call: callKey) }
        }
        var exchangeToServer: MCPExchange
        // A refusal (busy, invalid) is a plain JSON response with its status; anything else streams.
        let respond: @Sendable (String, Int) -> Void = { line, status in
            // The usual answer (no session, not busy) sends the shared header list as it is, without a new array.
            var all = Self.jsonHeaders
            if !headers.isEmpty { all += headers }
            if status == 429 { all.append(("Retry-After", "1")) }
            exchange.respond(status, headers: all, text: line)
            finished()
        }
        if streamed {
            let begun = Mutex(false)
            // Under the lock: a progress event and the answer may come from two threads (beginning never blocks).
            let begin: @Sendable () -> Void = {
                begun.withLock { begun in
                    if !begun { exchange.beginStream(200, headers: Self.streamHeaders + headers) }
                    begun = true
                }
            }
            exchangeToServer = MCPExchange(
                reply: { line, status in
                    guard status == 200 || begun.withLock({ $0 }) else { return respond(line, status) }
                    begin()
                    exchange.write(Self.event(line))
                    exchange.end()
                    finished()
                },
                notify: { line in
                    begin()
                    exchange.write(Self.event(line))
                }, call: slot, admission: admission, principal: principal)
        } else {
            // A client over its limit may retry in a second.
            exchangeToServer = MCPExchange(
                reply: respond, notify: { _ in }, call: slot, admission: admission, principal: principal)
        }
        exchangeToServer.sessionStream = session?.subscription
        if let session, role == .opensSession {
            session.initialized()
            session.hostsApps = MCPServer.hostsApps(request.params["capabilities"])
        }
        exchangeToServer.hostsApps = session?.hostsApps
        server.handle(request, exchange: exchangeToServer, onPool: true)
    }

    /// `subscriptions/listen`: an SSE stream that stays open — the acknowledgment, then the change notifications
    /// asked for — until the client closes it or the server stops (then it gets the completion result).
    private func listen(_ request: MCPRequest, _ exchange: HTTPExchange) {
        let (id, params) = (request.id, request.params)
        exchange.beginStream(200, headers: Self.streamHeaders)
        let tracked = track(exchange)
        // The abort handler is in place before the subscription exists, so a client gone in between is not missed.
        let serial = Mutex<Int?>(nil)
        let gone = Mutex(false)
        exchange.onAbort { [weak self] in
            self?.untrack(tracked)
            gone.withLock { $0 = true }
            if let serial = serial.withLock({ $0 }) { self?.server.subscriptions.remove(serial) }
            exchange.end()
        }
        let added = server.subscribe(
            id: id, filter: params["notifications"], send: { line in exchange.write(Self.event(line)) },
            end: { [weak self] in
                self?.untrack(tracked)
                exchange.end()
            })
        serial.withLock { $0 = added }
        if gone.withLock({ $0 }) { server.subscriptions.remove(added) }
    }
}

/// Why the HTTP transport could not start, as a sentence.
package struct MCPHTTPError: Error, Sendable, CustomStringConvertible {
    package let message: String
    init(_ message: String) { self.message = message }
    package var description: String { message }
}
