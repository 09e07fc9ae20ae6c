import CProcess
import Dispatch
import Foundation
import JSONRPC
import SkillJSON
import Support
import Synchronization

/// The worker side of process isolation: `skillhost worker …` loads one plugin file and answers the host's
/// requests (see `WorkerProtocol`) until its input closes.
///
/// Threads follow the leader/follower pattern: one thread at a time reads the protocol input; when it reads an
/// `invoke`, it hands the reading over to an idle thread (starting one if none waits) and runs the call itself,
/// so a call costs no thread hand-off and a slow call never delays the next request. The direct lane
/// (`WorkerLane`) has a thread of its own that reads one call, runs it and answers it, on the lane.
package enum WorkerMain {
    /// Runs the worker role. Never returns: exits 0 when the host closes the protocol input, 70 when the worker
    /// cannot set itself up.
    package static func run(_ launch: WorkerLaunch) -> Never {
        var input: Int32 = -1
        var output: Int32 = -1
        var (laneInput, laneOutput): (Int32, Int32) = (-1, -1)
        var laneMemory: UnsafeMutableRawPointer?
        let setup = skillhost_worker_setup(&input, &output, &laneInput, &laneOutput, &laneMemory)
        guard setup == 0 else { fail("cannot set up the protocol channel: \(String(cString: strerror(setup)))") }
        // A lane without its shared memory would leave the host's calls on it unanswered.
        let lane = laneMemory.flatMap { memory in
            laneInput < 0 ? nil : WorkerLaneEnd(memory: LaneMemory(base: memory), input: laneInput, output: laneOutput)
        }
        if laneInput >= 0, lane == nil { fail("cannot map the lane's shared memory") }
        // Orphans of the plugin's children (setsid) become the worker's, so it can stop them when it ends.
        ProcessTree.adoptOrphans()
        // Before any plugin code runs in this process (and before any other thread exists, since Landlock and the
        // system-call filter bind the calling thread and the threads it starts): a confined child learns what the
        // plugin declares while this process sets up its registry; then this process confines itself for good
        // with that plus the user's grants.
        let threads = skillhost_thread_count()
        if threads > 1 {
            StandardStreams.error(
                "skillhost worker: \(threads) threads existed before confinement; only new ones are bound\n")
        }
        let peek = launch.confines ? WorkerConfinement.begin(launch) : nil
        if let value = launch.limits.addressSpace { limit(RLIMIT_AS, value, "address space") }
        if let value = launch.limits.cpuSeconds { limit(RLIMIT_CPU, value, "CPU time") }
        if let value = launch.limits.openFiles { limit(RLIMIT_NOFILE, value, "open files") }

        let writer = WorkerOutput(main: LineWriter(descriptor: output), lane: lane)
        var configuration = SkillRegistry.Configuration(
            dataDirectory: URL(fileURLWithPath: launch.dataDirectory, isDirectory: true))
        configuration.resultLimit = launch.resultLimit
        configuration.filesArePrivate = true  // launch.copy is the host's private copy
        configuration.log = { record in
            writer.write(
                JSONRPCMessage.notification(
                    method: "log",
                    params: [
                        "level": .int(Int64(record.level.rawValue)), "source": .string(record.source),
                        "message": .string(record.message),
                    ]
                ).line)
        }
        configuration.onLoadPhase = { phase in
            writer.write(JSONRPCMessage.notification(method: "phase", params: ["phase": .string(phase.rawValue)]).line)
        }
        let registry: SkillRegistry
        do { registry = try SkillRegistry(configuration: configuration) } catch { fail(error.description) }
        // A plugin that cannot be confined as required is not loaded at all; `describe` says why.
        var confined: WorkerConfinement.Confined?
        var refusal: String?
        switch peek.map({ WorkerConfinement.finish($0, launch, rules: launch.rules) }) {
        case .failure(let failure)?: refusal = failure.message
        case .success(let result)?: confined = result
        case nil: break
        }
        // Nothing of the plugin's may write to the host's supervisor (confinement used the socket, if at all).
        skillhost_metadata_close_host_channel()
        // Constructors and `init` run here; if they crash or hang, the host sees it and rejects the file.
        let loaded: Result<PluginSummary, PluginLoadError>
        if let refusal {
            loaded = .failure(PluginLoadError(file: launch.file, problems: [.other(refusal)]))
        } else {
            loaded = registry.load(file: launch.copy).mapError {
                PluginLoadError(file: launch.file, problems: $0.problems)
            }
        }
        let server = WorkerServer(
            registry: registry, loaded: loaded, confined: confined, input: input, writer: writer)
        let limit = WorkerProtocol.maximumLine(resultLimit: launch.resultLimit)
        if let lane { server.serveLane(lane, limit: limit) }
        server.serve(LineReader(descriptor: input, limit: limit))
    }

    private static func limit(_ resource: __rlimit_resource, _ value: UInt64, _ name: String) {
        let result = skillhost_set_limit(Int32(resource.rawValue), value)
        if result != 0 { fail("cannot limit \(name) to \(value): \(String(cString: strerror(result)))") }
    }

    static func fail(_ message: String) -> Never {
        StandardStreams.error("skillhost worker: \(message)\n")
        ProcessTree.killAllChildren()
        _exit(70)
    }
}

/// Answers the host's requests on the shared leader/follower `ReadLoop`: `describe` and `snapshot` on the reading
/// thread, each `invoke` on the thread that read it, after handing reading over.
final class WorkerServer: Sendable {
    private let registry: SkillRegistry
    private let loaded: Result<PluginSummary, PluginLoadError>
    /// How the worker confined itself, and from what declaration (nil: unconfined).
    private let confined: WorkerConfinement.Confined?
    private let writer: WorkerOutput
    /// The protocol input's descriptor, to tell the host closing it from a plugin closing it.
    private let input: Int32
    /// Calls in flight, by request id, for `cancel`.
    private let calls = Mutex(WorkerCalls())

    init(
        registry: SkillRegistry, loaded: Result<PluginSummary, PluginLoadError>, confined: WorkerConfinement.Confined?,
        input: Int32, writer: WorkerOutput
    ) {
        self.registry = registry
        self.loaded = loaded
        self.confined = confined
        self.input = input
        self.writer = writer
    }

    /// Serves until the host closes the input, then shuts down. Never returns.
    func serve(_ reader: LineReader) -> Never {
        let loop = ReadLoop(reader: reader, threadName: "skillhost.worker", spin: WorkerLane.spin) {
            [self] line, handOff in
            handle(line, handOff: handOff)
        } onEnd: { [self] in
            shutDown()
        }
        loop.lead()
        // The thread that read the end shuts the worker down; any other one waits for that.
        while true { pause() }
    }

    /// Serves the lane on a thread of its own: each request taken is answered there, on the lane. The thread ends
    /// when the host closes the lane.
    func serveLane(_ lane: WorkerLaneEnd, limit: Int) {
        let thread = Thread { [self] in
            // Named for the system too (Foundation's name is its own), so tools and skills can tell the thread.
            skillhost_name_thread("skillhost.lane")
            let reader = LineReader(descriptor: lane.input, limit: limit)
            writer.takeLane()
            var buffer = [UInt8](repeating: 0, count: LaneChannel.capacity)
            var seen: UInt32 = 0
            let spin = UInt64(WorkerLane.spin.wholeNanoseconds)
            while true {
                let count = buffer.withUnsafeMutableBufferPointer {
                    skillhost_lane_next_request(lane.memory.base, &seen, $0.baseAddress, $0.count, spin)
                }
                // A plugin that closed the protocol channel is stopped after this call: on the lane its answer
                // still travels (in shared memory), but the main channel's reader would never learn of it. After the
                // answer, too: the peek child, if it was not gone when the worker started, is reaped.
                defer {
                    if fcntl(input, F_GETFD) < 0 { shutDown() }
                    skillhost_peek_reap()
                }
                switch count {
                case 0...:
                    let bytes = Array(buffer[0..<count])
                    guard LaneInvoke.isCall(bytes) else {
                        handle(.line(bytes), handOff: {})
                        continue
                    }
                    guard let call = LaneInvoke.decode(bytes) else {
                        send(.failure(id: .null, error: JSONRPCError(.invalidRequest, "a broken call on the lane")))
                        continue
                    }
                    invoke(
                        call.id, skill: call.skill, arguments: .text(call.arguments), context: call.context,
                        onLane: true, handOff: {})
                case Int(SKILLHOST_LANE_ON_PIPE):
                    let line = reader.next()
                    if case .end = line { return }
                    handle(line, handOff: {})
                case Int(SKILLHOST_LANE_CLOSED): return
                default: handle(.tooLong, handOff: {})
                }
            }
        }
        thread.name = "skillhost.lane"
        thread.stackSize = 8 << 20
        thread.start()
    }

    private func send(_ message: JSONRPCMessage) { writer.write(message.line) }

    private func handle(_ line: LineReader.Line, handOff: () -> Void) {
        defer { skillhost_peek_reap() }  // the peek child, if it was not gone when the worker started
        let bytes: [UInt8]
        switch line {
        case .end: return
        case .tooLong:
            send(.failure(id: .null, error: JSONRPCError(.invalidRequest, "request line too long")))
            return
        case .line(let read): bytes = read
        }
        guard let value = WorkerProtocol.parse(bytes), let message = JSONRPCMessage(value) else {
            send(.failure(id: .null, error: JSONRPCError(.parseError, "not a JSON-RPC message")))
            return
        }
        switch message {
        case .notification("cancel", let params):
            if case .int(let target)? = params?["id"] { calls.withLock { $0.cancel(target) }?.cancel() }
        case .request(let id, let method, let params):
            guard let number = id.integer else {
                send(.failure(id: id, error: JSONRPCError(.invalidRequest, "request ids are integers")))
                return
            }
            answer(number, method, params ?? .null, handOff: handOff)
        case .notification, .response, .failure:
            return  // nothing else is meant for the worker
        }
    }

    private func answer(_ id: Int64, _ method: String, _ params: JSONValue, handOff: () -> Void) {
        switch method {
        case "invoke":
            guard let skill = params["skill"]?.stringValue else {
                send(.failure(id: JSONRPCID(id), error: JSONRPCError(.invalidParams, "invoke needs a skill")))
                return
            }
            invoke(
                id, skill: skill, arguments: .value(params["arguments"] ?? .object(JSONObject())),
                context: params["context"]?.stringValue, handOff: handOff)
        default:
            guard let answer = WorkerProtocol.table[method] else {
                send(.failure(id: JSONRPCID(id), error: JSONRPCError(.methodNotFound, "unknown method \(method)")))
                return
            }
            switch answer(WorkerSide(registry: registry, loaded: loaded, confined: confined)) {
            case .success(let result): send(.response(id: JSONRPCID(id), result: result))
            case .failure(let error): send(.failure(id: JSONRPCID(id), error: error))
            }
        }
    }

    /// Runs call `id` and answers it (`onLane`: a success in the lane's own form, `LaneInvoke`).
    private func invoke(
        _ id: Int64, skill: String, arguments: SkillInvocation.Arguments, context: String?, onLane: Bool = false,
        handOff: () -> Void
    ) {
        let cancellation = CallCancellation()
        if calls.withLock({ $0.start(id, cancellation) }) { cancellation.cancel() }
        handOff()
        // The host applied its policy before sending the call: here it is confirmed.
        var invocation = SkillInvocation(
            skill: skill, arguments: .object(JSONObject()), confirmer: .confirmed,
            onProgress: { [writer] progress in
                var body = JSONObject([(key: "id", value: .int(id)), (key: "done", value: .double(progress.done))])
                if let total = progress.total { body["total"] = .double(total) }
                if let message = progress.message { body["message"] = .string(message) }
                writer.write(JSONRPCMessage.notification(method: "progress", params: .object(body)).line)
            })
        invocation.arguments = arguments
        invocation.callerContext = context
        // The host validated the arguments against the schema this worker described: they are not walked again.
        invocation.argumentsValidated = true
        let answer =
            onLane
            ? registry.invoker.invokeForLane(invocation, cancellation: cancellation)
            : .outcome(registry.invoker.invokeOnCurrentThread(invocation, cancellation: cancellation))
        // A plain success travels as the plugin's text (the host decodes and checks it); here it is a success too,
        // for the confinement's note of something blocked during the call, which a success only clears.
        var outcome: SkillOutcome
        let text: String?
        switch answer {
        case .text(let result): (outcome, text) = (.success(.null), result)
        case .outcome(let other): (outcome, text) = (other, nil)
        }
        if let confinement = confined?.report {
            ConfinementMessages.explain(
                &outcome, plugin: (try? loaded.get())?.name ?? "", confinement: confinement.confinement)
        }
        calls.withLock { _ = $0.running.removeValue(forKey: id) }
        if let text {
            writer.write(LaneInvoke.encodeText(id: id, text: text))
        } else if onLane, outcome.status == .ok, outcome.undo == nil {
            writer.write(LaneInvoke.encodeSuccess(id: id, result: outcome.result ?? .null))
        } else {
            send(.response(id: JSONRPCID(id), result: WorkerProtocol.encode(outcome)))
        }
    }

    /// The host closed the channel: `deinit` the plugin (unless calls are still inside it) and exit.
    private func shutDown() -> Never {
        if fcntl(input, F_GETFD) < 0 {
            WorkerMain.fail(
                "the plugin closed the protocol channel (descriptor \(input)); a plugin must not close descriptors it "
                    + "did not open")
        }
        registry.shutdown()
        ProcessTree.killAllChildren()
        _exit(0)
    }
}

/// The worker's end of the lane: the shared memory, and the pipes for messages too long for it.
struct WorkerLaneEnd: Sendable {
    let memory: LaneMemory
    let input: Int32
    let output: LineWriter

    init(memory: LaneMemory, input: Int32, output: Int32) {
        self.memory = memory
        self.input = input
        self.output = LineWriter(descriptor: output)
    }

    /// Posts one message for the host (waiting until it took the previous one); false when the lane is closed.
    func write(_ line: String) -> Bool {
        var bytes = line
        let posted = bytes.withUTF8 { bytes in
            skillhost_lane_post_response(
                memory.base, bytes.baseAddress, bytes.count, UInt64(WorkerLane.spin.wholeNanoseconds))
        }
        switch posted {
        case 0: return true
        case SKILLHOST_LANE_ON_PIPE: return output.write(line)
        default: return false
        }
    }
}

/// Where the worker's messages go: on the lane when the lane's thread writes them (its call's progress, log lines
/// and response, which the host reads in that order before the call returns), on the main channel otherwise.
final class WorkerOutput: Sendable {
    private let main: LineWriter
    private let lane: WorkerLaneEnd?
    /// The lane's thread (`pthread_self()`), 0 before it started.
    private let laneThread = Atomic<UInt>(0)

    init(main: LineWriter, lane: WorkerLaneEnd?) {
        self.main = main
        self.lane = lane
    }

    /// Called once by the lane's thread: what it writes from now on goes on the lane.
    func takeLane() { laneThread.store(UInt(pthread_self()), ordering: .releasing) }

    /// Writes one line on the channel of the calling thread.
    @discardableResult
    func write(_ line: String) -> Bool {
        if let lane, laneThread.load(ordering: .acquiring) == UInt(pthread_self()) { return lane.write(line) }
        return main.write(line)
    }
}

/// The calls a worker runs, by request id, for `cancel`.
struct WorkerCalls {
    var running: [Int64: CallCancellation] = [:]
    /// Cancelled before they arrived: a call on the lane may come after its cancel on the main channel. A few,
    /// the oldest forgotten first (a cancel that crossed its call's response is never claimed).
    var cancelledEarly: Set<Int64> = []

    /// The cancellation of call `id` when it is running; otherwise remembers that it was cancelled.
    mutating func cancel(_ id: Int64) -> CallCancellation? {
        if let running = running[id] { return running }
        cancelledEarly.insert(id)
        if cancelledEarly.count > 64, let oldest = cancelledEarly.min() { cancelledEarly.remove(oldest) }
        return nil
    }

    /// Registers call `id`; true when it was cancelled already.
    mutating func start(_ id: Int64, _ cancellation: CallCancellation) -> Bool {
        running[id] = cancellation
        return cancelledEarly.remove(id) != nil
    }
}
