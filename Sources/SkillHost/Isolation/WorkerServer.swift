import CProcess
import Dispatch
import Foundation
import SkillJSON
import Synchronization

/// The worker side of process isolation: `skillhost worker …` loads one plugin file and answers the host's
/// requests (see `WorkerProtocol`) until its input closes.
///
/// Threads follow the leader/follower pattern: one thread at a time reads the protocol input; when it reads an
/// `invoke`, it hands the reading over to an idle thread (starting one if none waits) and runs the call itself,
/// so a call costs no thread hand-off and a slow call never delays the next request.
package enum WorkerMain {
    /// Runs the worker role. Never returns: exits 0 when the host closes the protocol input, 70 when the worker
    /// cannot set itself up.
    package static func run(_ launch: WorkerLaunch) -> Never {
        var input: Int32 = -1
        var output: Int32 = -1
        let setup = skillhost_worker_setup(&input, &output)
        guard setup == 0 else { fail("cannot set up the protocol channel: \(String(cString: strerror(setup)))") }
        // Orphans of the plugin's children (setsid) become the worker's, so it can stop them when it ends.
        ProcessTree.adoptOrphans()
        if let value = launch.limits.addressSpace { limit(RLIMIT_AS, value, "address space") }
        if let value = launch.limits.cpuSeconds { limit(RLIMIT_CPU, value, "CPU time") }
        if let value = launch.limits.openFiles { limit(RLIMIT_NOFILE, value, "open files") }

        let writer = LineWriter(descriptor: output)
        var configuration = SkillRegistry.Configuration(
            dataDirectory: URL(fileURLWithPath: launch.dataDirectory, isDirectory: true))
        configuration.resultLimit = launch.resultLimit
        configuration.log = { record in
            writer.write(
                WorkerProtocol.notification(
                    "log",
                    [
                        "level": .int(Int64(record.level.rawValue)), "source": .string(record.source),
                        "message": .string(record.message),
                    ]))
        }
        configuration.onLoadPhase = { phase in
            writer.write(WorkerProtocol.notification("phase", ["phase": .string(phase.rawValue)]))
        }
        let registry: SkillRegistry
        do { registry = try SkillRegistry(configuration: configuration) } catch { fail(error.description) }
        // Constructors and `init` run here; if they crash or hang, the host sees it and rejects the file.
        let loaded = registry.load(file: launch.copy).mapError {
            PluginLoadError(file: launch.file, problems: $0.problems)
        }
        let server = WorkerServer(
            registry: registry, loaded: loaded, input: input,
            reader: LineReader(
                descriptor: input, limit: WorkerProtocol.maximumLine(resultLimit: launch.resultLimit)),
            writer: writer)
        server.lead()
    }

    private static func limit(_ resource: __rlimit_resource, _ value: UInt64, _ name: String) {
        let result = skillhost_set_limit(Int32(resource.rawValue), value)
        if result != 0 { fail("cannot limit \(name) to \(value): \(String(cString: strerror(result)))") }
    }

    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("skillhost worker: \(message)\n".utf8))
        ProcessTree.killAllChildren()
        _exit(70)
    }
}

/// - Important: `@unchecked Sendable` is safe because `reader`, the only mutable part, is used by the leader
///   alone, and leadership passes between threads through `leadership` (a semaphore: its signal/wait pair orders
///   one leader's reads before the next one's).
final class WorkerServer: @unchecked Sendable {
    private let registry: SkillRegistry
    private let loaded: Result<PluginSummary, PluginLoadError>
    private let reader: LineReader
    private let writer: LineWriter
    /// The protocol input's descriptor, to tell the host closing it from a plugin closing it.
    private let input: Int32
    private let leadership = DispatchSemaphore(value: 1)
    /// Threads waiting to lead.
    private let followers = Atomic<Int>(0)
    /// Calls in flight, by request id, for `cancel`.
    private let calls = Mutex<[Int64: CallCancellation]>([:])

    init(
        registry: SkillRegistry, loaded: Result<PluginSummary, PluginLoadError>, input: Int32, reader: LineReader,
        writer: LineWriter
    ) {
        self.registry = registry
        self.loaded = loaded
        self.input = input
        self.reader = reader
        self.writer = writer
    }

    /// Waits for leadership, reads requests until one is a call, hands leadership on and runs the call; forever.
    func lead() -> Never {
        while true {
            followers.add(1, ordering: .relaxed)
            leadership.wait()
            followers.subtract(1, ordering: .relaxed)
            guard let (id, skill, arguments, cancellation, callerContext) = readUntilCall() else { shutDown() }
            // Someone must read the next request while this thread is inside plugin code.
            if followers.load(ordering: .relaxed) == 0 { startFollower() }
            leadership.signal()
            // The host applied its policy before sending the call: here it is confirmed.
            var invocation = SkillInvocation(
                skill: skill, argumentText: arguments, confirmer: .confirmed,
                onProgress: { [writer] progress in
                    var body = JSONObject([(key: "id", value: .int(id)), (key: "done", value: .double(progress.done))])
                    if let total = progress.total { body["total"] = .double(total) }
                    if let message = progress.message { body["message"] = .string(message) }
                    writer.write(WorkerProtocol.notification("progress", .object(body)))
                })
            invocation.callerContext = callerContext
            let outcome = registry.invoker.invokeOnCurrentThread(invocation, cancellation: cancellation)
            calls.withLock { _ = $0.removeValue(forKey: id) }
            writer.write(WorkerProtocol.response(id, result: WorkerProtocol.encode(outcome)))
        }
    }

    private func startFollower() {
        let thread = Thread { [self] in lead() }
        thread.name = "skillhost.worker"
        thread.stackSize = 8 << 20
        thread.start()
    }

    /// Reads and answers requests until an `invoke` arrives; nil when the input closed.
    private func readUntilCall() -> (Int64, String, String, CallCancellation, String?)? {
        while true {
            let bytes: [UInt8]
            switch reader.next() {
            case .end: return nil
            case .tooLong:
                writer.write(WorkerProtocol.response(-1, errorCode: -32600, message: "request line too long"))
                continue
            case .line(let line): bytes = line
            }
            guard let message = WorkerProtocol.parse(bytes), case .string(let method)? = message["method"] else {
                writer.write(WorkerProtocol.response(-1, errorCode: -32700, message: "not a JSON-RPC message"))
                continue
            }
            let params = message["params"] ?? .null
            guard case .int(let id)? = message["id"] else {
                if method == "cancel", case .int(let target)? = params["id"] {
                    calls.withLock { $0[target] }?.cancel()
                }
                continue
            }
            switch method {
            case "invoke":
                guard let skill = params["skill"]?.stringValue else {
                    writer.write(WorkerProtocol.response(id, errorCode: -32602, message: "invoke needs a skill"))
                    continue
                }
                let cancellation = CallCancellation()
                calls.withLock { $0[id] = cancellation }
                return (id, skill, params["arguments"]?.jsonText ?? "{}", cancellation, params["context"]?.stringValue)
            case "describe":
                switch loaded {
                case .success(let plugin):
                    writer.write(
                        WorkerProtocol.response(
                            id, result: WorkerProtocol.encode(plugin, plugin.skillIDs.compactMap { registry.skill($0) })
                        ))
                case .failure(let error):
                    writer.write(
                        WorkerProtocol.response(
                            id, errorCode: -32001, message: error.problems.map(\.description).joined(separator: "\n")))
                }
            case "snapshot":
                // Answered on the reading thread: a snapshot is short by contract, and the host stops waiting
                // after 5 s.
                let name = (try? loaded.get())?.name ?? ""
                let result: JSONValue
                switch registry.snapshotOnCurrentThread(plugin: name) {
                case nil: result = .null
                case .success(let value)?: result = ["snapshot": value]
                case .failure(let error)?: result = ["error": .string(error.message)]
                }
                writer.write(WorkerProtocol.response(id, result: result))
            default:
                writer.write(WorkerProtocol.response(id, errorCode: -32601, message: "unknown method \(method)"))
            }
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
