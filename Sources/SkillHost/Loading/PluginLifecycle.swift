import Foundation
import SkillJSON
import Synchronization

/// Loading, replacing, unloading and retiring plugins. Every path runs under `loading`, so `init` and `deinit`
/// never overlap; lookups and calls go on concurrently (in the catalog) and see either the old or the new version,
/// never a mix.
///
/// Loading a file is a pipeline of stages, each returning a typed `PluginLoadError`:
/// read → fingerprint → describe → placement → conflicts → initialise (or keep the worker) → commit.
/// Where the plugin runs is decided once, from its description.
final class PluginLifecycle: Sendable {
    /// What loading remembers beside the catalog.
    struct State {
        /// File path → the failure and the fingerprint of the content that failed (nil when unreadable).
        var failures: [String: (error: PluginLoadError, hash: UInt64?)] = [:]
        /// Retired images that stay mapped (Swift code, or calls that never returned).
        var keptImages = 0
        var keptBytes = 0
        /// Replaced or removed plugins still draining.
        var retiring = 0
        var isShutDown = false
    }

    /// Where a plugin runs, decided once from its description.
    enum Placement: Equatable {
        /// `dlopen`ed into the host; a trusted file, described by opening it.
        case inProcess
        /// Described by a worker first (a crashing constructor kills the worker, not the host), then `dlopen`ed.
        case probeThenInProcess
        /// Runs in its worker process.
        case process
    }

    /// A plugin described, by a worker (probed files) or by opening its image (trusted files).
    enum Described {
        case worker(IsolatedPlugin, WorkerProtocol.Description)
        case image(PluginCandidate)

        var name: String {
            switch self {
            case .worker(_, let description): return description.name
            case .image(let candidate): return candidate.name
            }
        }
    }

    let configuration: SkillRegistry.Configuration
    let loader: PluginLoader
    let catalog: Catalog
    let runner: InvocationRunner
    let copyDirectory: URL
    /// Computed once, before any plugin is loaded here, for every worker this host starts.
    let workerPreparation: WorkerPreparation?
    let state = Mutex(State())
    /// Serialises loading, unloading and the `init`/`deinit` calls they make ([load-thread] in the ABI).
    let loading = Mutex(())

    init(
        configuration: SkillRegistry.Configuration, loader: PluginLoader, catalog: Catalog, runner: InvocationRunner,
        copyDirectory: URL
    ) {
        self.configuration = configuration
        self.loader = loader
        self.catalog = catalog
        self.runner = runner
        self.copyDirectory = copyDirectory
        workerPreparation = configuration.isolation != nil ? WorkerPreparation.make() : nil
    }

    // MARK: The pipeline

    /// Loads one plugin file and registers its skills, or records why not. Lock held.
    func loadLocked(_ file: String, started prestarted: StartedWorker?) -> Result<PluginSummary, PluginLoadError> {
        // read
        let bytes: [UInt8]
        switch PluginLoader.read(file, maximumSize: configuration.maximumPluginSize) {
        case .success(let b): bytes = b
        case .failure(let error): return fail(error, hash: nil)
        }
        // fingerprint: unchanged bytes are left alone; a worker started ahead for other bytes is not used.
        let hash = fingerprint(bytes)
        let current = catalog.plugin(file: file).flatMap { $0.fingerprint == hash ? $0.summary : nil }
        var ahead = prestarted?.result
        if let prestarted, prestarted.hash != hash || current != nil {
            if case .success(let (isolated, _)) = prestarted.result { isolated.stop() }
            ahead = nil
        }
        if let current { return .success(current) }
        // describe
        let described: Described
        switch describe(file, bytes: bytes, ahead: ahead) {
        case .success(let d): described = d
        case .failure(let error): return fail(error, hash: hash)
        }
        // placement, once
        let placement = placement(of: described, file: file)
        // conflicts
        let skillIDs: [String]
        switch described {
        case .worker(_, let description): skillIDs = description.skills.map(\.id)
        case .image(let candidate): skillIDs = candidate.skills.map(\.id)
        }
        let problems = catalog.conflicts(name: described.name, skillIDs: skillIDs, file: file)
        guard problems.isEmpty else {
            abandon(described)
            // Not tied to the content: the same file may load once the other plugin is gone.
            return fail(PluginLoadError(file: file, problems: problems), hash: nil)
        }
        // initialise, or keep the worker
        let loaded: (LoadedPlugin, [Skill])
        switch realize(described, placement: placement, file: file, bytes: bytes) {
        case .success(let l): loaded = l
        case .failure(let error): return fail(error, hash: hash)
        }
        // commit
        return .success(commit(loaded.0, loaded.1, file: file, hash: hash))
    }

    /// Untrusted files are described by a worker (a constructor or `init` that crashes or hangs kills the child,
    /// not the host); trusted ones by opening their image.
    private func describe(_ file: String, bytes: [UInt8], ahead: StartedWorker.Outcome?) -> Result<
        Described, PluginLoadError
    > {
        if let isolation = configuration.isolation, isolation.probe(file) {
            return (ahead ?? startWorker(file, bytes: bytes, isolation: isolation)).map { .worker($0.0, $0.1) }
        }
        return loader.open(file, bytes: bytes).map { .image($0) }
    }

    private func placement(of described: Described, file: String) -> Placement {
        let mode = configuration.isolation?.mode(described.name, file) ?? .inProcess
        switch (described, mode) {
        case (_, .process): return .process
        case (.worker, .inProcess): return .probeThenInProcess
        case (.image, .inProcess): return .inProcess
        }
    }

    /// Drops what describing made (the probe's worker, the opened image).
    private func abandon(_ described: Described) {
        switch described {
        case .worker(let isolated, _): isolated.stop()
        case .image(let candidate): loader.discard(candidate)
        }
    }

    /// Makes the described plugin a loaded one where `placement` says.
    private func realize(_ described: Described, placement: Placement, file: String, bytes: [UInt8]) -> Result<
        (LoadedPlugin, [Skill]), PluginLoadError
    > {
        switch (described, placement) {
        case (.worker(let isolated, let description), .process):
            return adopt(isolated, description, file: file, bytes: bytes.count)
        case (.image(let candidate), .process):
            // A trusted file configured to run in its own process: the image told its name; a worker runs it.
            loader.discard(candidate)
            guard let isolation = configuration.isolation else {
                preconditionFailure("process placement without isolation")
            }
            return startWorker(file, bytes: bytes, isolation: isolation).flatMap {
                adopt($0.0, $0.1, file: file, bytes: bytes.count)
            }
        case (.worker(let isolated, _), _):
            // The probe's `deinit` must be over before the same plugin is initialised here (both use its data).
            isolated.stop()
            return loader.open(file, bytes: bytes).flatMap(initialize)
        case (.image(let candidate), _):
            return initialize(candidate)
        }
    }

    private func initialize(_ candidate: PluginCandidate) -> Result<(LoadedPlugin, [Skill]), PluginLoadError> {
        let dataDirectory = configuration.dataDirectory.appendingPathComponent(candidate.name, isDirectory: true)
        return loader.initialize(candidate, dataDirectory: dataDirectory, log: configuration.log)
    }

    /// The switch, then the old version's retirement.
    private func commit(_ plugin: LoadedPlugin, _ skills: [Skill], file: String, hash: UInt64) -> PluginSummary {
        let new = Catalog.Plugin(plugin: plugin, skills: skills, fingerprint: hash)
        // Cleared first: whoever finds the new version answering finds the file's old failure gone.
        state.withLock { $0.failures[file] = nil }
        let old = catalog.commit(new, file: file)
        if let old { retire(old.plugin) }
        let mode = plugin.isolation == .process ? " (process mode)" : ""
        configuration.log(LogRecord(level: .info, source: "host", message: "loaded \(file)\(mode)"))
        return new.summary
    }

    /// Records a failure; publishes it only when this content has not failed before (or, for failures not tied
    /// to the content, when the error is new).
    func fail(_ error: PluginLoadError, hash: UInt64?) -> Result<PluginSummary, PluginLoadError> {
        let isNew = state.withLock { state -> Bool in
            let previous = state.failures[error.file]
            state.failures[error.file] = (error, hash)
            return previous == nil || previous?.hash != hash || hash == nil && previous?.error != error
        }
        if isNew {
            catalog.broadcaster.publish(.failed(error))
            configuration.log(LogRecord(level: .info, source: "host", message: error.description))
        }
        return .failure(error)
    }

    // MARK: Unloading

    /// Unregisters the plugin loaded from `file` and retires it in the background. Lock held.
    func unloadLocked(_ file: String) -> PluginSummary? {
        state.withLock { _ = $0.failures.removeValue(forKey: file) }
        guard let old = catalog.remove(file: file) else { return nil }
        retire(old.plugin)
        return old.summary
    }

    /// Waits (on a thread of its own) until no call runs in `plugin` and no caller holds it, cancelling what is
    /// left after `drainTimeout`, then calls `deinit` and closes the image — unless it contains Swift code or calls
    /// that never returned, in which case the image stays mapped and is counted in `keptImages`. The runner and
    /// every caller that gives the plugin back signal its drain; nothing polls.
    func retire(_ plugin: LoadedPlugin) {
        state.withLock { $0.retiring += 1 }
        let drain = configuration.drainTimeout
        let thread = Thread { [self] in
            let start = DispatchTime.now()
            let cancelAt = start + drain.dispatchInterval
            let giveUpAt = cancelAt + .seconds(60)
            plugin.drain.arm()
            var cancelled = false
            var stuckForever = false
            while runner.activeCalls(of: plugin) > 0 || runner.stuckCalls(of: plugin) > 0
                || plugin.users.load(ordering: .acquiring) > 0
            {
                if !cancelled, DispatchTime.now() >= cancelAt {
                    runner.cancelCalls(
                        of: plugin,
                        message: "was cancelled: plugin \"\(plugin.name)\" \(plugin.version) was replaced or removed")
                    cancelled = true
                    continue
                }
                if DispatchTime.now() >= giveUpAt {
                    stuckForever = true
                    break
                }
                plugin.drain.wait(until: cancelled ? giveUpAt : cancelAt)
            }
            loading.withLock { _ in
                let unmapped = !stuckForever && !state.withLock { $0.isShutDown }
                if unmapped { plugin.unload() }
                state.withLock { state in
                    if !unmapped || plugin.keepsMapped {
                        state.keptImages += 1
                        state.keptBytes += plugin.imageSize
                    }
                    state.retiring -= 1
                }
            }
            if stuckForever {
                configuration.log(
                    LogRecord(
                        level: .warning, source: "host",
                        message: "plugin \"\(plugin.name)\" \(plugin.version) still has calls that never returned; "
                            + "its image stays loaded"))
            }
        }
        thread.name = "skillhost.retire"
        thread.start()
    }

    /// Unloads every plugin (`deinit`, then `dlclose` where safe). Lock held.
    func shutdownLocked() {
        state.withLock { $0.isShutDown = true }
        // Workers are always stopped (their calls fail); native images only when nothing runs in them.
        for entry in catalog.removeAllPlugins()
        where entry.plugin.isolation == .process
            || runner.activeCalls(of: entry.plugin) == 0 && runner.stuckCalls(of: entry.plugin) == 0
                && entry.plugin.users.load(ordering: .acquiring) == 0
        {
            entry.plugin.unload()
        }
    }
}

/// Wakes a retirement waiting for a plugin's calls to end: the runner signals it when a call of the plugin
/// returns or leaves the queue, and callers when they give the plugin back. Costs one atomic load per signal
/// while nobody waits.
final class DrainSignal: Sendable {
    private let armed = Atomic<Bool>(false)
    private let semaphore = DispatchSemaphore(value: 0)

    /// Called by the retirement before it first checks the plugin, so no signal after that check is lost.
    func arm() { armed.store(true, ordering: .releasing) }

    func notify() {
        if armed.load(ordering: .acquiring) { semaphore.signal() }
    }

    /// Waits for a signal or the deadline. Extra signals only cost the waiter one more check.
    func wait(until deadline: DispatchTime) { _ = semaphore.wait(timeout: deadline) }
}
