import Foundation
import SkillHost
import SkillJSON

/// The `"isolation"` section of config.json and the `--isolate` option: which plugins run in a worker process,
/// and the limits of those workers.
///
/// ```json
/// "isolation": {"default": "process", "plugins": {"units": "in-process"},
///               "memory_mb": 4096, "cpu_seconds": 3600, "open_files": 256,
///               "start_timeout_ms": 5000, "kill_grace_ms": 100, "max_crashes": 5, "crash_window_s": 60,
///               "grant": {"weather": ["network"], "indexer": ["read:~/Documents"]}, "deny": {"x": ["exec"]},
///               "require_confinement": true}
/// ```
/// Without a `"default"`, bundled plugins run in-process and every other plugin in process mode.
struct IsolationConfig: Sendable, Equatable {
    /// The mode of plugins the file does not name; nil: by folder (bundled in-process, others process).
    var defaultMode: IsolationMode?
    var plugins: [String: IsolationMode] = [:]
    var limits = WorkerLimits()
    var startTimeout: Duration?
    var killGrace: Duration?
    var maximumCrashes: Int?
    var crashWindow: Duration?
    /// Grants, denials and `require_confinement` for confined (process-mode) plugins.
    var rules = ConfinementRules()

    static let keys = [
        "default", "plugins", "memory_mb", "cpu_seconds", "open_files", "start_timeout_ms", "kill_grace_ms",
        "max_crashes", "crash_window_s", "grant", "deny", "require_confinement",
    ]

    /// Parses the section; `fail` turns a message into the error naming the file.
    static func parse(_ value: JSONValue, fail: (String) -> CLIError) throws(CLIError) -> IsolationConfig {
        guard let object = value.objectValue else {
            throw fail("\"isolation\" must be an object such as {\"default\": \"process\"}")
        }
        func mode(_ value: JSONValue, _ path: String) throws(CLIError) -> IsolationMode {
            guard let text = value.stringValue, let mode = IsolationMode(rawValue: text) else {
                throw fail("\(path) must be \"process\" or \"in-process\"")
            }
            return mode
        }
        func number(_ value: JSONValue, _ key: String, max: Double) throws(CLIError) -> Double {
            guard let number = value.doubleValue, number > 0, number <= max else {
                throw fail("isolation.\(key) must be a positive number up to \(Int(max))")
            }
            return number
        }
        var config = IsolationConfig()
        for (key, value) in object.members {
            switch key {
            case "default": config.defaultMode = try mode(value, "isolation.default")
            case "plugins":
                guard let plugins = value.objectValue else {
                    throw fail("isolation.plugins must map plugin names to \"process\" or \"in-process\"")
                }
                for (name, choice) in plugins.members {
                    config.plugins[name] = try mode(choice, "isolation.plugins.\(name)")
                }
            case "memory_mb": config.limits.addressSpace = UInt64(try number(value, key, max: 1_048_576)) << 20
            case "cpu_seconds": config.limits.cpuSeconds = UInt64(try number(value, key, max: 1e9))
            case "open_files": config.limits.openFiles = UInt64(try number(value, key, max: 1_048_576))
            case "start_timeout_ms": config.startTimeout = .milliseconds(try number(value, key, max: 600_000))
            case "kill_grace_ms": config.killGrace = .milliseconds(try number(value, key, max: 60_000))
            case "max_crashes": config.maximumCrashes = Int(try number(value, key, max: 1000))
            case "crash_window_s": config.crashWindow = .milliseconds(try number(value, key, max: 86_400) * 1000)
            case "grant": config.rules.grants = try grants(value, key, fail: fail)
            case "deny": config.rules.denials = try grants(value, key, fail: fail)
            case "require_confinement":
                guard case .bool(let required) = value else {
                    throw fail("isolation.require_confinement must be true or false")
                }
                config.rules.requireConfinement = required
            default:
                let hint = EditDistance.closest(to: key, among: keys).map { " (did you mean \"\($0)\"?)" } ?? ""
                throw fail("unknown setting isolation.\(key)\(hint); known: \(keys.joined(separator: ", "))")
            }
        }
        return config
    }

    /// `{"weather": ["network"], "indexer": ["read:~/Documents"]}`: plugin names to lists of grants.
    private static func grants(_ value: JSONValue, _ key: String, fail: (String) -> CLIError) throws(CLIError)
        -> [String: [ConfinementGrant]]
    {
        let example = #"{"weather": ["network"], "indexer": ["read:~/Documents"]}"#
        guard let object = value.objectValue else {
            throw fail("isolation.\(key) must map plugin names to lists such as \(example)")
        }
        var result: [String: [ConfinementGrant]] = [:]
        for (name, list) in object.members {
            guard let items = list.arrayValue else {
                throw fail("isolation.\(key).\(name) must be a list such as [\"network\"]")
            }
            result[name] = try items.enumerated().map { (index, item) throws(CLIError) in
                guard let text = item.stringValue, let grant = ConfinementGrant(text) else {
                    throw fail(
                        "isolation.\(key).\(name)[\(index)] is \(item.jsonText); use \(ConfinementGrant.forms) "
                            + "(a folder is absolute or starts with ~)")
                }
                return grant
            }
        }
        return result
    }

    /// The registry's settings, with `--isolate` (if given) taking precedence over the file.
    func settings(
        executable: String, bundledFolder: String?, choice: IsolateChoice?
    ) -> IsolationSettings {
        let plugins = plugins
        let defaultMode = defaultMode
        // Only files directly in the bundled folder count as bundled (not a subfolder given with --plugins), however
        // the path is written: `../prefix/lib/skillhost/plugins/x.so`, a symbolic link, the absolute path.
        let bundled = bundledFolder.map(Self.resolved)
        let isBundled: @Sendable (String) -> Bool = { file in
            guard let bundled else { return false }
            return Self.resolved((file as NSString).deletingLastPathComponent) == bundled
        }
        var settings = IsolationSettings(executable: executable) { name, file in
            switch choice {
            case .all?: return .process
            case .none?: return .inProcess
            case .plugins(let names)? where names.contains(name): return .process
            default: break
            }
            if let mode = plugins[name] { return mode }
            if let defaultMode { return defaultMode }
            if isBundled(file) { return .inProcess }
            return .process
        }
        // The bundled plugins are built with the host; every other file is probed before it is loaded.
        settings.probe = { file in !isBundled(file) }
        settings.limits = limits
        settings.rules = rules
        if let startTimeout { settings.startTimeout = startTimeout }
        if let killGrace { settings.killGrace = killGrace }
        if let maximumCrashes { settings.maximumCrashes = maximumCrashes }
        if let crashWindow { settings.crashWindow = crashWindow }
        return settings
    }

    /// A folder's path with `.`, `..` and symbolic links resolved (as written when it does not exist).
    static func resolved(_ folder: String) -> String {
        guard let real = realpath(folder.isEmpty ? "." : folder, nil) else {
            return folder.hasSuffix("/") && folder.count > 1 ? String(folder.dropLast()) : folder
        }
        defer { free(real) }
        return String(cString: real)
    }
}

/// `--isolate all|none|<plugin>,…`.
enum IsolateChoice: Equatable, Sendable {
    case all
    case none
    case plugins(Set<String>)

    init(_ text: String) throws(UsageError) {
        switch text {
        case "all": self = .all
        case "none": self = .none
        default:
            let names = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            guard !names.isEmpty, names.allSatisfy({ !$0.isEmpty }) else {
                throw UsageError(
                    "--isolate \(text) names no plugin",
                    hint: "use --isolate all, --isolate none or --isolate notes,units")
            }
            self = .plugins(Set(names))
        }
    }
}
