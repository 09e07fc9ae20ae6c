import Foundation
import SkillJSON
import SkillSDK
import Synchronization

/// `skill_plugin.snapshot` (ABI 1.1): the plugin's current state as a small JSON object for the agent.
enum PluginSnapshot {
    typealias Function =
        @convention(c) (
            UnsafeMutableRawPointer?, UnsafePointer<skill_snapshot_api>?, OpaquePointer?
        ) -> Int32

    /// Snapshots longer than this are refused (the agent's budget; a snapshot is a summary, not data).
    static let limit = 8 << 10

    /// Where `set` writes, behind the opaque `skill_snapshot *`.
    final class Box: Sendable {
        let bytes = Mutex<[UInt8]?>(nil)
        var opaque: OpaquePointer { OpaquePointer(Unmanaged.passUnretained(self).toOpaque()) }
        static func from(_ pointer: OpaquePointer?) -> Box? {
            pointer.map { Unmanaged<Box>.fromOpaque(UnsafeRawPointer($0)).takeUnretainedValue() }
        }
    }

    /// The `skill_snapshot_api` table. Built once; never freed.
    ///
    /// - Important: `@unchecked Sendable` is safe because the table is written once and never changed, and its
    ///   function captures nothing (it finds its box through the `skill_snapshot *` argument).
    final class Table: @unchecked Sendable {
        static let shared = Table()
        let pointer: UnsafeMutablePointer<skill_snapshot_api>
        private init() {
            pointer = .allocate(capacity: 1)
            pointer.initialize(
                to: skill_snapshot_api(
                    struct_size: UInt32(MemoryLayout<skill_snapshot_api>.size),
                    set: { out, json, length in
                        guard let box = Box.from(out) else { return }
                        let bytes = json.map { Array(UnsafeRawBufferPointer(start: $0, count: min(length, limit + 1))) }
                        box.bytes.withLock { $0 = bytes ?? [] }
                    }))
        }
    }

    /// Calls a native plugin's `snapshot` on the calling thread: the object, nil when the plugin has none, or a
    /// sentence saying what was wrong with it.
    static func take(
        _ function: Function, state: UnsafeMutableRawPointer?, plugin: String, cache: SnapshotCache? = nil
    ) -> Result<PluginState, SnapshotError> {
        let box = Box()
        let code = withExtendedLifetime(box) { function(state, Table.shared.pointer, box.opaque) }
        return read(code: code, bytes: box.bytes.withLock { $0 }, plugin: plugin, cache: cache)
    }

    /// What a snapshot's status `code` and the bytes it set (nil: `set` was not called; longer than `limit`: only
    /// their count matters) say: the state, or a sentence.
    static func read(code: Int32, bytes: [UInt8]?, plugin: String, cache: SnapshotCache? = nil)
        -> Result<PluginState, SnapshotError>
    {
        guard code == SKILL_OK else {
            return .failure(SnapshotError("\(plugin)'s snapshot failed with status \(code)"))
        }
        guard let bytes else {
            return .failure(SnapshotError("\(plugin)'s snapshot returned without calling set"))
        }
        guard bytes.count <= limit else {
            return .failure(
                SnapshotError("\(plugin)'s snapshot is over \(limit / 1024) KB; keep it to a short summary"))
        }
        if let cached = cache?.state(for: bytes) { return .success(cached) }
        guard let value = try? JSONValue(parsing: bytes), value.objectValue != nil else {
            return .failure(SnapshotError("\(plugin)'s snapshot is not a JSON object"))
        }
        let taken = PluginState(plugin: plugin, value: value)
        cache?.store(bytes, taken)
        return .success(taken)
    }
}

/// A plugin's state as its snapshot gave it: the object, and its compact JSON text (kept so a request that
/// sends it as it is does not print it again).
public struct PluginState: Sendable, Equatable {
    public let plugin: String
    public let value: JSONValue
    public let text: String

    public init(plugin: String, value: JSONValue) {
        self.init(plugin: plugin, value: value, text: value.jsonText)
    }

    init(plugin: String, value: JSONValue, text: String) {
        self.plugin = plugin
        self.value = value
        self.text = text
    }
}

/// The last snapshot a native plugin gave, so unchanged bytes are neither parsed nor printed again.
final class SnapshotCache: Sendable {
    private let last = Mutex<(bytes: [UInt8], state: PluginState)?>(nil)

    func state(for bytes: [UInt8]) -> PluginState? {
        last.withLock { last in last.flatMap { $0.bytes == bytes ? $0.state : nil } }
    }

    func store(_ bytes: [UInt8], _ state: PluginState) { last.withLock { $0 = (bytes, state) } }
}

/// Why a snapshot could not be taken, as a sentence.
public struct SnapshotError: Error, Sendable, Equatable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
