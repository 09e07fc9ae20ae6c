import Dispatch
import Synchronization

/// The calls in flight, per client, for both transports: one limit and one busy answer. A transport that names
/// calls by request id (stdio) also refuses an id already in flight and finds a call again to cancel it.
final class MCPAdmission: Sendable {
    enum Verdict: Equatable {
        case admitted
        /// The id is already used by a call in flight.
        case duplicate
        /// The client has `limit` calls in flight already (the count).
        case busy(Int)
    }

    private struct Client {
        var count = 0
        var byKey: [String: CallSlot] = [:]
    }

    /// Calls one client may have in flight.
    let limit: Int
    private let clients = Mutex<[String: Client]>([:])
    /// Signalled whenever the last call in flight ends.
    private let drained = DispatchSemaphore(value: 0)

    init(limit: Int) { self.limit = limit }

    /// Counts a call of `client` in, or says why not. `key`: the request's id, for transports that cancel by id.
    func admit(_ slot: CallSlot, client: String, key: String?) -> Verdict {
        clients.withLock { clients in
            var entry = clients[client, default: Client()]
            if let key, entry.byKey[key] != nil { return .duplicate }
            guard entry.count < limit else { return .busy(entry.count) }
            entry.count += 1
            if let key { entry.byKey[key] = slot }
            clients[client] = entry
            return .admitted
        }
    }

    /// Counts a call out. With a key: the call's slot, or nil when it was already released (cancelled).
    @discardableResult
    func release(client: String, key: String?) -> CallSlot? {
        let (slot, released, empty) = clients.withLock { clients -> (CallSlot?, Bool, Bool) in
            guard var entry = clients[client] else { return (nil, false, clients.isEmpty) }
            var slot: CallSlot?
            if let key {
                slot = entry.byKey.removeValue(forKey: key)
                guard slot != nil else { return (nil, false, false) }
            }
            entry.count -= 1
            clients[client] = entry.count > 0 ? entry : nil
            return (slot, true, clients.isEmpty)
        }
        if released, empty { drained.signal() }
        return slot
    }

    /// Waits until no call is in flight.
    func waitUntilIdle() {
        while clients.withLock({ !$0.isEmpty }) { _ = drained.wait(timeout: .now() + .seconds(1)) }
    }
}

/// The tool calls each client session may make (`"budgets": {"mcp_session": {"tool_calls": N}}`): a session is an
/// HTTP session (`Mcp-Session-Id`), else the client as the transport knows it (a bearer token, the peer's address;
/// on stdio the one connection) for as long as the server runs.
final class MCPCallBudget: Sendable {
    let limit: Int?
    private let spent = Mutex<[String: Int]>([:])

    init(limit: Int?) { self.limit = limit }

    /// Counts a call of `session` in; false (nothing counted) when its budget is used up.
    func spend(_ session: String) -> Bool {
        guard let limit else { return true }
        return spent.withLock { spent in
            guard spent[session, default: 0] < limit else { return false }
            spent[session, default: 0] += 1
            return true
        }
    }

    /// Gives back a call of `session` that did not run (it ended at a question put to the client's user).
    func refund(_ session: String) {
        guard limit != nil else { return }
        spent.withLock { spent in
            if let used = spent[session], used > 0 { spent[session] = used - 1 }
        }
    }

    /// Why a composite's step was not run once the budget is used up.
    var stepSentence: String {
        let limit = limit ?? 0
        return "this MCP session has made its \(limit) tool call\(limit == 1 ? "" : "s"), a composite's steps counted "
            + "(budgets.mcp_session.tool_calls in the server's config.json)"
    }

    /// What the client is told once the budget is used up.
    var sentence: String {
        let limit = limit ?? 0
        return "Budget reached: this MCP session has made its \(limit) tool call\(limit == 1 ? "" : "s") "
            + "(budgets.mcp_session.tool_calls in the server's config.json); start a new session, or raise the budget"
    }
}
