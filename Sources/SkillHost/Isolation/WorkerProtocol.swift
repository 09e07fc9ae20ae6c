import CProcess
import Foundation
import JSONRPC
import SkillJSON
import Synchronization

/// The line-delimited JSON-RPC 2.0 spoken between the host and a worker process (`skillhost worker`), one message
/// per line in each direction:
///
/// - host → worker: `invoke` (request: `{"skill", "arguments", "context"}`; many may be in flight, each with its own
///   id), `cancel` (notification: `{"id"}`), and the plain methods of `WorkerMethod` (`describe`: the loaded plugin
///   and its skills; `snapshot`: the plugin's state).
/// - worker → host: responses, `progress` (notification: `{"id", "done", "total"?, "message"?}`), `phase` (the step
///   of loading it is at) and `log` (notification: `{"level", "message"}`).
///
/// The same messages travel on the direct lane (`WorkerLane`, the worker's descriptors 3 and 4): one `invoke` at a
/// time, and what the worker's lane thread writes while it runs — the call's progress, log lines, response.
/// `cancel` always goes on the main channel, so it may arrive before its call (the worker remembers it).
enum WorkerProtocol {
    /// Longest line either side accepts; a longer one is a protocol violation (the result limit keeps real
    /// results well below it).
    static func maximumLine(resultLimit: Int) -> Int { resultLimit * 2 + (1 << 20) }

    /// How deep a protocol line may nest: a value the host accepts (512 levels) inside the envelope.
    static let maximumDepth = JSONParser.maximumDepth + 8

    /// Parses one protocol line.
    static func parse(_ line: [UInt8]) -> JSONValue? { try? JSONValue(parsing: line, maximumDepth: maximumDepth) }

    // MARK: Values

    static func encode(_ outcome: SkillOutcome) -> JSONValue {
        var object = JSONObject([(key: "status", value: .string(outcome.status.rawValue))])
        if let result = outcome.result { object["result"] = result }
        if let error = outcome.error { object["error"] = .string(error) }
        if let undo = outcome.undo { object["undo"] = ["skill": .string(undo.skillID), "arguments": undo.arguments] }
        if let code = outcome.code, code != FailureCode(outcome.status) { object["code"] = .string(code.rawValue) }
        return .object(object)
    }

    static func decodeOutcome(_ value: JSONValue) -> SkillOutcome? {
        guard let status = value["status"]?.stringValue.flatMap(SkillOutcome.Status.init(rawValue:)) else { return nil }
        var outcome: SkillOutcome
        if let code = FailureCode(status) {
            let named = value["code"]?.stringValue.flatMap(FailureCode.init(rawValue:))
            outcome = .failure(
                code: named.flatMap { $0.status == status ? $0 : nil } ?? code,
                value["error"]?.stringValue ?? status.rawValue)
        } else {
            outcome = .success(value["result"] ?? .null)
        }
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
        /// How the worker confined itself.
        let confinement: ConfinementReport?
        /// Whether the plugin has a `snapshot` (since 1.1).
        let hasSnapshot: Bool
        /// The declaration the worker confined itself with (nil: unconfined, or confined as declaring nothing),
        /// for the next worker of the same copy (`WorkerLaunch.declared`).
        var declared: PluginDeclaration? = nil
        /// Whether the worker peeked for it (else the host gave it).
        var peeked = false
        /// The skills' schemas as the host compiled them while it validated the records (the C worker's), in
        /// `skills`' order; nil: they are compiled when the plugin is adopted.
        var compiled: [(input: JSONSchema, output: JSONSchema?)]? = nil
    }

    static func encode(_ plugin: PluginSummary, _ skills: [SkillInfo], confined: WorkerConfinement.Confined?)
        -> JSONValue
    {
        // Each view once, at the plugin's level: its skills name it (a page sent with every skill that shows in it
        // made the report of a plugin with many such skills too long to send).
        var views: [SkillView] = []
        for view in skills.compactMap(\.view) where !views.contains(view) { views.append(view) }
        return [
            "views": .array(views.map(\.json)),
            "plugin": [
                "name": .string(plugin.name), "version": .string(plugin.version),
                "description": .string(plugin.description), "keeps_mapped": .bool(plugin.keepsMapped),
                "capabilities": .int(Int64(plugin.capabilities.rawValue)),
                "read_paths": .array(plugin.readPaths.map { .string($0) }),
                "confinement": confined?.report.json ?? .null, "snapshot": .bool(plugin.hasSnapshot),
                "declared": confined?.declared?.json ?? .null, "peeked": .bool(confined?.peeked ?? false),
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
                    if let signature = skill.kind.signature { object["signature"] = .string(signature) }
                    if let output = skill.outputSchema { object["output_schema"] = output }
                    if let answer = skill.answer { object["answer"] = .string(answer.text) }
                    if let view = skill.view { object["view"] = .string(view.name) }
                    object["audience"] = .int(Int64(skill.audience.rawValue))
                    return .object(object)
                }),
        ]
    }

    /// Reads a `describe` result; `file` is the plugin file as the user placed it.
    static func decodeDescription(_ value: JSONValue, file: String) -> Description? {
        guard let plugin = value["plugin"], let name = plugin["name"]?.stringValue,
            let version = plugin["version"]?.stringValue, let list = value["skills"]?.arrayValue
        else { return nil }
        // A number from the worker is range-checked before it becomes an integer (its plugin may write there).
        let capabilities = PluginCapabilities(
            rawValue: UInt32(truncatingIfNeeded: Int64(exactly: plugin["capabilities"]) ?? 0))
        let readPaths = (plugin["read_paths"]?.arrayValue ?? []).compactMap(\.stringValue)
        let declares = PluginCapabilities.declared(capabilities, readPaths: readPaths)
        // Checked again here, as at load: the worker runs a stranger's code.
        var views: [String: SkillView] = [:]
        for item in (value["views"]?.arrayValue ?? []).prefix(Int(ViewValidator.maximumViews)) {
            guard let view = SkillView(json: item, plugin: name) else { return nil }
            views[view.name] = view
        }
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
                    timeout: UInt32(exactly: item["timeout_ms"]).map { .milliseconds($0) }, inputSchema: schema,
                    schemaIsGenerated: item["schema_generated"] == .bool(true),
                    kind: item["signature"]?.stringValue.map { .typed(signature: $0) } ?? .json,
                    outputSchema: item["output_schema"],
                    // Checked again here: the worker runs a stranger's code.
                    answer: item["answer"]?.stringValue.flatMap { try? AnswerTemplate($0) }, declares: declares,
                    view: item["view"]?.stringValue.flatMap { views[$0] },
                    audience: UInt32(exactly: item["audience"]).map { SkillAudience(rawValue: $0 & 3) }
                        .flatMap { $0.isEmpty ? nil : $0 } ?? [.model, .view]))
        }
        return Description(
            name: name, version: version, description: plugin["description"]?.stringValue ?? "",
            keepsMapped: plugin["keeps_mapped"] == .bool(true), skills: skills,
            capabilities: capabilities, readPaths: readPaths,
            confinement: ConfinementReport(json: plugin["confinement"]), hasSnapshot: plugin["snapshot"] == .bool(true),
            declared: PluginDeclaration(json: plugin["declared"]), peeked: plugin["peeked"] == .bool(true))
    }
}

/// What a worker answers a method from: its registry, the plugin it loaded (or why not), how it confined itself.
struct WorkerSide: Sendable {
    let registry: SkillRegistry
    let loaded: Result<PluginSummary, PluginLoadError>
    let confined: WorkerConfinement.Confined?
}

/// A plain request the host sends a worker, which the worker answers on its reading thread — every method but
/// `invoke`, the call path with its lanes, progress and cancellation. Both sides are declared here together: the
/// worker's answer and the host's reading of it. Adding such a method is one value below (and the call that uses
/// it); `WorkerServer` finds it in `table`, the host sends it with `WorkerProcess.call`.
struct WorkerMethod<Reply: Sendable>: Sendable {
    let name: String
    /// Run in the worker process.
    let answer: @Sendable (WorkerSide) -> Result<JSONValue, JSONRPCError>
    /// Run in the host; nil: the answer is unreadable.
    let read: @Sendable (JSONValue) -> Reply?

    /// The loaded plugin and its skills as the worker validated them (`file` names the user's file in them).
    static func describe(file: String) -> WorkerMethod<WorkerProtocol.Description> {
        WorkerMethod<WorkerProtocol.Description>(
            name: "describe",
            answer: { worker in
                switch worker.loaded {
                case .success(let plugin):
                    return .success(
                        WorkerProtocol.encode(
                            plugin, plugin.skillIDs.compactMap { worker.registry.skill($0) },
                            confined: worker.confined))
                case .failure(let error):
                    return .failure(
                        JSONRPCError(.pluginNotLoaded, error.problems.map(\.description).joined(separator: "\n")))
                }
            },
            read: { WorkerProtocol.decodeDescription($0, file: file) })
    }

    /// The plugin's state snapshot: nil when it has none, else the snapshot or the plugin's error. A snapshot is
    /// short by contract (the host stops waiting after 5 s).
    static var snapshot: WorkerMethod<Result<JSONValue, SnapshotError>?> {
        WorkerMethod<Result<JSONValue, SnapshotError>?>(
            name: "snapshot",
            answer: { worker in
                let name = (try? worker.loaded.get())?.name ?? ""
                switch worker.registry.snapshotOnCurrentThread(plugin: name) {
                case nil: return .success(.null)
                case .success(let value)?: return .success(["snapshot": value])
                case .failure(let error)?: return .success(["error": .string(error.message)])
                }
            },
            read: { value in
                if value == .null { return .some(nil) }
                if let error = value["error"]?.stringValue { return .some(.failure(SnapshotError(error))) }
                return .some(value["snapshot"].map { .success($0) })
            })
    }
}

extension WorkerProtocol {
    /// The plain methods a worker answers, by name.
    static let table: [String: @Sendable (WorkerSide) -> Result<JSONValue, JSONRPCError>] = [
        WorkerMethod<Description>.describe(file: "").name: WorkerMethod<Description>.describe(file: "").answer,
        WorkerMethod<Result<JSONValue, SnapshotError>?>.snapshot.name:
            WorkerMethod<Result<JSONValue, SnapshotError>?>.snapshot.answer,
    ]
}
