import CProcess
import Foundation
import Synchronization

/// Reads newline-terminated lines of at most `limit` bytes from a descriptor with its own buffer. Not thread-safe:
/// one reader at a time.
package final class LineReader {
    package enum Line {
        case line([UInt8])
        case end
        /// A line longer than the limit (its bytes are skipped).
        case tooLong
    }

    /// What it reads.
    package let descriptor: Int32
    private let limit: Int
    /// When readable, reading stops (`.end`) as soon as nothing more is waiting in `descriptor`: how a reader whose
    /// pipe another process keeps open learns that the process it cares about is gone. -1: none.
    private let interrupt: Int32
    private var buffer: [UInt8] = []
    private var start = 0
    /// What one read fills: uninitialised, so a reader made for each worker's start touches no memory it does not
    /// read into (a zeroed 64 KB array cost its start some 25 µs of page faults and zeroing).
    private let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 65536, alignment: 16)
    /// Set after a line was reported too long before its end arrived: bytes up to the next newline are dropped.
    private var skippingRest = false
    /// When `onDeadline` runs (once, on the reading thread, while it waits for bytes; reading then goes on without a
    /// deadline): how a thread that reads answers itself keeps a timeout without a timer on another thread.
    package var deadline: ContinuousClock.Instant?
    package var onDeadline: (@Sendable () -> Void)?

    package init(descriptor: Int32, limit: Int, interrupt: Int32 = -1) {
        self.descriptor = descriptor
        self.limit = limit
        self.interrupt = interrupt
    }

    deinit { chunk.deallocate() }

    /// poll's timeout for `deadline`: whole milliseconds, rounded up (0 once it passed).
    private static func milliseconds(until deadline: ContinuousClock.Instant) -> Int32 {
        let (seconds, attoseconds) = (deadline - .now).components
        guard seconds >= 0, seconds > 0 || attoseconds > 0 else { return 0 }
        let total = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(clamping: total)
    }

    /// Whether bytes read are waiting in the buffer (so `next()` may return without reading).
    package var hasBufferedBytes: Bool { start < buffer.count }

    package func next() -> Line {
        var scanned = start
        while true {
            if let newline = buffer[scanned...].firstIndex(of: 10) {
                // The end of a line already reported too long is skipped with it, never read as a message.
                let skipped = skippingRest
                skippingRest = false
                let tooLong = newline - start > limit
                let line = tooLong || skipped ? [] : Array(buffer[start..<newline])
                start = newline + 1
                if start > 65536, start * 2 > buffer.count {
                    buffer.removeFirst(start)
                    start = 0
                }
                if skipped {
                    scanned = start
                    continue
                }
                return tooLong ? .tooLong : .line(line)
            }
            scanned = buffer.count
            if buffer.count - start > limit {
                buffer.removeAll(keepingCapacity: false)
                start = 0
                scanned = 0
                if !skippingRest {
                    skippingRest = true
                    return .tooLong
                }
            }
            if interrupt >= 0 || deadline != nil {  // poll skips a negative descriptor
                var descriptors = [
                    pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
                    pollfd(fd: interrupt, events: Int16(POLLIN), revents: 0),
                ]
                let ready = poll(&descriptors, 2, deadline.map(Self.milliseconds(until:)) ?? -1)
                if ready < 0 {
                    if errno == EINTR { continue }
                    return .end
                }
                if ready == 0 {
                    let action = onDeadline
                    (deadline, onDeadline) = (nil, nil)
                    action?()
                    continue
                }
                // Data first: what was written before the interruption is still delivered.
                if descriptors[0].revents == 0 && descriptors[1].revents != 0 { return .end }
            }
            let count = read(descriptor, chunk.baseAddress, chunk.count)
            if count < 0, errno == EINTR { continue }
            if count <= 0 { return .end }
            buffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[0..<count]))
        }
    }
}

/// Writes whole lines to a descriptor; concurrent writers never interleave. Writing to a closed pipe fails
/// (SIGPIPE is ignored by the host and the worker).
package final class LineWriter: Sendable {
    /// nil once closed.
    private let descriptor: Mutex<Int32?>

    package init(descriptor: Int32) { self.descriptor = Mutex(descriptor) }

    /// Returns false when the other side is gone or the writer is closed.
    @discardableResult
    package func write(_ line: String) -> Bool {
        var bytes = Array(line.utf8)
        bytes.append(10)
        return descriptor.withLock { descriptor in
            guard let descriptor else { return false }
            return Self.write(bytes, to: descriptor)
        }
    }

    /// Writes all of `bytes` to `descriptor`; false when the other side is gone (never a SIGPIPE).
    package static func write(_ bytes: [UInt8], to descriptor: Int32) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { raw -> Int in
                guard let base = raw.baseAddress else { return 0 }
                return skillhost_write_nosigpipe(descriptor, base + offset, raw.count - offset)
            }
            if written < 0, errno == EINTR { continue }
            if written <= 0 { return false }
            offset += written
        }
        return true
    }

    /// Closes the descriptor (once); later writes fail.
    package func close() {
        descriptor.withLock { descriptor in
            if let open = descriptor { Glibc.close(open) }
            descriptor = nil
        }
    }
}
