import CProcess
import Foundation
import SkillJSON
import Synchronization

/// One spare C worker per `skillhost-worker` executable, started ahead of need (`skillhost-worker --spare`): the
/// next process-mode start — a plugin dropped into the folder, a hot reload, a restart after a crash — takes it and
/// sends its arguments as the first line of its protocol instead of starting a process then. That saves the start's
/// `exec` and dynamic loading (about 0.8 ms of CPU on this machine) and, on a busy machine, the wait for a core that
/// comes with them.
///
/// A spare holds nothing of any plugin's and runs no plugin code before its launch: it is `skillhost-worker` as it
/// is before `main` reads its arguments, with the same channels, environment and limits as a worker started then
/// (per-plugin limits and TMPDIR come with the launch). The next spare is started once a start has finished, never
/// beside one. A spare that died is found when its launch cannot be written, and the worker is started the usual
/// way. It ends when the host does (its protocol input closes).
package final class WorkerSpares: Sendable {
    static let shared = WorkerSpares()

    /// A spare, and what the host's watch of its prepared paths counted before it started (`PreparedPathWatch`).
    private struct Spare {
        let process: StartedProcess
        let lists: StandbyLists?
        let mark: Int?
    }

    private struct State {
        var spares: [String: Spare] = [:]
        var starting: Set<String> = []
        var taken = 0
    }

    private let state = Mutex(State())

    /// The spare for `executable`, launched with `arguments` and then sent `request` (a line of the protocol, in the
    /// same write: the worker reads it as soon as it has set itself up); nil when none is ready or it is gone (then
    /// the caller starts the worker itself).
    /// When nothing the host watches changed since the spare started, the launch says so (`--prepared unchanged`).
    func take(_ executable: String, arguments: [String], then request: String? = nil) -> StartedProcess? {
        guard let spare = state.withLock({ $0.spares.removeValue(forKey: executable) }) else { return nil }
        var launch = arguments
        if let lists = spare.lists, let mark = spare.mark, PreparedPathWatch.shared.mark(lists) == mark {
            launch += ["--prepared", "unchanged"]
        }
        var text = JSONValue.array(launch.map { .string($0) }).jsonText + "\n"
        if let request { text += request + "\n" }
        if Self.writeAll(spare.process.input, Array(text.utf8)) {
            state.withLock { $0.taken += 1 }
            return spare.process
        }
        Self.discard(spare.process)
        return nil
    }

    /// How many starts took a spare so far, in this process (the benchmark says how many of its starts did).
    package static var taken: Int { shared.state.withLock { $0.taken } }

    /// The pid of the spare ready for `executable`, if one is.
    func ready(_ executable: String) -> pid_t? { state.withLock { $0.spares[executable]?.process.pid } }

    /// Starts a spare for `executable` on a thread of its own, unless one is ready or starting. One that cannot
    /// start is not retried until the next start asks again (that start spawned its worker itself). With `filter`
    /// (the host's compiled filter for a plugin that declares nothing, in hex, as `--filter` carries it) the spare
    /// starts its standby peek child at once: a child that gives up its privileges and loads that filter while it
    /// waits, and peeks for the launch that carries the same filter (protocol.md, "Start"); with `lists` too (a
    /// peek's, as JSON, without the plugin's copy) that child builds Landlock's rules for them while it waits.
    func prepare(_ executable: String, filter: String? = nil, lists: StandbyLists? = nil) {
        let start = state.withLock { state -> Bool in
            guard state.spares[executable] == nil, !state.starting.contains(executable) else { return false }
            state.starting.insert(executable)
            return true
        }
        guard start else { return }
        let standby = filter.map { ["--filter", $0] + (lists.map { ["--prepare", $0.text] } ?? []) } ?? []
        // Counted before the spare starts, so a change made while it prepares its rules is counted after.
        let mark = filter == nil ? nil : lists.flatMap { PreparedPathWatch.shared.mark($0) }
        let thread = Thread { [self] in
            let started = try? StartedProcess.spawn(
                [executable, "--spare"] + standby,
                environment: WorkerTemplates.environment
            ).get()
            state.withLock { state in
                state.starting.remove(executable)
                if let started { state.spares[executable] = Spare(process: started, lists: lists, mark: mark) }
            }
        }
        thread.name = "skillhost.spare"
        thread.start()
    }

    /// Stops and forgets the spare for `executable` (tests).
    func discard(_ executable: String) {
        if let spare = state.withLock({ $0.spares.removeValue(forKey: executable) }) { Self.discard(spare.process) }
    }

    private static func discard(_ spare: StartedProcess) {
        _ = skillhost_kill_group(spare.pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(spare.pid, &status, 0) < 0, errno == EINTR {}
        ProcessTree.ended(spare.pid)
        for descriptor in spare.descriptors { close(descriptor) }
    }

    /// How long a launch may wait for the spare to read it (a launch longer than the pipe holds waits for the
    /// spare to read; one that does not is discarded, and the worker started the usual way).
    static let launchTimeout: Int32 = 1_000

    /// Writes all of `bytes` to `descriptor`; false when the reader is gone or stops reading for `launchTimeout`.
    private static func writeAll(_ descriptor: Int32, _ bytes: [UInt8]) -> Bool {
        let flags = fcntl(descriptor, F_GETFL)
        guard flags >= 0, fcntl(descriptor, F_SETFL, flags | O_NONBLOCK) == 0 else { return false }
        defer { _ = fcntl(descriptor, F_SETFL, flags) }
        return bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = skillhost_write_nosigpipe(
                    descriptor, buffer.baseAddress.map { $0 + offset }, buffer.count - offset)
                if written < 0, errno == EINTR { continue }
                if written < 0, errno == EAGAIN {
                    var room = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                    guard poll(&room, 1, launchTimeout) > 0 else { return false }
                    continue
                }
                guard written > 0 else { return false }
                offset += written
            }
            return true
        }
    }
}
