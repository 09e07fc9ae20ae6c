import Foundation
import SkillJSON
import Synchronization

/// The host's registry of loaded plugins and their skills, and the one way to invoke a skill.
///
/// Loading is serialised; lookups and invocations are concurrent. The registry owns a private directory for
/// plugin copies and removes it in `shutdown()`.
///
/// ```swift
/// let registry = try SkillRegistry(configuration: .init(dataDirectory: dataURL))
/// _ = registry.loadFolder("/path/to/plugins")
/// let outcome = await registry.invoke("calculator", arguments: #"{"expression":"(23+7)*2"}"#)
/// ```
public final class SkillRegistry: Sendable {
    /// What the registry needs from its host program.
    public struct Configuration: Sendable {
        /// Parent of the per-plugin data directories (`<dataDirectory>/<plugin>`).
        public var dataDirectory: URL
        /// Deadline of calls whose skill declares none and whose caller passes none.
        public var defaultTimeout: Duration = .seconds(10)
        /// Threads in the invocation pool.
        public var maximumThreads = 64
        /// Concurrent calls per plugin before calls queue.
        public var perPluginConcurrency = 8
        /// Abandoned calls still stuck before a plugin refuses new calls.
        public var unhealthyAfterStuckCalls = 4
        /// How long a replaced or removed plugin's running calls may take to finish before they are cancelled.
        public var drainTimeout: Duration = .seconds(5)
        /// Quiet period after a file event before the file is (re)loaded; collapses bursts of writes.
        public var reloadDebounce: Duration = .milliseconds(30)
        /// Receives host and plugin log lines.
        public var log: @Sendable (LogRecord) -> Void = { _ in }
        /// Results longer than this (in bytes) become an error.
        public var resultLimit = 16 << 20
        /// Plugin files larger than this (in bytes) are refused before they are read.
        public var maximumPluginSize = 256 << 20
        /// Worker processes for plugins in process mode and probes of new files; nil loads everything in-process.
        public var isolation: IsolationSettings?
        /// Hears each step of loading a plugin (a worker reports it to its host, so a hang names its step).
        public var onLoadPhase: @Sendable (LoadPhase) -> Void = { _ in }
        /// Time for call deadlines, kill graces, restart backoff and crash windows (tests inject a manual clock).
        public var clock: any HostClock = SystemClock()
        /// Who calls, as skills see it in their context (`skill_call_api.context`): "shell", "ask", "mcp", "call".
        public var client = "embedder"

        public init(dataDirectory: URL) { self.dataDirectory = dataDirectory }
    }

    struct Entry {
        let plugin: LoadedPlugin
        let skills: [Skill]
        let contentHash: UInt64
    }

    struct State {
        /// By plugin name.
        var plugins: [String: Entry] = [:]
        /// File path → plugin name.
        var owners: [String: String] = [:]
        var skills: [String: Skill] = [:]
        /// File path → the failure and the hash of the content that failed (nil when unreadable).
        var failures: [String: (error: PluginLoadError, hash: UInt64?)] = [:]
        /// Retired images that stay mapped (Swift code, or calls that never returned).
        var keptImages = 0
        var keptBytes = 0
        /// Replaced or removed plugins still draining.
        var retiring = 0
        /// Skills of other programs (MCP servers), by id, and their sources by name.
        var external: [String: ExternalEntry] = [:]
        var sources: [String: PluginSummary] = [:]
        var isShutDown = false
    }

    /// The version this host reports to plugins.
    public static let hostVersion = "0.1.0"

    public let configuration: Configuration
    /// The clock's current instant as a closure made once (validation asks it without a per-call allocation).
    let now: @Sendable () -> ContinuousClock.Instant
    let loader: PluginLoader
    let runner: InvocationRunner
    let copyDirectory: URL
    let state = Mutex(State())
    /// Serialises loading, unloading and the `init`/`deinit` calls they make ([load-thread] in the ABI).
    let loading = Mutex(())
    let broadcaster = ChangeBroadcaster()

    /// Creates an empty registry and its private copy directory.
    /// - Throws: `RegistryError.cannotCreateDirectory` when the temporary directory is not writable.
    public init(configuration: Configuration) throws(RegistryError) {
        self.configuration = configuration
        let clock = configuration.clock
        now = { clock.now }
        copyDirectory = try TemporaryDirectories.create()
        loader = PluginLoader(
            copyDirectory: copyDirectory, hostVersion: Self.hostVersion, onPhase: configuration.onLoadPhase)
        runner = InvocationRunner(
            limits: .init(
                maximumThreads: configuration.maximumThreads, perPluginConcurrency: configuration.perPluginConcurrency,
                unhealthyAfterStuckCalls: configuration.unhealthyAfterStuckCalls),
            clock: configuration.clock)
        HostLog.install(configuration.log)
    }

    // MARK: Queries

    /// Registered skills, sorted by id.
    public var skills: [SkillInfo] {
        state.withLock { $0.skills.values.map(\.info) + $0.external.values.map(\.skill.info) }.sorted { $0.id < $1.id }
    }

    /// Loaded plugins, sorted by name.
    public var plugins: [PluginSummary] {
        state.withLock { $0.plugins.values.map { PluginSummary($0.plugin, skills: $0.skills) } + $0.sources.values }
            .sorted { $0.name < $1.name }
    }

    /// Files whose current content failed to load, sorted by file.
    public var failures: [PluginLoadError] {
        state.withLock { $0.failures.values.map(\.error) }.sorted { $0.file < $1.file }
    }

    /// Retired plugin images that stay mapped: Swift code is never unmapped, nor is an image whose abandoned calls
    /// never returned.
    public var keptImages: (count: Int, bytes: Int) { state.withLock { ($0.keptImages, $0.keptBytes) } }

    /// Replaced or removed plugins whose calls are still draining.
    public var pendingRetirements: Int { state.withLock { $0.retiring } }

    /// Every change from now on: loads, replacements, unloads and load failures.
    public func changes() -> AsyncStream<RegistryChange> { broadcaster.subscribe() }

    /// Validates `arguments` for skill `id` exactly as `invoke` will (lenient coercions, defaults filled in), so a
    /// front end can show the exact arguments before asking the user. An unknown id is an issue at `$`.
    public func validate(_ id: String, arguments: JSONValue) -> Result<JSONValue, ValidationIssues> {
        if let external = state.withLock({ $0.external[id] }) {
            return external.schema?.check(arguments).map { $0 ?? arguments } ?? .success(arguments)
        }
        guard let skill = state.withLock({ $0.skills[id] }) else {
            return .failure(ValidationIssues(issues: [ValidationIssue(path: "$", message: unknownSkillMessage(id))]))
        }
        return skill.schema.check(arguments).map { $0 ?? arguments }
    }

    /// The skill with this id.
    public func skill(_ id: String) -> SkillInfo? {
        state.withLock { $0.skills[id]?.info ?? $0.external[id]?.skill.info }
    }

    /// Counters of the invocation pool.
    public var poolStatistics: (liveThreads: Int, idleThreads: Int, abandonedThreads: Int, queued: Int) {
        let s = runner.statistics
        return (s.liveThreads, s.idleThreads, s.abandonedThreads, s.queued)
    }

    // MARK: Invocation

    /// Invokes a skill: looks it up, parses and validates the arguments, then runs it on the pool under its
    /// deadline. Never throws; every failure is an outcome with a sentence.
    ///
    /// - Parameters:
    ///   - id: the skill id.
    ///   - arguments: a JSON object as text (`""` means `{}`).
    ///   - timeout: overrides the skill's `timeout_ms` and the host default.
    ///   - onProgress: receives `report_progress` calls, on the plugin's thread.
    /// - Returns: the outcome; cancelling the calling task ends the call with `.cancelled` promptly.
    public func invoke(
        _ id: String, arguments: String, timeout: Duration? = nil,
        onProgress: (@Sendable (SkillProgress) -> Void)? = nil
    ) async -> SkillOutcome {
        let start = ContinuousClock.now
        if let external = state.withLock({ $0.external[id] }) {
            var outcome = await invokeExternal(
                external, arguments: arguments,
                timeout: timeout ?? external.skill.info.timeout ?? configuration.defaultTimeout)
            outcome.duration = .now - start
            return outcome
        }
        switch prepare(id, arguments, timeout: timeout) {
        case .failure(let outcome):
            var failed = outcome.outcome
            failed.duration = .now - start
            return failed
        case .success(let prepared):
            defer { prepared.skill.plugin.users.subtract(1, ordering: .releasing) }
            return await runner.run(job(for: prepared, timeout: timeout, onProgress: onProgress))
        }
    }

    /// Starts a call like `invoke` for callers that are threads rather than tasks (a protocol reader): `completion`
    /// receives the outcome exactly once, on whichever thread ends the call. The handle cancels it.
    ///
    /// - Parameter onCallingThread: run the plugin code on the calling thread when the call may run at once (saves
    ///   the hand-off to a pool thread; the deadline still holds). Only for threads that may block in plugin code —
    ///   never the cooperative pool; the caller returns when the plugin does (or at once when the call queues).
    /// - Parameter onHandle: receives the handle before the call runs (so another thread can cancel a call that
    ///   runs on this one).
    @discardableResult
    public func start(
        _ id: String, arguments: String, timeout: Duration? = nil, onCallingThread: Bool = false,
        onProgress: (@Sendable (SkillProgress) -> Void)? = nil, onHandle: (CallHandle) -> Void = { _ in },
        completion: @escaping @Sendable (SkillOutcome) -> Void
    ) -> CallHandle {
        let start = ContinuousClock.now
        if state.withLock({ $0.external[id] }) != nil {
            let task = Task {
                completion(await invoke(id, arguments: arguments, timeout: timeout, onProgress: onProgress))
            }
            let handle = CallHandle { task.cancel() }
            onHandle(handle)
            return handle
        }
        switch prepare(id, arguments, timeout: timeout) {
        case .failure(let rejected):
            var failed = rejected.outcome
            failed.duration = .now - start
            completion(failed)
            return CallHandle {}
        case .success(let prepared):
            let job = job(for: prepared, timeout: timeout, onProgress: onProgress)
            let plugin = prepared.skill.plugin
            let finish: @Sendable (SkillOutcome) -> Void = { outcome in
                plugin.users.subtract(1, ordering: .releasing)
                completion(outcome)
            }
            let handle = CallHandle { [runner] in runner.cancel(job) }
            onHandle(handle)
            if onCallingThread {
                runner.runOnCallingThread(job, completion: finish)
            } else {
                runner.start(job, completion: finish)
            }
            return handle
        }
    }

    /// The plugin's current state as a small JSON object for the agent (`skill_plugin.snapshot`, ABI 1.1): nil
    /// when the plugin has no snapshot (or is unknown), a sentence when its snapshot failed, was not an object or
    /// was over 8 KB. A plugin in a worker process answers within 5 s.
    ///
    /// - Important: runs plugin code on the calling thread; never call it from the Swift cooperative pool.
    public func snapshotOnCurrentThread(plugin name: String) -> Result<JSONValue, SnapshotError>? {
        guard let plugin = state.withLock({ $0.plugins[name]?.plugin }) else { return nil }
        switch plugin.image {
        case .native(_, _, let pluginState):
            guard let function = plugin.snapshot else { return nil }
            plugin.users.add(1, ordering: .acquiring)
            defer { plugin.users.subtract(1, ordering: .releasing) }
            guard let host = plugin.host else { return PluginSnapshot.take(function, state: pluginState, plugin: name) }
            return host.speaking { PluginSnapshot.take(function, state: pluginState, plugin: name) }
        case .isolated(let isolated):
            return isolated.snapshot()
        }
    }

    /// Invokes a skill synchronously on the calling thread, with no deadline: the cost of a call without the
    /// thread hand-off. For benchmarks and worker processes.
    ///
    /// - Important: runs plugin code on the calling thread; never call it from the Swift cooperative pool.
    public func invokeOnCurrentThread(_ id: String, arguments: String) -> SkillOutcome {
        invokeOnCurrentThread(id, arguments: arguments, cancellation: CallCancellation(), onProgress: nil)
    }

    /// - Parameter callerContext: the context the call's skill sees; nil: this registry's own (a worker passes
    ///   on the host's).
    func invokeOnCurrentThread(
        _ id: String, arguments: String, cancellation: CallCancellation,
        onProgress: (@Sendable (SkillProgress) -> Void)?, callerContext: String? = nil
    ) -> SkillOutcome {
        let start = ContinuousClock.now
        var outcome: SkillOutcome
        switch prepare(id, arguments, timeout: nil) {
        case .failure(let failed): outcome = failed.outcome
        case .success(let prepared):
            defer { prepared.skill.plugin.users.subtract(1, ordering: .releasing) }
            outcome = prepared.skill.execute(
                arguments: prepared.arguments, argumentText: prepared.text, resultLimit: configuration.resultLimit,
                context: CallContext(
                    skill: prepared.skill, onProgress: onProgress, log: configuration.log,
                    resultLimit: configuration.resultLimit, cancellation: cancellation, client: configuration.client,
                    callerContext: callerContext))
        }
        outcome.duration = .now - start
        return outcome
    }

    /// The runner's job for a prepared call: its context and its deadline (the caller's, else the skill's, else
    /// the host default).
    private func job(
        for prepared: Prepared, timeout: Duration?, onProgress: (@Sendable (SkillProgress) -> Void)?
    ) -> Job {
        let context = CallContext(
            skill: prepared.skill, onProgress: onProgress, log: configuration.log,
            resultLimit: configuration.resultLimit, client: configuration.client)
        return Job(
            skill: prepared.skill, arguments: prepared.arguments, argumentText: prepared.text, context: context,
            timeout: timeout ?? prepared.skill.info.timeout ?? configuration.defaultTimeout, spent: prepared.validated)
    }

    private struct Prepared {
        let skill: Skill
        let arguments: JSONValue
        /// The original text when validation changed nothing (saves re-serialising for JSON skills).
        let text: String?
        /// How long validation took: it counts against the call's deadline.
        let validated: Duration
    }

    private struct Rejected: Error {
        let outcome: SkillOutcome
    }

    /// Looks the skill up and validates the arguments. On success the skill's plugin counts one more user (taken
    /// under the same lock as the lookup, so a replaced plugin cannot gain users after the switch); the caller
    /// gives it back when the call is over.
    private func prepare(_ id: String, _ arguments: String, timeout: Duration?) -> Result<Prepared, Rejected> {
        let found = state.withLock { state -> Skill? in
            guard let skill = state.skills[id] else { return nil }
            skill.plugin.users.add(1, ordering: .acquiring)
            return skill
        }
        guard let skill = found else {
            return .failure(Rejected(outcome: .failure(.error, unknownSkillMessage(id))))
        }
        let result = validateArguments(
            skill, arguments, timeout: timeout ?? skill.info.timeout ?? configuration.defaultTimeout)
        if case .failure = result { skill.plugin.users.subtract(1, ordering: .releasing) }
        return result
    }

    /// Parses and validates the arguments under the call's deadline (the time it takes counts against it).
    private func validateArguments(_ skill: Skill, _ arguments: String, timeout: Duration) -> Result<
        Prepared, Rejected
    > {
        // Only a schema that can cost more than a walk over the value needs the deadline (and the clock reads);
        // the step budget bounds every validation.
        let started = skill.schema.mayBeCostly ? configuration.clock.now : nil
        let blank = arguments.utf8.allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
        let text = blank ? "{}" : arguments
        let parsed: JSONValue
        do {
            parsed = try JSONValue(parsing: text)
        } catch {
            return .failure(Rejected(outcome: .failure(.invalidArgs, "arguments are not valid JSON: \(error)")))
        }
        var options = ValidationOptions.lenient
        if let started {
            options.deadline = started + timeout
            options.now = now
        }
        switch skill.schema.check(parsed, options: options) {
        case .failure(let invalid) where invalid.stop == .deadline:
            return .failure(
                Rejected(
                    outcome: .failure(
                        .timeout,
                        "\(skill.info.id) timed out after \(humanDuration(timeout)) while its arguments were checked "
                            + "against its schema (the schema is too costly for them)")))
        case .failure(let invalid):
            return .failure(Rejected(outcome: .failure(.invalidArgs, invalid.issues.summary)))
        case .success(let replacement):
            return .success(
                Prepared(
                    skill: skill, arguments: replacement ?? parsed, text: replacement == nil ? text : nil,
                    validated: started.map { configuration.clock.now - $0 } ?? .zero))
        }
    }

    func unknownSkillMessage(_ id: String) -> String {
        let ids = state.withLock { Array($0.skills.keys) + Array($0.external.keys) }
        if let suggestion = EditDistance.closest(to: id, among: ids) {
            return "unknown skill \"\(id)\" (did you mean \"\(suggestion)\"?)"
        }
        return "unknown skill \"\(id)\"; run skillhost list to see the available skills"
    }
}

/// A loaded plugin, as plain values.
public struct PluginSummary: Sendable, Equatable {
    public let name: String
    public let version: String
    public let description: String
    public let file: String
    public let skillIDs: [String]
    /// True when the image contains Swift code and is never unmapped.
    public let keepsMapped: Bool
    public let imageSize: Int
    /// Where the plugin's code runs (external sources: in their own process).
    public let isolation: IsolationMode
    /// What its code may do beyond computing, and the extra folders it may read (ABI 1.1; empty for v1.0
    /// plugins, but network for one with an open-world skill).
    public let capabilities: PluginCapabilities
    public let readPaths: [String]

    init(
        name: String, version: String, description: String, file: String, skillIDs: [String],
        keepsMapped: Bool = false, imageSize: Int = 0, capabilities: PluginCapabilities = [],
        readPaths: [String] = []
    ) {
        self.capabilities = capabilities
        self.readPaths = readPaths
        self.name = name
        self.version = version
        self.description = description
        self.file = file
        self.skillIDs = skillIDs
        self.keepsMapped = keepsMapped
        self.imageSize = imageSize
        isolation = .process
    }

    init(_ plugin: LoadedPlugin, skills: [Skill]) {
        name = plugin.name
        version = plugin.version
        description = plugin.description
        file = plugin.file
        skillIDs = skills.map(\.info.id)
        keepsMapped = plugin.keepsMapped
        imageSize = plugin.imageSize
        isolation = plugin.isolation
        capabilities = plugin.capabilities
        readPaths = plugin.readPaths
    }
}

/// A call started with `SkillRegistry.start`.
public final class CallHandle: Sendable {
    private let action: @Sendable () -> Void

    init(_ action: @escaping @Sendable () -> Void) { self.action = action }

    /// Ends the call with `cancelled` (a no-op once it ended).
    public func cancel() { action() }
}

/// Why a registry cannot start.
public enum RegistryError: Error, CustomStringConvertible {
    case cannotCreateDirectory(String, String)

    public var description: String {
        switch self {
        case .cannotCreateDirectory(let path, let reason):
            return "cannot create a private directory in \(path): \(reason); set TMPDIR to a writable directory"
        }
    }
}
