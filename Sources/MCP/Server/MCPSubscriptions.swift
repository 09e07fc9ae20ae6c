import JSONRPC
import SkillJSON
import Synchronization

/// The change notifications a server owes its clients: `subscriptions/listen` streams (2026-07-28: acknowledged
/// first, every message tagged with the subscription's id, only the types asked for) and older clients'
/// notification streams (an HTTP session's GET stream: plain `notifications/tools/list_changed`).
final class MCPSubscriptions: Sendable {
    private struct Subscriber: Sendable {
        /// The `subscriptions/listen` request's id; nil for an older client's stream.
        let id: JSONValue?
        let toolsListChanged: Bool
        var resourcesListChanged = false
        /// State resources (`skillhost://state/<plugin>`) it wants `notifications/resources/updated` for.
        var resources: Set<String> = []
        /// Sends one message; false when the client is gone.
        let send: @Sendable (String) -> Bool
        /// Ends the stream after its last message (HTTP); nil on stdio.
        let end: (@Sendable () -> Void)?
    }

    private let subscribers = Mutex<(next: Int, open: [Int: Subscriber])>((1, [:]))
    /// Orders every message of every subscription: an acknowledgment always precedes the notifications it covers.
    private let delivery = Mutex(())

    /// Opens a `subscriptions/listen` subscription: sends its acknowledgment (with the part of `filter` honoured:
    /// tool and resource list changes, updates of state resources; prompts are not served) and returns its
    /// handle for `remove`.
    func add(
        id: JSONRPCID, filter: JSONValue?, send: @escaping @Sendable (String) -> Bool,
        end: (@Sendable () -> Void)? = nil
    ) -> Int {
        let idValue = (try? JSONValue(parsing: id.text)) ?? .null
        let tools = filter?["toolsListChanged"] == .bool(true)
        var honoured = JSONObject()
        if tools { honoured["toolsListChanged"] = true }
        var subscriber = Subscriber(id: idValue, toolsListChanged: tools, send: send, end: end)
        if filter?["resourcesListChanged"] == .bool(true) {
            subscriber.resourcesListChanged = true
            honoured["resourcesListChanged"] = true
        }
        // Only state resources exist; at most 256 per subscription.
        let uris = (filter?["resourceSubscriptions"]?.arrayValue ?? []).compactMap(\.stringValue).filter {
            MCPServer.plugin(of: $0) != nil
        }.prefix(256)
        if filter?["resourceSubscriptions"] != nil {
            subscriber.resources = Set(uris)
            honoured["resourceSubscriptions"] = .array(uris.map { .string($0) })
        }
        return delivery.withLock { _ in
            let serial = subscribers.withLock { state in
                defer { state.next += 1 }
                state.open[state.next] = subscriber
                return state.next
            }
            _ = send(
                JSONRPCMessage.notification(
                    method: "notifications/subscriptions/acknowledged",
                    params: ["_meta": Self.meta(idValue), "notifications": .object(honoured)]
                ).line)
            return serial
        }
    }

    /// Opens an older client's notification stream (untagged): tool list changes unless `toolsListChanged` is
    /// false (a stdio client hears of those directly), and the state resources it subscribes to with `watch`.
    func addUntagged(
        toolsListChanged: Bool = true, send: @escaping @Sendable (String) -> Bool, end: (@Sendable () -> Void)? = nil
    ) -> Int {
        subscribers.withLock { state in
            defer { state.next += 1 }
            state.open[state.next] = Subscriber(id: nil, toolsListChanged: toolsListChanged, send: send, end: end)
            return state.next
        }
    }

    /// `resources/subscribe` (`true`) and `resources/unsubscribe` of an older client, on its stream `serial`.
    func watch(_ serial: Int, _ uri: String, _ subscribed: Bool) {
        subscribers.withLock { state in
            guard var subscriber = state.open[serial] else { return }
            if subscribed {
                if subscriber.resources.count < 256 { subscriber.resources.insert(uri) }
            } else {
                subscriber.resources.remove(uri)
            }
            state.open[serial] = subscriber
        }
    }

    /// Forgets a subscription (the client cancelled it or went away); nothing more is sent on it.
    func remove(_ serial: Int) {
        _ = subscribers.withLock { $0.open.removeValue(forKey: serial) }
    }

    var count: Int { subscribers.withLock { $0.open.count } }

    /// Every state resource some subscription watches.
    var watchedResources: Set<String> {
        subscribers.withLock { state in state.open.values.reduce(into: Set<String>()) { $0.formUnion($1.resources) } }
    }

    /// The list of resources changed: tells the subscriptions that asked.
    func resourcesChanged() {
        deliver("notifications/resources/list_changed", to: { $0.resourcesListChanged })
    }

    /// A state resource changed: tells the subscriptions watching it.
    func resourceUpdated(_ uri: String) {
        deliver(
            "notifications/resources/updated", JSONObject([(key: "uri", value: .string(uri))]),
            to: { $0.resources.contains(uri) })
    }

    /// Sends one notification to each subscriber `wants` picks (tagged with its subscription), forgetting those
    /// that are gone.
    private func deliver(_ method: String, _ params: JSONObject = JSONObject(), to wants: (Subscriber) -> Bool) {
        delivery.withLock { _ in
            let open = subscribers.withLock { $0.open }
            var gone: [Int] = []
            for (serial, subscriber) in open where wants(subscriber) {
                var body = params
                if let id = subscriber.id { body["_meta"] = Self.meta(id) }
                let line = JSONRPCMessage.notification(
                    method: method, params: body.count == 0 ? nil : .object(body)
                ).line
                if !subscriber.send(line) { gone.append(serial) }
            }
            if !gone.isEmpty { subscribers.withLock { state in gone.forEach { state.open[$0] = nil } } }
        }
    }

    /// The registry's tools changed: tells every subscriber that asked; forgets those that are gone.
    func toolsChanged() {
        deliver("notifications/tools/list_changed", to: { $0.toolsListChanged })
    }

    /// Ends every subscription gracefully (the server stops): each `subscriptions/listen` request gets its
    /// completion result, then its stream ends.
    func closeAll() {
        delivery.withLock { _ in
            let open = subscribers.withLock { state in
                defer { state.open = [:] }
                return state.open
            }
            for subscriber in open.values {
                if let id = subscriber.id {
                    _ = subscriber.send(
                        JSONRPCMessage.response(
                            id: JSONRPCID(rawText: id.jsonText),
                            result: ["resultType": "complete", "_meta": Self.meta(id)]
                        ).line)
                }
                subscriber.end?()
            }
        }
    }

    private static func meta(_ id: JSONValue) -> JSONValue { [MCPProtocol.Meta.subscriptionID: id] }
}
