import CProcess
import Foundation
import JSONRPC
import SkillJSON
import Synchronization

/// A worker process as `skillhost_spawn_worker` leaves it: its pid and the host's ends of its channels.
struct StartedProcess: Sendable {
    let pid: pid_t
    let input: Int32
    let output: Int32
    let errors: Int32
    let laneRequests: Int32
    let laneResponses: Int32
    let supervision: Int32
    let laneMemory: Int32

    var descriptors: [Int32] { [input, output, errors, laneRequests, laneResponses, supervision, laneMemory] }

    /// Starts `argv` as a worker process with `environment`; an errno value when it cannot.
    static func spawn(_ argv: [String], environment: [String: String]) -> Result<StartedProcess, SpawnError> {
        var pid: pid_t = 0
        var (input, output, errors) = (Int32(-1), Int32(-1), Int32(-1))
        var (laneRequests, laneResponses, supervision, laneMemory) = (Int32(-1), Int32(-1), Int32(-1), Int32(-1))
        let result = withSpawnStrings(argv, environment) { arguments, environment in
            skillhost_spawn_worker(
                argv[0], arguments, environment, &pid, &input, &output, &errors, &laneRequests, &laneResponses,
                &supervision, &laneMemory)
        }
        guard result == 0 else { return .failure(SpawnError(code: result)) }
        return .success(
            StartedProcess(
                pid: pid, input: input, output: output, errors: errors, laneRequests: laneRequests,
                laneResponses: laneResponses, supervision: supervision, laneMemory: laneMemory))
    }

    /// Why a process could not be started: an errno value.
    struct SpawnError: Error {
        let code: Int32
    }
}

/// One template process per `skillhost` executable (`skillhost worker --template`), started with the first worker:
/// the Swift runtime's start (about 20 ms of a fresh worker's start) is paid once, and each later worker — the next
/// plugin loaded in process mode, a restart after a crash, a hot reload — is forked from it ready to run, in a
/// fraction of a millisecond, sharing its pages until it writes them.
///
/// The host sends the template a launch (`arguments`, the worker's arguments, and `tmpdir`, as JSON) with the new
/// worker's channels (`skillhost_template_worker`); the template forks the worker as the host's own child, so the
/// host waits for it, kills it and sees it end exactly as one it started itself; the worker then runs as
/// `skillhost worker <arguments>` would. The template holds nothing of any plugin's; it ends when the host does
/// (its socket closes). One that died or stopped answering is discarded, the worker started the usual way, and a new
/// template started.
package final class WorkerTemplates: Sendable {
    static let shared = WorkerTemplates()

    private struct Template {
        let pid: pid_t
        let control: Int32
    }

    private struct State {
        var templates: [String: Template] = [:]
        var starting: Set<String> = []
        /// Templates discarded in a row, by executable, since one last forked a worker.
        var failures: [String: Int] = [:]
    }

    /// After this many templates in a row failed (died, stopped answering, or could not be started) before
    /// forking a worker, none is started again for that executable: each would cost a runtime's start beside every
    /// worker's, for nothing. Workers are then spawned directly, as without templates.
    static let maximumFailures = 3

    private let state = Mutex(State())
    /// Requests to a template go one at a time (its answers come in order on one socket).
    private let requests = Mutex(())

    /// How long a request may wait for the template's answer (a template still starting answers when it is up).
    static let answerTimeout = 5_000

    /// The environment of a template and so of every worker it forks (the launch adds its TMPDIR).
    static let environment: [String: String] = ChildEnvironment.minimal(adding: ["SWIFT_BACKTRACE": "enable=no"])

    /// A worker forked from the template of `executable` for `launch`; nil when there is no template or it failed
    /// (then it is discarded and the caller starts the worker itself).
    func start(
        _ executable: String, launch: WorkerLaunch, temporaryDirectory: String,
        log: @escaping @Sendable (LogRecord) -> Void = { _ in }
    ) -> StartedProcess? {
        guard let template = state.withLock({ $0.templates[executable] }) else { return nil }
        let message = Self.launchMessage(launch, temporaryDirectory: temporaryDirectory)
        var pid: pid_t = 0
        var (input, output, errors) = (Int32(-1), Int32(-1), Int32(-1))
        var (laneRequests, laneResponses, supervision, laneMemory) = (Int32(-1), Int32(-1), Int32(-1), Int32(-1))
        let result = requests.withLock { _ in
            message.withUnsafeBytes { bytes in
                skillhost_template_worker(
                    template.control, bytes.baseAddress, bytes.count, Int32(Self.answerTimeout), &pid, &input, &output,
                    &errors, &laneRequests, &laneResponses, &supervision, &laneMemory)
            }
        }
        guard result == 0 else {
            if result != EMSGSIZE { discard(executable, template, log: log) }
            return nil
        }
        state.withLock { $0.failures[executable] = nil }
        return StartedProcess(
            pid: pid, input: input, output: output, errors: errors, laneRequests: laneRequests,
            laneResponses: laneResponses, supervision: supervision, laneMemory: laneMemory)
    }

    /// The pid of the template for `executable`, if one runs.
    func running(_ executable: String) -> pid_t? { state.withLock { $0.templates[executable]?.pid } }

    /// Whether templates for `executable` were given up (`maximumFailures`).
    func gaveUp(_ executable: String) -> Bool {
        state.withLock { $0.failures[executable, default: 0] >= Self.maximumFailures }
    }

    /// Starts the template for `executable` on a thread of its own, unless one runs or is starting, or templates
    /// for it were given up. `log` hears once when they are given up.
    func prepare(_ executable: String, log: @escaping @Sendable (LogRecord) -> Void = { _ in }) {
        let start = state.withLock { state -> Bool in
            guard state.templates[executable] == nil, !state.starting.contains(executable),
                state.failures[executable, default: 0] < Self.maximumFailures
            else { return false }
            state.starting.insert(executable)
            return true
        }
        guard start else { return }
        let thread = Thread { [self] in
            let started = Self.spawn(executable)
            let gaveUp = state.withLock { state -> Bool in
                state.starting.remove(executable)
                if let started {
                    state.templates[executable] = started
                    return false
                }
                return Self.failed(executable, &state)
            }
            if gaveUp { Self.announceGivingUp(executable, log) }
        }
        thread.name = "skillhost.template"
        thread.start()
    }

    private static func spawn(_ executable: String) -> Template? {
        var pid: pid_t = 0
        var control: Int32 = -1
        let result = withSpawnStrings([executable, "worker", "--template"], environment) { argv, envp in
            skillhost_spawn_template(executable, argv, envp, &pid, &control)
        }
        guard result == 0 else { return nil }
        return Template(pid: pid, control: control)
    }

    /// Counts a failed template; true when that makes `maximumFailures` (the caller says so, once).
    private static func failed(_ executable: String, _ state: inout State) -> Bool {
        state.failures[executable, default: 0] += 1
        return state.failures[executable] == maximumFailures
    }

    private static func announceGivingUp(_ executable: String, _ log: @Sendable (LogRecord) -> Void) {
        log(
            LogRecord(
                level: .warning, source: "host",
                message: "worker templates of \(executable) failed \(maximumFailures) times in a row; workers are "
                    + "started directly from now on (each start takes longer)"))
    }

    /// Stops a template that failed (if it is still the one registered) and forgets it. `log` hears once when
    /// that gives templates up.
    private func discard(_ executable: String, _ template: Template, log: @Sendable (LogRecord) -> Void) {
        let (current, gaveUp) = state.withLock { state -> (Bool, Bool) in
            guard state.templates[executable]?.pid == template.pid else { return (false, false) }
            state.templates[executable] = nil
            return (true, Self.failed(executable, &state))
        }
        if gaveUp { Self.announceGivingUp(executable, log) }
        guard current else { return }
        _ = skillhost_kill_group(template.pid, SIGKILL)
        var status: Int32 = 0
        _ = waitpid(template.pid, &status, 0)
        ProcessTree.ended(template.pid)
        close(template.control)
    }

    /// The launch a template hands its new worker: the worker's arguments and its TMPDIR, as JSON.
    static func launchMessage(_ launch: WorkerLaunch, temporaryDirectory: String) -> [UInt8] {
        let body: JSONValue = [
            "arguments": .array(launch.arguments.map { .string($0) }), "tmpdir": .string(temporaryDirectory),
        ]
        return Array(body.jsonText.utf8)
    }

    /// Runs the template role (`skillhost worker --template`): serves the host until it closes the socket, then
    /// exits 0. In each worker it forks, sets its TMPDIR and runs the worker role with the launch's arguments.
    package static func serve() -> Never {
        warm()
        let result = skillhost_template_run { bytes, count in
            guard let bytes, let launch = WorkerTemplates.parseLaunch(UnsafeBufferPointer(start: bytes, count: count))
            else {
                _exit(70)
            }
            // `ps` shows which plugin the worker runs (in the template's command line's space), not that line.
            _ = skillhost_set_title(
                CommandLine.unsafeArgv, CommandLine.argc,
                "skillhost worker \((launch.file as NSString).lastPathComponent)")
            WorkerMain.run(launch)
        }
        exit(result == 0 ? 0 : 70)
    }

    /// Runs, once in the template, what every worker runs first — a launch read back, the filter decoded, JSON
    /// parsed and printed — so each worker inherits the runtime's metadata and caches already made instead of
    /// making them again (single-threaded: nothing here starts a thread).
    private static func warm() {
        var launch = WorkerLaunch(
            file: "/warm.so", copy: "/warm/1-warm.so", dataDirectory: "/warm", limits: WorkerLimits(),
            resultLimit: 1 << 24)
        launch.prepared = WorkerPreparation.make()
        let message = launchMessage(launch, temporaryDirectory: "/warm")
        guard let body = try? JSONValue(parsing: message), case .array(let values)? = body["arguments"] else { return }
        _ = WorkerLaunch(arguments: values.compactMap(\.stringValue))
        // A plugin's schemas compiled and checked, a description sent back.
        let schema: JSONValue = [
            "type": "object", "additionalProperties": false, "required": ["a"],
            "properties": [
                "a": ["type": "number", "minimum": 0, "description": "a"],
                "b": ["type": "string", "enum": ["x", "y"]],
                "c": ["type": "array", "items": ["type": "integer"], "maxItems": 4], "d": ["type": "boolean"],
            ],
        ]
        if let compiled = try? JSONSchema(schema) {
            _ = compiled.validate(["a": 1, "b": "x", "c": [1, 2], "d": true], options: .strict)
        }
        _ = JSONRPCMessage.response(id: JSONRPCID(1), result: ["skills": [schema]]).line
    }

    /// The launch in `bytes` (nil when they are not one), with its TMPDIR set.
    static func parseLaunch(_ bytes: UnsafeBufferPointer<UInt8>) -> WorkerLaunch? {
        guard let body = try? JSONValue(parsing: Array(bytes)), case .array(let values)? = body["arguments"],
            let directory = body["tmpdir"]?.stringValue
        else { return nil }
        setenv("TMPDIR", directory, 1)
        return WorkerLaunch(arguments: values.compactMap(\.stringValue))
    }
}
