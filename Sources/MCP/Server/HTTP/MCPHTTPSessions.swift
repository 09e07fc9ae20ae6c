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
    /// Whose it counts as for the caps: the principal, or without tokens the user of this machine whose program
    /// opened it (`uid:1000`), so one user's programs never fill another's share.
    let owner: String
    private struct State {
        var events: [(id: Int, line: String)] = []
        var nextEventID = 1
        var stream: (exchange: HTTPExchange, tracked: Int)?
        var subscription: Int?
        var calls: [String: CallSlot] = [:]
        var lastUsed = ContinuousClock.now
        /// Whether its client announced it renders MCP Apps (`initialize`'s capabilities).
        var hostsApps = false
    }
    private let state = Mutex(State())
    static let kept = 256

    /// Whether its client renders MCP Apps, as its `initialize` said.
    var hostsApps: Bool {
        get { state.withLock { $0.hostsApps } }
        set { state.withLock { $0.hostsApps = newValue } }
    }

    init(id: String, principal: String, owner: String) {
        self.id = id
        self.principal = principal
        self.owner = owner
    }

    var lastUsed: ContinuousClock.Instant { state.withLock { $0.lastUsed } }
    /// Whether it has gone unused for `idle` (a session with an open stream is in use).
    func expired(_ idle: Duration, now: ContinuousClock.Instant) -> Bool {
        state.withLock { $0.stream == nil && now - $0.lastUsed >= idle }
    }
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

/// The sessions of older clients, each bound to the principal that opened it and counted to an owner, bounded per
/// owner and in all. Sessions unused for `idle` end. A token's holder at its cap gives up its own least recently
/// used session; without tokens a new session past the cap (or the total) is refused — one local program can never
/// end another's session by opening its own, and one user's programs never take another user's share.
final class MCPHTTPSessions: Sendable {
    private let sessions = Mutex<[String: MCPHTTPSession]>([:])
    private let maximum: Int
    private let perPrincipal: Int
    private let idle: Duration
    private let tokens: Bool

    init(maximum: Int, perPrincipal: Int, idle: Duration = .seconds(1800), tokens: Bool = false) {
        self.maximum = max(1, maximum)
        self.perPrincipal = max(1, perPrincipal)
        self.idle = idle
        self.tokens = tokens
    }

    enum Admission {
        case refused
        case session(MCPHTTPSession)
    }

    var count: Int { sessions.withLock { $0.count } }

    /// The session a POST belongs to: a new one for `initialize`, else the one its header names — if `principal`
    /// opened it (refusing the request with 400 or 404 when there is none).
    func admit(
        _ request: HTTPServer.Request, method: String, id: JSONRPCID = .null, exchange: HTTPExchange,
        service: MCPHTTPService, principal: String
    ) -> Admission {
        if MCPMethod.httpRole(of: method) == .opensSession {
            var random = [UInt8](repeating: 0, count: 16)
            _ = skillhost_random_bytes(&random, random.count)
            let owner = tokens ? principal : Self.owner(of: request, principal: principal, port: service.port)
            let session = MCPHTTPSession(id: MCPHTTPConfiguration.hex(random), principal: principal, owner: owner)
            let (maximum, perPrincipal, tokens) = (self.maximum, self.perPrincipal, self.tokens)
            let ended = endExpired()
            let admitted = sessions.withLock { sessions -> (refusal: String?, evicted: MCPHTTPSession?) in
                let own = sessions.values.filter { $0.owner == owner }
                var evicted: MCPHTTPSession?
                if own.count >= perPrincipal || sessions.count >= maximum {
                    // Only a token's holder gives up a session of its own (its least recently used); without
                    // tokens the owner's programs cannot be told apart, so none is ended for another.
                    guard tokens, let oldest = own.min(by: { $0.lastUsed < $1.lastUsed }) else {
                        return (own.count >= perPrincipal ? "own" : "all", nil)
                    }
                    sessions[oldest.id] = nil
                    evicted = oldest
                }
                sessions[session.id] = session
                return (nil, evicted)
            }
            for old in ended + [admitted.evicted].compactMap({ $0 }) {
                if let serial = old.close() { service.server.subscriptions.remove(serial) }
            }
            if let refusal = admitted.refusal {
                let seconds = Int(idle.components.seconds)
                let unused = seconds < 120 ? "\(seconds) s" : "\(seconds / 60) minutes"
                let sentence =
                    refusal == "own"
                    ? "Server busy: you have \(perPrincipal) sessions open; end one (DELETE), let one go unused for "
                        + "\(unused) (it then ends), or send 2026-07-28 requests, which need no session"
                    : "Server busy: \(maximum) sessions are open; end one (DELETE), or send 2026-07-28 requests, which "
                        + "need no session; unused sessions end after \(unused)"
                MCPHTTPService.refusal(
                    exchange, 503, .serverBusy, sentence, headers: [("Retry-After", "5")], id: id)
                return .refused
            }
            session.setSubscription(service.server.subscriptions.addUntagged(send: session.deliver))
            return .session(session)
        }
        guard let session = find(request, exchange, principal: principal, service: service, id: id) else {
            return .refused
        }
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

    /// Ends the sessions unused for `idle`; returns them (to close outside the lock).
    private func endExpired() -> [MCPHTTPSession] {
        let now = ContinuousClock.now
        let idle = self.idle
        return sessions.withLock { sessions in
            let expired = sessions.values.filter { $0.expired(idle, now: now) }
            for session in expired { sessions[session.id] = nil }
            return expired
        }
    }

    /// Whose a new session counts as without tokens: on loopback, the user of this machine whose program holds the
    /// connection (`uid:1000`; all loopback addresses are this machine); else the address.
    static func owner(of request: HTTPServer.Request, principal: String, port: UInt16) -> String {
        let loopback = request.peer.hasPrefix("127.") || request.peer == "::1" || request.peer.hasPrefix("::ffff:127.")
        guard loopback else { return principal }
        if let uid = LocalPeer.userID(peer: request.peer, peerPort: request.peerPort, serverPort: port) {
            return "uid:\(uid)"
        }
        return "loopback"
    }

    /// The session the request names, if `principal` opened it. Another principal's session is answered exactly as
    /// an unknown one: its id is never served, and the answer does not tell that it exists.
    private func find(
        _ request: HTTPServer.Request, _ exchange: HTTPExchange, principal: String, service: MCPHTTPService,
        id requestID: JSONRPCID = .null
    ) -> MCPHTTPSession? {
        guard let id = request.header("mcp-session-id") else {
            MCPHTTPService.refusal(exchange, 400, .invalidRequest, Self.noSession(request), id: requestID)
            return nil
        }
        // A session unused for the idle time has ended, whether or not a sweep has removed it yet.
        let idle = self.idle
        let (found, ended) = sessions.withLock { sessions -> (MCPHTTPSession?, MCPHTTPSession?) in
            guard let session = sessions[id], session.expired(idle, now: .now) else { return (sessions[id], nil) }
            sessions[id] = nil
            return (nil, session)
        }
        // Ended here is ended as a sweep ends it: its stream and its subscription go too.
        if let serial = ended?.close() { service.server.subscriptions.remove(serial) }
        guard let session = found, session.principal == principal else {
            MCPHTTPService.refusal(
                exchange, 404, .invalidRequest, "Session not found: \(id) has ended; initialize a new session",
                id: requestID)
            return nil
        }
        return session
    }

    /// GET: the session's notification stream.
    func openStream(
        _ request: HTTPServer.Request, _ exchange: HTTPExchange, service: MCPHTTPService, principal: String
    ) {
        guard let session = find(request, exchange, principal: principal, service: service) else { return }
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
        guard let session = find(request, exchange, principal: principal, service: service) else { return }
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
