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
        let cStrings = argv.map { strdup($0) }
        defer { cStrings.forEach { free($0) } }
        var pointers: [UnsafeMutablePointer<CChar>?] = cStrings + [nil]
        let environmentStrings = environment.map { strdup("\($0.key)=\($0.value)") }
        defer { environmentStrings.forEach { free($0) } }
        var environmentPointers: [UnsafeMutablePointer<CChar>?] = environmentStrings + [nil]
        let result = pointers.withUnsafeMutableBufferPointer { buffer in
            environmentPointers.withUnsafeMutableBufferPointer { environmentBuffer in
                skillhost_spawn_worker(
                    argv[0], buffer.baseAddress, environmentBuffer.baseAddress, &pid, &input, &output, &errors,
                    &laneRequests, &laneResponses, &supervision, &laneMemory)
            }
        }
        guard result == 0 else { return .failure(SpawnError(code: result)) }
        ProcessTree.started(pid)
        return .success(
            StartedProcess(
                pid: pid, input: input, output: output, errors: errors, laneRequests: laneRequests,
                laneResponses: laneResponses, supervision: supervision, laneMemory: laneMemory))
    }

    /// Why a process could not be started: an errno value.
    struct SpawnError: Error {
        let code: Int32
    }

    /// Kills it, waits for it and closes every descriptor (a spare that is not used).
    func discard() {
        _ = skillhost_kill_group(pid, SIGKILL)
        var status: Int32 = 0
        _ = waitpid(pid, &status, 0)
        ProcessTree.ended(pid)
        descriptors.forEach { close($0) }
    }
}

/// One worker process started ahead for each `skillhost` executable, waiting for its launch: the Swift runtime's
/// start (about 20 ms of a worker's 24) is paid before a plugin needs it, so the next plugin loaded in process
/// mode, a restart after a crash and a hot reload take a started process and only load their plugin in it.
///
/// A spare is started after each worker start, on a thread of its own; it is the host's child like any worker
/// (same descriptors, same process group rules) and holds nothing of a plugin's until its launch arrives on its
/// protocol input: `skillhost worker --spare` reads `<length>\n` and that many bytes of JSON (`arguments`, the
/// worker's arguments, and `tmpdir`), then runs as `skillhost worker <arguments>` would. It ends when the host
/// does (its input closes). A spare that died while waiting is reaped and replaced when it is taken.
package final class SpareWorkers: Sendable {
    static let shared = SpareWorkers()

    private struct State {
        var spares: [String: StartedProcess] = [:]
        var starting: Set<String> = []
    }

    private let state = Mutex(State())

    /// The environment of a worker before its launch (the launch adds its TMPDIR).
    static let environment: [String: String] = ChildEnvironment.minimal(adding: ["SWIFT_BACKTRACE": "enable=no"])

    /// The waiting spare for `executable`, alive, or nil.
    func take(_ executable: String) -> StartedProcess? {
        guard let spare = state.withLock({ $0.spares.removeValue(forKey: executable) }) else { return nil }
        var info = siginfo_t()
        let checked = waitid(P_PID, id_t(spare.pid), &info, WEXITED | WNOHANG | WNOWAIT)
        // A pid of 0 in `info`: the process has not exited.
        guard checked == 0, info._sifields._sigchld.si_pid == 0 else {
            spare.discard()
            return nil
        }
        return spare
    }

    /// The pid of the spare waiting for `executable`, if one does.
    func waiting(_ executable: String) -> pid_t? { state.withLock { $0.spares[executable]?.pid } }

    /// Starts a spare for `executable` on a thread of its own, unless one waits or is starting.
    func replenish(_ executable: String) {
        let start = state.withLock { state -> Bool in
            guard state.spares[executable] == nil, !state.starting.contains(executable) else { return false }
            state.starting.insert(executable)
            return true
        }
        guard start else { return }
        let thread = Thread { [self] in
            let started = StartedProcess.spawn([executable, "worker", "--spare"], environment: Self.environment)
            state.withLock { state in
                state.starting.remove(executable)
                if case .success(let spare) = started { state.spares[executable] = spare }
            }
        }
        thread.name = "skillhost.spare"
        thread.start()
    }

    /// The launch a spare waits for: `<length>\n` and the JSON.
    static func launchMessage(_ launch: WorkerLaunch, temporaryDirectory: String) -> [UInt8] {
        let body: JSONValue = [
            "arguments": .array(launch.arguments.map { .string($0) }), "tmpdir": .string(temporaryDirectory),
        ]
        let json = Array(body.jsonText.utf8)
        return Array("\(json.count)\n".utf8) + json
    }

    /// In a spare: reads its launch from descriptor 0 (nil when the input ended or the message is not one) and sets
    /// its TMPDIR. Reads exactly the launch's bytes: what follows on the same pipe is the worker protocol.
    package static func awaitLaunch() -> WorkerLaunch? {
        var length = 0
        var digits = 0
        while true {
            var byte: UInt8 = 0
            let count = read(0, &byte, 1)
            if count < 0, errno == EINTR { continue }
            guard count == 1 else { return nil }
            if byte == 10 { break }
            guard byte >= 48, byte <= 57, digits < 8 else { return nil }
            length = length * 10 + Int(byte - 48)
            digits += 1
        }
        guard digits > 0 else { return nil }
        var bytes = [UInt8](repeating: 0, count: length)
        var got = 0
        while got < length {
            let count = bytes.withUnsafeMutableBytes { raw -> Int in
                guard let base = raw.baseAddress else { return 0 }
                return read(0, base + got, length - got)
            }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return nil }
            got += count
        }
        guard let body = try? JSONValue(parsing: bytes), case .array(let values)? = body["arguments"],
            let directory = body["tmpdir"]?.stringValue
        else { return nil }
        setenv("TMPDIR", directory, 1)
        return WorkerLaunch(arguments: values.compactMap(\.stringValue))
    }
}
