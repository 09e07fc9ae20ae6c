import Dispatch
import Foundation
import JSONRPC
import SkillHost
import SkillJSON
import Synchronization

/// The plugins' state as MCP resources: one `skillhost://state/<plugin>` per plugin with a snapshot (ABI 1.1),
/// read as the JSON object the agent sees, and — for `subscriptions/listen` streams that name it in
/// `resourceSubscriptions` — `notifications/resources/updated` when it changes.
extension MCPServer {
    static let stateScheme = "skillhost://state/"

    /// `resources/list`: the plugins that describe their state.
    func resourceList() -> JSONValue {
        let resources: [JSONValue] = registry.plugins.filter(\.hasSnapshot).map { plugin in
            [
                "uri": .string(Self.stateScheme + plugin.name), "name": .string("\(plugin.name)-state"),
                "title": .string("State of \(plugin.name)"),
                "description": .string(
                    "What plugin \(plugin.name) \(plugin.version) reports about its current state (its snapshot, as "
                        + "the agent sees it before it acts)."),
                "mimeType": "application/json",
            ]
        }
        return ["resources": .array(resources + skillResourceList() + viewResourceList())]
    }

    /// `resources/read`: the snapshot, taken off the cooperative pool (plugin code); an unknown URI is `-32602`
    /// ("Resource not found"), a snapshot that failed `-32603` with its sentence.
    func readResource(
        id: RequestID, params: JSONValue, finish: @escaping @Sendable (JSONValue) -> Void, exchange: MCPExchange
    ) {
        if let uri = params["uri"]?.stringValue, uri.hasPrefix(Self.skillScheme) {
            switch readSkillResource(uri) {
            case .success(let contents): finish(contents)
            case .failure(let error):
                respond(id, code: .invalidParams, message: error.message, data: ["uri": .string(uri)], to: exchange)
            }
            return
        }
        if let uri = params["uri"]?.stringValue, uri.hasPrefix(Self.viewScheme) {
            guard let contents = readViewResource(uri) else {
                respond(
                    id, code: .invalidParams, message: "Resource not found", data: ["uri": .string(uri)], to: exchange)
                return
            }
            finish(contents)
            return
        }
        guard let (uri, plugin) = stateResource(params, id: id, exchange: exchange) else { return }
        stateWatch.queue.async { [self] in
            switch registry.stateOnCurrentThread(plugin: plugin) {
            case .success(let state)?:
                finish([
                    "contents": [["uri": .string(uri), "mimeType": "application/json", "text": .string(state.text)]]
                ])
            case .failure(let error)?:
                respond(id, code: .internalError, message: error.message, data: ["uri": .string(uri)], to: exchange)
            case nil:
                respond(
                    id, code: .invalidParams, message: "Resource not found", data: ["uri": .string(uri)], to: exchange)
            }
        }
    }

    /// `resources/subscribe` / `resources/unsubscribe` of the handshake generation: the session's stream (stdio:
    /// standard output) gets `notifications/resources/updated` for the URI until it unsubscribes.
    func subscribe(id: RequestID, params: JSONValue, on subscribed: Bool, exchange: MCPExchange) {
        guard let (uri, _) = stateResource(params, id: id, exchange: exchange) else { return }
        let stream: Int?
        if exchange.isStdio {
            let output = output
            stream = state.withLock { state in
                if state.resourceStream == nil {
                    state.resourceStream = subscriptions.addUntagged(toolsListChanged: false) { line in
                        output(line)
                        return true
                    }
                }
                return state.resourceStream
            }
        } else {
            stream = exchange.sessionStream
        }
        guard let stream else {
            respond(
                id, code: .invalidRequest,
                message: "Invalid request: resources/subscribe needs a session (initialize first and send its "
                    + "Mcp-Session-Id), or subscriptions/listen in protocol revision 2026-07-28", to: exchange)
            return
        }
        subscriptions.watch(stream, uri, subscribed)
        respond(id, result: .object(JSONObject()), to: exchange)
        if subscribed {
            checkWatchedState()
            stateWatch.startPolling { [weak self] in self?.checkWatchedState() }
        }
    }

    /// The state resource `params["uri"]` names, with its plugin — or nil, having answered: a request without a
    /// URI is `-32602` saying so, one naming no plugin with a snapshot `-32602 Resource not found`.
    private func stateResource(_ params: JSONValue, id: RequestID, exchange: MCPExchange) -> (String, String)? {
        guard case .string(let uri)? = params["uri"] else {
            respond(id, code: .invalidParams, message: "Invalid params: a resource uri is needed", to: exchange)
            return nil
        }
        guard let plugin = Self.plugin(of: uri),
            registry.plugins.contains(where: { $0.name == plugin && $0.hasSnapshot })
        else {
            respond(id, code: .invalidParams, message: "Resource not found", data: ["uri": .string(uri)], to: exchange)
            return nil
        }
        return (uri, plugin)
    }

    /// The plugin a state URI names (`skillhost://state/notes` → notes).
    static func plugin(of uri: String) -> String? {
        guard uri.hasPrefix(stateScheme) else { return nil }
        let name = String(uri.dropFirst(stateScheme.count))
        return name.isEmpty || name.contains("/") ? nil : name
    }
}

/// Notices changes to the state resources someone listens to: each watched plugin's snapshot is taken after a
/// call through this server that may change something, after the registry changes, and every two seconds (the
/// plugin's data may change from elsewhere — another skillhost process using the same data), and compared with
/// the last one seen. Snapshots are taken on a queue of its own, never on the cooperative pool.
final class MCPStateWatch: Sendable {
    let queue = DispatchQueue(label: "skillhost.mcp.state")
    private let seen = Mutex<[String: String]>([:])
    private let timer = Mutex<DispatchSourceTimer?>(nil)

    /// Compares the watched plugins' snapshots with the last seen ones; `updated` receives each URI that changed.
    /// A plugin seen for the first time only records its state, and so do the URIs in `recordOnly` (their
    /// subscribers were told already).
    func check(
        _ uris: Set<String>, registry: SkillRegistry, recordOnly: Set<String> = [],
        updated: @escaping @Sendable (String) -> Void
    ) {
        guard !uris.isEmpty else { return }
        queue.async { [self] in
            for uri in uris.sorted() {
                guard let plugin = MCPServer.plugin(of: uri) else { continue }
                let text: String
                switch registry.stateOnCurrentThread(plugin: plugin) {
                case .success(let state)?: text = state.text
                case .failure(let error)?: text = "error: \(error.message)"
                case nil: text = ""
                }
                let previous = seen.withLock { seen -> String? in
                    defer { seen[uri] = text }
                    return seen[uri]
                }
                if let previous, previous != text, !recordOnly.contains(uri) { updated(uri) }
            }
        }
    }

    /// Starts the two-second check (once).
    func startPolling(_ tick: @escaping @Sendable () -> Void) {
        timer.withLock { timer in
            guard timer == nil else { return }
            let source = DispatchSource.makeTimerSource(queue: queue)
            source.schedule(deadline: .now() + .seconds(2), repeating: .seconds(2), leeway: .milliseconds(200))
            source.setEventHandler(handler: tick)
            source.resume()
            timer = source
        }
    }
}
