import Foundation
import SkillJSON
import Synchronization

/// Loading, replacing and unloading plugins. Every path here runs under `loading`, so `init` and `deinit` never
/// overlap; lookups and calls go on concurrently and see either the old or the new version, never a mix.
extension SkillRegistry {
    /// Loads every `*.so` in `folder` (sorted by name; hidden files skipped) that `include` accepts.
    /// Failures are returned and remembered in `failures`.
    /// Files that are probed start their workers in parallel first (a worker takes ~15 ms to start).
    @discardableResult
    public func loadFolder(_ folder: String, include: (String) -> Bool = { _ in true }) -> [PluginLoadError] {
        let files = Self.pluginFiles(in: folder, include: include)
        let started = startWorkersInParallel(files)
        var errors: [PluginLoadError] = []
        for file in files {
            let result = loading.withLock { _ in loadLocked(file, started: started[file]) }
            if case .failure(let error) = result { errors.append(error) }
        }
        return errors
    }

    /// Plugin files in `folder`: `*.so`, not hidden, accepted by `include`, sorted by name.
    static func pluginFiles(in folder: String, include: (String) -> Bool) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return names.sorted().filter { isPluginFileName($0) && include($0) }.map { folder + "/" + $0 }
    }

    /// `*.so`, and not a hidden or temporary name (`.x.so`, `x.so~`, `#x.so#`).
    static func isPluginFileName(_ name: String) -> Bool {
        name.hasSuffix(".so") && !name.hasPrefix(".") && !name.hasPrefix("#")
    }

    /// Loads one plugin file and registers its skills, or records why not. Other plugins are unaffected.
    ///
    /// When the file's plugin is already loaded, the new version is loaded and validated beside the old one and
    /// the registry switches atomically; calls already running finish on the old version, which is then drained,
    /// `deinit`ed and closed (or kept mapped). A file whose content did not change is left alone; a broken
    /// replacement leaves the old version registered and is reported once per distinct content.
    @discardableResult
    public func load(file: String) -> Result<PluginSummary, PluginLoadError> {
        loading.withLock { _ in loadLocked(file, started: nil) }
    }

    private func loadLocked(_ file: String, started prestarted: StartedWorker?) -> Result<
        PluginSummary, PluginLoadError
    > {
        let bytes: [UInt8]
        switch PluginLoader.read(file, maximumSize: configuration.maximumPluginSize) {
        case .success(let b): bytes = b
        case .failure(let error): return fail(error, hash: nil)
        }
        let hash = fnv1a(bytes)
        let unchanged = state.withLock { state -> PluginSummary? in
            guard let name = state.owners[file], let entry = state.plugins[name], entry.contentHash == hash else {
                return nil
            }
            return PluginSummary(entry.plugin, skills: entry.skills)
        }
        // A worker started ahead for other bytes (the file changed since) is not used.
        var ahead = prestarted?.result
        if let prestarted, prestarted.hash != hash || unchanged != nil {
            if case .success(let (isolated, _)) = prestarted.result { stopProbe(isolated) }
            ahead = nil
        }
        if let unchanged { return .success(unchanged) }

        // Untrusted files load in a child process first: a constructor or `init` that crashes or hangs kills the
        // child, not the host. In process mode that child stays on as the plugin's worker.
        if let isolation = configuration.isolation, isolation.probe(file) {
            let started: (IsolatedPlugin, WorkerProtocol.Description)
            switch ahead ?? startWorker(file, bytes: bytes, isolation: isolation) {
            case .failure(let error): return fail(error, hash: hash)
            case .success(let value): started = value
            }
            if isolation.mode(started.1.name, file) == .process {
                return registerIsolated(started.0, started.1, file: file, hash: hash, bytes: bytes.count)
            }
            stopProbe(started.0)
        }

        let candidate: PluginCandidate
        switch loader.open(file, bytes: bytes) {
        case .success(let c): candidate = c
        case .failure(let error): return fail(error, hash: hash)
        }
        if let isolation = configuration.isolation, isolation.mode(candidate.name, file) == .process {
            loader.discard(candidate)
            switch startWorker(file, bytes: bytes, isolation: isolation) {
            case .failure(let error): return fail(error, hash: hash)
            case .success(let (isolated, description)):
                return registerIsolated(isolated, description, file: file, hash: hash, bytes: bytes.count)
            }
        }
        let conflicts = conflicts(name: candidate.name, skillIDs: candidate.skills.map(\.id), file: file)
        guard conflicts.isEmpty else {
            loader.discard(candidate)
            // Not tied to the content: the same file may load once the other plugin is gone.
            return fail(PluginLoadError(file: file, problems: conflicts), hash: nil)
        }
        let dataDirectory = configuration.dataDirectory.appendingPathComponent(candidate.name, isDirectory: true)
        switch loader.initialize(candidate, dataDirectory: dataDirectory, log: configuration.log) {
        case .failure(let error): return fail(error, hash: hash)
        case .success(let (plugin, skills)): return register(plugin, skills, file: file, hash: hash)
        }
    }

    /// Problems that stop a plugin named `name` with these skills from being registered for `file`.
    func conflicts(name: String, skillIDs: [String], file: String) -> [PluginProblem] {
        state.withLock { state -> [PluginProblem] in
            let replacing = state.owners[file]
            var problems: [PluginProblem] = []
            if let other = state.plugins[name], name != replacing {
                problems.append(.duplicatePluginName(name, otherFile: other.plugin.file))
            }
            for id in skillIDs {
                if let owner = state.skills[id], owner.info.plugin != replacing {
                    problems.append(.skillIDTaken(id, plugin: owner.info.plugin))
                }
            }
            return problems
        }
    }

    /// The switch: one critical section replaces the old entry's skills with the new ones; then the old version
    /// is retired.
    func register(_ plugin: LoadedPlugin, _ skills: [Skill], file: String, hash: UInt64) -> Result<
        PluginSummary, PluginLoadError
    > {
        let entry = Entry(plugin: plugin, skills: skills, contentHash: hash)
        let old = state.withLock { state -> Entry? in
            let old = state.owners[file].flatMap { state.plugins.removeValue(forKey: $0) }
            for skill in old?.skills ?? [] { state.skills[skill.info.id] = nil }
            state.plugins[plugin.name] = entry
            state.owners[file] = plugin.name
            for skill in skills { state.skills[skill.info.id] = skill }
            state.failures[file] = nil
            return old
        }
        let summary = PluginSummary(plugin, skills: skills)
        if let old {
            let oldIDs = Set(old.skills.map(\.info.id))
            let newIDs = Set(skills.map(\.info.id))
            broadcaster.publish(
                .replaced(
                    old: PluginSummary(old.plugin, skills: old.skills), new: summary,
                    added: newIDs.subtracting(oldIDs).sorted(), removed: oldIDs.subtracting(newIDs).sorted(),
                    updated: oldIDs.intersection(newIDs).sorted()))
            retire(old)
        } else {
            broadcaster.publish(.loaded(summary))
        }
        let mode = plugin.isolation == .process ? " (process mode)" : ""
        configuration.log(LogRecord(level: .info, source: "host", message: "loaded \(file)\(mode)"))
        return .success(summary)
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
            broadcaster.publish(.failed(error))
            configuration.log(LogRecord(level: .info, source: "host", message: error.description))
        }
        return .failure(error)
    }

    /// Unregisters the plugin loaded from `file` (its skills disappear at once) and retires it in the background.
    /// Returns what was unloaded, or nil when nothing came from that file.
    @discardableResult
    public func unload(file: String) -> PluginSummary? {
        loading.withLock { _ in
            let old = state.withLock { state -> Entry? in
                state.failures[file] = nil
                guard let name = state.owners.removeValue(forKey: file),
                    let entry = state.plugins.removeValue(forKey: name)
                else { return nil }
                for skill in entry.skills { state.skills[skill.info.id] = nil }
                return entry
            }
            guard let old else { return nil }
            let summary = PluginSummary(old.plugin, skills: old.skills)
            broadcaster.publish(.unloaded(summary))
            retire(old)
            return summary
        }
    }

    /// Brings the registry in line with `folder`: loads new and changed files, unloads plugins whose file is gone.
    /// What hot reload does after an inotify queue overflow or when the folder itself was deleted or recreated.
    public func rescan(folder: String, include: (String) -> Bool = { _ in true }) {
        let present = Set(Self.pluginFiles(in: folder, include: include))
        let loadedHere = state.withLock { state in
            Array(state.owners.keys) + Array(state.failures.keys)
        }.filter { ($0 as NSString).deletingLastPathComponent == folder }
        for file in Set(loadedHere).subtracting(present) {
            unload(file: file)
        }
        for file in present.sorted() { load(file: file) }
    }

    /// Waits (on a thread of its own) until no call runs in `entry`'s plugin, cancelling what is left after
    /// `drainTimeout`, then calls `deinit` and closes the image — unless it contains Swift code or calls that never
    /// returned, in which case the image stays mapped and is counted in `keptImages`.
    func retire(_ entry: Entry) {
        state.withLock { $0.retiring += 1 }
        let plugin = entry.plugin
        let drain = configuration.drainTimeout
        let thread = Thread { [self] in
            let start = ContinuousClock.now
            var cancelled = false
            var stuckForever = false
            while runner.activeCalls(of: plugin) > 0 || runner.stuckCalls(of: plugin) > 0
                || plugin.users.load(ordering: .acquiring) > 0
            {
                let waited = ContinuousClock.now - start
                if !cancelled, waited >= drain {
                    runner.cancelCalls(
                        of: plugin,
                        message: "was cancelled: plugin \"\(plugin.name)\" \(plugin.version) was replaced or removed")
                    cancelled = true
                }
                if waited >= drain + .seconds(60) {
                    stuckForever = true
                    break
                }
                usleep(2000)
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

    /// Validates a plugin file without registering it: opens a private copy, runs `init` with a throw-away data
    /// directory, then `deinit`s and closes it. Returns the skills it would register, or every problem found.
    public func check(file: String) -> Result<(PluginSummary, [SkillInfo]), PluginLoadError> {
        loading.withLock { _ in
            // Untrusted files are checked in a worker, so a crashing constructor cannot take the checker down.
            if let isolation = configuration.isolation, isolation.probe(file) {
                return checkInWorker(file, isolation: isolation)
            }
            let candidate: PluginCandidate
            switch PluginLoader.read(file, maximumSize: configuration.maximumPluginSize).flatMap({
                loader.open(file, bytes: $0)
            }) {
            case .success(let c): candidate = c
            case .failure(let error): return .failure(error)
            }
            let scratch = copyDirectory.appendingPathComponent("check-data-\(candidate.name)", isDirectory: true)
            defer { try? FileManager.default.removeItem(at: scratch) }
            switch loader.initialize(candidate, dataDirectory: scratch) {
            case .failure(let error): return .failure(error)
            case .success(let (plugin, skills)):
                plugin.unload()
                return .success((PluginSummary(plugin, skills: skills), skills.map(\.info)))
            }
        }
    }

    /// Unloads every plugin (`deinit`, then `dlclose` where safe), ends the change streams and removes the private
    /// directory. Calls still running are abandoned; call this at exit.
    public func shutdown() {
        loading.withLock { _ in
            let entries = state.withLock { state -> [Entry] in
                let entries = Array(state.plugins.values)
                state.plugins = [:]
                state.owners = [:]
                state.skills = [:]
                state.isShutDown = true
                return entries
            }
            // Workers are always stopped (their calls fail); native images only when nothing runs in them.
            for entry in entries
            where entry.plugin.isolation == .process
                || runner.activeCalls(of: entry.plugin) == 0 && runner.stuckCalls(of: entry.plugin) == 0
                    && entry.plugin.users.load(ordering: .acquiring) == 0
            {
                entry.plugin.unload()
            }
            ProcessTree.killAdoptedOrphans()
            broadcaster.finish()
            TemporaryDirectories.remove(copyDirectory)
        }
    }

    /// Starts hot reload: watches each folder and loads, replaces and unloads plugins as files appear, change and
    /// go away. Stop it with `PluginWatch.stop()`.
    ///
    /// - Parameter folders: each folder with the file names it accepts (the bundled folder holds other libraries).
    public func watch(_ folders: [(path: String, include: @Sendable (String) -> Bool)]) -> PluginWatch {
        let filters = Dictionary(folders.map { ($0.path, $0.include) }, uniquingKeysWith: { first, _ in first })
        let watcher = FolderWatcher(
            folders: folders.map(\.path), debounce: configuration.reloadDebounce, clock: configuration.clock
        ) {
            [weak self] event in
            guard let self else { return }
            switch event {
            case .changed(let file), .removed(let file):
                let folder = (file as NSString).deletingLastPathComponent
                let name = (file as NSString).lastPathComponent
                guard Self.isPluginFileName(name), filters[folder]?(name) ?? false else { return }
                if case .changed = event, FileManager.default.fileExists(atPath: file) {
                    self.load(file: file)
                } else {
                    self.unload(file: file)
                }
            case .rescan(let folder):
                self.rescan(folder: folder, include: filters[folder] ?? { _ in false })
            }
        }
        return PluginWatch(watcher: watcher)
    }
}

/// A running hot-reload watch. Stopping it (or dropping the registry) ends it.
public final class PluginWatch: Sendable {
    private let watcher: FolderWatcher

    init(watcher: FolderWatcher) { self.watcher = watcher }

    /// Stops watching; waits for an event being handled to finish.
    public func stop() { watcher.stop() }

    deinit { watcher.stop() }
}
