import Foundation
import Support
import TestSupport
import Testing

/// How the HTTP server's requests answer header lookups: names in any case as sent, found by their lower-case name;
/// the first of repeated headers; a name that is only the start of another is not that other; the value without
/// the spaces after the colon.
struct HTTPHeaderTests {
    @Test func headersAreLookedUpByTheirWholeName() async throws {
        let names = ["x-long", "mcp-name", "accept", "empty", "x", "missing", "host"]
        let server = try HTTPServer(address: "127.0.0.1", port: 0) { request, exchange in
            let found = names.map { "\($0)=\(request.header($0).map { "[\($0)]" } ?? "nil")" }
            exchange.respond(200, headers: [("Content-Type", "text/plain")], text: found.joined(separator: " "))
        }
        defer { server.stop() }
        let answer = try await offPool { () -> String in
            guard let descriptor = connectLoopback(port: Int(server.port)) else { throw POSIXError(.ECONNREFUSED) }
            defer { close(descriptor) }
            // A generous cap, so a server that never answers fails the test instead of hanging it.
            var cap = timeval(tv_sec: 60, tv_usec: 0)
            setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &cap, socklen_t(MemoryLayout<timeval>.size))
            let request = Array(
                ("GET /x HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Long-Name-Prefix: a\r\nX-Long: b\r\nMcp-Name:   calc\r\n"
                    + "Accept: 1\r\naccept: 2\r\nEmpty:\r\nConnection: close\r\n\r\n").utf8)
            _ = request.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, 0) }
            var answer: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
                if count <= 0 { break }
                answer += buffer[0..<count]
            }
            return String(decoding: answer, as: UTF8.self)
        }
        let body = answer.components(separatedBy: "\r\n\r\n").last ?? ""
        #expect(body == "x-long=[b] mcp-name=[calc] accept=[1] empty=[] x=nil missing=nil host=[127.0.0.1]")
    }
}
