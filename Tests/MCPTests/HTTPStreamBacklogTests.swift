import Foundation
import Support
import Synchronization
import TestSupport
import Testing

/// What streams hold unsent is bounded for all of them together, not only per stream: clients that open many
/// streams and read none (256 streams of an 8 MB conversation grew the server by 2 GB) are cut, and a client that
/// reads keeps its stream.
struct HTTPStreamBacklogTests {
    @Test func unsentStreamBytesAreBoundedForAllStreamsTogether() async throws {
        let chunk = String(repeating: "x", count: 1 << 20)
        let writers = Mutex(0)
        let server = try HTTPServer(address: "127.0.0.1", port: 0) { request, exchange in
            guard exchange.beginStream(200, headers: [("Content-Type", "text/plain")]) else { return }
            Thread {
                // 12 MiB each: under one stream's limit (16 MiB), so only the bound on all of them cuts.
                for _ in 0..<12 where exchange.write(chunk) {}
                if request.path == "/reader" { exchange.end() }
                writers.withLock { $0 += 1 }
            }.start()
        }
        defer { server.stop() }
        // 24 clients that read nothing: 288 MiB if nothing bounded them.
        var idle: [Int32] = []
        defer { for descriptor in idle { close(descriptor) } }
        for _ in 0..<24 {
            guard let descriptor = connectLoopback(port: Int(server.port)) else { throw POSIXError(.ECONNREFUSED) }
            let request = Array("GET /idle HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
            _ = request.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, 0) }
            idle.append(descriptor)
        }
        let started = ContinuousClock.now
        while writers.withLock({ $0 }) < 24, ContinuousClock.now - started < .seconds(120) {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(writers.withLock { $0 } == 24)
        // Four streams' backlog in all (64 MiB), and a mebibyte's write past it.
        #expect(server.unsentStreamBytes <= (64 << 20) + (1 << 20), "\(server.unsentStreamBytes) bytes held")
        // A client that reads gets its whole stream.
        let port = Int(server.port)
        let read = try await offPool {
            try rawExchange(port: port, "GET /reader HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").count
        }
        #expect(read > 12 << 20, "the reading client got \(read) bytes")
    }
}
