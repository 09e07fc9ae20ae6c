import CProcess
import Foundation
import SkillJSON
import Synchronization

/// The line-delimited JSON-RPC 2.0 spoken between the host and a worker process (`skillhost worker`), one message
/// per line in each direction:
///
/// - host → worker: `describe` (request; the loaded plugin and its skills), `invoke` (request:
///   `{"skill", "arguments"}`; many may be in flight, each with its own id), `cancel` (notification: `{"id"}`).
/// - worker → host: responses, `progress` (notification: `{"id", "done", "total"?, "message"?}`) and `log`
///   (notification: `{"level", "message"}`).
enum WorkerProtocol {
    /// Longest line either side accepts; a longer one is a protocol violation (the result limit keeps real
    /// results well below it).
    static func maximumLine(resultLimit: Int) -> Int { resultLimit * 2 + (1 << 20) }

    /// How deep a protocol line may nest: a value the host accepts (512 levels) inside the envelope.
    static let maximumDepth = JSONParser.maximumDepth + 8

    /// Parses one protocol line.
    static func parse(_ line: [UInt8]) -> JSONValue? { try? JSONValue(parsing: line, maximumDepth: maximumDepth) }

    static func request(_ id: Int64, _ method: String, _ params: JSONValue? = nil) -> String {
        var object = JSONObject([
            (key: "jsonrpc", value: "2.0"), (key: "id", value: .int(id)), (key: "method", value: .string(method)),
        ])
        if let params { object["params"] = params }
        return JSONValue.object(object).jsonText
    }

    static func notification(_ method: String, _ params: JSONValue) -> String {
        JSONValue.object(
            JSONObject([
                (key: "jsonrpc", value: "2.0"), (key: "method", value: .string(method)), (key: "params", value: params),
            ])
        ).jsonText
    }

    static func response(_ id: Int64, result: JSONValue) -> String {
        JSONValue.object(
            JSONObject([(key: "jsonrpc", value: "2.0"), (key: "id", value: .int(id)), (key: "result", value: result)])
        ).jsonText
    }

    static func response(_ id: Int64, errorCode: Int, message: String) -> String {
        JSONValue.object(
            JSONObject([
                (key: "jsonrpc", value: "2.0"), (key: "id", value: .int(id)),
                (key: "error", value: ["code": .int(Int64(errorCode)), "message": .string(message)]),
            ])
        ).jsonText
    }

    // MARK: Values

    static func encode(_ outcome: SkillOutcome) -> JSONValue {
        var object = JSONObject([(key: "status", value: .string(outcome.status.rawValue))])
        if let result = outcome.result { object["result"] = result }
        if let error = outcome.error { object["error"] = .string(error) }
        if let undo = outcome.undo { object["undo"] = ["skill": .string(undo.skillID), "arguments": undo.arguments] }
        return .object(object)
    }

    static func decodeOutcome(_ value: JSONValue) -> SkillOutcome? {
        guard let status = value["status"]?.stringValue.flatMap(SkillOutcome.Status.init(rawValue:)) else { return nil }
        var outcome = SkillOutcome(status: status, result: value["result"], error: value["error"]?.stringValue)
        if let undo = value["undo"], let skill = undo["skill"]?.stringValue, let arguments = undo["arguments"] {
            outcome.undo = UndoAction(skillID: skill, arguments: arguments)
        }
        return outcome
    }

    /// What `describe` answers: the plugin and its skills as the worker validated them.
    struct Description: Sendable {
        let name: String
        let version: String
        let description: String
        let keepsMapped: Bool
        let skills: [SkillInfo]
        let capabilities: PluginCapabilities
        let readPaths: [String]
    }

    static func encode(_ plugin: PluginSummary, _ skills: [SkillInfo]) -> JSONValue {
        [
            "plugin": [
                "name": .string(plugin.name), "version": .string(plugin.version),
                "description": .string(plugin.description), "keeps_mapped": .bool(plugin.keepsMapped),
                "capabilities": .int(Int64(plugin.capabilities.rawValue)),
                "read_paths": .array(plugin.readPaths.map { .string($0) }),
            ],
            "skills": .array(
                skills.map { skill in
                    var object = JSONObject([
                        (key: "id", value: .string(skill.id)), (key: "title", value: .string(skill.title)),
                        (key: "description", value: .string(skill.description)),
                        (key: "risk", value: .string(skill.risk.rawValue)),
                        (key: "flags", value: .int(Int64(skill.flags.rawValue))),
                        (key: "input_schema", value: skill.inputSchema),
                        (key: "schema_generated", value: .bool(skill.schemaIsGenerated)),
                    ])
                    if let timeout = skill.timeout { object["timeout_ms"] = .double(timeout.milliseconds) }
                    if case .typed(let signature) = skill.kind { object["signature"] = .string(signature) }
                    if let output = skill.outputSchema { object["output_schema"] = output }
                    return .object(object)
                }),
        ]
    }

    /// Reads a `describe` result; `file` is the plugin file as the user placed it.
    static func decodeDescription(_ value: JSONValue, file: String) -> Description? {
        guard let plugin = value["plugin"], let name = plugin["name"]?.stringValue,
            let version = plugin["version"]?.stringValue, let list = value["skills"]?.arrayValue
        else { return nil }
        var skills: [SkillInfo] = []
        for item in list {
            guard let id = item["id"]?.stringValue, let risk = item["risk"]?.stringValue.flatMap(SkillRisk.init),
                case .int(let flags)? = item["flags"], let schema = item["input_schema"]
            else { return nil }
            skills.append(
                SkillInfo(
                    id: id, title: item["title"]?.stringValue ?? id,
                    description: item["description"]?.stringValue ?? "",
                    plugin: name, pluginVersion: version, file: file, risk: risk,
                    flags: SkillFlags(rawValue: UInt32(truncatingIfNeeded: flags)),
                    timeout: item["timeout_ms"]?.doubleValue.map { .milliseconds($0) }, inputSchema: schema,
                    schemaIsGenerated: item["schema_generated"] == .bool(true),
                    kind: item["signature"]?.stringValue.map { .typed(signature: $0) } ?? .json,
                    outputSchema: item["output_schema"]))
        }
        return Description(
            name: name, version: version, description: plugin["description"]?.stringValue ?? "",
            keepsMapped: plugin["keeps_mapped"] == .bool(true), skills: skills,
            capabilities: PluginCapabilities(
                rawValue: UInt32(truncatingIfNeeded: Int64(plugin["capabilities"]?.doubleValue ?? 0))),
            readPaths: (plugin["read_paths"]?.arrayValue ?? []).compactMap(\.stringValue))
    }
}

/// Reads newline-terminated lines of at most `limit` bytes from a descriptor with its own buffer. Not thread-safe:
/// one reader at a time.
package final class LineReader {
    package enum Line {
        case line([UInt8])
        case end
        /// A line longer than the limit (its bytes are skipped).
        case tooLong
    }

    private let descriptor: Int32
    private let limit: Int
    /// When readable, reading stops (`.end`) as soon as nothing more is waiting in `descriptor`: how a reader whose
    /// pipe another process keeps open learns that the process it cares about is gone. -1: none.
    private let interrupt: Int32
    private var buffer: [UInt8] = []
    private var start = 0
    private var chunk = [UInt8](repeating: 0, count: 65536)

    package init(descriptor: Int32, limit: Int, interrupt: Int32 = -1) {
        self.descriptor = descriptor
        self.limit = limit
        self.interrupt = interrupt
    }

    package func next() -> Line {
        var scanned = start
        while true {
            if let newline = buffer[scanned...].firstIndex(of: 10) {
                let line = Array(buffer[start..<newline])
                start = newline + 1
                if start > 65536, start * 2 > buffer.count {
                    buffer.removeFirst(start)
                    start = 0
                }
                return .line(line)
            }
            scanned = buffer.count
            if buffer.count - start > limit {
                buffer.removeAll(keepingCapacity: false)
                start = 0
                return .tooLong
            }
            if interrupt >= 0 {
                var descriptors = [
                    pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
                    pollfd(fd: interrupt, events: Int16(POLLIN), revents: 0),
                ]
                if poll(&descriptors, 2, -1) < 0 {
                    if errno == EINTR { continue }
                    return .end
                }
                // Data first: what was written before the interruption is still delivered.
                if descriptors[0].revents == 0 && descriptors[1].revents != 0 { return .end }
            }
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            if count <= 0 { return .end }
            buffer.append(contentsOf: chunk[0..<count])
        }
    }
}

/// Writes whole lines to a descriptor; concurrent writers never interleave. Writing to a closed pipe fails
/// (SIGPIPE is ignored by the host and the worker).
package final class LineWriter: Sendable {
    /// nil once closed.
    private let descriptor: Mutex<Int32?>

    package init(descriptor: Int32) { self.descriptor = Mutex(descriptor) }

    /// Returns false when the other side is gone or the writer is closed.
    @discardableResult
    package func write(_ line: String) -> Bool {
        var bytes = Array(line.utf8)
        bytes.append(10)
        return descriptor.withLock { descriptor in
            guard let descriptor else { return false }
            var offset = 0
            while offset < bytes.count {
                let written = bytes.withUnsafeBytes { raw -> Int in
                    guard let base = raw.baseAddress else { return 0 }
                    // A worker that went away is a failed write, never a SIGPIPE for the host.
                    return skillhost_write_nosigpipe(descriptor, base + offset, raw.count - offset)
                }
                if written < 0, errno == EINTR { continue }
                if written <= 0 { return false }
                offset += written
            }
            return true
        }
    }

    /// Closes the descriptor (once); later writes fail.
    package func close() {
        descriptor.withLock { descriptor in
            if let open = descriptor { Glibc.close(open) }
            descriptor = nil
        }
    }
}
