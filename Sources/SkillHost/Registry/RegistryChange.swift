import Foundation
import Synchronization

/// One change to the registry, as front ends (the `list --watch` printer, the shell, the MCP server) see it.
public enum RegistryChange: Sendable, Equatable {
    /// A plugin was loaded from a file that had none (or an MCP server's tools were registered); its
    /// `skillIDs` are the skills added.
    case loaded(PluginSummary)
    /// A file's plugin was replaced by a new version, switched atomically.
    case replaced(old: PluginSummary, new: PluginSummary, added: [String], removed: [String], updated: [String])
    /// A plugin was unloaded because its file went away.
    case unloaded(PluginSummary)
    /// A file failed to load. Reported once per distinct file content.
    case failed(PluginLoadError)

    /// The plugin (or external source) that changed; nil for a file that failed to load.
    package var plugin: String? {
        switch self {
        case .loaded(let plugin), .unloaded(let plugin): return plugin.name
        case .replaced(_, let new, _, _, _): return new.name
        case .failed: return nil
        }
    }

    /// One line for people: `+ units 1.1: 2 skills added (gcd, slugify)`, `! broken.so: ABI major 2, host 1; …`.
    public var line: String {
        switch self {
        case .loaded(let plugin):
            return "+ \(plugin.name) \(plugin.version): \(Self.count(plugin.skillIDs.count)) added "
                + "(\(plugin.skillIDs.joined(separator: ", ")))"
        case .replaced(let old, let new, let added, let removed, let updated):
            var parts: [String] = []
            if !added.isEmpty { parts.append("\(added.count) added (\(added.joined(separator: ", ")))") }
            if !removed.isEmpty { parts.append("\(removed.count) removed (\(removed.joined(separator: ", ")))") }
            if !updated.isEmpty { parts.append("\(updated.count) updated") }
            return "~ \(new.name) \(old.version) → \(new.version): \(parts.joined(separator: ", "))"
        case .unloaded(let plugin):
            return "- \(plugin.name) \(plugin.version): \(Self.count(plugin.skillIDs.count)) removed "
                + "(\(plugin.skillIDs.joined(separator: ", ")))"
        case .failed(let error):
            return "! \(error.description)"
        }
    }

    static func count(_ skills: Int) -> String { skills == 1 ? "1 skill" : "\(skills) skills" }
}

/// Fans registry changes out to any number of `AsyncStream` subscribers.
final class ChangeBroadcaster: Sendable {
    private let subscribers = Mutex<[Int: AsyncStream<RegistryChange>.Continuation]>([:])
    private let nextID = Atomic<Int>(0)

    /// A new stream of every change published from now on; it ends when the consumer stops iterating.
    func subscribe() -> AsyncStream<RegistryChange> {
        let id = nextID.add(1, ordering: .relaxed).newValue
        let (stream, continuation) = AsyncStream<RegistryChange>.makeStream(bufferingPolicy: .bufferingNewest(1024))
        continuation.onTermination = { [weak self] _ in
            _ = self?.subscribers.withLock { $0.removeValue(forKey: id) }
        }
        subscribers.withLock { $0[id] = continuation }
        return stream
    }

    func publish(_ change: RegistryChange) {
        for continuation in subscribers.withLock({ Array($0.values) }) { continuation.yield(change) }
    }

    func finish() {
        for continuation in subscribers.withLock({ Array($0.values) }) { continuation.finish() }
    }
}
