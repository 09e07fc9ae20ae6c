import Foundation
import JSONRPC
import SkillHost
import SkillJSON
import Support
import Synchronization

/// An MCP server spoken to over Streamable HTTP, either form: a POST per request with the mirrored headers
/// (2026-07-28, when the request carries the revision in `_meta`), or within the session `initialize` opened
/// (2025-11-25: `Mcp-Session-Id`, the GET stream for notifications). A notification stream that drops is opened
/// again with backoff (0.5 s doubling to 30 s) and the tools are refreshed, since changes may have been missed
/// meanwhile.
final class MCPHTTPTransport: MCPTransport {
    let name: String
    /// Whose timers end a request that waited too long (the registry's: tests move it by hand).
    let clock: any HostClock
    let url: URL
    /// Sent with every request: the configured headers and the bearer token.
    private let headers: [(String, String)]
    /// Never repeated in a message (a server's error may quote them).
    private let secrets: [String]
    private let onNotification: @Sendable (String, JSONValue) -> Void

    private struct State {
        var nextID = 1
        var negotiatedVersion: String?
        var sessionID: String?
        var listener: Task<Void, Never>?
        var closed = false
    }
    private let state = Mutex(State())

    init(
        name: String, url: URL, headers: [String: String], bearerToken: String?, clock: any HostClock = SystemClock(),
        onNotification: @escaping @Sendable (String, JSONValue) -> Void
    ) {
        self.name = name
        self.clock = clock
        self.url = url
        var all = headers.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        if let bearerToken { all.append(("Authorization", "Bearer \(bearerToken)")) }
        self.headers = all
        secrets = ([bearerToken] + headers.values.map { Optional($0) }).compactMap { $0 }.filter { $0.count >= 8 }
        self.onNotification = onNotification
    }

    /// What one POST brought back: the HTTP status, the response headers, and the JSON-RPC messages of the body
    /// (one for a JSON answer; for an SSE stream, everything up to the answer to `id`).
    private struct Answer {
        var status = 0
        var headers: [String: String] = [:]
        var messages: [JSONRPCMessage] = []
        var text = ""
    }

    private func redact(_ text: String) -> String { Redaction.redact(text, secrets: secrets) }

    /// POSTs one message and reads the answer; notifications on an SSE answer are handed on as they arrive.
    private func post(_ body: JSONValue, method: String, nameHeader: String?, id: Int?, timeout: Duration)
        async throws(MCPClientError) -> Answer
    {
        var request = HTTPRequest(url: url, method: "POST", body: Data(body.jsonText.utf8))
        request.setHeader("application/json", for: "Content-Type")
        request.setHeader("application/json, text/event-stream", for: "Accept")
        let (negotiated, session) = state.withLock { ($0.negotiatedVersion, $0.sessionID) }
        if let version = body["params"]?["_meta"]?[MCPProtocol.Meta.protocolVersion]?.stringValue {
            request.setHeader(version, for: "MCP-Protocol-Version")
            request.setHeader(method, for: "Mcp-Method")
            if let nameHeader { request.setHeader(Self.headerValue(nameHeader), for: "Mcp-Name") }
        } else {
            if let negotiated { request.setHeader(negotiated, for: "MCP-Protocol-Version") }
            if let session { request.setHeader(session, for: "Mcp-Session-Id") }
        }
        for (field, value) in headers { request.setHeader(value, for: field) }
        let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        let name = name
        let prepared = request
        let outcome: Result<Answer, MCPClientError> = await clock.race(timeout) {
            await self.read(
                HTTPStream.start(prepared, timeout: max(1, seconds), maximumBytes: Self.maximumAnswer), id: id)
        } expired: {
            .failure(
                MCPClientError(
                    Deadline.timedOut("MCP server \(name)'s answer to \(method)", after: timeout)
                        + "; give it longer with timeout_s in config.json", timedOut: true))
        }
        return try outcome.get()
    }

    private func read(_ stream: HTTPResponseStream, id: Int?) async -> Result<
        Answer, MCPClientError
    > {
        var answer = Answer()
        var parser = SSEParser()
        var body: [UInt8] = []
        var streaming = false
        var sinceEvent = 0
        do {
            for try await event in stream {
                switch event {
                case .head(let status, let fields):
                    answer.status = status
                    answer.headers = fields
                    streaming = fields["content-type"]?.hasPrefix("text/event-stream") == true
                case .body(let data):
                    guard streaming else {
                        body += data
                        continue
                    }
                    let events = parser.feed([UInt8](data))
                    sinceEvent = events.isEmpty ? sinceEvent + data.count : 0
                    // An event that never ends is refused at the size of the largest one accepted, not at the end
                    // of memory.
                    if sinceEvent > Self.maximumEvent {
                        return .failure(
                            MCPClientError(
                                "MCP server \(name) sent an event of more than \(Self.maximumEvent >> 20) MB without "
                                    + "ending it"))
                    }
                    for text in events {
                        guard let value = try? JSONValue(parsing: Array(text.utf8)), let message = JSONRPCMessage(value)
                        else { continue }
                        if case .notification(let method, let params) = message {
                            onNotification(method, params ?? .null)
                            continue
                        }
                        answer.messages.append(message)
                        if Self.answers(message, id: id) { return .success(answer) }
                    }
                }
            }
        } catch let tooLarge as HTTPResponseTooLarge {
            return .failure(MCPClientError("MCP server \(name) \(tooLarge)"))
        } catch {
            if Task.isCancelled { return .failure(MCPClientError("cancelled")) }
            return .failure(
                MCPClientError(
                    "cannot reach MCP server \(name) at \(url.absoluteString): \(redact(error.localizedDescription))"))
        }
        if !streaming {
            answer.text = String(decoding: body, as: UTF8.self)
            if let value = try? JSONValue(parsing: body), let message = JSONRPCMessage(value) {
                answer.messages.append(message)
            }
        }
        return .success(answer)
    }

    /// The most a request's answer may bring (JSON or SSE), and the most a notification stream may send without
    /// completing an event.
    static let maximumAnswer = 64 << 20
    static let maximumEvent = 16 << 20

    private static func answers(_ message: JSONRPCMessage, id: Int?) -> Bool {
        switch message {
        case .response(let answered, _), .failure(let answered, _): return answered.integer == id.map(Int64.init)
        default: return false
        }
    }

    /// A header value as the revision asks: plain when it is printable ASCII without edge spaces, else the Base64
    /// sentinel form.
    static func headerValue(_ value: String) -> String {
        let plain =
            value.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F } && value.first != " " && value.last != " "
            && !(value.hasPrefix("=?base64?") && value.hasSuffix("?="))
        return plain ? value : "=?base64?" + Data(value.utf8).base64EncodedString() + "?="
    }

    /// A JSON-RPC request as a value (the body of a POST).
    private static func request(_ id: Int, _ method: String, _ params: JSONValue) -> JSONValue {
        JSONRPCMessage.request(id: JSONRPCID(Int64(id)), method: method, params: params).value
    }

    private func nextID() -> Int {
        state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
    }

    /// One request and its answer. `initialize` begins a new session: the one before is forgotten, the one the
    /// server opens is kept for the requests after it.
    func request(_ method: String, _ params: JSONObject, timeout: Duration) async throws(MCPClientError) -> JSONValue {
        let initializing = method == "initialize"
        if initializing {
            state.withLock {
                $0.sessionID = nil
                $0.negotiatedVersion = nil
            }
        }
        let id = nextID()
        let body = Self.request(id, method, .object(params))
        let answer = try await post(
            body, method: method, nameHeader: params["name"]?.stringValue ?? params["uri"]?.stringValue, id: id,
            timeout: timeout)
        for message in answer.messages where Self.answers(message, id: id) {
            switch message {
            case .response(_, let result):
                if initializing {
                    state.withLock {
                        $0.sessionID = answer.headers["mcp-session-id"]
                        $0.negotiatedVersion = result["protocolVersion"]?.stringValue
                    }
                }
                return result
            case .failure(_, let error):
                throw MCPClientError(redact(error.message), code: error.code.rawValue)
            default: break
            }
        }
        switch answer.status {
        case 401, 403:
            throw MCPClientError(
                "MCP server \(name) refused the request (HTTP \(answer.status)): check its token "
                    + "(\"bearer_token_env\") and headers in config.json", code: answer.status)
        case 404: throw MCPClientError("MCP server \(name) answered 404 for \(method)", code: 404)
        default:
            let excerpt = redact(String(answer.text.prefix(200)))
            throw MCPClientError(
                "MCP server \(name) answered \(method) with HTTP \(answer.status) and no JSON-RPC answer"
                    + (excerpt.isEmpty ? "" : ": \(excerpt)"), code: answer.status)
        }
    }

    func notify(_ method: String, _ params: JSONValue?, timeout: Duration) async {
        _ = try? await post(
            JSONRPCMessage.notification(method: method, params: params).value, method: method, nameHeader: nil,
            id: nil, timeout: timeout)
    }

    /// A 404 for a request within a session: the server restarted and forgot it.
    func forgotSession(_ error: MCPClientError) -> Bool {
        error.code == 404 && state.withLock { $0.sessionID != nil }
    }

    /// Keeps a notification stream open until `close`: `subscriptions/listen` (stateless) or the session's GET
    /// stream, reopened with backoff when it drops (each reopening refreshes the tools).
    func listen(_ params: JSONValue?) {
        let task = Task { [weak self] in
            var failures = 0
            var first = true
            while !Task.isCancelled, let self {
                if !first { self.onNotification("notifications/tools/list_changed", .null) }
                first = false
                let opened = await self.stream(params)
                failures = opened ? 0 : failures + 1
                try? await Task.sleep(for: MCPSkillSource.restartDelay(afterFailures: max(failures, 1)))
            }
        }
        state.withLock { state in
            state.listener?.cancel()
            state.listener = state.closed ? nil : task
        }
        if state.withLock({ $0.closed }) { task.cancel() }
    }

    /// Reads one notification stream until it ends; whether it was opened at all.
    private func stream(_ listen: JSONValue?) async -> Bool {
        var request = HTTPRequest(url: url)
        for (field, value) in headers { request.setHeader(value, for: field) }
        request.setHeader("text/event-stream", for: "Accept")
        let (negotiated, session) = state.withLock { ($0.negotiatedVersion, $0.sessionID) }
        if let listen, let stateless = listen["_meta"]?[MCPProtocol.Meta.protocolVersion]?.stringValue {
            let message = Self.request(nextID(), "subscriptions/listen", listen)
            request.method = "POST"
            request.body = Data(message.jsonText.utf8)
            request.setHeader("application/json", for: "Content-Type")
            request.setHeader("application/json, text/event-stream", for: "Accept")
            request.setHeader(stateless, for: "MCP-Protocol-Version")
            request.setHeader("subscriptions/listen", for: "Mcp-Method")
        } else {
            guard let session else { return false }
            request.method = "GET"
            request.setHeader(session, for: "Mcp-Session-Id")
            if let negotiated { request.setHeader(negotiated, for: "MCP-Protocol-Version") }
        }
        var parser = SSEParser()
        var opened = false
        var sinceEvent = 0
        do {
            for try await event in HTTPStream.start(request, timeout: 86_400) {
                switch event {
                case .head(let status, _):
                    guard status == 200 else { return false }
                    opened = true
                case .body(let data):
                    let events = parser.feed([UInt8](data))
                    sinceEvent = events.isEmpty ? sinceEvent + data.count : 0
                    // An event that never ends is dropped with its stream (it is opened again with backoff).
                    if sinceEvent > Self.maximumEvent { return opened }
                    for text in events {
                        guard let value = try? JSONValue(parsing: Array(text.utf8)),
                            case .notification(let method, let params)? = JSONRPCMessage(value)
                        else { continue }
                        onNotification(method, params ?? .null)
                    }
                }
            }
        } catch {}
        return opened
    }

    /// Stops listening and ends a session (DELETE, not waited for).
    func close() {
        let (listener, session) = state.withLock { state in
            state.closed = true
            defer { state.listener = nil }
            return (state.listener, state.sessionID)
        }
        listener?.cancel()
        guard let session else { return }
        var request = HTTPRequest(url: url, method: "DELETE")
        request.setHeader(session, for: "Mcp-Session-Id")
        for (field, value) in headers { request.setHeader(value, for: field) }
        Task {
            for try await _ in HTTPStream.start(request, timeout: 5) {}
        }
    }
}
