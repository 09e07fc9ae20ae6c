import Foundation
import SkillJSON

/// Where a plugin's code runs.
public enum IsolationMode: String, Sendable, CaseIterable {
    /// Loaded into the host: a call costs about a function call, but a crash takes the host down and a hung call
    /// can only be abandoned.
    case inProcess = "in-process"
    /// Loaded by a worker process the host can kill and restart.
    case process
}

/// Resource limits applied to every worker process before the plugin is loaded. nil leaves a limit as inherited.
public struct WorkerLimits: Sendable, Equatable {
    /// Address space (RLIMIT_AS), in bytes.
    public var addressSpace: UInt64? = 4 << 30
    /// CPU time of the worker's whole life (RLIMIT_CPU), in seconds; a runaway thread cannot spin forever.
    public var cpuSeconds: UInt64? = 3600
    /// Open file descriptors (RLIMIT_NOFILE).
    public var openFiles: UInt64? = 256

    public init() {}
}

/// How the registry isolates plugins. Without it (the default for embedders and unit tests) every plugin loads
/// in-process and nothing is probed.
public struct IsolationSettings: Sendable {
    /// The `skillhost` executable, started as `skillhost worker …`.
    public var executable: String
    /// The mode for a plugin, by its name and file.
    public var mode: @Sendable (_ plugin: String, _ file: String) -> IsolationMode
    /// Whether a file is loaded in a child process first (to survive a constructor or `init` that crashes or
    /// hangs) before it is loaded into the host. Files that end up in process mode are always loaded in a child.
    public var probe: @Sendable (_ file: String) -> Bool = { _ in true }
    public var limits = WorkerLimits()
    /// How long a worker may take to load its plugin (constructors and `init`) before it is killed.
    public var startTimeout: Duration = .seconds(5)
    /// How long a cancelled or timed-out call may take to stop before its worker is killed.
    public var killGrace: Duration = .milliseconds(100)
    /// Crashes within `crashWindow` after which a plugin is marked failing and its calls are refused.
    public var maximumCrashes = 5
    public var crashWindow: Duration = .seconds(60)
    /// Longest wait before restarting a worker that keeps crashing (the wait doubles from 50 ms).
    public var maximumBackoff: Duration = .seconds(5)
    /// The user's grants and denials for confined plugins (every process-mode plugin is confined).
    public var rules = ConfinementRules()
    /// Use at most this Landlock ABI (0: none), to see how plugins fare on an older kernel; nil: the kernel's.
    package var maximumLandlockABI: Int?
    /// False only for the benchmark that measures what confinement costs: workers then skip it.
    package var confines = true
    /// The worker written in C (`skillhost-worker`), found beside `executable` when it is there (a `swift build`
    /// and `make install` put it there); nil: workers are `skillhost worker`, the Swift worker, forked from its
    /// template. Tests and the benchmark choose either.
    package var nativeWorker: String?

    public init(executable: String, mode: @escaping @Sendable (_ plugin: String, _ file: String) -> IsolationMode) {
        self.executable = executable
        self.mode = mode
        let sibling = (executable as NSString).deletingLastPathComponent + "/skillhost-worker"
        if FileManager.default.isExecutableFile(atPath: sibling) { nativeWorker = sibling }
    }
}

/// The command line of a worker process: `skillhost worker --file F --copy C --data-dir D …`.
package struct WorkerLaunch: Sendable, Equatable {
    /// The plugin file as the user placed it (for messages).
    package var file: String
    /// The private copy to load.
    package var copy: String
    /// Parent of the per-plugin data directories.
    package var dataDirectory: String
    package var limits: WorkerLimits
    package var resultLimit: Int
    /// The user's grants and denials; the worker picks its plugin's once it knows the name.
    package var rules: ConfinementRules
    /// `IsolationSettings.maximumLandlockABI`.
    package var maximumLandlockABI: Int?
    /// `IsolationSettings.confines`.
    package var confines = true
    /// The host's precomputed system paths and filter, so the worker need not compute them.
    package var prepared: WorkerPreparation?
    /// What the plugin declares, when a worker of this copy already reported it: the worker confines itself with
    /// it instead of peeking again.
    var declared: PluginDeclaration?
    /// Plugin names other files' loaded plugins hold, with those files: a worker whose plugin declares one gets
    /// neither its grants nor its data folder, and is refused before its init.
    package var takenNames: [String: String] = [:]

    package init(
        file: String, copy: String, dataDirectory: String, limits: WorkerLimits, resultLimit: Int,
        rules: ConfinementRules = ConfinementRules()
    ) {
        self.file = file
        self.copy = copy
        self.dataDirectory = dataDirectory
        self.limits = limits
        self.resultLimit = resultLimit
        self.rules = rules
    }

    /// A library the C worker loads before anything else (`--preload`): the Swift runtime, for a plugin built by
    /// swiftc (SwiftPM links it into C plugins too), so the worker's peek child inherits it instead of loading it a
    /// second time. The Swift worker has it already.
    package var preload: String?

    /// The Swift runtime this process runs with, as mapped (nil when it is not found in /proc/self/maps).
    package static let swiftRuntime: String? = {
        // Read to its end (String(contentsOfFile:) stops after the first page of a /proc file).
        guard let data = FileHandle(forReadingAtPath: "/proc/self/maps")?.readDataToEndOfFile() else { return nil }
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
            guard let slash = line.firstIndex(of: "/") else { continue }
            let path = line[slash...]
            if path.hasSuffix("/libswiftCore.so") { return String(path) }
        }
        return nil
    }()

    /// What both workers read: the plugin, its data folder, the result limit and the limits (the C worker's
    /// arguments before its confinement's, `NativeConfinement.arguments`).
    package var commonArguments: [String] {
        var result = [
            "--file", file, "--copy", copy, "--data-dir", dataDirectory, "--max-result-bytes", String(resultLimit),
        ]
        if let value = limits.addressSpace { result += ["--limit-as", String(value)] }
        if let value = limits.cpuSeconds { result += ["--limit-cpu", String(value)] }
        if let value = limits.openFiles { result += ["--limit-files", String(value)] }
        return result
    }

    /// The arguments after `worker` (the Swift worker's): the common ones and what it computes its confinement from.
    package var arguments: [String] {
        var result = commonArguments + ["--confine", rules.json.jsonText]
        if let maximumLandlockABI { result += ["--landlock-abi", String(maximumLandlockABI)] }
        if !confines { result += ["--confines", "no"] }
        if let prepared { result += prepared.arguments }
        if let declared { result += ["--declared", declared.json.jsonText] }
        if !takenNames.isEmpty {
            let names = JSONObject(
                takenNames.sorted { $0.key < $1.key }.map { (key: $0.key, value: .string($0.value)) })
            result += ["--taken-names", JSONValue.object(names).jsonText]
        }
        return result
    }

    /// Parses the arguments after `worker`; nil when they are not what `arguments` produces.
    package init?(arguments: [String]) {
        var values: [String: String] = [:]
        var index = 0
        while index + 1 < arguments.count {
            values[arguments[index]] = arguments[index + 1]
            index += 2
        }
        guard index == arguments.count, let file = values["--file"], let copy = values["--copy"],
            let data = values["--data-dir"], let result = values["--max-result-bytes"].flatMap({ Int($0) }),
            let rules = values["--confine"].flatMap({ try? JSONValue(parsing: $0) }).flatMap(
                ConfinementRules.init(json:))
        else { return nil }
        var limits = WorkerLimits()
        limits.addressSpace = values["--limit-as"].flatMap { UInt64($0) }
        limits.cpuSeconds = values["--limit-cpu"].flatMap { UInt64($0) }
        limits.openFiles = values["--limit-files"].flatMap { UInt64($0) }
        self.init(file: file, copy: copy, dataDirectory: data, limits: limits, resultLimit: result, rules: rules)
        maximumLandlockABI = values["--landlock-abi"].flatMap { Int($0) }
        confines = values["--confines"] != "no"
        prepared = WorkerPreparation(paths: values["--system-paths"], filter: values["--filter"])
        if let text = values["--taken-names"] {
            guard let names = (try? JSONValue(parsing: text))?.objectValue else { return nil }
            takenNames = Dictionary(
                names.members.compactMap { member in member.value.stringValue.map { (member.key, $0) } },
                uniquingKeysWith: { first, _ in first })
        }
        if let text = values["--declared"] {
            // A launch that names a declaration it cannot give is not what `arguments` produces.
            guard let declared = PluginDeclaration(json: try? JSONValue(parsing: text)) else { return nil }
            self.declared = declared
        }
    }
}
