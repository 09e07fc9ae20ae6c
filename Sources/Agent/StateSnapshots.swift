import Foundation
import SkillHost
import SkillJSON

/// What the agent should know before it acts (the design's `AgentObservableState`): the ABI 1.1 snapshots of the
/// plugins whose skills are offered, as one system message per model request, trimmed to a byte budget — each
/// plugin gets an equal share, and a snapshot over its share loses the last elements of its longest list first
/// (plugins list newest first, so the newest are kept); one that still does not fit is left out and named.
package enum StateSnapshots {
    /// The message's first line; the snapshots follow, one `plugin: {json}` line each.
    static let heading = "The current state of the plugins behind the tools (JSON, trimmed to fit):"

    /// The system message for `snapshots` (sorted by plugin), or nil when there are none.
    package static func message(_ snapshots: [(plugin: String, state: JSONValue)], budget: Int) -> String? {
        message(snapshots.map { PluginState(plugin: $0.plugin, value: $0.state) }, budget: budget)
    }

    /// The system message for `states` (sorted by plugin), or nil when there are none. A state that fits its
    /// share is sent as the text it came with.
    package static func message(_ states: [PluginState], budget: Int) -> String? {
        guard !states.isEmpty else { return nil }
        let share = max(64, budget / states.count)
        var message = heading
        message.reserveCapacity(min(budget, 1 << 16) + 256)
        var omitted: [String] = []
        let ordered = zip(states, states.dropFirst()).allSatisfy { $0.plugin < $1.plugin }
        for state in ordered ? states : states.sorted(by: { $0.plugin < $1.plugin }) {
            let limit = share - state.plugin.utf8.count - 2
            if let text = state.text.utf8.count <= limit ? state.text : trimmed(state.value, toFit: limit) {
                message += "\n"
                message += state.plugin
                message += ": "
                message += text
            } else {
                omitted.append(state.plugin)
            }
        }
        if !omitted.isEmpty { message += "\n(too large to include: \(omitted.joined(separator: ", ")))" }
        return message
    }

    /// The JSON text of `state` within `limit` bytes: whole, or with elements dropped from the ends of its longest
    /// lists; nil when even that does not fit.
    static func trimmed(_ state: JSONValue, toFit limit: Int) -> String? {
        var value = state
        var text = value.jsonText
        // Each round drops one element: bounded by the number of elements, which the 8 KB snapshot limit bounds.
        while text.utf8.count > limit {
            guard let shorter = droppingOne(value) else { return nil }
            value = shorter
            text = value.jsonText
        }
        return text
    }

    /// `value` with the last element of its longest array (searched through objects and arrays) removed.
    private static func droppingOne(_ value: JSONValue) -> JSONValue? {
        func longest(_ value: JSONValue, depth: Int) -> Int {
            guard depth < 16 else { return 0 }
            switch value {
            case .array(let items): return max(items.count, items.map { longest($0, depth: depth + 1) }.max() ?? 0)
            case .object(let object): return object.members.map { longest($0.value, depth: depth + 1) }.max() ?? 0
            default: return 0
            }
        }
        let target = longest(value, depth: 0)
        guard target > 0 else { return nil }
        var done = false
        func drop(_ value: JSONValue, depth: Int) -> JSONValue {
            guard !done, depth < 16 else { return value }
            switch value {
            case .array(var items):
                if items.count == target {
                    items.removeLast()
                    done = true
                    return .array(items)
                }
                return .array(items.map { drop($0, depth: depth + 1) })
            case .object(let object):
                return .object(
                    JSONObject(object.members.map { (key: $0.key, value: drop($0.value, depth: depth + 1)) }))
            default: return value
            }
        }
        return drop(value, depth: 0)
    }
}

/// Where snapshots are taken: Dispatch's threads, not Swift's cooperative pool.
private let snapshotQueue = DispatchQueue(label: "skillhost.snapshots", attributes: .concurrent)

extension SkillRegistry {
    /// The snapshots of `plugins` that have one (a failed or missing snapshot is left out), taken on a Dispatch
    /// worker thread: plugin code never runs on the cooperative pool (a thread made per request cost 101 µs for
    /// 20 plugins; a warm Dispatch thread does not).
    package func snapshots(of plugins: [String]) async -> [PluginState] {
        await withCheckedContinuation { continuation in
            snapshotQueue.async {
                var taken: [PluginState] = []
                taken.reserveCapacity(plugins.count)
                for plugin in plugins {
                    if case .success(let state)? = self.stateOnCurrentThread(plugin: plugin) { taken.append(state) }
                }
                continuation.resume(returning: taken)
            }
        }
    }
}
