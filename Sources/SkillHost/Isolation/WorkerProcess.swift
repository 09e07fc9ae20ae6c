import CProcess
import Dispatch
import Foundation
import JSONRPC
import SkillJSON
import Support
import Synchronization

/// One running worker process, seen from the host: requests out, responses and notifications in (on a reader
/// thread of its own, or on the calling thread for a call on the direct lane, `WorkerLane`), standard error into the
/// log (on another thread), and the exit noticed and explained.
final class WorkerProcess: Sendable {
    /// A request waiting for its response.
    private final class Pending: Sendable {
        let done = DispatchSemaphore(value: 0)
        let reply = Mutex<Result<JSONValue, WorkerFailure>?>(nil)
        let onProgress: (@Sendable (SkillProgress) -> Void)?

        init(onProgress: (@Sendable (SkillProgress) -> Void)?) { self.onProgress = onProgress }

        func settle(_ result: Result<JSONValue, WorkerFailure>) {
            let first = reply.withLock { reply -> Bool in
                guard reply == nil else { return false }
                reply = result
                return true
            }
            if first { done.signal() }
        }

        var isSettled: Bool { reply.withLock { $0 != nil } }
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

    /// How the process ended on its own (not killed by the host), once it has been reaped.
    struct Termination: Sendable {
        /// The signal that killed it, or nil when it exited.
        let signal: Int32?
        let exitStatus: Int32
        /// The last non-blank line it wrote to standard error.
        let lastWords: String?
        /// Its peak resident memory, in bytes (from the kernel's accounting at reaping).
        let peakMemory: UInt64
        /// The CPU time it used, user and system, in seconds.
        let cpuSeconds: Double

        init(waitStatus status: Int32, recentErrors: [String], peakMemory: UInt64 = 0, cpuSeconds: Double = 0) {
            signal = status & 0x7f == 0 ? nil : status & 0x7f
            exitStatus = (status >> 8) & 0xff
            lastWords = recentErrors.last { !$0.allSatisfy(\.isWhitespace) }
            self.peakMemory = peakMemory
            self.cpuSeconds = cpuSeconds
        }

        /// `killed by SIGSEGV` / `exited with status 3`.
        var summary: String { signal.map { "killed by \(signalName($0))" } ?? "exited with status \(exitStatus)" }

        /// `; its last words: …` or nothing.
        var lastWordsClause: String { lastWords.map { "; its last words: \($0)" } ?? "" }
    }

    private struct State {
        var nextID: Int64 = 1
        var pending: [Int64: Pending] = [:]
        var lifecycle = Lifecycle.starting
        /// Calls that were cancelled or timed out and are still running: the worker is killed if one is still there
        /// when its grace ends. A worker with one takes no new calls until it returned or the kill happened.
        var doomed: Set<Int64> = []
        /// The protocol pipe closed while the worker was still running (the host then stopped it).
        var channelClosed = false
        /// The step of loading the worker reported last.
        var loadPhase: LoadPhase?
        /// The last lines of standard error, for crash messages.
        var recentErrors: [String] = []
    }

    /// Where the process is in its life. Moves only forward: starting → running → stopping → exited, or from any
    /// live phase to killed → exited.
    enum Lifecycle {
        /// Spawned; loading its plugin (until it answered `describe`).
        case starting
        case running
        /// The host asked it to exit (its input is closed; it is `deinit`ing the plugin).
        case stopping
        /// The host killed its group; `reason` is what calls still pending are told. `forStuckCall`: because a call
        /// did not stop after its cancel — not a crash of the plugin's.
        case killed(reason: String, forStuckCall: Bool)
        /// Reaped. `reason` answers every later request; `termination` is set when it ended by itself.
        case exited(reason: String, termination: Termination?)

        /// Why requests are refused now; nil while the process takes them.
        var refusal: String? {
            switch self {
            case .starting, .running, .stopping: return nil
            case .killed(let reason, _), .exited(let reason, _): return reason
            }
        }
    }

    let pid: pid_t
    private let label: Mutex<String>
    /// The plugin's name, for messages.
    var plugin: String { label.withLock { $0 } }
    private let writer: LineWriter
    /// One call at a time goes here instead, when it is free.
    private let lane: WorkerLane
    private let state = Mutex(State())
    private let log: @Sendable (LogRecord) -> Void
    /// A plugin that spins on its log (or standard error) is cut back, with a line saying how much was dropped.
    private let throttle = Mutex(LogThrottle())
    /// The address-space limit the worker runs under, for naming it when the worker dies of it.
    private let memoryLimit: UInt64?
    /// Its CPU-time limit in seconds, likewise.
    private let cpuLimit: UInt64?
    /// The longest line the worker reads: a request over it is refused here, with a sentence.
    private let requestLimit: Int
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
    private let exited = DispatchSemaphore(value: 0)

    private init(
        pid: pid_t, plugin: String, input: Int32, lane: WorkerLane, memoryLimit: UInt64?, cpuLimit: UInt64?,
        requestLimit: Int, log: @escaping @Sendable (LogRecord) -> Void, onExit: @escaping @Sendable (Exit) -> Void
    ) {
        self.pid = pid
        self.lane = lane
        self.memoryLimit = memoryLimit
        self.cpuLimit = cpuLimit
        self.requestLimit = requestLimit
        self.label = Mutex(plugin)
        self.writer = LineWriter(descriptor: input)
        self.log = log
        self.onExit = onExit
    }

    /// Starts `skillhost worker …`. Returns a sentence when the process cannot be started.
    static func spawn(
        executable: String, launch: WorkerLaunch, plugin: String, log: @escaping @Sendable (LogRecord) -> Void,
        onExit: @escaping @Sendable (Exit) -> Void
    ) -> Result<WorkerProcess, WorkerFailure> {
        let argv = [executable, "worker"] + launch.arguments
        var pid: pid_t = 0
        var input: Int32 = -1
        var output: Int32 = -1
        var errors: Int32 = -1
        var (laneRequests, laneResponses, laneWake, supervision): (Int32, Int32, Int32, Int32) = (-1, -1, -1, -1)
        let cStrings = argv.map { strdup($0) }
        defer { cStrings.forEach { free($0) } }
        var pointers: [UnsafeMutablePointer<CChar>?] = cStrings + [nil]
        // The Swift runtime's crash backtracer would fill the log with the worker's frames for every plugin crash.
        // Only what a program needs, never the host's secrets. The worker's private directory goes inside the
        // host's, so a worker that is killed leaves nothing behind once the host shuts down.
        let environment = ChildEnvironment.minimal(adding: [
            "SWIFT_BACKTRACE": "enable=no", "TMPDIR": (launch.copy as NSString).deletingLastPathComponent,
        ])
        let environmentStrings = environment.map { strdup("\($0.key)=\($0.value)") }
        defer { environmentStrings.forEach { free($0) } }
        var environmentPointers: [UnsafeMutablePointer<CChar>?] = environmentStrings + [nil]
        let result = pointers.withUnsafeMutableBufferPointer { buffer in
            environmentPointers.withUnsafeMutableBufferPointer { environmentBuffer in
                skillhost_spawn_worker(
                    executable, buffer.baseAddress, environmentBuffer.baseAddress, &pid, &input, &output, &errors,
                    &laneRequests, &laneResponses, &laneWake, &supervision)
            }
        }
        guard result == 0 else {
            return .failure(
                WorkerFailure(
                    message: "cannot start a worker process (\(executable)): \(String(cString: strerror(result)))"))
        }
        ProcessTree.started(pid)
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
        let lane = WorkerLane(requests: laneRequests, responses: laneResponses, wake: laneWake, limit: limit)
        let worker = WorkerProcess(
            pid: pid, plugin: plugin, input: toWorker, lane: lane, memoryLimit: launch.limits.addressSpace,
            cpuLimit: launch.limits.cpuSeconds, requestLimit: limit, log: log, onExit: onExit)
        // The worker's end is noticed from the process itself, not from its pipe closing: a child the plugin started
        // may keep the pipe open long after the worker died.
        var exitPipe: [Int32] = [-1, -1]
        _ = pipe(&exitPipe)
        for descriptor in exitPipe { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }  // not inherited by workers
        let (exitRead, exitWrite) = (exitPipe[0], exitPipe[1])
        let workerID = pid
        let waiter = Thread {
            var info = siginfo_t()
            while waitid(P_PID, id_t(workerID), &info, WEXITED | WNOWAIT) < 0, errno == EINTR {}
            var byte: UInt8 = 1
            _ = skillhost_write_nosigpipe(exitWrite, &byte, 1)  // the reader may have stopped listening
            close(exitWrite)
        }
        waiter.name = "skillhost.worker-wait"
        waiter.start()
        let reader = Thread { worker.readResponses(from: fromWorker, limit: limit, exitNotice: exitRead) }
        reader.name = "skillhost.worker-io"
        reader.start()
        let errorReader = Thread { worker.readErrors(from: workerErrors) }
        errorReader.name = "skillhost.worker-stderr"
        errorReader.start()
        return .success(worker)
    }

    /// How the process ended by itself, once it has (nil while it runs, or when the host killed it).
    var termination: Termination? {
        state.withLock { state in
            if case .exited(_, let termination) = state.lifecycle { return termination }
            return nil
        }
    }

    /// The worker described its plugin: it is running.
    func markRunning() {
        state.withLock { state in
            if case .starting = state.lifecycle { state.lifecycle = .running }
        }
    }

    /// Names the plugin once the worker described it.
    func rename(_ plugin: String) { label.withLock { $0 = plugin } }

    /// The step of loading the worker reported last (nil before any).
    var loadPhase: LoadPhase? { state.withLock { $0.loadPhase } }

    /// Requests sent and not answered yet.
    var pendingRequests: Int { state.withLock { $0.pending.count } }

    /// Whether a kill is scheduled for a call that did not stop yet (new calls should wait until it resolved).
    var hasKillPending: Bool { state.withLock { !$0.doomed.isEmpty } }

    /// Whether the process is still there and accepting requests.
    var isRunning: Bool { state.withLock { $0.lifecycle.refusal == nil } }

    /// Sends a request and waits for its response (or the death of the process). Blocks the calling thread.
    /// `cancellation`, when given, forwards `cancel` to the worker and kills it if the call has not returned
    /// `killGrace` later (as `clock` counts); `timeout` bounds the wait (the process is killed when it passes).
    func request(
        _ method: String, _ params: JSONValue?, timeout: Duration? = nil, cancellation: CallCancellation? = nil,
        killGrace: Duration = .milliseconds(100), clock: any HostClock = SystemClock(),
        onProgress: (@Sendable (SkillProgress) -> Void)? = nil,
        describeCall: @escaping @Sendable () -> String = { "the call" }
    ) -> Result<JSONValue, WorkerFailure> {
        let pending = Pending(onProgress: onProgress)
        let registered = state.withLock { state -> Result<Int64, WorkerFailure> in
            if let refusal = state.lifecycle.refusal { return .failure(WorkerFailure(message: refusal)) }
            let id = state.nextID
            state.nextID += 1
            state.pending[id] = pending
            return .success(id)
        }
        let id: Int64
        switch registered {
        case .failure(let failure): return .failure(failure)
        case .success(let value): id = value
        }
        let line = JSONRPCMessage.request(id: JSONRPCID(id), method: method, params: params).line
        guard line.utf8.count <= requestLimit else {
            state.withLock { _ = $0.pending.removeValue(forKey: id) }
            return .failure(
                WorkerFailure(
                    message:
                        "the arguments of \(describeCall()) take \(byteCount(line.utf8.count)), over the \(byteCount(requestLimit)) a "
                        + "plugin in process mode can receive; send less (or raise max_result_mb in config.json)",
                    isProtocolError: true))
        }
        /// Sends the request on `channel`, then forwards a cancellation to the worker from now on.
        func send(on channel: LineWriter) {
            if !channel.write(line) {
                pending.settle(
                    .failure(
                        WorkerFailure(message: "plugin \"\(plugin)\" stopped answering (its worker process is gone)")))
            }
            if let cancellation {
                forward(cancellation, of: id, killGrace: killGrace, clock: clock, describeCall: describeCall)
            }
        }
        // A call goes on the lane when the lane is free (and the call needs no timeout of its own: calls are bounded
        // by their cancellation); the calling thread then reads the response itself.
        let onLane =
            method == "invoke" && timeout == nil
            ? lane.ifFree { requests, responses -> Bool in
                send(on: requests)
                awaitOnLane(pending, reading: responses)
                return true
            } : nil
        var timedOut = false
        if onLane == nil {
            send(on: writer)
            if let timeout, pending.done.wait(timeout: .now() + timeout.dispatchInterval) == .timedOut {
                timedOut = true
                kill(because: "plugin \"\(plugin)\" did not answer within \(humanDuration(timeout))")
            }
            if timeout == nil || timedOut { pending.done.wait() }
        }
        cancellation?.clearHandler()
        state.withLock { _ = $0.pending.removeValue(forKey: id) }
        var reply = pending.reply.withLock { $0 } ?? .failure(WorkerFailure(message: "no response"))
        if timedOut, case .failure(var failure) = reply {
            failure.timedOut = true
            reply = .failure(failure)
        }
        return reply
    }

    /// Tells the worker when call `id` is cancelled, and kills it when the call has not returned `killGrace` later.
    private func forward(
        _ cancellation: CallCancellation, of id: Int64, killGrace: Duration, clock: any HostClock,
        describeCall: @escaping @Sendable () -> String
    ) {
        cancellation.onCancel { [weak self] in
            guard let self else { return }
            self.writer.write(JSONRPCMessage.notification(method: "cancel", params: ["id": .int(id)]).line)
            self.state.withLock { state in
                if state.pending[id] != nil { state.doomed.insert(id) }
            }
            _ = clock.schedule(after: killGrace) { [weak self] in
                guard let self else { return }
                // Resolved only after the kill (if any), so a call waiting on it never picks the doomed worker.
                defer { self.state.withLock { _ = $0.doomed.remove(id) } }
                guard self.state.withLock({ $0.pending[id] != nil }) else { return }
                self.kill(
                    because: "plugin \"\(self.plugin)\" was restarted because \(describeCall()) did not stop "
                        + "within \(humanDuration(killGrace)) of being cancelled or timing out", forStuckCall: true)
            }
        }
    }

    /// Reads the lane until `pending` is settled: by its response (or a failure the worker sent), or by the worker's
    /// end or a kill, which wake the lane. Progress and log lines that come first are passed on.
    private func awaitOnLane(_ pending: Pending, reading responses: LineReader) {
        while !pending.isSettled {
            if !responses.hasBufferedBytes {
                _ = Spinning.untilReadable(responses.descriptor, within: WorkerLane.spin)
            }
            switch responses.next() {
            case .end:
                pending.settle(.failure(WorkerFailure(message: "plugin \"\(plugin)\" stopped answering")))
            case .tooLong:
                kill(because: "plugin \"\(plugin)\"'s worker sent a message longer than \(byteCount(requestLimit))")
            case .line(let bytes):
                if bytes.isEmpty { continue }  // woken: the loop's condition tells why
                guard let message = WorkerProtocol.parse(bytes) else {
                    kill(because: "plugin \"\(plugin)\"'s worker broke the protocol (a line that is not JSON)")
                    continue
                }
                dispatch(message)
            }
        }
    }

    /// Kills the process group now. Requests still waiting fail with `reason` (a sentence).
    func kill(because reason: String, forStuckCall: Bool = false) {
        let first = state.withLock { state -> Bool in
            switch state.lifecycle {
            case .killed, .exited: return false
            case .starting, .running, .stopping:
                state.lifecycle = .killed(reason: reason, forStuckCall: forStuckCall)
                return true
            }
        }
        guard first else { return }
        _ = skillhost_kill_group(pid, SIGKILL)
        failPending(reason)
    }

    /// Asks the worker to exit (closing its input lets it `deinit` the plugin), waits up to `grace`, then kills it.
    /// Blocks until the process is gone.
    func stop(grace: Duration = .seconds(2)) {
        let alreadyGone = state.withLock { state -> Bool in
            switch state.lifecycle {
            case .starting, .running:
                state.lifecycle = .stopping
                return false
            case .stopping, .killed: return false
            case .exited: return true
            }
        }
        if !alreadyGone { writer.close() }
        if exited.wait(timeout: .now() + grace.dispatchInterval) == .timedOut {
            _ = skillhost_kill_group(pid, SIGKILL)
            exited.wait()
        }
        exited.signal()  // let other waiters through
    }

    private func failPending(_ reason: String) {
        let pending = state.withLock { state -> [Pending] in
            let values = Array(state.pending.values)
            state.pending = [:]
            return values
        }
        for call in pending { call.settle(.failure(WorkerFailure(message: reason))) }
        lane.wakeReader()
    }

    // MARK: Reader threads

    private func readResponses(from descriptor: Int32, limit: Int, exitNotice: Int32) {
        let reader = LineReader(descriptor: descriptor, limit: limit, interrupt: exitNotice)
        loop: while true {
            switch reader.next() {
            case .end: break loop
            case .tooLong:
                kill(because: "plugin \"\(plugin)\"'s worker sent a message longer than \(byteCount(limit))")
                break loop
            case .line(let bytes):
                guard let message = WorkerProtocol.parse(bytes) else {
                    kill(because: "plugin \"\(plugin)\"'s worker broke the protocol (a line that is not JSON)")
                    break loop
                }
                dispatch(message)
            }
        }
        close(descriptor)
        // The pipe closed while the worker lives on (for a moment, or for good when the plugin closed descriptors
        // it does not own): give it up to a second to end by itself, so a crash is reported as the crash it is.
        var gone = false
        for _ in 0..<1000 where !gone {
            var descriptors = [pollfd(fd: exitNotice, events: Int16(POLLIN), revents: 0)]
            gone = poll(&descriptors, 1, 1) > 0
        }
        close(exitNotice)
        if !gone {
            state.withLock { state in
                switch state.lifecycle {
                case .starting, .running: state.channelClosed = true
                case .stopping, .killed, .exited: break
                }
            }
        }
        // Nothing the plugin started in the worker's group outlives it. Before reaping: until then the group id
        // cannot be reused by another process.
        _ = skillhost_kill_group(pid, SIGKILL)
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0, errno == EINTR {}
        ProcessTree.ended(pid)
        ProcessTree.killAdoptedOrphans()
        let peak = UInt64(max(0, usage.ru_maxrss)) * 1024
        let (reason, requested, hadCalls, stuck) = state.withLock { state -> (String, Bool, Bool, Bool) in
            let reason: String
            let termination: Termination?
            var killed = false
            var forStuckCall = false
            switch state.lifecycle {
            case .killed(let why, let stuck):
                (reason, termination, killed, forStuckCall) = (why, nil, true, stuck)
            case .exited(let why, let ended):
                (reason, termination) = (why, ended)
            case .starting, .running, .stopping:
                let cpu =
                    Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
                    + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
                let ended = Termination(
                    waitStatus: status, recentErrors: state.recentErrors, peakMemory: peak, cpuSeconds: cpu)
                termination = ended
                reason =
                    state.channelClosed
                    ? "plugin \"\(plugin)\" closed its worker's protocol channel (it closed or replaced file descriptors "
                        + "it does not own), so its worker was stopped" : crashReason(ended)
            }
            var requested = false
            if case .stopping = state.lifecycle { requested = true }
            state.lifecycle = .exited(reason: reason, termination: termination)
            return (reason, requested, !state.pending.isEmpty || killed, forStuckCall)
        }
        // The plugin counts the crash before any caller hears of it and tries again.
        onExit(Exit(pid: pid, reason: reason, requested: requested, killedForStuckCall: stuck, hadCalls: hadCalls))
        failPending(reason)
        writer.close()
        lane.close()
        exited.signal()
    }

    private func dispatch(_ value: JSONValue) {
        let id: JSONRPCID
        let reply: Result<JSONValue, WorkerFailure>
        switch JSONRPCMessage(value) {
        case .response(let answered, let result)?: (id, reply) = (answered, .success(result))
        case .failure(let answered, let error)?:
            (id, reply) = (answered, .failure(WorkerFailure(message: error.message, isProtocolError: true)))
        case .notification(let method, let params)?:
            notice(method, params ?? .null)
            return
        case .request?, nil:
            return  // the host answers no requests
        }
        guard let number = id.integer,
            // Removed here, so a kill scheduled for a call that just ended finds nothing to kill it for.
            let pending = state.withLock({ state -> Pending? in
                state.doomed.remove(number)
                return state.pending.removeValue(forKey: number)
            })
        else { return }
        pending.settle(reply)
    }

    /// A notification from the worker: progress of a call, a load phase, a log line.
    private func notice(_ method: String, _ params: JSONValue) {
        switch method {
        case "progress":
            guard case .int(let id)? = params["id"], let done = params["done"]?.doubleValue,
                let pending = state.withLock({ $0.pending[id] })
            else { return }
            pending.onProgress?(
                SkillProgress(done: done, total: params["total"]?.doubleValue, message: params["message"]?.stringValue))
        case "phase":
            if let phase = params["phase"]?.stringValue.flatMap(LoadPhase.init(rawValue:)) {
                state.withLock { $0.loadPhase = phase }
            }
        case "log":
            guard let text = params["message"]?.stringValue else { return }
            let level: LogRecord.Level
            if case .int(let code)? = params["level"] {
                level = LogRecord.Level(rawValue: Int(code)) ?? .info
            } else {
                level = .info
            }
            let source = params["source"]?.stringValue ?? plugin
            relay(LogRecord(level: level, source: source == "host" ? plugin : source, message: text))
        default: break
        }
    }

    /// Passes a plugin's log line on within the throttle's budget.
    private func relay(_ record: LogRecord) {
        let (allowed, dropped, rate) = throttle.withLock { throttle in
            let (allowed, dropped) = throttle.admit(at: .now)
            return (allowed, dropped, Int(throttle.perSecond))
        }
        guard allowed else { return }
        if dropped > 0 {
            log(
                LogRecord(
                    level: .warning, source: plugin,
                    message: "\(dropped) log line\(dropped == 1 ? "" : "s") dropped (plugin \"\(plugin)\" logs faster "
                        + "than \(rate) lines a second)"))
        }
        log(record)
    }

    private func readErrors(from descriptor: Int32) {
        let reader = LineReader(descriptor: descriptor, limit: 64 << 10)
        loop: while true {
            switch reader.next() {
            case .end: break loop
            case .tooLong: continue
            case .line(let bytes):
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
        close(descriptor)
    }

    /// `plugin "x" crashed (killed by SIGSEGV)` / `… exited with status 3 …`, plus its last words.
    private func crashReason(_ termination: Termination) -> String {
        var reason: String
        if let signal = termination.signal {
            reason = "plugin \"\(plugin)\" crashed (\(termination.summary))"
            // Only when the CPU time it used says so: a worker killed by SIGKILL from anywhere else (itself, the
            // OOM killer) is not said to have run over it.
            if signal == SIGXCPU || signal == SIGKILL, let limit = cpuLimit, termination.cpuSeconds >= Double(limit) - 1
            {
                reason +=
                    "; it ran over its CPU-time limit of \(limit) s (it used \(Int(termination.cpuSeconds)) s; raise "
                    + "isolation.cpu_seconds in config.json if it needs more)"
            }
            // Careless code that runs out of address space dies on the NULL that malloc returned (or aborts).
            if let limit = memoryLimit, [SIGSEGV, SIGABRT, SIGBUS].contains(signal), termination.peakMemory >= limit / 2
            {
                reason +=
                    "; it may have run over its memory limit of \(limit >> 20) MB (it used \(termination.peakMemory >> 20) "
                    + "MB at its peak; raise isolation.memory_mb in config.json if it needs more)"
            }
        } else if termination.exitStatus == 70, let words = termination.lastWords,
            words.hasPrefix("skillhost worker: ")
        {
            // The worker itself gave up, saying why.
            return "plugin \"\(plugin)\"'s worker stopped: " + words.dropFirst("skillhost worker: ".count)
        } else {
            reason = "plugin \"\(plugin)\" \(termination.summary) (it ended its worker process)"
        }
        return reason + termination.lastWordsClause
    }
}

/// `SIGSEGV`, `SIGABRT` … or `signal 42`.
func signalName(_ signal: Int32) -> String {
    let names: [Int32: String] = [
        SIGSEGV: "SIGSEGV", SIGABRT: "SIGABRT", SIGBUS: "SIGBUS", SIGFPE: "SIGFPE", SIGILL: "SIGILL",
        SIGKILL: "SIGKILL", SIGTERM: "SIGTERM", SIGXCPU: "SIGXCPU", SIGTRAP: "SIGTRAP", SIGPIPE: "SIGPIPE",
    ]
    return names[signal] ?? "signal \(signal)"
}
