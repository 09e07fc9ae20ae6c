import Foundation
import SkillJSON
import Synchronization

/// The host's registry of loaded plugins and their skills, and the one way to invoke a skill.
///
/// A facade over three parts: the `Catalog` (every registered skill, plugin or external, by id, and the change
/// broadcast), the `PluginLifecycle` (loading, replacing, unloading and retiring plugins) and the `Invoker` (one
/// path for every call: lookup, validation, the configured policy, the run under a deadline).
/// Loading is serialised; lookups and invocations are concurrent. The registry owns a private directory for
/// plugin copies and removes it in `shutdown()`.
///
/// ```swift
/// var configuration = SkillRegistry.Configuration(dataDirectory: dataURL)
/// configuration.policy = Policy(rules: [PolicyRule("notes_delete", .deny)])
/// let registry = try SkillRegistry(configuration: configuration)
/// _ = registry.loadFolder("/path/to/plugins")
/// let outcome = await registry.invoke(SkillInvocation(skill: "calculator", arguments: ["expression": "(23+7)*2"]))
/// if outcome.code == .unknownSkill { … }
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
        /// A file's first event is handled at once; further events within this period are a burst, handled once the
        /// file has been quiet for the whole period.
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
        /// The files given to `load` are private copies that nothing changes or removes while they are loaded (a
        /// worker's, made by its host): they are opened in place instead of copied again.
        package var filesArePrivate = false
        /// Time for call deadlines, kill graces, restart backoff and crash windows (tests inject a manual clock).
        public var clock: any HostClock = SystemClock()
        /// Who calls, as skills see it in their context (`skill_call_api.context`): "shell", "ask", "mcp", "call".
        public var client = "embedder"
        /// What may run without asking, what is asked, what never runs — applied to every call, whoever makes it.
        public var policy = Policy()
        /// Programs run before and after calls, for permission, and at turns (config.json's `"hooks"`).
        public var hooks = Hooks()
        /// Where skill definitions are pinned when first seen (`DefinitionPins`); nil: they are not.
        public var pinsFile: String?
        /// Skills turned off (config.json's `"disabled_skills"`): refused on every path, and so is a composite that
        /// calls one; listed to no model or MCP client.
        public var disabledSkills: Set<String> = []

        public init(dataDirectory: URL) { self.dataDirectory = dataDirectory }
    }

    /// The version this host reports to plugins.
    public static let hostVersion = "0.1.0"

    public let configuration: Configuration
    let loader: PluginLoader
    let runner: InvocationRunner
    let catalog = Catalog()
    let invoker: Invoker
    let lifecycle: PluginLifecycle
    let copyDirectory: URL

    /// Creates an empty registry and its private copy directory.
    /// - Throws: `RegistryError.cannotCreateDirectory` when the temporary directory is not writable.
    public init(configuration: Configuration) throws(RegistryError) {
        self.configuration = configuration
        copyDirectory = try TemporaryDirectories.create()
        loader = PluginLoader(
            copyDirectory: copyDirectory, hostVersion: Self.hostVersion,
            filesArePrivate: configuration.filesArePrivate, onPhase: configuration.onLoadPhase)
        runner = InvocationRunner(
            limits: .init(
                maximumThreads: configuration.maximumThreads, perPluginConcurrency: configuration.perPluginConcurrency,
                unhealthyAfterStuckCalls: configuration.unhealthyAfterStuckCalls),
            clock: configuration.clock)
        invoker = Invoker(catalog: catalog, runner: runner, configuration: configuration)
        lifecycle = PluginLifecycle(
            configuration: configuration, loader: loader, catalog: catalog, runner: runner,
            copyDirectory: copyDirectory)
    }

    // MARK: Queries

    /// Registered skills (plugin skills and external tools), sorted by id.
    public var skills: [SkillInfo] { catalog.infos.sorted { $0.id < $1.id } }

    /// Loaded plugins and external sources, sorted by name.
    public var plugins: [PluginSummary] { catalog.summaries.sorted { $0.name < $1.name } }

    /// Files whose current content failed to load, sorted by file.
    public var failures: [PluginLoadError] {
        lifecycle.state.withLock { $0.failures.values.map(\.error) }.sorted { $0.file < $1.file }
    }

    /// Retired plugin images that stay mapped: Swift code is never unmapped, nor is an image whose abandoned calls
    /// never returned.
    public var keptImages: (count: Int, bytes: Int) { lifecycle.state.withLock { ($0.keptImages, $0.keptBytes) } }

    /// Replaced or removed plugins whose calls are still draining.
    public var pendingRetirements: Int { lifecycle.state.withLock { $0.retiring } }

    /// Every change from now on: loads, replacements, unloads and load failures.
    public func changes() -> AsyncStream<RegistryChange> { catalog.broadcaster.subscribe() }

    /// Validates `arguments` for skill `id` exactly as a call will (lenient coercions, defaults filled in), so a
    /// front end can show the exact arguments before it calls. An unknown id is an issue at `$`.
    public func validate(_ id: String, arguments: JSONValue) -> Result<JSONValue, ValidationIssues> {
        guard let entry = catalog.entry(id) else {
            return .failure(
                ValidationIssues(issues: [
                    ValidationIssue(path: "$", message: unknownSkill(id).sentence(for: .embedder))
                ]))
        }
        return entry.schema?.check(arguments).map { $0 ?? arguments } ?? .success(arguments)
    }

    /// The decision every call of this registry takes before it runs.
    public var pipeline: CallPipeline { invoker.pipeline }

    /// The pinned definitions, when kept.
    public var pins: DefinitionPins? { invoker.pipeline.pins }

    /// Whether `skill` may be offered to a model or an MCP client: its definition is approved (unchanged since first
    /// seen, or trusted), and neither it nor a step of it (a composite's) is disabled here or in `disabled` (a
    /// session's).
    public func isOffered(_ skill: SkillInfo, disabled: Set<String> = []) -> Bool {
        pins?.change(skill) == nil && invoker.pipeline.disabled(skill, also: disabled) == nil
    }

    /// The skills of `skills` that may be offered (`isOffered`), their pins checked in one batch.
    public func offered(_ skills: [SkillInfo], disabled: Set<String> = []) -> [SkillInfo] {
        let changes = pins?.changes(skills) ?? []
        return skills.enumerated().filter { index, skill in
            (changes.isEmpty || changes[index] == nil) && invoker.pipeline.disabled(skill, also: disabled) == nil
        }.map(\.element)
    }

    /// The refusal for an id no skill has, with the nearest registered id as its suggestion.
    public func unknownSkill(_ id: String) -> Refusal { .unknown(id, among: catalog.ids) }

    /// The skill with this id.
    public func skill(_ id: String) -> SkillInfo? { catalog.entry(id)?.info }

    /// Counters of the invocation pool.
    public var poolStatistics: (liveThreads: Int, idleThreads: Int, abandonedThreads: Int, queued: Int) {
        let s = runner.statistics
        return (s.liveThreads, s.idleThreads, s.abandonedThreads, s.queued)
    }

    // MARK: Invocation

    /// Runs a call: looks the skill up, validates the arguments once, applies the policy (asking the invocation's
    /// confirmer when it says ask), then runs it under its deadline. Never throws; every failure is an outcome
    /// with a code and a sentence.
    ///
    /// - Returns: the outcome; cancelling the calling task ends the call with `.cancelled` promptly.
    public func invoke(_ invocation: SkillInvocation) async -> SkillOutcome { await invoker.invoke(invocation) }

    /// Everything before a call runs — lookup, validation once, the policy (asking the invocation's confirmer) —
    /// without running it. Run the result with `PreparedCall.run()`.
    public func prepare(_ invocation: SkillInvocation) async -> Result<PreparedCall, CallRefusal> {
        let start = ContinuousClock.now
        switch await invoker.permit(invocation) {
        case .failure(let refusal): return .failure(refusal)
        case .success(let prepared): return .success(PreparedCall(prepared, invocation, start: start, invoker: invoker))
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
        _ invocation: SkillInvocation, onCallingThread: Bool = false, onHandle: (CallHandle) -> Void = { _ in },
        completion: @escaping @Sendable (SkillOutcome) -> Void
    ) -> CallHandle {
        invoker.start(invocation, onCallingThread: onCallingThread, onHandle: onHandle, completion: completion)
    }

    /// The plugin's current state as a small JSON object for the agent (`skill_plugin.snapshot`, ABI 1.1): nil
    /// when the plugin has no snapshot (or is unknown), a sentence when its snapshot failed, was not an object or
    /// was over 8 KB. A plugin in a worker process answers within 5 s.
    ///
    /// - Important: runs plugin code on the calling thread; never call it from the Swift cooperative pool.
    public func snapshotOnCurrentThread(plugin name: String) -> Result<JSONValue, SnapshotError>? {
        stateOnCurrentThread(plugin: name).map { $0.map(\.value) }
    }

    /// `snapshotOnCurrentThread`, with the state's JSON text (unchanged bytes from a native plugin are neither
    /// parsed nor printed again).
    ///
    /// - Important: runs plugin code on the calling thread; never call it from the Swift cooperative pool.
    public func stateOnCurrentThread(plugin name: String) -> Result<PluginState, SnapshotError>? {
        guard let plugin = catalog.plugin(named: name) else {
            return catalog.sourceSnapshot(name).map { .success(PluginState(plugin: name, value: $0())) }
        }
        switch plugin.image {
        case .native(_, _, let pluginState):
            guard let function = plugin.snapshot else { return nil }
            plugin.users.add(1, ordering: .acquiring)
            defer { plugin.release() }
            return PluginSnapshot.take(function, state: pluginState, plugin: name, cache: plugin.snapshotCache)
        case .isolated(let isolated):
            return isolated.snapshot().map { $0.map { PluginState(plugin: name, value: $0) } }
        }
    }

    /// Runs a call synchronously on the calling thread, with no deadline: the cost of a call without the thread
    /// hand-off. For benchmarks and worker processes (whose host keeps the deadline); a call that needs a
    /// person's answer is refused.
    ///
    /// - Important: runs plugin code on the calling thread; never call it from the Swift cooperative pool.
    package func invokeOnCurrentThread(_ invocation: SkillInvocation) -> SkillOutcome {
        invoker.invokeOnCurrentThread(invocation)
    }
}

extension SkillRegistry {
    /// `invoke(SkillInvocation(skill: id, argumentText: arguments, …))`: a call from JSON text, confirmed by
    /// nobody (destructive calls and those a rule says to ask about are refused).
    public func invoke(
        _ id: String, arguments: String, timeout: Duration? = nil,
        onProgress: (@Sendable (SkillProgress) -> Void)? = nil
    ) async -> SkillOutcome {
        await invoke(SkillInvocation(skill: id, argumentText: arguments, timeout: timeout, onProgress: onProgress))
    }

    /// Whether `name` is a valid plugin name (`skill_plugin.name`): 1-48 characters of a-z, 0-9, `_` and `-`.
    public static func isValidPluginName(_ name: String) -> Bool { DescriptorValidator.isValidPluginName(name) }

    /// `invokeOnCurrentThread(SkillInvocation(skill: id, argumentText: arguments))`, for benchmarks.
    package func invokeOnCurrentThread(_ id: String, arguments: String) -> SkillOutcome {
        invokeOnCurrentThread(SkillInvocation(skill: id, argumentText: arguments))
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
    /// Where the skills come from: a plugin file and where its code runs, or an MCP server.
    public let origin: PluginOrigin
    /// What its code may do beyond computing, and the extra folders it may read (ABI 1.1; empty for v1.0
    /// plugins, but network for one with an open-world skill).
    public let capabilities: PluginCapabilities
    public let readPaths: [String]
    /// How the kernel confines its worker (process mode); nil in process and for MCP servers.
    public let confinement: ConfinementReport?
    /// How an MCP server's process is confined, when its configuration has a sandbox.
    public let sandbox: Sandbox?
    /// Whether the plugin describes its state (`skill_plugin.snapshot`, ABI 1.1).
    public let hasSnapshot: Bool

    init(
        name: String, version: String, description: String, file: String, skillIDs: [String],
        keepsMapped: Bool = false, imageSize: Int = 0, capabilities: PluginCapabilities = [],
        readPaths: [String] = [], confinement: ConfinementReport? = nil, sandbox: Sandbox? = nil,
        origin: PluginOrigin = .file(placement: .process), hasSnapshot: Bool = false
    ) {
        self.hasSnapshot = hasSnapshot
        self.confinement = confinement
        self.sandbox = sandbox
        self.origin = origin
        self.capabilities = capabilities
        self.readPaths = readPaths
        self.name = name
        self.version = version
        self.description = description
        self.file = file
        self.skillIDs = skillIDs
        self.keepsMapped = keepsMapped
        self.imageSize = imageSize
    }

    init(_ plugin: LoadedPlugin, skills: [Skill]) {
        name = plugin.name
        version = plugin.version
        description = plugin.description
        file = plugin.file
        skillIDs = skills.map(\.info.id)
        keepsMapped = plugin.keepsMapped
        imageSize = plugin.imageSize
        origin = .file(placement: plugin.isolation)
        capabilities = plugin.capabilities
        readPaths = plugin.readPaths
        confinement = plugin.confinement
        sandbox = nil
        hasSnapshot = plugin.hasSnapshot
    }
}

extension PluginSummary {
    /// Where the code runs and what it may do, for people: `process · confined: no network, no programs, reads
    /// system files + 1 folder, writes its data dir`, `in-process · not confined`, `own process (MCP server)`,
    /// `remote (MCP over HTTP)`.
    public var placementText: String {
        switch origin {
        case .mcp:
            // A server by URL runs elsewhere: nothing of it runs here.
            if file.contains("://") { return "remote (MCP over HTTP)" }
            guard let sandbox else { return "own process (MCP server) · not sandboxed" }
            return "own process (MCP server) · " + sandbox.summary
        case .file(.inProcess): return "in-process · not confined"
        case .composite: return "composite · runs its steps' skills"
        case .builtIn:
            // The skill folders' tools (source "skills") run scripts, confined; the browser's view skills only
            // change the window.
            return name == "skills"
                ? "built in · runs skill folders' scripts, confined (see SKILL FOLDER)"
                : "built in · changes only the front end's view"
        case .file(.process):
            guard let confinement else { return "process" }
            return "process · " + confinement.summary(declared: capabilities)
        }
    }

    /// Where the code runs: a plugin's placement; an MCP server's tools run in the server's process.
    public var isolation: IsolationMode {
        switch origin {
        case .file(let placement): return placement
        case .mcp: return .process
        case .composite, .builtIn: return .inProcess
        }
    }
}

/// Where a registry entry's skills come from.
public enum PluginOrigin: Sendable, Equatable {
    /// A plugin file, loaded in-process or in a worker process.
    case file(placement: IsolationMode)
    /// The tools of an MCP server, by its configured name.
    case mcp(server: String)
    /// A composite skill's file (`NAME.skill.json`): its steps run the skills they call, wherever those run.
    case composite
    /// Part of skillhost itself, registered by a front end (the browser's view skills, `ui_*`).
    case builtIn
}

/// A call started with `SkillRegistry.start`.
public final class CallHandle: Sendable {
    /// What cancelling does: a plugin call's job is named directly (no closure to allocate on every call).
    private enum Target: Sendable {
        case action(@Sendable () -> Void)
        case job(InvocationRunner, Job)
    }

    private let target: Target

    init(_ action: @escaping @Sendable () -> Void) { target = .action(action) }

    init(_ runner: InvocationRunner, _ job: Job) { target = .job(runner, job) }

    /// Ends the call with `cancelled` (a no-op once it ended).
    public func cancel() {
        switch target {
        case .action(let action): action()
        case .job(let runner, let job): runner.cancel(job)
        }
    }
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
