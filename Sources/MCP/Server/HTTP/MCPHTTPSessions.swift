import CHTTP
import Foundation
import JSONRPC
import SkillJSON
import Support
import Synchronization

/// One older client's session (Streamable HTTP as in 2025-11-25): minted by `initialize`, named by the
/// `Mcp-Session-Id` header on every later request, with a GET stream for the server's notifications whose events
/// carry ids, so a client that reconnects with `Last-Event-ID` gets what it missed (the last 256 events).
final class MCPHTTPSession: Sendable {
    let id: String
    /// Who opened it (a token's digest, or an address without tokens): only they may use, watch or end it.
    let principal: String
    private struct State {
        var events: [(id: Int, line: String)] = []
        var nextEventID = 1
        var stream: (exchange: HTTPExchange, tracked: Int)?
        var subscription: Int?
        var calls: [String: CallSlot] = [:]
        var lastUsed = ContinuousClock.now
    }
    private let state = Mutex(State())
    static let kept = 256

    init(id: String, principal: String) {
        self.id = id
        self.principal = principal
    }

    var lastUsed: ContinuousClock.Instant { state.withLock { $0.lastUsed } }
    func touch() { state.withLock { $0.lastUsed = .now } }
    func initialized() { touch() }

    /// Records a notification for the session and sends it on its GET stream when one is open. Always true: a
    /// session outlives its streams.
    func deliver(_ line: String) -> Bool {
        let stream = state.withLock { state -> (HTTPExchange, Int)? in
            let id = state.nextEventID
            state.nextEventID += 1
            state.events.append((id, line))
            if state.events.count > Self.kept { state.events.removeFirst(state.events.count - Self.kept) }
            return state.stream.map { ($0.exchange, id) }
        }
        if let (exchange, id) = stream { exchange.write(MCPHTTPService.event(line, id: id)) }
        return true
    }

    /// Makes `exchange` the session's GET stream (ending an older one), after replaying what followed
    /// `lastEventID`.
    func attach(_ exchange: HTTPExchange, tracked: Int, after lastEventID: Int?) -> (HTTPExchange, Int)? {
        state.withLock { state in
            if let lastEventID {
                for event in state.events where event.id > lastEventID {
                    exchange.write(MCPHTTPService.event(event.line, id: event.id))
                }
            }
            defer { state.stream = (exchange, tracked) }
            return state.stream.map { ($0.exchange, $0.tracked) }
        }
    }

    /// Forgets the GET stream if it is still `exchange`.
    func detach(_ exchange: HTTPExchange) {
        state.withLock { state in
            if state.stream?.exchange === exchange { state.stream = nil }
        }
    }

    func setSubscription(_ serial: Int) { state.withLock { $0.subscription = serial } }

    /// The session's notification stream (its subscription), for `resources/subscribe`.
    var subscription: Int? { state.withLock { $0.subscription } }

    /// Ends the session: its stream ends; returns its subscription to remove.
    func close() -> Int? {
        let (stream, subscription, calls) = state.withLock { state in
            defer {
                state.stream = nil
                state.calls = [:]
            }
            return (state.stream, state.subscription, Array(state.calls.values))
        }
        stream?.exchange.end()
        calls.forEach { $0.cancel() }
        return subscription
    }

    func track(call key: String, _ slot: CallSlot) { state.withLock { $0.calls[key] = slot } }
    func untrack(call key: String) { _ = state.withLock { $0.calls.removeValue(forKey: key) } }
    func cancel(call key: String) { state.withLock { $0.calls.removeValue(forKey: key) }?.cancel() }
}

/// The sessions of older clients, each bound to the principal that opened it, bounded per principal: a principal
/// at its cap (or the server at its total) loses its own least recently used session — never another's; a
/// principal with none to give up while the server is full is refused.
final class MCPHTTPSessions: Sendable {
    private let sessions = Mutex<[String: MCPHTTPSession]>([:])
    private let maximum: Int
    private let perPrincipal: Int

    init(maximum: Int, perPrincipal: Int) {
        self.maximum = max(1, maximum)
        self.perPrincipal = max(1, perPrincipal)
    }

    enum Admission {
        case refused
        case session(MCPHTTPSession)
    }

    var count: Int { sessions.withLock { $0.count } }

    /// The session a POST belongs to: a new one for `initialize`, else the one its header names — if `principal`
    /// opened it (refusing the request with 400 or 404 when there is none).
    func admit(
        _ request: HTTPServer.Request, method: String, exchange: HTTPExchange, service: MCPHTTPService,
        principal: String
    ) -> Admission {
        if method == "initialize" {
            var random = [UInt8](repeating: 0, count: 16)
            _ = skillhost_random_bytes(&random, random.count)
            let session = MCPHTTPSession(id: MCPHTTPConfiguration.hex(random), principal: principal)
            let (maximum, perPrincipal) = (self.maximum, self.perPrincipal)
            let admitted = sessions.withLock { sessions -> (admitted: Bool, evicted: MCPHTTPSession?) in
                let own = sessions.values.filter { $0.principal == principal }
                var evicted: MCPHTTPSession?
                if own.count >= perPrincipal || sessions.count >= maximum {
                    // Only the principal's own sessions make room for it.
                    guard let oldest = own.min(by: { $0.lastUsed < $1.lastUsed }) else { return (false, nil) }
                    sessions[oldest.id] = nil
                    evicted = oldest
                }
                sessions[session.id] = session
                return (true, evicted)
            }
            if let evicted = admitted.evicted, let serial = evicted.close() {
                service.server.subscriptions.remove(serial)
            }
            guard admitted.admitted else {
                MCPHTTPService.refusal(
                    exchange, 503, .serverBusy,
                    "Server busy: \(maximum) sessions are open; end one (DELETE) or send 2026-07-28 requests, which "
                        + "need no session", headers: [("Retry-After", "5")])
                return .refused
            }
            session.setSubscription(service.server.subscriptions.addUntagged(send: session.deliver))
            return .session(session)
        }
        guard let session = find(request, exchange, principal: principal) else { return .refused }
        session.touch()
        return .session(session)
    }

    /// What a request without a session lacks, named: a client of the stateless generation that left out the
    /// version in `_meta` reads that, not advice to start a session.
    static func noSession(_ request: HTTPServer.Request) -> String {
        let meta = "params._meta[\"\(MCPProtocol.Meta.protocolVersion)\"]"
        if let header = request.header("mcp-protocol-version"), header != "2025-11-25" {
            return "Bad request: the MCP-Protocol-Version header says \(header), but the body has no \(meta); a "
                + "\(header) request names its version there (with _meta[\"\(MCPProtocol.Meta.clientCapabilities)\"], "
                + "{} when the client declares none) and needs no session"
        }
        return "Bad request: no Mcp-Session-Id header and no \(meta): a 2025-11-25 client sends the session id its "
            + "initialize returned; a 2026-07-28 request names its version in \(meta) and needs no session"
    }

    /// The session the request names, if `principal` opened it. Another principal's session is answered exactly as
    /// an unknown one: its id is never served, and the answer does not tell that it exists.
    private func find(_ request: HTTPServer.Request, _ exchange: HTTPExchange, principal: String)
        -> MCPHTTPSession?
    {
        guard let id = request.header("mcp-session-id") else {
            MCPHTTPService.refusal(exchange, 400, .invalidRequest, Self.noSession(request))
            return nil
        }
        guard let session = sessions.withLock({ $0[id] }), session.principal == principal else {
            MCPHTTPService.refusal(
                exchange, 404, .invalidRequest, "Session not found: \(id) has ended; initialize a new session")
            return nil
        }
        return session
    }

    /// GET: the session's notification stream.
    func openStream(
        _ request: HTTPServer.Request, _ exchange: HTTPExchange, service: MCPHTTPService, principal: String
    ) {
        guard let session = find(request, exchange, principal: principal) else { return }
        let events = request.withHeader("accept") { $0.map { MCPHTTPService.mentions($0, "text/event-stream") } }
        guard events == true else {
            MCPHTTPService.refusal(
                exchange, 406, .invalidRequest, "Not acceptable: the GET stream is text/event-stream; accept it")
            return
        }
        session.touch()
        exchange.beginStream(200, headers: MCPHTTPService.streamHeaders + [("Mcp-Session-Id", session.id)])
        let tracked = service.track(exchange)
        let lastEventID = request.header("last-event-id").flatMap { Int($0) }
        if let (older, olderTracked) = session.attach(exchange, tracked: tracked, after: lastEventID) {
            service.untrack(olderTracked)
            older.end()
        }
        exchange.onAbort { [weak service, weak session] in
            service?.untrack(tracked)
            session?.detach(exchange)
            exchange.end()
        }
    }

    /// DELETE: ends the session.
    func delete(_ request: HTTPServer.Request, _ exchange: HTTPExchange, service: MCPHTTPService, principal: String) {
        guard let session = find(request, exchange, principal: principal) else { return }
        sessions.withLock { $0[session.id] = nil }
        if let serial = session.close() { service.server.subscriptions.remove(serial) }
        exchange.respond(200)
    }

    /// A notification POSTed in a session: `notifications/cancelled` stops the call it names.
    func notification(_ method: String, _ params: JSONValue, _ request: HTTPServer.Request, principal: String) {
        guard method == "notifications/cancelled", let id = request.header("mcp-session-id"),
            let session = sessions.withLock({ $0[id] }), session.principal == principal,
            let requestID = params["requestId"]
        else { return }
        session.cancel(call: MCPRequest.key(requestID))
    }
}
