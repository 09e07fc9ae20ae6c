import CProcess
import Foundation
import JSONRPC
import Synchronization

/// Runs a program to its end within bounds: a process group of its own, `input` written to it, at most
/// `outputLimit` bytes of each of its outputs kept, and its group killed when `timeout` passes, when `cancel` is
/// set, and after it exits (nothing it started outlives it). Blocks the calling thread: never call it from the
/// cooperative pool.
package enum BoundedProcess {
    /// How it ended.
    package struct Ending: Sendable {
        /// Its exit status (128 + the signal for a signalled one).
        package let status: Int32
        package let output: [UInt8]
        package let errors: [UInt8]
        /// Whether either output went past the limit (the rest was read and dropped).
        package let truncated: Bool
    }

    package enum Failure: Error, Sendable, Equatable {
        case cannotStart(String)
        case timedOut(Duration)
        case cancelled
    }

    /// Set from another thread to stop the run (its group is killed at once).
    package final class Cancel: Sendable {
        private let flag = Atomic<Bool>(false)

        package init() {}

        package func callAsFunction() { flag.store(true, ordering: .relaxed) }
        var isSet: Bool { flag.load(ordering: .relaxed) }
    }

    package static func run(
        _ path: String, _ arguments: [String], environment: [String: String], input: String?, timeout: Duration,
        outputLimit: Int, cancel: Cancel? = nil
    ) -> Result<Ending, Failure> {
        let child: ChildProcess
        switch ChildProcess.spawn(path, arguments, environment: environment) {
        case .failure(let error): return .failure(.cannotStart(error.description))
        case .success(let started): child = started
        }
        defer {
            close(child.output)
            close(child.errors)
        }
        // A program that exits without reading its input is not a signal to the host: EPIPE, ignored. Input beyond
        // what a pipe holds is written on a thread of its own, so a program that never reads cannot block this one.
        let descriptor = child.input
        let send: @Sendable () -> Void = {
            if let input { LineWriter(descriptor: descriptor).write(input) }
            close(descriptor)
        }
        if (input?.utf8.count ?? 0) < 4096 { send() } else { Thread(block: send).start() }

        let deadline = ContinuousClock.now + timeout
        var output: [UInt8] = []
        var errors: [UInt8] = []
        var truncated = false
        var open = (output: true, errors: true)
        while open.output || open.errors {
            let left = deadline - .now
            if cancel?.isSet == true || left <= .zero {
                _ = skillhost_kill_group(child.pid, SIGKILL)
                reap(child.pid)
                ProcessTree.reaped(child.pid)
                return .failure(cancel?.isSet == true ? .cancelled : .timedOut(timeout))
            }
            var fds = [
                pollfd(fd: open.output ? child.output : -1, events: Int16(POLLIN), revents: 0),
                pollfd(fd: open.errors ? child.errors : -1, events: Int16(POLLIN), revents: 0),
            ]
            // Short waits while a cancel may come; the deadline otherwise.
            let wait = Int32(max(1, min(left.milliseconds.rounded(.up), cancel == nil ? 1000 : 50)))
            guard poll(&fds, 2, wait) >= 0 || errno == EINTR else { break }
            if fds[0].revents != 0 {
                open.output = drain(child.output, into: &output, limit: outputLimit, truncated: &truncated)
            }
            if fds[1].revents != 0 {
                open.errors = drain(child.errors, into: &errors, limit: outputLimit, truncated: &truncated)
            }
        }
        let status = reap(child.pid)
        // Anything it started and left behind goes with it: what stayed in its group now, and what left the group
        // once the host has adopted it.
        _ = skillhost_kill_group(child.pid, SIGKILL)
        ProcessTree.reaped(child.pid)
        return .success(Ending(status: status, output: output, errors: errors, truncated: truncated))
    }

    /// Reads what is there; false at the end.
    private static func drain(_ fd: Int32, into buffer: inout [UInt8], limit: Int, truncated: inout Bool) -> Bool {
        var chunk = [UInt8](repeating: 0, count: 16 << 10)
        let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if count < 0 { return errno == EINTR || errno == EAGAIN }
        guard count > 0 else { return false }
        if buffer.count < limit { buffer += chunk.prefix(min(count, limit - buffer.count)) }
        if buffer.count + count > limit { truncated = true }
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
}
