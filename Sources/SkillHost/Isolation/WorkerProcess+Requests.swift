import Dispatch
import Glibc
import JSONRPC
import SkillJSON
import Support
import Synchronization

/// The worker's protocol channel, seen from the host: a request registered in the pending table, written on the
/// direct lane or the main pipe, its answer matched by id (on the reader thread, or on the calling thread for the
/// lane), a cancellation forwarded and — when the call does not stop — the kill scheduled; the worker's
/// notifications (progress, load phases, log lines) passed on.
extension WorkerProcess {
    /// Sends a plain method (`WorkerMethod`) and reads its answer, within `timeout`. Blocks.
    func call<Reply>(_ method: WorkerMethod<Reply>, timeout: Duration, clock: any HostClock = SystemClock())
        -> Result<Reply, WorkerFailure>
    {
        request(method.name, nil, timeout: timeout, clock: clock).flatMap { value in
            method.read(value).map { .success($0) }
                ?? .failure(WorkerFailure(message: "its worker sent an unreadable answer to \(method.name)"))
        }
    }

    /// Sends a request and waits for its response (or the death of the process). Blocks the calling thread.
    /// `params` is made only when the request goes as JSON-RPC (a call in the lane's own form needs none).
    /// `cancellation`, when given, forwards `cancel` to the worker and kills it if the call has not returned
    /// `killGrace` later (as `clock` counts); `timeout` bounds the wait (the process is killed when it passes).
    /// `laneForm` gives the request's form on the direct lane (`LaneInvoke`) for its id; nil: JSON-RPC there too.
    func request(
        _ method: String, _ params: @autoclosure () -> JSONValue?, timeout: Duration? = nil,
        cancellation: CallCancellation? = nil,
        killGrace: Duration = .milliseconds(100), clock: any HostClock = SystemClock(),
        onProgress: (@Sendable (SkillProgress) -> Void)? = nil,
        describeCall: @escaping @Sendable () -> String = { "the call" },
        laneForm: ((Int64) -> String)? = nil
    ) -> Result<JSONValue, WorkerFailure> {
        let pending = Pending(onProgress: onProgress)
        let registered = state.withLock { state -> Result<JSONRPCID, WorkerFailure> in
            if let refusal = state.lifecycle.refusal { return .failure(WorkerFailure(message: refusal)) }
            return .success(state.pending.add(pending))
        }
        let id: JSONRPCID
        switch registered {
        case .failure(let failure): return .failure(failure)
        case .success(let value): id = value
        }
        /// The refusal of a request too long for the worker to read.
        func tooLong(_ size: Int) -> Result<JSONValue, WorkerFailure> {
            state.withLock { _ = $0.pending.remove(id) }
            return .failure(
                WorkerFailure(
                    message:
                        "the arguments of \(describeCall()) take \(byteCount(size)), over the \(byteCount(requestLimit)) a "
                        + "plugin in process mode can receive; send less (or raise max_result_mb in config.json)",
                    isProtocolError: true))
        }
        /// Sends `line` with `write`, then forwards a cancellation to the worker from now on.
        func send(_ line: String, with write: (String) -> Bool) {
            if !write(line) {
                pending.settle(
                    .failure(
                        WorkerFailure(message: "plugin \"\(plugin)\" stopped answering (its worker process is gone)")))
            }
            if let cancellation {
                forward(cancellation, of: id, killGrace: killGrace, clock: clock, describeCall: describeCall)
            }
        }
        // A call goes on the lane when the lane is free (and the call needs no timeout of its own: calls are bounded
        // by their cancellation), in the lane's own form when it has one; the calling thread then reads the response
        // itself.
        let laneLine = timeout == nil ? laneForm?(id.integer ?? 0) : nil
        if let laneLine, laneLine.utf8.count > requestLimit { return tooLong(laneLine.utf8.count) }
        let onLane =
            method == "invoke" && timeout == nil
            ? lane.ifFree { channel -> Bool in
                send(
                    laneLine ?? JSONRPCMessage.request(id: id, method: method, params: params()).line,
                    with: channel.send)
                awaitOnLane(pending, on: channel, describeCall: describeCall)
                return true
            } : nil
        var timedOut = false
        if onLane == nil {
            let line = JSONRPCMessage.request(id: id, method: method, params: params()).line
            guard line.utf8.count <= requestLimit else { return tooLong(line.utf8.count) }
            let done = pending.waiter()
            send(line, with: writer.write)
            timedOut = wait(for: pending, done, timeout: timeout)
        }
        cancellation?.clearHandler()
        return reply(pending, id: id, timedOut: timedOut)
    }

    /// The answer to the request the worker was launched with (`spawn(opening:)`), within `timeout`: the process
    /// is killed when it passes. Blocks.
    func answerToOpening(timeout: Duration) -> Result<JSONValue, WorkerFailure> {
        guard let opening else { return .failure(WorkerFailure(message: "its worker was started without a request")) }
        let timedOut = wait(for: opening.pending, opening.done, timeout: timeout)
        return reply(opening.pending, id: Opening.id, timedOut: timedOut)
    }

    /// Waits until `pending` is settled (`done` signalled), killing the worker when `timeout` passes first; whether
    /// it did. During the start this thread reads the answers itself (`readDirectly`) and keeps the deadline in its
    /// own wait for bytes (the kill ends the worker, whose end stops the read).
    private func wait(for pending: Pending, _ done: DispatchSemaphore, timeout: Duration?) -> Bool {
        let reason = { @Sendable [plugin] (timeout: Duration) in
            "plugin \"\(plugin)\" did not answer within \(humanDuration(timeout))"
        }
        let late = LateFlag()
        let read = readDirectly(until: pending, deadline: timeout.map { .now + $0 }) { [self] in
            guard let timeout, !pending.isSettled else { return }
            late.set()
            kill(because: reason(timeout))
        }
        if read {
            done.wait()
            return late.isSet
        }
        guard let timeout else {
            done.wait()
            return false
        }
        guard done.wait(timeout: .now() + timeout.dispatchInterval) == .timedOut else { return false }
        kill(because: reason(timeout))
        done.wait()
        return true
    }

    /// A settled request's reply, its id no longer pending; a failure says whether its own timeout caused it.
    private func reply(_ pending: Pending, id: JSONRPCID, timedOut: Bool) -> Result<JSONValue, WorkerFailure> {
        state.withLock { _ = $0.pending.remove(id) }
        var reply = pending.reply ?? .failure(WorkerFailure(message: "no response"))
        if timedOut, case .failure(var failure) = reply {
            failure.timedOut = true
            reply = .failure(failure)
        }
        return reply
    }

    /// Tells the worker when call `id` is cancelled, and kills it when the call has not returned `killGrace` later.
    private func forward(
        _ cancellation: CallCancellation, of id: JSONRPCID, killGrace: Duration, clock: any HostClock,
        describeCall: @escaping @Sendable () -> String
    ) {
        cancellation.onCancel { [weak self] in
            guard let self else { return }
            self.writer.write(
                JSONRPCMessage.notification(method: "cancel", params: ["id": .int(id.integer ?? 0)]).line)
            self.state.withLock { state in
                if state.pending.waiter(for: id) != nil { state.lifecycle.doom(id) }
            }
            _ = clock.schedule(after: killGrace) { [weak self] in
                guard let self else { return }
                // Resolved only after the kill (if any), so a call waiting on it never picks the doomed worker.
                defer { self.state.withLock { $0.lifecycle.resolve(id) } }
                guard self.state.withLock({ $0.pending.waiter(for: id) != nil }) else { return }
                self.kill(
                    because: "plugin \"\(self.plugin)\" was restarted because \(describeCall()) did not stop "
                        + "within \(humanDuration(killGrace)) of being cancelled or timing out", forStuckCall: true)
            }
        }
    }

    /// Wake-ups on the lane a call may see beyond one per message before its worker is killed (`awaitOnLane`).
    static let idleWakeAllowance = 16

    /// Reads the lane until `pending` is settled: by its response (or a failure the worker sent), or by the worker's
    /// end or a kill, which wake the lane. Progress and log lines that come first are passed on.
    /// A result the worker passed on undecoded (`LaneInvoke.decodeText`) is decoded here as the worker would have:
    /// one that is not valid JSON fails the call with the same sentence, naming `describeCall()` (the skill).
    private func awaitOnLane(
        _ pending: Pending, on channel: LaneChannel, describeCall: @escaping @Sendable () -> String
    ) {
        // Wake-ups with the call unsettled are not the host's (it settles a call before it wakes its reader): the
        // worker rang the bell, or a message's own ring came after the message was taken. One a message and a few
        // more are allowed; past that the worker is making the host spin for it.
        var messages = 0
        var idleWakes = 0
        while !pending.isSettled {
            switch channel.next() {
            case .end:
                // The worker is gone, or closed the lane's pipe: its end, once explained, settles the call with what
                // happened (a crash is a crash, not a deadline); briefly, in case the worker lives on.
                let deadline = ContinuousClock.now + .seconds(1)
                while !pending.isSettled, ContinuousClock.now < deadline { usleep(1000) }
                pending.settle(.failure(WorkerFailure(message: "plugin \"\(plugin)\" stopped answering")))
            case .tooLong:
                kill(because: "plugin \"\(plugin)\"'s worker sent a message longer than \(byteCount(requestLimit))")
            case .line(let bytes):
                if bytes.isEmpty {
                    // Woken: the loop's condition tells why, unless nobody in the host woke it.
                    if !pending.isSettled {
                        idleWakes += 1
                        if idleWakes > messages + Self.idleWakeAllowance {
                            kill(
                                because: "plugin \"\(plugin)\"'s worker woke skillhost \(idleWakes) times with no "
                                    + "message (it rang the lane's bell out of protocol)")
                        }
                    }
                    continue
                }
                messages += 1
                if let (id, text) = LaneInvoke.decodeText(bytes) {
                    // Most results are JSON: parsed once; anything else is told apart as the worker would.
                    let decoded = WorkerProtocol.parse(text).map { Result.success($0) } ?? Skill.decodeResult(text)
                    switch decoded {
                    case .success(let result):
                        answer(JSONRPCID(id), .success(.object(JSONObject([("status", "ok"), ("result", result)]))))
                    case .failure(let problem):
                        answer(
                            JSONRPCID(id),
                            .success(
                                WorkerProtocol.encode(
                                    .failure(code: .failed, "\(describeCall()) \(problem.message)"))))
                    }
                    continue
                }
                if LaneInvoke.isSuccess(bytes) {
                    guard let (id, result) = LaneInvoke.decodeSuccess(bytes) else {
                        kill(because: "plugin \"\(plugin)\"'s worker broke the protocol (an unreadable result)")
                        continue
                    }
                    answer(JSONRPCID(id), .success(.object(JSONObject([("status", "ok"), ("result", result)]))))
                    continue
                }
                guard let message = WorkerProtocol.parse(bytes) else {
                    kill(because: "plugin \"\(plugin)\"'s worker broke the protocol (a line that is not JSON)")
                    continue
                }
                dispatch(message)
            }
        }
    }

    func dispatch(_ value: JSONValue) {
        guard let message = JSONRPCMessage(value) else { return }
        if case .notification(let method, let params) = message {
            notice(method, params ?? .null)
            return
        }
        // The host answers no requests.
        guard let (id, reply) = message.answer else { return }
        answer(id, reply.mapError { WorkerFailure(message: $0.message, isProtocolError: true) })
    }

    /// Settles call `id` with the worker's answer.
    private func answer(_ id: JSONRPCID, _ reply: Result<JSONValue, WorkerFailure>) {
        // Removed here, so a kill scheduled for a call that just ended finds nothing to kill it for.
        guard
            let pending = state.withLock({ state -> Pending? in
                state.lifecycle.resolve(id)
                return state.pending.remove(id)
            })
        else { return }
        pending.settle(reply)
    }

    /// A notification from the worker: progress of a call, a load phase, a log line.
    func notice(_ method: String, _ params: JSONValue) {
        switch method {
        case "progress":
            guard case .int(let id)? = params["id"], let done = params["done"]?.doubleValue,
                let pending = state.withLock({ $0.pending.waiter(for: JSONRPCID(id)) })
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
    func relay(_ record: LogRecord) {
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
}

/// Whether a deadline passed, set once by what kills the worker for it (any thread).
private final class LateFlag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .releasing) }
    var isSet: Bool { value.load(ordering: .acquiring) }
}
