import CProcess
import Foundation
import JSONRPC
import SkillJSON

/// Runs one hook: starts its program (a process group of its own, a worker's environment), writes the input,
/// reads at most `outputLimit` bytes of its answer until it exits or its timeout passes (then its group is
/// killed). Blocks the calling thread: never call it from the cooperative pool.
enum HookProcess {
    static let outputLimit = 64 << 10

    static func run(_ hook: Hook, input: JSONValue, event: HookEvent, launcher: String? = nil) -> Result<
        String, HookFailure
    > {
        guard let program = resolve(hook.name) else {
            return .failure(.cannotStart("no program \(hook.name) on PATH"))
        }
        var path = program
        var arguments = Array(hook.command.dropFirst())
        if let sandbox = hook.sandbox {
            // The skillhost binary's sandbox role confines itself, then becomes the hook.
            guard let launcher else { return .failure(.cannotStart("no skillhost binary to confine it with")) }
            arguments = sandbox.launcherArguments(command: program, arguments: arguments)
            path = launcher
        }
        let environment = ChildEnvironment.minimal(adding: ["SKILLHOST_HOOK_EVENT": event.rawValue])
        let child: ChildProcess
        switch ChildProcess.spawn(path, arguments, environment: environment) {
        case .failure(let error): return .failure(.cannotStart(error.description))
        case .success(let started): child = started
        }
        defer {
            close(child.output)
            close(child.errors)
        }
        // A hook that exits without reading its input is not a signal to the host: EPIPE, ignored. Input beyond
        // what a pipe holds is written on a thread of its own, so a hook that never reads cannot block this one.
        let line = input.jsonText
        let input = child.input
        let send: @Sendable () -> Void = {
            LineWriter(descriptor: input).write(line)
            close(input)
        }
        if line.utf8.count < 4096 { send() } else { Thread(block: send).start() }

        let deadline = ContinuousClock.now + hook.timeout
        var output: [UInt8] = []
        var errors: [UInt8] = []
        var open = (output: true, errors: true)
        while open.output || open.errors {
            let left = deadline - .now
            guard left > .zero else {
                _ = skillhost_kill_group(child.pid, SIGKILL)
                reap(child.pid)
                return .failure(.timedOut(hook.timeout))
            }
            var fds = [
                pollfd(fd: open.output ? child.output : -1, events: Int16(POLLIN), revents: 0),
                pollfd(fd: open.errors ? child.errors : -1, events: Int16(POLLIN), revents: 0),
            ]
            let wait = Int32(max(1, min(left.milliseconds.rounded(.up), 1000)))
            guard poll(&fds, 2, wait) >= 0 || errno == EINTR else { break }
            if fds[0].revents != 0 { open.output = drain(child.output, into: &output) }
            if fds[1].revents != 0 { open.errors = drain(child.errors, into: &errors) }
        }
        let status = reap(child.pid)
        // Anything it started and left behind goes with it.
        _ = skillhost_kill_group(child.pid, SIGKILL)
        guard status == 0 else {
            let said =
                String(decoding: errors.prefix(300), as: UTF8.self)
                .split(separator: "\n").first.map(String.init) ?? ""
            return .failure(.exited(status, said))
        }
        return .success(String(decoding: output, as: UTF8.self))
    }

    /// Reads what is there; false at the end (or past the limit, when the rest is not wanted).
    private static func drain(_ fd: Int32, into buffer: inout [UInt8]) -> Bool {
        var chunk = [UInt8](repeating: 0, count: 16 << 10)
        let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if count < 0 { return errno == EINTR || errno == EAGAIN }
        guard count > 0 else { return false }
        if buffer.count < outputLimit { buffer += chunk.prefix(min(count, outputLimit - buffer.count)) }
        return true
    }

    /// Waits for the process and gives its exit status (128 + the signal for a signalled one).
    @discardableResult
    private static func reap(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        if status & 0x7f == 0 { return (status >> 8) & 0xff }
        return 128 + (status & 0x7f)
    }

    /// `~/x` in the home folder; a bare name on PATH; anything else as given.
    static func resolve(_ program: String) -> String? {
        let environment = ProcessInfo.processInfo.environment
        if program.hasPrefix("~/"), let home = environment["HOME"] { return home + program.dropFirst(1) }
        if program.contains("/") { return program }
        for folder in (environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let candidate = "\(folder)/\(program)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }
}
