import CProcess
import Foundation
import JSONRPC
import Synchronization

/// The direct lane to a worker process: a second pair of pipes on which one call at a time travels with no thread
/// in between. The calling thread writes its `invoke` and reads the response itself; in the worker, the lane's own
/// thread reads the request and runs the call itself. A call on the main channel instead passes through two more
/// threads (the worker's reading thread hands reading over, the host's reader wakes the caller).
///
/// While one call holds the lane, others take the main channel, so a slow call never holds anybody up. What the
/// worker writes on the lane's thread during the call — its progress and log lines — comes on the lane too, before
/// the response, in the order written.
///
/// Both ends check for what they wait for — the caller for its response, the lane's thread for the next request —
/// for up to `spin` before they block: on the virtual machines measured (BENCHMARKS.md) a blocked reader costs
/// 25–30 µs to wake, a call on the lane takes less than that, so a stream of calls never sleeps.
///
/// The lane never ends by itself: the host keeps a copy of the write end of the responses, with which
/// `wakeReader()` wakes a caller blocked reading when the worker is gone (the host learns of that from the process,
/// not from its pipes, which a plugin's child may hold open).
final class WorkerLane: Sendable {
    /// The responses' reader, held by the one call on the lane; `open` turns false once the descriptors are closed.
    private struct Reading {
        let reader: LineReader
        var open = true
    }

    /// How long each end checks before it blocks (see `Spinning`).
    static let spin: Duration = .microseconds(50)

    private let reading: Mutex<Reading>
    private let requests: LineWriter
    private let responses: Int32
    private let wake: Int32

    /// Takes ownership of the host's three lane descriptors (see `skillhost_spawn_worker`).
    init(requests: Int32, responses: Int32, wake: Int32, limit: Int) {
        self.requests = LineWriter(descriptor: requests)
        self.responses = responses
        self.wake = wake
        reading = Mutex(Reading(reader: LineReader(descriptor: responses, limit: limit)))
    }

    /// Runs `call` with the lane — the writer of requests and the reader of responses — when no other call holds it
    /// and it is still open; nil (at once, without waiting) otherwise. Blocks for as long as `call` does.
    func ifFree<Outcome: Sendable>(_ call: (LineWriter, LineReader) -> Outcome) -> Outcome? {
        let held: Outcome?? = reading.withLockIfAvailable { reading -> Outcome? in
            guard reading.open else { return nil }
            return call(requests, reading.reader)
        }
        return held ?? nil
    }

    /// Wakes a caller blocked reading the lane (it reads an empty line). Any thread.
    func wakeReader() {
        var newline: UInt8 = 10
        _ = skillhost_write_nosigpipe(wake, &newline, 1)
    }

    /// Closes the lane once the worker is gone: waits for a call still holding it (wake it first). Any thread, once.
    func close() {
        requests.close()
        reading.withLock { reading in
            guard reading.open else { return }
            reading.open = false
            Glibc.close(responses)
            Glibc.close(wake)
        }
    }
}
