import Foundation
import SkillJSON

/// One thing a user grants or denies a plugin in config.json (`"isolation": {"grant": {"weather": ["network"]}}`):
/// a capability, or one folder to read or write.
public enum ConfinementGrant: Sendable, Hashable, CustomStringConvertible {
    case capability(PluginCapabilities)
    /// A folder readable (as given: `~/Documents` or an absolute path).
    case read(String)
    /// A folder readable and writable.
    case write(String)

    /// The words config.json uses, for messages.
    public static let forms = "\"network\", \"read\", \"write\", \"exec\", \"read:<folder>\" or \"write:<folder>\""

    /// Parses `network`, `read`, `write`, `exec`, `read:~/Documents`, `write:/srv/out`; nil for anything else.
    public init?(_ text: String) {
        switch text {
        case "network": self = .capability(.network)
        case "read": self = .capability(.readFiles)
        case "write": self = .capability(.writeFiles)
        case "exec": self = .capability(.runPrograms)
        default:
            if text.hasPrefix("read:"), Self.isFolder(text.dropFirst(5)) {
                self = .read(String(text.dropFirst(5)))
            } else if text.hasPrefix("write:"), Self.isFolder(text.dropFirst(6)) {
                self = .write(String(text.dropFirst(6)))
            } else {
                return nil
            }
        }
    }

    private static func isFolder(_ path: Substring) -> Bool { path.hasPrefix("/") || path.hasPrefix("~") }

    public var description: String {
        switch self {
        case .capability(let capability):
            switch capability {
            case .network: "network"
            case .readFiles: "read"
            case .writeFiles: "write"
            default: "exec"
            }
        case .read(let path): "read:" + path
        case .write(let path): "write:" + path
        }
    }
}

/// The user's grants and denials by plugin name (config.json's `isolation.grant` and `isolation.deny`), and
/// whether a plugin that cannot be fully confined may load at all.
public struct ConfinementRules: Sendable, Equatable {
    public var grants: [String: [ConfinementGrant]] = [:]
    public var denials: [String: [ConfinementGrant]] = [:]
    /// Refuse to load a process-mode plugin the kernel cannot fully confine (no Landlock, or too old an ABI).
    public var requireConfinement = false

    public init() {}

    /// What a plugin named `name` may do: what it declares, plus the grants, minus the denials (a denial wins).
    /// `home` expands `~`.
    public func confinement(
        for name: String, declared: PluginCapabilities, readPaths declaredPaths: [String], home: String
    ) -> Confinement {
        var capabilities = declared
        var reads = declaredPaths
        var writes: [String] = []
        for grant in grants[name] ?? [] {
            switch grant {
            case .capability(let capability): capabilities.insert(capability)
            case .read(let path): reads.append(path)
            case .write(let path): writes.append(path)
            }
        }
        for denial in denials[name] ?? [] {
            switch denial {
            case .capability(let capability): capabilities.remove(capability)
            case .read(let path): reads.removeAll { $0 == path }
            case .write(let path): writes.removeAll { $0 == path }
            }
        }
        // Writing anywhere implies reading anywhere (SKILL_CAP_WRITE_FS).
        if capabilities.contains(.writeFiles) { capabilities.insert(.readFiles) }
        func expand(_ path: String) -> String {
            let expanded = path == "~" ? home : path.hasPrefix("~/") ? home + path.dropFirst(1) : path
            return (expanded as NSString).standardizingPath
        }
        var seen = Set<String>()
        return Confinement(
            capabilities: capabilities,
            readPaths: reads.map(expand).filter { seen.insert($0).inserted },
            writePaths: writes.map(expand).filter { seen.insert("w" + $0).inserted })
    }

    /// The form passed to a worker on its command line.
    package var json: JSONValue {
        func table(_ rules: [String: [ConfinementGrant]]) -> JSONValue {
            .object(
                JSONObject(
                    rules.sorted { $0.key < $1.key }.map {
                        (key: $0.key, value: .array($0.value.map { .string($0.description) }))
                    }))
        }
        return ["grant": table(grants), "deny": table(denials), "require": .bool(requireConfinement)]
    }

    package init?(json: JSONValue) {
        func table(_ value: JSONValue?) -> [String: [ConfinementGrant]]? {
            guard let object = value?.objectValue else { return nil }
            var result: [String: [ConfinementGrant]] = [:]
            for (name, list) in object.members {
                guard let items = list.arrayValue else { return nil }
                let grants = items.compactMap { $0.stringValue.flatMap(ConfinementGrant.init) }
                guard grants.count == items.count else { return nil }
                result[name] = grants
            }
            return result
        }
        guard let grants = table(json["grant"]), let denials = table(json["deny"]) else { return nil }
        self.grants = grants
        self.denials = denials
        requireConfinement = json["require"] == .bool(true)
    }
}

/// What the kernel lets a worker's plugin do, beyond computing: reading the system's libraries and data, and
/// reading and writing its data directory and a private temporary directory.
public struct Confinement: Sendable, Equatable {
    public var capabilities: PluginCapabilities
    /// Extra readable folders, expanded.
    public var readPaths: [String]
    /// Extra writable folders, expanded.
    public var writePaths: [String]

    public init(capabilities: PluginCapabilities = [], readPaths: [String] = [], writePaths: [String] = []) {
        self.capabilities = capabilities
        self.readPaths = readPaths
        self.writePaths = writePaths
    }
}

/// How a worker was confined, as it reported after applying it: shown by `list` and `check`.
public struct ConfinementReport: Sendable, Equatable {
    /// The parts the kernel enforces.
    public struct Layers: OptionSet, Sendable, Hashable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// Landlock filesystem rules.
        public static let files = Layers(rawValue: 1 << 0)
        /// Landlock TCP rules (ABI 4).
        public static let tcp = Layers(rawValue: 1 << 1)
        /// Landlock signal and abstract-socket scoping (ABI 6).
        public static let scope = Layers(rawValue: 1 << 2)
        /// The seccomp filter.
        public static let syscalls = Layers(rawValue: 1 << 3)
    }

    public var confinement: Confinement
    public var layers: Layers
    /// The Landlock ABI the kernel offered (0: none).
    public var landlockABI: Int
    /// `uname -r` of the worker's kernel.
    public var kernel: String

    public init(confinement: Confinement, layers: Layers, landlockABI: Int, kernel: String) {
        self.confinement = confinement
        self.layers = layers
        self.landlockABI = landlockABI
        self.kernel = kernel
    }

    /// The layers a full confinement needs from this kernel: files and scoping from Landlock, TCP from it unless
    /// the plugin may use the network, and the system-call filter.
    var isComplete: Bool {
        var needed: Layers = [.files, .scope, .syscalls]
        if !confinement.capabilities.contains(.network) { needed.insert(.tcp) }
        return layers.isSuperset(of: needed)
    }

    /// Why the confinement is partial ("Landlock unavailable (kernel 5.4.0)"); nil when it is complete.
    public var shortfall: String? {
        if isComplete { return nil }
        if landlockABI == 0 { return "Landlock unavailable (kernel \(kernel))" }
        if !layers.contains(.syscalls) { return "no system-call filter" }
        return
            "Landlock ABI \(landlockABI) lacks \(landlockABI < 4 ? "TCP rules and signal scoping" : "signal scoping") "
            + "(kernel \(kernel))"
    }

    /// `confined: no network, no programs, reads system files + 1 folder, writes its data dir`, followed by what
    /// the user granted beyond `declared` and what they denied of it.
    public func summary(declared: PluginCapabilities) -> String {
        let capabilities = confinement.capabilities
        var parts: [String] = []
        parts.append(capabilities.contains(.network) ? "network" : "no network")
        parts.append(capabilities.contains(.runPrograms) ? "runs programs" : "no programs")
        func plus(_ count: Int) -> String { count == 0 ? "" : " + \(count) folder\(count == 1 ? "" : "s")" }
        if !layers.contains(.files) {
            parts.append("files not confined")
        } else if capabilities.contains(.writeFiles) {
            parts.append("reads and writes all your files")
        } else {
            // A folder that holds the home folder (or is it) reads all your files, whatever it is called.
            let home = WorkerConfinement.home
            let broad = confinement.readPaths.contains { $0 == "/" || $0 == home || home.hasPrefix($0 + "/") }
            parts.append(
                capabilities.contains(.readFiles) || broad
                    ? "reads all your files" : "reads system files" + plus(confinement.readPaths.count))
            parts.append("writes its data dir" + plus(confinement.writePaths.count))
        }
        var text = (shortfall.map { "partly confined (\($0))" } ?? "confined") + ": " + parts.joined(separator: ", ")
        let granted = capabilities.subtracting(declared).subtracting(
            declared.contains(.writeFiles) ? .readFiles : [])
        let denied = declared.subtracting(capabilities)
        if !granted.isEmpty { text += "; granted beyond its declaration: " + granted.names.joined(separator: ", ") }
        if !denied.isEmpty { text += "; declared but denied: " + denied.names.joined(separator: ", ") }
        return text
    }

    package var json: JSONValue {
        [
            "capabilities": .int(Int64(confinement.capabilities.rawValue)),
            "read_paths": .array(confinement.readPaths.map { .string($0) }),
            "write_paths": .array(confinement.writePaths.map { .string($0) }),
            "layers": .int(Int64(layers.rawValue)), "landlock_abi": .int(Int64(landlockABI)),
            "kernel": .string(kernel),
        ]
    }

    package init?(json: JSONValue?) {
        guard let json, case .int(let bits)? = json["capabilities"], case .int(let layers)? = json["layers"] else {
            return nil
        }
        self.init(
            confinement: Confinement(
                capabilities: PluginCapabilities(rawValue: UInt32(truncatingIfNeeded: bits)),
                readPaths: (json["read_paths"]?.arrayValue ?? []).compactMap(\.stringValue),
                writePaths: (json["write_paths"]?.arrayValue ?? []).compactMap(\.stringValue)),
            layers: Layers(rawValue: Int(truncatingIfNeeded: layers)),
            landlockABI: json["landlock_abi"]?.integer(in: 0...1000) ?? 0, kernel: json["kernel"]?.stringValue ?? "")
    }
}
