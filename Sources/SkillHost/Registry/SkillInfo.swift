import Foundation
import SkillJSON
import Synchronization

/// What a call can change; the agent asks before mutating and destructive calls.
public enum SkillRisk: String, Sendable, CaseIterable {
    case readOnly = "read-only"
    case mutating
    case destructive

    /// The greater of two risks.
    static func max(_ a: SkillRisk, _ b: SkillRisk) -> SkillRisk { a.rank >= b.rank ? a : b }

    private var rank: Int {
        switch self {
        case .readOnly: return 0
        case .mutating: return 1
        case .destructive: return 2
        }
    }

    init?(code: UInt32) {
        switch code {
        case 0: self = .readOnly
        case 1: self = .mutating
        case 2: self = .destructive
        default: return nil
        }
    }
}

/// What a plugin's code needs beyond computing (`skill_plugin.capabilities`, since ABI 1.1).
public struct PluginCapabilities: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Open sockets, resolve names.
    public static let network = PluginCapabilities(rawValue: 1 << 0)
    /// Read files anywhere the user can.
    public static let readFiles = PluginCapabilities(rawValue: 1 << 1)
    /// Write outside its data directory.
    public static let writeFiles = PluginCapabilities(rawValue: 1 << 2)
    /// Run other programs.
    public static let runPrograms = PluginCapabilities(rawValue: 1 << 3)

    static let known: PluginCapabilities = [.network, .readFiles, .writeFiles, .runPrograms]

    /// `network, read-files` — empty when none.
    public var names: [String] {
        var result: [String] = []
        if contains(.network) { result.append("network") }
        if contains(.readFiles) { result.append("read-files") }
        if contains(.writeFiles) { result.append("write-files") }
        if contains(.runPrograms) { result.append("run-programs") }
        return result
    }

    /// What a plugin declares, as its skills' pins record it: `["network", "read:/srv/models"]`.
    static func declared(_ capabilities: PluginCapabilities, readPaths: [String]) -> [String] {
        capabilities.names + readPaths.map { "read:\($0)" }
    }
}

/// Skill flags from the descriptor.
public struct SkillFlags: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Repeating the call with the same arguments changes nothing more.
    public static let idempotent = SkillFlags(rawValue: 1 << 0)
    /// Talks to the world outside this machine.
    public static let openWorld = SkillFlags(rawValue: 1 << 1)
    /// Never two invocations at once.
    public static let serial = SkillFlags(rawValue: 1 << 2)

    static let known: SkillFlags = [.idempotent, .openWorld, .serial]

    /// `idempotent, serial` — or `-` when none.
    public var names: [String] {
        var result: [String] = []
        if contains(.idempotent) { result.append("idempotent") }
        if contains(.openWorld) { result.append("open-world") }
        if contains(.serial) { result.append("serial") }
        return result
    }
}

/// How a skill is implemented.
///
/// A struct over a private value (as `PluginProblem.Code` is), so a new kind of skill does not break an embedder's
/// exhaustive `switch`: kinds are made with the static members below, compared with `==`, and read through
/// `signature`, `compositePlan` and `isExternal`.
public struct SkillKind: Sendable, Equatable {
    enum Kind: Sendable, Equatable {
        case json
        case typed(signature: String)
        case external
        case composite(CompositePlan)
    }

    let kind: Kind

    /// `invoke` receives the argument JSON.
    public static let json = SkillKind(kind: .json)
    /// A C function called through libffi; the payload is the signature.
    public static func typed(signature: String) -> SkillKind { SkillKind(kind: .typed(signature: signature)) }
    /// A tool of another program (an MCP server), called over its protocol.
    public static let external = SkillKind(kind: .external)
    /// A composite skill (`NAME.skill.json`): its steps call other skills.
    public static func composite(_ plan: CompositePlan) -> SkillKind { SkillKind(kind: .composite(plan)) }

    /// A typed skill's signature; nil for other kinds.
    public var signature: String? {
        if case .typed(let signature) = kind { return signature }
        return nil
    }

    /// A composite skill's plan; nil for other kinds.
    public var compositePlan: CompositePlan? {
        if case .composite(let plan) = kind { return plan }
        return nil
    }

    /// Whether it is another program's tool.
    public var isExternal: Bool { kind == .external }

    /// Whether it is a JSON skill.
    public var isJSON: Bool { kind == .json }
}

/// What a composite skill does, as registered: its steps as written, one line each for people, and every skill it
/// can end up calling (through nested composites too), which the policy's rules also apply to.
public struct CompositePlan: Sendable, Equatable {
    /// The `steps` array of its file, entry by entry.
    public let steps: [JSONValue]
    /// `1. notes_search(query: ${input.folder}) → found`, one per step.
    public let lines: [String]
    /// The skills its steps call, directly or through the composites they call, each once.
    public let calls: [String]
    /// Called skills that are not registered (the call fails until they are).
    public let missing: [String]
}

/// Everything the host knows about a registered skill, as plain Swift values (no C pointers).
public struct SkillInfo: Sendable {
    /// `^[a-z][a-z0-9_]{0,63}$`, unique across the registry.
    public let id: String
    /// Short, for people (the id when the plugin gives none).
    public let title: String
    /// For the model: what it does, when to use it, side effects.
    public let description: String
    /// The plugin's name and version.
    public let plugin: String
    public let pluginVersion: String
    /// The plugin file as the user placed it.
    public let file: String
    public let risk: SkillRisk
    public let flags: SkillFlags
    /// The descriptor's `timeout_ms`, nil for the host default.
    public let timeout: Duration?
    /// The JSON Schema arguments are validated against (declared, or generated from the signature).
    public let inputSchema: JSONValue
    /// Whether the schema was generated from a typed signature.
    public let schemaIsGenerated: Bool
    public let kind: SkillKind
    /// The JSON Schema every result is validated against (`skill_descriptor.output_schema`, since 1.1; an MCP
    /// tool's `outputSchema`), nil when none is declared.
    public let outputSchema: JSONValue?
    /// How a result reads as a sentence for people (`skill_descriptor.answer`, since 1.3), nil when none is
    /// declared.
    package let answer: AnswerTemplate?
    /// The plugin's view that shows its results (`skill_descriptor.view`, since 1.4): an MCP App; nil when none.
    package let view: SkillView?
    /// Who may call it (`skill_descriptor.audience`, since 1.4): models, its plugin's views, or both.
    package let audience: SkillAudience
    /// What the skill's plugin declares it may reach (`network`, `read:/path`…; empty for other kinds): part of
    /// what a pin approves (`DefinitionPins`).
    public let declares: [String]
    /// Unique to the value made by `init` (copies share it; every field is a constant): what was checked of this
    /// definition need not be checked again (`DefinitionPins`).
    let serial: UInt64 = skillInfoSerials.add(1, ordering: .relaxed).newValue

    public init(
        id: String, title: String, description: String, plugin: String, pluginVersion: String, file: String,
        risk: SkillRisk, flags: SkillFlags, timeout: Duration?, inputSchema: JSONValue, schemaIsGenerated: Bool,
        kind: SkillKind, outputSchema: JSONValue? = nil, declares: [String] = []
    ) {
        self.init(
            id: id, title: title, description: description, plugin: plugin, pluginVersion: pluginVersion, file: file,
            risk: risk, flags: flags, timeout: timeout, inputSchema: inputSchema, schemaIsGenerated: schemaIsGenerated,
            kind: kind, outputSchema: outputSchema, answer: nil, declares: declares)
    }

    package init(
        id: String, title: String, description: String, plugin: String, pluginVersion: String, file: String,
        risk: SkillRisk, flags: SkillFlags, timeout: Duration?, inputSchema: JSONValue, schemaIsGenerated: Bool,
        kind: SkillKind, outputSchema: JSONValue?, answer: AnswerTemplate?, declares: [String],
        view: SkillView? = nil, audience: SkillAudience = [.model, .view]
    ) {
        self.view = view
        self.audience = audience
        self.answer = answer
        self.outputSchema = outputSchema
        self.declares = declares
        self.id = id
        self.title = title
        self.description = description
        self.plugin = plugin
        self.pluginVersion = pluginVersion
        self.file = file
        self.risk = risk
        self.flags = flags
        self.timeout = timeout
        self.inputSchema = inputSchema
        self.schemaIsGenerated = schemaIsGenerated
        self.kind = kind
    }

    /// Who provides the skill, as its pin records it: an external source by its configured name, a plugin or
    /// composite by its name and its file's name (the same plugin moved to another folder is the same provider;
    /// another file offering the same skill is not).
    package var provider: String {
        if kind.isExternal { return plugin }
        return "\(plugin) (\((file as NSString).lastPathComponent))"
    }

    /// Whether `other` is the same definition as far as a call is decided by it — id, risk, flags, schemas, kind,
    /// where it comes from — even when it is another value (a skill folder rescanned, an MCP server's tools listed
    /// again make new ones that say the same).
    package func decidesAlike(_ other: SkillInfo) -> Bool {
        if serial == other.serial { return true }
        return id == other.id && risk == other.risk && flags == other.flags && kind == other.kind
            && plugin == other.plugin && file == other.file && inputSchema == other.inputSchema
            && outputSchema == other.outputSchema && declares == other.declares
    }

    /// A composite's steps as written (what a pin approves of it); nil for other kinds.
    package var compositeSteps: JSONValue? {
        if let plan = kind.compositePlan { return .array(plan.steps) }
        return nil
    }

    /// One line: `expression: string` / `value: number, unit?: "c"|"f"`. Optional arguments end in `?`.
    public var argumentSummary: String {
        guard let properties = inputSchema["properties"]?.objectValue, properties.count > 0 else { return "(none)" }
        let required = Set((inputSchema["required"]?.arrayValue ?? []).compactMap(\.stringValue))
        return properties.members.map { member in
            let optional = required.contains(member.key) ? "" : "?"
            return "\(member.key)\(optional): \(Self.typeSummary(member.value))"
        }.joined(separator: ", ")
    }

    static func typeSummary(_ schema: JSONValue) -> String {
        if let values = schema["enum"]?.arrayValue, !values.isEmpty {
            return values.prefix(6).map(\.jsonText).joined(separator: "|") + (values.count > 6 ? "|…" : "")
        }
        switch schema["type"] {
        case .string(let name)?:
            if name == "array", let items = schema["items"] { return "[\(typeSummary(items))]" }
            return name
        case .array(let names)?: return names.compactMap(\.stringValue).joined(separator: "|")
        default: return "any"
        }
    }
}

/// Where `SkillInfo.serial` comes from.
private let skillInfoSerials = Atomic<UInt64>(0)
