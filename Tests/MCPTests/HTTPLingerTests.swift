import Foundation
import Support
import TestSupport
import Testing

/// After an answer the server's event thread watches the connection for the next request for a moment instead of
/// going back to sleep — only for a client that calls back to back and only while there are no more connections than
/// event threads. Driven with a plain keep-alive client over loopback; what is checked is the server's own count of
/// the answers it lingered after, never a time.
struct HTTPLingerTests {
    /// A blocking keep-alive HTTP/1.1 client on one loopback connection.
    final class Client: Sendable {
        let descriptor: Int32

        init(port: UInt16) throws {
            guard let descriptor = connectLoopback(port: Int(port)) else { throw POSIXError(.ECONNREFUSED) }
            self.descriptor = descriptor
        }

        deinit { close(descriptor) }

        /// Sends one request and reads its whole answer (the server's body is "ok"); false when the connection ended.
        func call() -> Bool {
            let request = Array("POST /x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\n{}".utf8)
            guard request.withUnsafeBytes({ send(descriptor, $0.baseAddress, $0.count, 0) }) == request.count else {
                return false
            }
            var answer: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while !(answer.count > 4 && answer.suffix(6) == Array("\r\n\r\nok".utf8)) {
                let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
                guard count > 0 else { return false }
                answer += buffer[0..<count]
            }
            return true
        }
    }

    static func server() throws -> HTTPServer {
        try HTTPServer(address: "127.0.0.1", port: 0) { _, exchange in
            exchange.respond(200, headers: [("Content-Type", "text/plain")], body: Array("ok".utf8))
        }
    }

    @Test func aClientCallingBackToBackIsLingeredFor() async throws {
        let server = try Self.server()
        defer { server.stop() }
        let client = try Client(port: server.port)
        // Back to back, the next request comes within the linger unless the machine holds the client off the CPU
        // that long: calls go on until one came during a linger (capped generously for a busy machine).
        let calls = try await offPool { () -> Int in
            for call in 1...50_000 {
                guard client.call() else { return -call }
                if server.lingers.paid > 0 { return call }
            }
            return 0
        }
        #expect(calls > 0, "the connection ended or no request came during a linger in 50,000 calls")
        #expect(server.lingers.lingered >= server.lingers.paid)
    }

    @Test func aClientThatPausesIsNotLingeredFor() async throws {
        let server = try Self.server()
        defer { server.stop() }
        let client = try Client(port: server.port)
        let answered = try await offPool { () -> Bool in
            for _ in 0..<8 {
                guard client.call() else { return false }
                usleep(20_000)  // far beyond the linger (0.1 ms): the next request never follows closely
            }
            return true
        }
        #expect(answered)
        #expect(server.lingers.lingered == 0, "the server lingered after answers no request followed closely")
    }

    @Test func moreConnectionsThanEventThreadsAreNotLingeredFor() async throws {
        let server = try Self.server()  // two event threads
        defer { server.stop() }
        let clients = try (0..<3).map { _ in try Client(port: server.port) }
        let answered = try await offPool { () -> Bool in
            for _ in 0..<300 {
                for client in clients { guard client.call() else { return false } }
            }
            return true
        }
        #expect(answered)
        #expect(server.lingers.lingered == 0, "the server lingered while three connections were open")
    }
}
