import Foundation
import SkillJSON
import Synchronization

/// A plugin in process mode: its worker process, restarted after a crash (with a growing wait when it keeps
/// crashing) and marked failing after `maximumCrashes` crashes within `crashWindow`.
///
/// Calls block the calling thread (a runner thread) until the worker answers, the worker dies, or — after the
/// call was cancelled or timed out — the worker is killed `killGrace` later.
final class IsolatedPlugin: Sendable {
    private struct State {
        var worker: WorkerProcess?
        var supervisor: WorkerSupervisor
        /// What the plugin declared, as the first worker of this copy learnt it: later workers of the same copy
        /// confine themselves with it without peeking (the copy is private to the host and never changes).
        var declared: PluginDeclaration?
        /// Whether the last worker started peeked to learn it.
        var lastStartPeeked = false
        /// The typed skills' signatures, by skill id, for the C worker (which calls them with the host's conversion).
        var signatures: [String: TypedSignature] = [:]
        /// What the C worker's plugin may do, to explain what its filter blocked (the Swift worker explains itself).
        var confinement: Confinement?
    }

    let file: String
    private let launch: WorkerLaunch
    private let settings: IsolationSettings
    private let log: @Sendable (LogRecord) -> Void
    private let clock: any HostClock
    private let state: Mutex<State>
    /// Held while a worker is being started, so concurrent callers start one, not several.
    private let starting = NSLock()

    private init(
        name: String, file: String, launch: WorkerLaunch, settings: IsolationSettings, clock: any HostClock,
        log: @escaping @Sendable (LogRecord) -> Void
    ) {
        self.file = file
        self.launch = launch
        self.settings = settings
        self.clock = clock
        self.log = log
        state = Mutex(
            State(
                supervisor: WorkerSupervisor(
                    plugin: name, maximumCrashes: settings.maximumCrashes, crashWindow: settings.crashWindow,
                    maximumBackoff: settings.maximumBackoff)))
    }

    /// Starts a worker for `launch.copy` and asks what it loaded. The worker keeps running (it becomes the plugin's
    /// worker, or is stopped by the caller when the plugin runs in-process). A worker that crashes or hangs while
    /// loading becomes a `PluginLoadError` naming what happened. `clock` times restarts, the crash window and the
    /// kill grace. Blocks.
    static func start(
        launch: WorkerLaunch, settings: IsolationSettings, clock: any HostClock,
        log: @escaping @Sendable (LogRecord) -> Void
    ) -> Result<(IsolatedPlugin, WorkerProtocol.Description), PluginLoadError> {
        let label = (launch.file as NSString).lastPathComponent
        let plugin = IsolatedPlugin(
            name: label, file: launch.file, launch: launch, settings: settings, clock: clock, log: log)
        switch plugin.spawnAndDescribe() {
        case .failure(let failure):
            // The worker loaded the host's private copy: its sentences name the user's file instead.
            let copyName = (launch.copy as NSString).lastPathComponent
            let message = failure.message.replacingOccurrences(of: launch.copy, with: label)
                .replacingOccurrences(of: copyName, with: label)
            return .failure(
                PluginLoadError(
                    file: launch.file,
                    problems: failure.isProtocolError
                        ? message.split(separator: "\n").map { .other(String($0)) } : [.other(message)]))
        case .success(let (worker, description)):
            worker.rename(description.name)
            plugin.state.withLock {
                $0.supervisor.plugin = description.name
                $0.worker = worker
                $0.supervisor.established(worker.pid)
            }
            return .success((plugin, description))
        }
    }

    /// The plugin's name (the file name until the first worker described it).
    var name: String { state.withLock { $0.supervisor.plugin } }

    /// Spawns a worker and waits for its description, at most `startTimeout`.
    private func spawnAndDescribe() -> Result<(WorkerProcess, WorkerProtocol.Description), WorkerProcess.WorkerFailure>
    {
        var launch = launch
        launch.declared = state.withLock { $0.declared }
        let native = settings.nativeWorker.map { _ in
            NativeConfinement(launch: launch) { [log, name] in
                log(LogRecord(level: .warning, source: name, message: $0))
            }
        }
        let spawned = WorkerProcess.spawn(
            executable: settings.nativeWorker ?? settings.executable, native: native, launch: launch, plugin: name,
            opening: native.map(NativeWorker.opening), log: log,
            onExit: { [weak self] exit in self?.workerExited(exit) })
        let worker: WorkerProcess
        switch spawned {
        case .failure(let failure): return .failure(failure)
        case .success(let value): worker = value
        }
        let described =
            native.map {
                NativeWorker.load(worker, for: self, confinement: $0, file: file, timeout: settings.startTimeout)
            }
            ?? worker.call(.describe(file: file), timeout: settings.startTimeout)
        // This thread read the start's answers itself; from now on the worker's reader thread does.
        worker.startReading()
        // The next start's worker, made now that this one has finished (never beside it).
        if let executable = settings.nativeWorker {
            WorkerSpares.shared.prepare(
                executable, filter: launch.confines ? launch.prepared?.filterHex : nil,
                lists: NativeConfinement.standbyLists(for: launch))
        }
        switch described {
        case .failure(var failure):
            worker.stop(grace: .milliseconds(500))
            if !failure.isProtocolError { failure = loadFailure(failure, worker: worker) }
            return .failure(failure)
        case .success(let description):
            worker.markRunning()
            state.withLock {
                // Kept only for the plugin as the host knows it: a declaration under another name would hand the
                // next worker another plugin's data folder.
                if let declared = description.declared, declared.name == description.name { $0.declared = declared }
                $0.lastStartPeeked = description.peeked
                if settings.nativeWorker != nil {
                    $0.confinement = description.confinement?.confinement
                    $0.signatures = Dictionary(
                        description.skills.compactMap { skill in
                            guard let text = skill.kind.signature, let parsed = try? TypedSignature.parse(text)
                            else { return nil }
                            return (skill.id, parsed)
                        }, uniquingKeysWith: { first, _ in first })
                }
            }
            return .success((worker, description))
        }
    }

    /// Rewords a worker that died or hung while loading (after it is gone): the constructor or `init` is to blame.
    private func loadFailure(_ failure: WorkerProcess.WorkerFailure, worker: WorkerProcess)
        -> WorkerProcess.WorkerFailure
    {
        if failure.timedOut {
            // Say what took long when the worker said how far it got.
            let what =
                worker.loadPhase.map { "it was still \($0.doing)" } ?? "a constructor or init hangs"
            return .init(
                message: "did not finish loading within \(humanDuration(settings.startTimeout)) (\(what)); it was "
                    + "stopped and not loaded")
        }
        guard let termination = worker.termination else { return failure }
        if termination.signal != nil {
            return .init(
                message:
                    "crashed while loading (\(termination.summary))\(termination.lastWordsClause); a constructor or "
                    + "init is broken, so it was not loaded")
        }
        return .init(
            message: "\(termination.summary) while loading; a constructor or init ends the process, so it was not "
                + "loaded")
    }

    /// The plugin's snapshot, asked of its worker (nil when it has none). Blocks for at most 5 s.
    func snapshot() -> Result<JSONValue, SnapshotError>? {
        switch liveWorker(cancellation: CallCancellation()) {
        case .failure(let refusal): return .failure(SnapshotError("\(name)'s snapshot: \(refusal.message)"))
        case .success(let worker):
            let answer =
                settings.nativeWorker == nil
                ? worker.call(.snapshot, timeout: .seconds(5), clock: clock)
                : worker.request("snapshot", nil, timeout: .seconds(5), clock: clock).flatMap { value in
                    NativeWorker.snapshot(value, plugin: name).map { .success($0) }
                        ?? .failure(.init(message: "its worker sent an unreadable answer to snapshot"))
                }
            switch answer {
            case .failure(let failure): return .failure(SnapshotError("\(name)'s snapshot: \(failure.message)"))
            case .success(let snapshot): return snapshot
            }
        }
    }

    /// Runs one call in the worker, starting (or restarting) it first when needed. Blocks.
    /// `argumentText`: the arguments' JSON text as the caller gave it (nil: printed from `arguments`).
    func call(skill: String, arguments: JSONValue, argumentText: String?, context: CallContext) -> SkillOutcome {
        let worker: WorkerProcess
        switch liveWorker(cancellation: context.cancellation) {
        case .failure(let refusal): return .failure(code: .failed, refusal.message)
        case .success(let value): worker = value
        }
        // A typed skill in the C worker gets its arguments converted here, as in process.
        var typed: (signature: TypedSignature, arguments: JSONValue)?
        if let signature = state.withLock({ $0.signatures[skill] }) {
            switch NativeWorker.typedArguments(signature, arguments) {
            case .failure(let error):
                return .failure(code: error.isArgumentError ? .invalidArguments : .failed, error.description)
            case .success(let converted): typed = (signature, converted)
            }
        }
        // The caller's context travels with the call, so a skill sees the same context in either mode.
        let callerContext = context.callerContext
        let reply = worker.request(
            "invoke",
            [
                "skill": .string(skill), typed == nil ? "arguments" : "typed": typed?.arguments ?? arguments,
                "context": .string(callerContext),
            ], cancellation: context.cancellation, killGrace: settings.killGrace, clock: clock,
            onProgress: context.onProgress, describeCall: { skill },
            laneForm: { id in
                LaneInvoke.encode(
                    .init(
                        id: id, skill: skill, context: callerContext,
                        arguments: typed?.arguments.jsonText ?? argumentText ?? arguments.jsonText,
                        typed: typed != nil))
            })
        switch reply {
        case .failure(let failure):
            return .failure(code: .failed, failure.message)
        case .success(let value):
            state.withLock { $0.supervisor.callSucceeded() }
            let decoded: SkillOutcome?
            if let typed {
                decoded = NativeWorker.typedOutcome(
                    value, returns: typed.signature.returnType, skill: skill, resultLimit: launch.resultLimit)
            } else if settings.nativeWorker == nil || value["raw"] == nil {
                decoded = WorkerProtocol.decodeOutcome(value)  // the lane's short form comes to this too
            } else {
                decoded = NativeWorker.outcome(
                    value, skill: skill, resultLimit: launch.resultLimit,
                    warn: { [log, name] in log(LogRecord(level: .warning, source: name, message: $0)) })
            }
            guard var outcome = decoded else {
                return .failure(code: .failed, "plugin \"\(name)\"'s worker sent an unreadable result for \(skill)")
            }
            if outcome.status == .error, let confinement = state.withLock({ $0.confinement }) {
                ConfinementMessages.explain(
                    &outcome, blocked: value["raw"]?["blocked"]?.stringValue, plugin: name, confinement: confinement)
            }
            outcome.duration = .zero
            return outcome
        }
    }

    /// The running worker, or a new one (after the backoff wait); a sentence when the plugin is failing or its
    /// worker cannot start.
    private func liveWorker(cancellation: CallCancellation) -> Result<WorkerProcess, WorkerProcess.WorkerFailure> {
        // A worker about to be killed for a call that did not stop takes no new call: wait until that resolved
        // (the call returned in time, or the worker is gone and a new one starts below), within this call's deadline.
        while let worker = state.withLock({ $0.worker }), worker.isRunning, worker.hasKillPending {
            if cancellation.isCancelled {
                return .failure(.init(message: "cancelled while plugin \"\(name)\" was restarting"))
            }
            usleep(1000)
        }
        if let worker = state.withLock({ $0.worker }), worker.isRunning { return .success(worker) }
        starting.lock()
        defer { starting.unlock() }
        let now = clock.now
        let (current, start) = state.withLock { ($0.worker, $0.supervisor.start(at: now)) }
        if let current, current.isRunning { return .success(current) }
        switch start {
        case .refused(let sentence): return .failure(.init(message: sentence))
        case .after(let wait):
            guard clock.wait(for: wait, unless: { cancellation.isCancelled }) else {
                return .failure(.init(message: "cancelled while plugin \"\(name)\" was restarting"))
            }
        case .now: break
        }
        switch spawnAndDescribe() {
        case .failure(let failure):
            let message = "plugin \"\(name)\" could not be restarted: \(failure.message)"
            let now = clock.now
            announce(failing: state.withLock { $0.supervisor.startFailed(message, at: now) })
            return .failure(.init(message: message))
        case .success(let (worker, _)):
            state.withLock {
                $0.worker = worker
                $0.supervisor.established(worker.pid)
            }
            log(
                LogRecord(
                    level: .info, source: "host", message: "plugin \"\(name)\": worker restarted (pid \(worker.pid))"))
            return .success(worker)
        }
    }

    /// A worker ended: the supervisor says whether it was a crash, what to log and whether the plugin is failing
    /// now.
    private func workerExited(_ exit: WorkerProcess.Exit) {
        let now = clock.now
        let (notice, failing) = state.withLock {
            $0.supervisor.exited(
                pid: exit.pid, reason: exit.reason, requested: exit.requested,
                killedForStuckCall: exit.killedForStuckCall, hadCalls: exit.hadCalls, at: now)
        }
        announce(failing: failing)
        if let notice { log(LogRecord(level: notice.level, source: "host", message: notice.message)) }
    }

    private func announce(failing: String?) {
        if let failing { log(LogRecord(level: .error, source: "host", message: failing)) }
    }

    /// Whether the last worker started learnt the plugin's declaration from a peek (else from the host).
    var lastStartPeeked: Bool { state.withLock { $0.lastStartPeeked } }

    /// The current worker's process id, if one runs.
    var workerPID: pid_t? { state.withLock { $0.worker?.pid } }

    /// Calls sent to the current worker and not answered yet.
    var callsInWorker: Int { state.withLock { $0.worker }?.pendingRequests ?? 0 }

    /// Whether calls are refused because the worker keeps crashing.
    var isFailing: Bool { state.withLock { $0.supervisor.failing != nil } }

    /// Stops the worker for good (the plugin was replaced or removed, or the host is shutting down). Blocks.
    func stop() {
        let worker = state.withLock { state -> WorkerProcess? in
            state.supervisor.stop()
            let worker = state.worker
            state.worker = nil
            return worker
        }
        worker?.stop()
        unlink(launch.copy)
    }
}
