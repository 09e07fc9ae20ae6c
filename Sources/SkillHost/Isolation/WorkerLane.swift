import CProcess
import Foundation
import JSONRPC
import Support
import Synchronization

/// The direct lane to a worker process: a mailbox per direction in memory shared with the worker (a memfd, see
/// `shared_lane.c`), on which one call at a time travels with no thread in between and no system call while both
/// sides run. The calling thread posts its `invoke` and takes the response itself; in the worker, the lane's own
/// thread takes the request and runs the call itself. A call on the main channel instead passes through two more
/// threads (the worker's reading thread hands reading over, the host's reader wakes the caller).
///
/// While one call holds the lane, others take the main channel, so a slow call never holds anybody up. What the
/// worker writes on the lane's thread during the call — its progress and log lines — comes on the lane too, before
/// the response, in the order written. A message longer than the mailbox goes on the lane's pipes, announced in it.
///
/// Both ends check for what they wait for — the caller for its response, the lane's thread for the next request —
/// for up to `spin` before they sleep on a futex: on the virtual machines measured (BENCHMARKS.md) a sleeping
/// thread costs 25–30 µs to wake, a call on the lane takes less than that, so a stream of calls never sleeps.
///
/// The lane never ends by itself: `wakeReader()` wakes a caller sleeping for its response when the worker is gone
/// (the host learns of that from the process, not from the lane).
final class WorkerLane: Sendable {
    /// The one call on the lane holds this; `open` turns false once the lane is closed.
    private struct Reading {
        let channel: LaneChannel
        var open = true
    }

    /// How long each end checks before it sleeps.
    static let spin: Duration = .microseconds(50)

    private let reading: Mutex<Reading>
    private let memory: LaneMemory
    private let requests: LineWriter
    /// Readable once the worker is gone: reading the lane's pipe stops then (`LineReader`'s interrupt), though a
    /// child the worker left may hold the pipe open. Owned here (-1: none).
    private let exitNotice: Int32

    /// Takes ownership of the host's lane descriptors, the mapped memory (see `skillhost_spawn_worker`) and
    /// `exitNotice`.
    init(requests: Int32, responses: Int32, memory: UnsafeMutableRawPointer, limit: Int, exitNotice: Int32 = -1) {
        self.requests = LineWriter(descriptor: requests)
        self.memory = LaneMemory(base: memory)
        self.exitNotice = exitNotice
        reading = Mutex(
            Reading(
                channel: LaneChannel(
                    memory: self.memory, requests: self.requests,
                    responses: LineReader(descriptor: responses, limit: limit, interrupt: exitNotice))))
    }

    deinit {
        // Only here: a thread waking or closing the lane holds a reference to it, so nobody touches the memory now.
        reading.withLock { reading in
            if reading.open { Glibc.close(reading.channel.responses.descriptor) }
        }
        if exitNotice >= 0 { Glibc.close(exitNotice) }
        skillhost_lane_unmap(memory.base)
    }

    /// Runs `call` with the lane when no other call holds it and it is still open; nil (at once, without waiting)
    /// otherwise. Blocks for as long as `call` does.
    func ifFree<Outcome: Sendable>(_ call: (LaneChannel) -> Outcome) -> Outcome? {
        let held: Outcome?? = reading.withLockIfAvailable { reading -> Outcome? in
            guard reading.open else { return nil }
            return call(reading.channel)
        }
        return held ?? nil
    }

    /// Wakes a caller sleeping for its response (its `next()` returns an empty line). Any thread.
    func wakeReader() { skillhost_lane_wake_host(memory.base) }

    /// Closes the lane once the worker is gone: waits for a call still holding it (wake it first). Any thread, once.
    func close() {
        skillhost_lane_close(memory.base)
        requests.close()
        reading.withLock { reading in
            guard reading.open else { return }
            reading.open = false
            Glibc.close(reading.channel.responses.descriptor)
        }
    }
}

/// The host's mapping of a lane's shared memory.
struct LaneMemory: @unchecked Sendable {
    // @unchecked: a pointer into a mapping that lives as long as the `WorkerLane` holding it (unmapped in its
    // deinit). Its mailboxes are touched only by the C functions of shared_lane.c: the words both sides share are
    // atomics; the mailboxes' bytes are written and read only by the one thread holding the lane (`Reading`'s
    // mutex) on this side, and copied before anything reads them.
    let base: UnsafeMutableRawPointer
}

/// The lane as the one call holding it sees it: posts its request, takes each message the worker sends.
final class LaneChannel {
    static let capacity = Int(SKILLHOST_LANE_CAPACITY)
    private static let spinNanoseconds = UInt64(WorkerLane.spin.wholeNanoseconds)

    private let memory: LaneMemory
    private let requests: LineWriter
    /// The pipe on which messages too long for the mailbox come.
    let responses: LineReader
    /// Uninitialised (as LineReader's): made with each worker, whose start should not fault in and zero 64 KB.
    private let buffer = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: LaneChannel.capacity)

    init(memory: LaneMemory, requests: LineWriter, responses: LineReader) {
        self.memory = memory
        self.requests = requests
        self.responses = responses
    }

    deinit { buffer.deallocate() }

    /// Posts a request line (without its newline); false when the lane's pipe is closed (a long request).
    func send(_ line: String) -> Bool {
        guard line.utf8.count <= Self.capacity else {
            skillhost_lane_post_request(memory.base, nil, line.utf8.count)
            return requests.write(line)
        }
        var line = line
        line.withUTF8 { skillhost_lane_post_request(memory.base, $0.baseAddress, $0.count) }
        return true
    }

    /// The worker's next message; an empty line when the host woke the caller (`WorkerLane.wakeReader`).
    func next() -> LineReader.Line {
        let count = skillhost_lane_next_response(
            memory.base, buffer.baseAddress, buffer.count, Self.spinNanoseconds)
        switch count {
        case 0...: return .line(Array(buffer[0..<count]))
        case Int(SKILLHOST_LANE_ON_PIPE): return responses.next()
        case Int(SKILLHOST_LANE_WOKEN): return .line([])
        default: return .tooLong
        }
    }
}
