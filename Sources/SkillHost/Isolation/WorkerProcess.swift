import CProcess
import Dispatch
import Foundation
import JSONRPC
import SkillJSON
import Support
import Synchronization

/// One running worker process, seen from the host: requests out, responses and notifications in (on a reader
/// thread of its own, or on the calling thread for a call on the direct lane, `WorkerLane`), standard error into the
/// log (on the host's one reader of workers' standard error, `ErrorStreams`), and the exit noticed and explained.
final class WorkerProcess: Sendable {
    /// A request waiting for its response. A call on the lane reads its own response, so it never needs the
    /// semaphore a caller on the main channel sleeps on: that is made only when asked for (`waiter`).
    final class Pending: Sendable {
        private struct Box {
            var reply: Result<JSONValue, WorkerFailure>?
            var waiter: DispatchSemaphore?
        }
        private let box = Mutex(Box())
        let onProgress: (@Sendable (SkillProgress) -> Void)?

        init(onProgress: (@Sendable (SkillProgress) -> Void)?) { self.onProgress = onProgress }

        func settle(_ result: Result<JSONValue, WorkerFailure>) {
            let (first, waiter) = box.withLock { box -> (Bool, DispatchSemaphore?) in
                guard box.reply == nil else { return (false, nil) }
                box.reply = result
                return (true, box.waiter)
            }
            if first { waiter?.signal() }
        }

        /// Signalled once the request is settled (at once when it already is).
        func waiter() -> DispatchSemaphore {
            box.withLock { box in
                if let waiter = box.waiter { return waiter }
                // Made at 0 and signalled when already settled: libdispatch traps when a semaphore is freed below
                // the value it was made with (one made at 1 and waited on crashed the host when it was freed).
                let waiter = DispatchSemaphore(value: 0)
                if box.reply != nil { waiter.signal() }
                box.waiter = waiter
                return waiter
            }
        }

        var reply: Result<JSONValue, WorkerFailure>? { box.withLock { $0.reply } }

        var isSettled: Bool { box.withLock { $0.reply != nil } }
    }

    /// Why a request got no response.
    struct WorkerFailure: Error, Equatable {
        /// A sentence, without the skill id.
        let message: String
        /// The worker answered with a JSON-RPC error (it is alive).
        var isProtocolError = false
        /// The request's own timeout passed (the worker was killed for it).
        var timedOut = false
    }

    struct State {
        var pending = PendingRequests<Pending>()
        var lifecycle = WorkerLifecycle()
        /// The step of loading the worker reported last.
        var loadPhase: LoadPhase?
        /// The last lines of standard error, for crash messages.
        var recentErrors: [String] = []
    }

    let pid: pid_t
    let label: Mutex<String>
    /// The plugin's name, for messages.
    var plugin: String { label.withLock { $0 } }
    let writer: LineWriter
    /// One call at a time goes here instead, when it is free.
    let lane: WorkerLane
    let state = Mutex(State())
    let log: @Sendable (LogRecord) -> Void
    /// A plugin that spins on its log (or standard error) is cut back, with a line saying how much was dropped.
    let throttle = Mutex(LogThrottle())
    /// The address-space limit the worker runs under, for naming it when the worker dies of it.
    private let memoryLimit: UInt64?
    /// Its CPU-time limit in seconds, likewise.
    private let cpuLimit: UInt64?
    /// The longest line the worker reads: a request over it is refused here, with a sentence.
    let requestLimit: Int
    /// Called once when the process is gone.
    private let onExit: @Sendable (Exit) -> Void

    /// How a worker process ended.
    struct Exit: Sendable {
        let pid: pid_t
        /// A sentence.
        let reason: String
        /// The host asked it to stop.
        let requested: Bool
        /// The host killed it because a cancelled or timed-out call did not stop in time (not a crash).
        let killedForStuckCall: Bool
        /// Calls were waiting for it (their callers got `reason`).
        let hadCalls: Bool
    }
    /// The worker's answers and how its end is noticed, until the reader thread takes them (`startReading`): while
    /// a start is under way, the thread that waits for an answer reads them itself (`readDirectly`) — one wake-up
    /// less an answer, and no thread made before the plugin is up. Held while one reads.
    private let unread: Mutex<LineReader?>
    private let responses: (descriptor: Int32, exitNotice: Int32)
    private let readerStarted = Atomic<Bool>(false)
    private let exited = DispatchSemaphore(value: 0)
    /// Signalled when the worker's standard error reached its end (every line of it read), so its last words are in
    /// before its end is explained.
    private let errorsEnded = DispatchSemaphore(value: 0)

    /// The request a worker is launched with (`spawn(opening:)`): written behind a spare's launch, the worker starts
    /// on it without waiting for the host's side of the channel to be set up. Its answer: `answerToOpening`.
    struct Opening: Sendable {
        /// The first id of a new worker's table, which it is registered under.
        static let id = JSONRPCID(1)
        let pending = Pending(onProgress: nil)
        /// Made before the request is sent, as for every request: a semaphore made once the answer is in would start
        /// at 1, and Dispatch refuses to free one left below its start.
        let done: DispatchSemaphore
        let line: String
        init(method: String) {
            done = pending.waiter()
            line = JSONRPCMessage.request(id: Self.id, method: method, params: nil).line
        }
    }
    let opening: Opening?

    private init(
        pid: pid_t, plugin: String, input: Int32, lane: WorkerLane, memoryLimit: UInt64?, cpuLimit: UInt64?,
        requestLimit: Int, log: @escaping @Sendable (LogRecord) -> Void, onExit: @escaping @Sendable (Exit) -> Void,
        opening: Opening?, responses: Int32, exitNotice: Int32, responseLimit: Int
    ) {
        self.opening = opening
        self.responses = (responses, exitNotice)
        unread = Mutex(LineReader(descriptor: responses, limit: responseLimit, interrupt: exitNotice))
        self.pid = pid
        self.lane = lane
        self.memoryLimit = memoryLimit
        self.cpuLimit = cpuLimit
        self.requestLimit = requestLimit
        self.label = Mutex(plugin)
        self.writer = LineWriter(descriptor: input)
        self.log = log
        self.onExit = onExit
        if let opening {
            let id = state.withLock { $0.pending.add(opening.pending) }
            assert(id == Opening.id, "the opening request is the first of a new table")
        }
    }

    /// Starts `skillhost worker …`, or with `native` the C worker `executable …` confined as it says. Returns a
    /// sentence when the process cannot be started. `opening`: a method (without parameters) sent at once — with the
    /// launch when a spare takes it —, whose answer `answerToOpening` reads.
    static func spawn(
        executable: String, native: NativeConfinement? = nil, launch: WorkerLaunch, plugin: String,
        opening openingMethod: String? = nil, log: @escaping @Sendable (LogRecord) -> Void,
        onExit: @escaping @Sendable (Exit) -> Void
    ) -> Result<WorkerProcess, WorkerFailure> {
        // The worker's private directory goes inside the host's, so a worker that is killed leaves nothing behind
        // once the host shuts down.
        let temporaryDirectory = (launch.copy as NSString).deletingLastPathComponent
        // The C worker's own private folder inside it (NativeConfinement made it), else that folder.
        let workerTemporary = native?.temporary ?? temporaryDirectory
        // The first request, registered under the first id of the new worker's table.
        let opening = openingMethod.map { Opening(method: $0) }
        var openingSent = false
        let process: StartedProcess
        if native == nil,
            let forked = WorkerTemplates.shared.start(
                executable, launch: launch, temporaryDirectory: temporaryDirectory, log: log)
        {
            process = forked
        } else if let native,
            let spare = WorkerSpares.shared.take(
                executable,
                arguments: launch.commonArguments + native.arguments + ["--tmpdir", workerTemporary],
                then: opening?.line)
        {
            process = spare
            openingSent = true
        } else {
            // The Swift runtime's crash backtracer would fill the log with the worker's frames for every plugin
            // crash. Only what a program needs, never the host's secrets.
            var environment = WorkerTemplates.environment
            environment["TMPDIR"] = workerTemporary
            let command =
                native.map { [executable] + launch.commonArguments + $0.arguments } ?? [executable, "worker"]
                + launch.arguments
            switch StartedProcess.spawn(command, environment: environment) {
            case .failure(let error):
                return .failure(
                    WorkerFailure(
                        message:
                            "cannot start a worker process (\(executable)): \(String(cString: strerror(error.code)))"))
            case .success(let started): process = started
            }
        }
        if native == nil { WorkerTemplates.shared.prepare(executable, log: log) }
        let (pid, input, output, errors) = (process.pid, process.input, process.output, process.errors)
        let (laneRequests, laneResponses, supervision) = (
            process.laneRequests, process.laneResponses, process.supervision
        )
        let mapped = skillhost_lane_map(process.laneMemory)
        Glibc.close(process.laneMemory)
        guard let mapped else {
            let reason = String(cString: strerror(errno))
            _ = skillhost_kill_group(pid, SIGKILL)
            for descriptor in [input, output, errors, laneRequests, laneResponses, supervision] {
                Glibc.close(descriptor)
            }
            var status: Int32 = 0
            _ = waitpid(pid, &status, 0)
            ProcessTree.ended(pid)
            return .failure(WorkerFailure(message: "cannot map a worker's shared memory: \(reason)"))
        }
        // The host's supervisor thread reads the worker's one offer and answers its metadata changes.
        let supervised = skillhost_metadata_supervise(supervision)
        if supervised != 0 {
            log(
                LogRecord(
                    level: .warning, source: plugin,
                    message: "cannot supervise plugin \"\(plugin)\"'s file metadata changes "
                        + "(\(String(cString: strerror(supervised)))); they fail"))
        }
        let (toWorker, fromWorker, workerErrors) = (input, output, errors)
        let limit = WorkerProtocol.maximumLine(resultLimit: launch.resultLimit)
        let exitNotice = endNotice(of: pid)
        // The lane's pipe stops being read once the worker is gone too (a child it left may hold the pipe open).
        let lane = WorkerLane(
            requests: laneRequests, responses: laneResponses, memory: mapped, limit: limit,
            exitNotice: fcntl(exitNotice, F_DUPFD_CLOEXEC, 0))
        let worker = WorkerProcess(
            pid: pid, plugin: plugin, input: toWorker, lane: lane, memoryLimit: launch.limits.addressSpace,
            cpuLimit: launch.limits.cpuSeconds, requestLimit: limit, log: log, onExit: onExit, opening: opening,
            responses: fromWorker, exitNotice: exitNotice, responseLimit: limit)
        // A launch that did not carry the opening request (no spare took it) sends it now.
        if let opening, !openingSent, !worker.writer.write(opening.line) {
            opening.pending.settle(
                .failure(WorkerFailure(message: "plugin \"\(plugin)\" stopped answering (its worker process is gone)")))
        }
        // With an opening request the caller reads the start's answers itself, then calls startReading.
        if opening == nil { worker.startReading() }
        ErrorStreams.shared.watch(
            workerErrors, onLine: { worker.errorLine($0) }, onEnd: { worker.errorsEnded.signal() })
        return .success(worker)
    }

    /// A descriptor that becomes readable when process `pid` ends: its pidfd, else a pipe that a thread waiting
    /// for the process writes to. The worker's end is noticed from the process itself, not from its pipe closing:
    /// a child the plugin started may keep the pipe open long after the worker died.
    private static func endNotice(of pid: pid_t) -> Int32 {
        let pidfd = skillhost_process_end_descriptor(pid)
        if pidfd >= 0 { return pidfd }
        var exitPipe: [Int32] = [-1, -1]
        _ = pipe(&exitPipe)
        for descriptor in exitPipe { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }  // not inherited by workers
        let (exitRead, exitWrite) = (exitPipe[0], exitPipe[1])
        let waiter = Thread {
            var info = siginfo_t()
            while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) < 0, errno == EINTR {}
            var byte: UInt8 = 1
            _ = skillhost_write_nosigpipe(exitWrite, &byte, 1)  // the reader may have stopped listening
            close(exitWrite)
        }
        waiter.name = "skillhost.worker-wait"
        waiter.start()
        return exitRead
    }

    /// How the process ended by itself, once it has (nil while it runs, or when the host killed it).
    var termination: WorkerTermination? {
        state.withLock { state in
            state.lifecycle.termination
        }
    }

    /// The worker described its plugin: it is running.
    func markRunning() {
        state.withLock { $0.lifecycle.described() }
    }

    /// Names the plugin once the worker described it.
    func rename(_ plugin: String) { label.withLock { $0 = plugin } }

    /// The step of loading the worker is at: as it reported it (the Swift worker), or as the host knows it from
    /// the request it waits for (the C worker, which sends no phase).
    var loadPhase: LoadPhase? {
        get { state.withLock { $0.loadPhase } }
        set { state.withLock { $0.loadPhase = newValue } }
    }

    /// Requests sent and not answered yet.
    var pendingRequests: Int { state.withLock { $0.pending.count } }

    /// Whether a kill is scheduled for a call that did not stop yet (new calls should wait until it resolved).
    var hasKillPending: Bool { state.withLock { $0.lifecycle.hasKillPending } }

    /// Whether the process is still there and accepting requests.
    var isRunning: Bool { state.withLock { $0.lifecycle.refusal == nil } }

    /// Kills the process group now. Requests still waiting fail with `reason` (a sentence).
    func kill(because reason: String, forStuckCall: Bool = false) {
        guard state.withLock({ $0.lifecycle.kill(because: reason, forStuckCall: forStuckCall) }) else { return }
        _ = skillhost_kill_group(pid, SIGKILL)
        failPending(reason)
    }

    /// Asks the worker to exit (closing its input lets it `deinit` the plugin), waits up to `grace`, then kills it.
    /// Blocks until the process is gone.
    func stop(grace: Duration = .seconds(2)) {
        if state.withLock({ $0.lifecycle.stop() }) { writer.close() }
        if exited.wait(timeout: .now() + grace.dispatchInterval) == .timedOut {
            _ = skillhost_kill_group(pid, SIGKILL)
            exited.wait()
        }
        exited.signal()  // let other waiters through
    }

    func failPending(_ reason: String) {
        let pending = state.withLock { $0.pending.removeAll() }
        for call in pending { call.settle(.failure(WorkerFailure(message: reason))) }
        lane.wakeReader()
    }

    // MARK: Reader threads

    /// Starts the thread that reads the worker's answers for the rest of its life (once; after the start's answers,
    /// when its caller read them itself).
    func startReading() {
        guard !readerStarted.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let reader = Thread { [self] in readResponses() }
        reader.name = "skillhost.worker-io"
        reader.start()
    }

    /// Reads the worker's answers on this thread until `pending` is settled, while no reader thread does (during
    /// the start); false when the reader thread reads them (the caller then waits for `pending` to be settled). A
    /// message that ends the channel — its end, a line too long or not JSON — starts the reader thread, which tells
    /// the worker's end as always.
    func readDirectly(
        until pending: Pending, deadline: ContinuousClock.Instant? = nil, onDeadline: (@Sendable () -> Void)? = nil
    ) -> Bool {
        guard !readerStarted.load(ordering: .acquiring) else { return false }
        let ended = unread.withLock { reader -> Bool? in
            guard let reader else { return nil }
            (reader.deadline, reader.onDeadline) = (deadline, onDeadline)
            defer { (reader.deadline, reader.onDeadline) = (nil, nil) }
            while !pending.isSettled {
                guard read(reader) else { return true }
            }
            return false
        }
        guard let ended else { return false }
        if ended { startReading() }
        return true
    }

    /// Reads and dispatches one message; false when the channel ended (the worker is killed when it broke it).
    private func read(_ reader: LineReader) -> Bool {
        switch reader.next() {
        case .end: return false
        case .tooLong:
            kill(because: "plugin \"\(plugin)\"'s worker sent a message longer than \(byteCount(requestLimit))")
            return false
        case .line(let bytes):
            guard let message = WorkerProtocol.parse(bytes) else {
                kill(because: "plugin \"\(plugin)\"'s worker broke the protocol (a line that is not JSON)")
                return false
            }
            dispatch(message)
            return true
        }
    }

    private func readResponses() {
        // Taken once a thread that reads directly has finished its message.
        if let reader = unread.withLock({ $0.take() }) {
            while read(reader) {}
        }
        let (descriptor, exitNotice) = responses
        close(descriptor)
        // The pipe closed while the worker lives on (for a moment, or for good when the plugin closed descriptors
        // it does not own): give it up to a second to end by itself, so a crash is reported as the crash it is.
        var gone = false
        for _ in 0..<1000 where !gone {
            var descriptors = [pollfd(fd: exitNotice, events: Int16(POLLIN), revents: 0)]
            gone = poll(&descriptors, 1, 1) > 0
        }
        close(exitNotice)
        if !gone { state.withLock { $0.lifecycle.channelClosedWhileRunning() } }
        // Nothing the plugin started in the worker's group outlives it. Before reaping: until then the group id
        // cannot be reused by another process.
        _ = skillhost_kill_group(pid, SIGKILL)
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0, errno == EINTR {}
        ProcessTree.ended(pid)
        ProcessTree.killAdoptedOrphans()
        // Its last words are read by another thread, which may not have reached them yet on a busy machine: wait
        // for the end of its standard error (the orphans just killed no longer hold it) — briefly, in case
        // something else still does.
        _ = errorsEnded.wait(timeout: .now() + .milliseconds(250))
        let peak = UInt64(max(0, usage.ru_maxrss)) * 1024
        let cpu =
            Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
            + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
        let (plugin, memoryLimit, cpuLimit) = (plugin, memoryLimit, cpuLimit)
        let (ending, hadCalls) = state.withLock { state in
            let ended = WorkerTermination(
                waitStatus: status, recentErrors: state.recentErrors, peakMemory: peak, cpuSeconds: cpu)
            let ending = state.lifecycle.reaped(
                ended,
                closedChannelReason: "plugin \"\(plugin)\" closed its worker's protocol channel (it closed or replaced "
                    + "file descriptors it does not own), so its worker was stopped",
                explain: { $0.explanation(plugin: plugin, memoryLimit: memoryLimit, cpuLimit: cpuLimit) })
            return (ending, !state.pending.isEmpty || ending.killed)
        }
        // The plugin counts the crash before any caller hears of it and tries again.
        onExit(
            Exit(
                pid: pid, reason: ending.reason, requested: ending.requested, killedForStuckCall: ending.forStuckCall,
                hadCalls: hadCalls))
        failPending(ending.reason)
        writer.close()
        lane.close()
        exited.signal()
    }

    /// A line of the worker's standard error: kept for a crash's message and logged.
    private func errorLine(_ bytes: [UInt8]) {
        var text = String(decoding: bytes.prefix(4096), as: UTF8.self)
        if bytes.count > 4096 { text += "…" }
        state.withLock { state in
            state.recentErrors.append(text)
            if state.recentErrors.count > 3 { state.recentErrors.removeFirst() }
        }
        // What confinement blocked is also in the failed call's error: logged at info level, not twice.
        let blocked = text.hasPrefix("skillhost worker: blocked ")
        relay(LogRecord(level: blocked ? .info : .warning, source: plugin, message: "stderr: \(text)"))
    }

}
