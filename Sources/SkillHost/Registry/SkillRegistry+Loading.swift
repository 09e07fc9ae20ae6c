import Foundation
import SkillJSON
import Synchronization

/// Loading, replacing and unloading plugins: the facade over `PluginLifecycle`.
extension SkillRegistry {
    /// Loads every `*.so` in `folder` (sorted by name; hidden files skipped) that `include` accepts, then every
    /// composite skill's file (`*.skill.json`). Failures are returned and remembered in `failures`.
    /// Files that are probed start their workers in parallel first (a worker takes ~15 ms to start).
    @discardableResult
    public func loadFolder(_ folder: String, include: (String) -> Bool = { _ in true }) -> [PluginLoadError] {
        let files = Self.pluginFiles(in: folder, include: include)
        let libraries = files.filter { !Self.isCompositeFileName(($0 as NSString).lastPathComponent) }
        let started = lifecycle.startWorkersInParallel(libraries)
        var errors: [PluginLoadError] = []
        for file in libraries {
            let result = lifecycle.loading.withLock { _ in lifecycle.loadLocked(file, started: started[file]) }
            if case .failure(let error) = result { errors.append(error) }
        }
        for file in files where !libraries.contains(file) {
            if case .failure(let error) = load(file: file) { errors.append(error) }
        }
        return errors
    }

    /// Plugin files in `folder`: `*.so` and `*.skill.json`, not hidden, accepted by `include`, sorted by name.
    static func pluginFiles(in folder: String, include: (String) -> Bool) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return names.sorted().filter { isPluginFileName($0) && include($0) }.map { folder + "/" + $0 }
    }

    /// `*.so` or a composite skill's `*.skill.json`, and not a hidden or temporary name (`.x.so`, `x.so~`,
    /// `#x.so#`).
    static func isPluginFileName(_ name: String) -> Bool {
        (name.hasSuffix(".so") || isCompositeFileName(name)) && !name.hasPrefix(".") && !name.hasPrefix("#")
    }

    /// Loads one plugin file and registers its skills, or records why not. Other plugins are unaffected.
    ///
    /// When the file's plugin is already loaded, the new version is loaded and validated beside the old one and
    /// the registry switches atomically; calls already running finish on the old version, which is then drained,
    /// `deinit`ed and closed (or kept mapped). A file whose content did not change is left alone; a broken
    /// replacement leaves the old version registered and is reported once per distinct content.
    @discardableResult
    public func load(file: String) -> Result<PluginSummary, PluginLoadError> {
        lifecycle.loading.withLock { _ in
            Self.isCompositeFileName((file as NSString).lastPathComponent)
                ? loadCompositeLocked(file) : lifecycle.loadLocked(file, started: nil)
        }
    }

    /// Unregisters the plugin loaded from `file` (its skills disappear at once) and retires it in the background.
    /// Returns what was unloaded, or nil when nothing came from that file.
    @discardableResult
    public func unload(file: String) -> PluginSummary? {
        lifecycle.loading.withLock { _ in
            guard Self.isCompositeFileName((file as NSString).lastPathComponent) else {
                return lifecycle.unloadLocked(file)
            }
            lifecycle.state.withLock { _ = $0.failures.removeValue(forKey: file) }
            return catalog.removeComposite(file: file)
        }
    }

    /// Brings the registry in line with `folder`: loads new and changed files, unloads plugins whose file is gone.
    /// What hot reload does after an inotify queue overflow or when the folder itself was deleted or recreated.
    public func rescan(folder: String, include: (String) -> Bool = { _ in true }) {
        let present = Set(Self.pluginFiles(in: folder, include: include))
        let loadedHere = (catalog.files + catalog.compositeFiles + lifecycle.state.withLock { Array($0.failures.keys) })
            .filter {
                ($0 as NSString).deletingLastPathComponent == folder
            }
        for file in Set(loadedHere).subtracting(present) {
            unload(file: file)
        }
        for file in present.sorted() { load(file: file) }
    }

    /// Validates a plugin file without registering it: opens a private copy, runs `init` with a throw-away data
    /// directory, then `deinit`s and closes it. Returns the skills it would register, or every problem found.
    public func check(file: String) -> Result<(PluginSummary, [SkillInfo]), PluginLoadError> {
        lifecycle.loading.withLock { _ in
            // Untrusted files are checked in a worker, so a crashing constructor cannot take the checker down.
            if let isolation = configuration.isolation, isolation.probe(file) {
                return lifecycle.checkInWorker(file, isolation: isolation)
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
        waitForWatchingHooks()
        lifecycle.loading.withLock { _ in
            lifecycle.shutdownLocked()
            ProcessTree.killAdoptedOrphans()
            catalog.broadcaster.finish()
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
                // The file as it is now decides: a removal delivered after the file came back (a folder deleted
                // and recreated, whose rescan already loaded it) is stale, and a change to a file gone is its
                // removal.
                let exists = FileManager.default.fileExists(atPath: file)
                switch (event, exists) {
                case (.changed, true): self.load(file: file)
                case (.removed, true): return
                default: self.unload(file: file)
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
