import Foundation
import SkillJSON
import Synchronization

/// Loading through worker processes: probes of untrusted files, plugins in process mode, and `check` of files that
/// may crash. Called from the pipeline in PluginLifecycle.swift, under `loading`.
extension PluginLifecycle {
    /// A worker started ahead of loading, for the bytes it was started with.
    struct StartedWorker: Sendable {
        typealias Outcome = Result<(IsolatedPlugin, WorkerProtocol.Description), PluginLoadError>
        let hash: UInt64
        let result: Outcome
    }

    func startWorkersInParallel(_ files: [String]) -> [String: StartedWorker] {
        guard let isolation = configuration.isolation else { return [:] }
        let probed = files.filter { isolation.probe($0) }
        guard probed.count > 1 else { return [:] }
        let results = Mutex<[String: StartedWorker]>([:])
        DispatchQueue.concurrentPerform(iterations: probed.count) { index in
            let file = probed[index]
            guard case .success(let bytes) = PluginLoader.read(file, maximumSize: configuration.maximumPluginSize)
            else { return }
            let started = StartedWorker(
                hash: fingerprint(bytes), result: startWorker(file, bytes: bytes, isolation: isolation))
            results.withLock { $0[file] = started }
        }
        return results.withLock { $0 }
    }

    /// Starts a worker process for a private copy of `bytes` and waits until it loaded the plugin.
    func startWorker(_ file: String, bytes: [UInt8], isolation: IsolationSettings) -> Result<
        (IsolatedPlugin, WorkerProtocol.Description), PluginLoadError
    > {
        let copy: String
        let swift: Bool
        switch loader.writeCopy(file, bytes: bytes) {
        case .failure(let error): return .failure(error)
        case .success(let (summary, path)): (copy, swift) = (path, summary.containsSwift)
        }
        var launch = self.launch(file, copy: copy, dataDirectory: configuration.dataDirectory.path, isolation)
        if swift { launch.preload = WorkerLaunch.swiftRuntime }
        let started = IsolatedPlugin.start(
            launch: launch, settings: isolation, clock: configuration.clock, log: configuration.log)
        if case .failure = started { unlink(copy) }
        return started
    }

    /// The command line of a worker for `copy` of `file`.
    private func launch(_ file: String, copy: String, dataDirectory: String, _ isolation: IsolationSettings)
        -> WorkerLaunch
    {
        var launch = WorkerLaunch(
            file: file, copy: copy, dataDirectory: dataDirectory, limits: isolation.limits,
            resultLimit: configuration.resultLimit, rules: isolation.rules)
        launch.maximumLandlockABI = isolation.maximumLandlockABI
        launch.confines = isolation.confines
        launch.prepared = workerPreparation
        launch.takenNames = catalog.takenNames(besides: file)
        return launch
    }

    /// A loaded plugin for a worker process that loaded it, with its skills' schemas compiled here.
    func adopt(_ isolated: IsolatedPlugin, _ description: WorkerProtocol.Description, file: String, bytes: Int)
        -> Result<(LoadedPlugin, [Skill]), PluginLoadError>
    {
        // Either worker: what it was confined by (its peek's declaration) is what the plugin declares.
        if let declared = description.declared,
            let reason = declared.mismatch(
                name: description.name, capabilities: description.capabilities, readPaths: description.readPaths)
        {
            isolated.stop()
            return .failure(PluginLoadError(file: file, problems: [.other(reason)]))
        }
        let plugin = LoadedPlugin(
            name: description.name, version: description.version, description: description.description, file: file,
            image: .isolated(isolated), keepsMapped: false, imageSize: bytes, host: nil,
            capabilities: description.capabilities, readPaths: description.readPaths,
            confinement: description.confinement, hasSnapshot: description.hasSnapshot)
        var skills: [Skill] = []
        for (index, info) in description.skills.enumerated() {
            // Compiled once: while validating (the C worker's records), else here.
            let compiled = description.compiled.flatMap { $0.indices.contains(index) ? $0[index] : nil }
            guard let schema = compiled?.input ?? (try? JSONSchema(info.inputSchema)) else {
                isolated.stop()
                return .failure(
                    PluginLoadError(
                        file: file,
                        problems: [.skill(index: skills.count, id: info.id, reason: "its schema cannot be compiled")]))
            }
            // A JSON skill's result may reach the host undecoded (`Skill.executeForLane`): its output schema is
            // checked here (the worker compiled it, so it compiles).
            var output: JSONSchema?
            if case .json = info.kind, let document = info.outputSchema {
                output = compiled.map(\.output) ?? (try? JSONSchema(document))
            }
            skills.append(
                Skill(info: info, schema: schema, implementation: .remote(isolated), plugin: plugin, output: output))
        }
        return .success((plugin, skills))
    }

    func checkInWorker(_ file: String, isolation: IsolationSettings) -> Result<
        (PluginSummary, [SkillInfo]), PluginLoadError
    > {
        let bytes: [UInt8]
        switch PluginLoader.read(file, maximumSize: configuration.maximumPluginSize) {
        case .success(let b): bytes = b
        case .failure(let error): return .failure(error)
        }
        let copy: String
        let swift: Bool
        switch loader.writeCopy(file, bytes: bytes) {
        case .failure(let error): return .failure(error)
        case .success(let (summary, path)): (copy, swift) = (path, summary.containsSwift)
        }
        let scratch = copyDirectory.appendingPathComponent("check-data", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        var launch = self.launch(file, copy: copy, dataDirectory: scratch.path, isolation)
        if swift { launch.preload = WorkerLaunch.swiftRuntime }
        switch IsolatedPlugin.start(
            launch: launch, settings: isolation, clock: configuration.clock, log: configuration.log)
        {
        case .failure(let error):
            unlink(copy)
            return .failure(error)
        case .success(let (isolated, description)):
            isolated.stop()
            let summary = PluginSummary(
                name: description.name, version: description.version, description: description.description,
                file: file, skillIDs: description.skills.map(\.id), keepsMapped: description.keepsMapped,
                imageSize: bytes.count, capabilities: description.capabilities, readPaths: description.readPaths,
                confinement: description.confinement,
                origin: .file(placement: isolation.mode(description.name, file)))
            return .success((summary, description.skills))
        }
    }
}
