import Foundation
import Synchronization
import Testing

@testable import JSONRPC
@testable import SkillJSON

/// The JSON-RPC layer the worker protocol and MCP share: the four message shapes, hostile peers, and the
/// leader/follower read loop over a real pipe.
struct JSONRPCTests {
    @Test func theFourShapesRoundTrip() throws {
        let messages: [(JSONRPCMessage, String)] = [
            (
                .request(id: JSONRPCID(7), method: "invoke", params: ["skill": "echo"]),
                #"{"jsonrpc":"2.0","id":7,"method":"invoke","params":{"skill":"echo"}}"#
            ),
            (.notification(method: "cancel", params: nil), #"{"jsonrpc":"2.0","method":"cancel"}"#),
            (
                .response(id: JSONRPCID(rawText: #""a""#), result: [1, 2]),
                #"{"jsonrpc":"2.0","id":"a","result":[1,2]}"#
            ),
            (
                .failure(id: .null, error: JSONRPCError(.parseError, "Parse error: x", data: ["at": 3])),
                #"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: x","data":{"at":3}}}"#
            ),
        ]
        for (message, line) in messages {
            #expect(message.line == line)
            let read = try #require(JSONRPCMessage(try JSONValue(parsing: line)))
            #expect(read.line == line, "reads back as the same message")
        }
    }

    @Test func hostilePeersAreReadWithoutCrashing() throws {
        // A code far outside Int, a code that is text, no message: still an error answering request 3.
        for text in [
            #"{"jsonrpc":"2.0","id":3,"error":{"code":1e300,"message":"huge"}}"#,
            #"{"jsonrpc":"2.0","id":3,"error":{"code":"bad"}}"#,
        ] {
            guard case .failure(let id, let error)? = JSONRPCMessage(try JSONValue(parsing: text)) else {
                Issue.record("not read as an error: \(text)")
                continue
            }
            #expect(id.integer == 3)
            #expect(error.code == .internalError)
        }
        // Not messages: no method and no result, an id that is an object, an array.
        for text in [#"{"jsonrpc":"2.0","id":1}"#, #"{"id":{"a":1},"method":"x"}"#, "[1]", "17"] {
            #expect(JSONRPCMessage(try JSONValue(parsing: text)) == nil, "\(text)")
        }
        #expect(JSONRPCID(rawText: "1.5").integer == nil)
        #expect(JSONRPCErrorCode.invalidParams.rawValue == -32602)
    }

    /// A line over the limit is reported once and skipped whole, even when it arrives in many writes: its tail is
    /// never read as a message of its own.
    @Test func anOverlongLineIsSkippedWhole() throws {
        var descriptors: [Int32] = [0, 0]
        #expect(pipe(&descriptors) == 0)
        let reader = LineReader(descriptor: descriptors[0], limit: 8)
        let writeEnd = descriptors[1]
        let writer = Thread {
            let input = FileHandle(fileDescriptor: writeEnd, closeOnDealloc: true)
            input.write(Data("short\n".utf8))
            // 100 KB without a newline (over the 64 KB read chunk), then a tail that would parse as a message.
            input.write(Data(String(repeating: "x", count: 100_000).utf8))
            usleep(20_000)
            input.write(Data((#"{"method":"tail"}"# + "\nnext\n").utf8))
            try? input.close()
        }
        writer.start()
        var lines: [String] = []
        loop: while true {
            switch reader.next() {
            case .line(let bytes): lines.append(String(decoding: bytes, as: UTF8.self))
            case .tooLong: lines.append("<too long>")
            case .end: break loop
            }
        }
        close(descriptors[0])
        #expect(lines == ["short", "<too long>", "next"])
    }

    /// A reader's deadline runs its action once, on the reading thread, only while it waits for bytes: lines already
    /// there are read first, and reading goes on after it (here with the line the action wrote).
    @Test func aDeadlinePassedWhileWaitingRunsItsActionOnceOnTheReadingThread() {
        var descriptors: [Int32] = [0, 0]
        #expect(pipe(&descriptors) == 0)
        defer { descriptors.forEach { close($0) } }
        let reader = LineReader(descriptor: descriptors[0], limit: 64)
        let writeEnd = descriptors[1]
        let fired = Mutex<[UInt]>([])
        let line = { @Sendable (text: String) in
            #expect(Array((text + "\n").utf8).withUnsafeBytes { write(writeEnd, $0.baseAddress, $0.count) } > 0)
        }
        line("early")
        // Should the deadline never run, a line after a minute ends the wait (and the test fails) instead of hanging.
        let watchdog = DispatchWorkItem { line("watchdog") }
        DispatchQueue.global().asyncAfter(deadline: .now() + 60, execute: watchdog)
        defer { watchdog.cancel() }
        reader.deadline = .now
        reader.onDeadline = {
            fired.withLock { $0.append(UInt(pthread_self())) }
            line("late")
        }
        let text = { (read: LineReader.Line) -> String? in
            guard case .line(let bytes) = read else { return nil }
            return String(decoding: bytes, as: UTF8.self)
        }
        #expect(text(reader.next()) == "early")
        #expect(fired.withLock { $0.isEmpty })
        #expect(text(reader.next()) == "late")
        #expect(fired.withLock { $0 } == [UInt(pthread_self())])
        #expect(reader.deadline == nil)
    }

    /// With and without the check for the next line before blocking: the same lines, in order, to the same threads.
    @Test(arguments: [Duration.zero, .microseconds(50)])
    func theReadLoopHandsReadingOverBeforeALongRequest(spin: Duration) throws {
        var descriptors: [Int32] = [0, 0]
        #expect(pipe(&descriptors) == 0)
        let seen = Mutex<[String]>([])
        let threads = Mutex<[String: UInt]>([:])
        let secondRead = DispatchSemaphore(value: 0)
        let loop = ReadLoop(
            reader: LineReader(descriptor: descriptors[0], limit: 16), threadName: "test.reader", spin: spin
        ) { line, handOff in
            guard case .line(let bytes) = line else {
                seen.withLock { $0.append("too long") }
                return
            }
            let text = String(decoding: bytes, as: UTF8.self)
            seen.withLock { $0.append(text) }
            threads.withLock { $0[text] = UInt(pthread_self()) }
            if text == "slow" {
                handOff()
                // Only another thread can read the next line while this one waits.
                _ = secondRead.wait(timeout: .now() + 60)
            } else {
                secondRead.signal()
            }
        }
        loop.start()
        let input = FileHandle(fileDescriptor: descriptors[1], closeOnDealloc: true)
        input.write(Data("slow\nfast\n\(String(repeating: "x", count: 40))\n".utf8))
        try input.close()
        loop.waitForEnd()
        #expect(seen.withLock { $0 }.prefix(2) == ["slow", "fast"])
        #expect(seen.withLock { $0 }.last == "too long")
        let readers = threads.withLock { $0 }
        #expect(readers["slow"] != nil && readers["fast"] != nil && readers["slow"] != readers["fast"])
        close(descriptors[0])
    }

    /// A peer that leaves in the middle of a long write makes the write fail, and leaves no SIGPIPE behind: the
    /// write that had moved some bytes when the reader left returns their count, and the kernel raised the signal
    /// all the same. (The writing thread blocks SIGPIPE here, so a signal left behind stays pending, where it is
    /// seen, instead of ending a test process that did not ignore it.)
    @Test func aReaderThatLeavesMidWriteLeavesNoSignalBehind() async throws {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        let (readEnd, writeEnd) = (ends[0], ends[1])
        Thread {
            var chunk = [UInt8](repeating: 0, count: 65536)
            var total = 0
            while total < 200_000 {
                let count = read(readEnd, &chunk, chunk.count)
                if count <= 0 { break }
                total += count
            }
            close(readEnd)
        }.start()
        let (written, signalLeft): (Bool, Bool) = await withCheckedContinuation { continuation in
            Thread {
                var pipeSignal = sigset_t()
                sigemptyset(&pipeSignal)
                sigaddset(&pipeSignal, SIGPIPE)
                var old = sigset_t()
                pthread_sigmask(SIG_BLOCK, &pipeSignal, &old)
                let written = LineWriter.write([UInt8](repeating: 120, count: 4 << 20), to: writeEnd)
                var pending = sigset_t()
                sigpending(&pending)
                let left = sigismember(&pending, SIGPIPE) == 1
                var zero = timespec()
                if left { _ = sigtimedwait(&pipeSignal, nil, &zero) }
                pthread_sigmask(SIG_SETMASK, &old, nil)
                close(writeEnd)
                continuation.resume(returning: (written, left))
            }.start()
        }
        #expect(!written)
        #expect(!signalLeft)
    }
}
