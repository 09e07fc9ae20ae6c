import Foundation
import Synchronization
import Testing

@testable import SkillHost

/// The host's one reader of workers' standard error (`ErrorStreams`, real pipes and epoll): each stream's lines in
/// order whatever the writes' pieces, streams independent of each other, a line over the limit cut to it, a last
/// line without its newline kept, and the end told once every writer closed.
struct ErrorStreamsTests {
    /// What one stream delivered.
    final class Seen: Sendable {
        let lines = Mutex<[[UInt8]]>([])
        let ended = DispatchSemaphore(value: 0)
        let endCount = Atomic<Int>(0)
    }

    private func watch(_ streams: ErrorStreams = .shared) -> (write: Int32, seen: Seen) {
        var ends: [Int32] = [-1, -1]
        #expect(pipe(&ends) == 0)
        let seen = Seen()
        streams.watch(
            ends[0], onLine: { line in seen.lines.withLock { $0.append(line) } },
            onEnd: {
                seen.endCount.add(1, ordering: .relaxed)
                seen.ended.signal()
            })
        return (ends[1], seen)
    }

    private func write(_ text: String, to descriptor: Int32) {
        let bytes = Array(text.utf8)
        #expect(bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) } == bytes.count)
    }

    private func text(_ seen: Seen) -> [String] {
        seen.lines.withLock { $0.map { String(decoding: $0, as: UTF8.self) } }
    }

    @Test func linesArriveInOrderWhateverThePiecesAndTheEndComesOnce() {
        let (first, one) = watch()
        let (second, two) = watch()
        write("alpha\nbe", to: first)
        write("x\n", to: second)
        write("ta\ngam", to: first)
        write("y\nz", to: second)
        write("ma\n\nlast without newline", to: first)
        close(first)
        close(second)
        #expect(one.ended.wait(timeout: .now() + 30) == .success)
        #expect(two.ended.wait(timeout: .now() + 30) == .success)
        #expect(text(one) == ["alpha", "beta", "gamma", "", "last without newline"])
        #expect(text(two) == ["x", "y", "z"])
        Thread.sleep(forTimeInterval: 0.05)
        #expect(one.endCount.load(ordering: .relaxed) == 1)
        #expect(two.endCount.load(ordering: .relaxed) == 1)
    }

    @Test func aLineOverTheLimitComesCutToItAndTheNextLineIsWhole() {
        let (descriptor, seen) = watch()
        let limit = ErrorStreams.lineLimit
        // Written from another thread: the pipe holds less than the line.
        let writer = Thread {
            self.write(String(repeating: "a", count: limit + 100_000) + "\nafter\n", to: descriptor)
            close(descriptor)
        }
        writer.start()
        #expect(seen.ended.wait(timeout: .now() + 30) == .success)
        let lines = text(seen)
        #expect(lines.count == 2)
        #expect(lines.first == String(repeating: "a", count: limit))
        #expect(lines.last == "after")
    }

    @Test func theEndWaitsForEveryWriter() {
        let (descriptor, seen) = watch()
        let copy = dup(descriptor)
        write("one\n", to: descriptor)
        close(descriptor)
        // Another holder of the pipe (a plugin's child) keeps it open: no end yet, the lines still come.
        #expect(seen.ended.wait(timeout: .now() + 0.3) == .timedOut)
        write("two\n", to: copy)
        close(copy)
        #expect(seen.ended.wait(timeout: .now() + 30) == .success)
        #expect(text(seen) == ["one", "two"])
    }
}
