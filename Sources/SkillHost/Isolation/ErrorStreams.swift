import CProcess
import Foundation
import Synchronization

/// The standard error of every worker, read as lines by one thread for the whole host (epoll): a worker's start
/// makes no thread for it, and a host with fifty plugins holds one reader instead of fifty.
///
/// A stream's lines reach its `onLine` in order, on the reader thread; `onEnd` follows once every writer closed the
/// pipe (the worker and anything it started). A line longer than `lineLimit` comes as its first `lineLimit` bytes
/// and the rest up to its newline is dropped; a last line without a newline comes at the end. The callbacks must not
/// block for long: every worker's standard error waits behind them.
final class ErrorStreams: Sendable {
    static let shared = ErrorStreams()

    /// The longest line kept (the log takes 4 KB of it).
    static let lineLimit = 64 << 10

    typealias LineHandler = @Sendable ([UInt8]) -> Void
    typealias EndHandler = @Sendable () -> Void

    private struct Stream {
        var pending: [UInt8] = []
        /// The line under way passed the limit and was delivered: its bytes up to the newline are dropped.
        var skipping = false
        let onLine: LineHandler
        let onEnd: EndHandler
    }

    /// -1 when the kernel gave no epoll instance: each stream then gets a thread of its own (`readAlone`).
    private let epoll: Int32
    private let streams = Mutex<[Int32: Stream]>([:])

    private init() {
        epoll = skillhost_readiness_create()
        guard epoll >= 0 else { return }
        let thread = Thread { [self] in run() }
        thread.name = "skillhost.worker-stderr"
        thread.start()
    }

    /// Reads `descriptor` (a pipe's read end, which this takes and closes at its end) as lines.
    func watch(_ descriptor: Int32, onLine: @escaping LineHandler, onEnd: @escaping EndHandler) {
        streams.withLock { $0[descriptor] = Stream(onLine: onLine, onEnd: onEnd) }
        if epoll >= 0, skillhost_readiness_add(epoll, descriptor) == 0 { return }
        let thread = Thread { [self] in readAlone(descriptor) }
        thread.name = "skillhost.worker-stderr"
        thread.start()
    }

    private func run() {
        var ready = [Int32](repeating: -1, count: 32)
        var chunk = [UInt8](repeating: 0, count: 16 << 10)
        while true {
            let count = ready.withUnsafeMutableBufferPointer {
                skillhost_readiness_wait(epoll, $0.baseAddress, Int32($0.count))
            }
            if count < 0 { return }
            for descriptor in ready[0..<Int(count)] {
                // One read a wake-up and descriptor: level-triggered, so a stream that keeps writing is read again
                // on the next round, after the others.
                let read = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
                if read < 0, errno == EINTR || errno == EAGAIN { continue }
                if read > 0 {
                    deliver(descriptor, chunk[0..<read])
                } else {
                    skillhost_readiness_remove(epoll, descriptor)
                    end(descriptor)
                }
            }
        }
    }

    /// Without epoll: one blocking thread for the stream.
    private func readAlone(_ descriptor: Int32) {
        var chunk = [UInt8](repeating: 0, count: 16 << 10)
        while true {
            let read = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if read < 0, errno == EINTR { continue }
            if read <= 0 { break }
            deliver(descriptor, chunk[0..<read])
        }
        end(descriptor)
    }

    private func deliver(_ descriptor: Int32, _ bytes: ArraySlice<UInt8>) {
        let (lines, handler) = streams.withLock { streams -> ([[UInt8]], LineHandler?) in
            guard var stream = streams[descriptor] else { return ([], nil) }
            let lines = Self.split(bytes, into: &stream)
            streams[descriptor] = stream
            return (lines, stream.onLine)
        }
        for line in lines { handler?(line) }
    }

    private func end(_ descriptor: Int32) {
        let stream = streams.withLock { $0.removeValue(forKey: descriptor) }
        close(descriptor)
        guard let stream else { return }
        if !stream.pending.isEmpty, !stream.skipping { stream.onLine(stream.pending) }
        stream.onEnd()
    }

    /// The whole lines `bytes` completes, the rest kept in `stream`.
    private static func split(_ bytes: ArraySlice<UInt8>, into stream: inout Stream) -> [[UInt8]] {
        var lines: [[UInt8]] = []
        var rest = bytes
        while !rest.isEmpty {
            let newline = rest.firstIndex(of: 10)
            let piece = rest[..<(newline ?? rest.endIndex)]
            if !stream.skipping {
                let room = lineLimit - stream.pending.count
                stream.pending += piece.prefix(room)
                if piece.count > room {
                    lines.append(stream.pending)
                    stream.pending.removeAll()
                    stream.skipping = true
                }
            }
            guard let newline else { break }
            if stream.skipping {
                stream.skipping = false
            } else {
                lines.append(stream.pending)
                stream.pending.removeAll()
            }
            rest = rest[(newline + 1)...]
        }
        return lines
    }
}
