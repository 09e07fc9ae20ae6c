import Dispatch
import Foundation
import Support
import Synchronization

/// Reads a line-delimited protocol with threads in the leader/follower pattern: one thread at a time (the leader)
/// reads; a thread about to do something long with what it read — run a skill — hands reading over (to a waiting
/// thread, starting one when none waits) and does it itself, so a request is served without a thread hand-off
/// and a slow call never delays the next request. The worker side of process isolation and the MCP server both
/// read this way.
///
/// - Important: `@unchecked Sendable` is safe because `reader`, the only mutable part, is used by the leader
///   alone, and leadership passes between threads through `leadership` (a semaphore: its signal/wait pair orders
///   one leader's reads before the next one's).
package final class ReadLoop: @unchecked Sendable {
    /// Handles one line on the leader's thread. Call `handOff` before anything long (at most once); after it, this
    /// thread no longer reads.
    package typealias Handler = @Sendable (_ line: LineReader.Line, _ handOff: () -> Void) -> Void

    private let reader: LineReader
    private let handle: Handler
    private let onEnd: @Sendable () -> Void
    private let threadName: String
    /// How long the leader checks for the next line before it blocks reading (see `Spinning`).
    private let spin: Duration
    private let leadership = DispatchSemaphore(value: 1)
    /// Threads waiting to lead.
    private let followers = Atomic<Int>(0)
    private let ended = Atomic<Bool>(false)
    private let endOfInput = DispatchSemaphore(value: 0)

    /// - Parameters:
    ///   - reader: the protocol input; only the leader reads it.
    ///   - threadName: the name of the loop's threads.
    ///   - handle: gets every line (`.line` or `.tooLong`), never `.end`.
    ///   - spin: how long the leader checks for the next line before it blocks (a client sending a stream of
    ///     requests then never waits for a sleeping reader).
    ///   - onEnd: runs once, on the thread that read the end of the input, before `waitForEnd` returns.
    package init(
        reader: LineReader, threadName: String, spin: Duration = .zero, handle: @escaping Handler,
        onEnd: @escaping @Sendable () -> Void = {}
    ) {
        self.reader = reader
        self.threadName = threadName
        self.spin = spin
        self.handle = handle
        self.onEnd = onEnd
    }

    /// Starts the first reading thread.
    package func start() { startFollower() }

    /// Blocks until the input ended.
    package func waitForEnd() { endOfInput.wait() }

    /// Leads on the calling thread (instead of `start`); returns when the input ended.
    package func lead() {
        while true {
            followers.add(1, ordering: .relaxed)
            leadership.wait()
            followers.subtract(1, ordering: .relaxed)
            if ended.load(ordering: .acquiring) {
                leadership.signal()  // let the next one see it too
                return
            }
            var leading = true
            while leading {
                if spin > .zero, !reader.hasBufferedBytes {
                    _ = Spinning.untilReadable(reader.descriptor, within: spin)
                }
                let line = reader.next()
                if case .end = line {
                    ended.store(true, ordering: .releasing)
                    leadership.signal()
                    onEnd()
                    endOfInput.signal()
                    return
                }
                handle(line) {
                    guard leading else { return }
                    // Someone must read the next message while this thread is busy.
                    if followers.load(ordering: .relaxed) == 0 { startFollower() }
                    leading = false
                    leadership.signal()
                }
            }
        }
    }

    private func startFollower() {
        let thread = Thread { [self] in lead() }
        thread.name = threadName
        thread.stackSize = 8 << 20
        thread.start()
    }
}
