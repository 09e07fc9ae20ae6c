import Foundation
import Support
import Synchronization
import TestSupport
import Testing

/// A request whose length two headers say differently — two `Content-Length`s, `Content-Length` with
/// `Transfer-Encoding`, a header name with a space before its colon — is answered 400 and the connection closed
/// (RFC 9112 §6.3): nothing hidden in its body runs as a second request.
struct HTTPSmugglingTests {
    /// Sends `raw` on a new connection and reads until the server closes it (a 60 s cap); returns what came back
    /// and the paths the handler saw.
    func exchange(_ raw: String) async throws -> (answer: String, handled: [String]) {
        let handled = Mutex<[String]>([])
        let server = try HTTPServer(address: "127.0.0.1", port: 0) { request, exchange in
            handled.withLock { $0.append(request.path) }
            exchange.respond(200, headers: [("Content-Type", "text/plain")], text: "ran \(request.path)")
        }
        defer { server.stop() }
        let port = Int(server.port)
        let answer = try await offPool { String(decoding: try rawExchange(port: port, raw), as: UTF8.self) }
        return (answer, handled.withLock { $0 })
    }

    static let hidden = "GET /hidden HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"

    @Test(arguments: [
        "POST /a HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\nContent-Length: \(2 + hidden.utf8.count)\r\n\r\n"
            + "{}" + hidden,
        "POST /a HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: \(5 + hidden.utf8.count)\r\n"
            + "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + hidden,
        "POST /a HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding : chunked\r\nContent-Length: 2\r\n\r\n{}" + hidden,
        "POST /a HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n" + hidden,
    ])
    func aRequestWithTwoLengthsIsRefusedAndTheConnectionClosed(_ raw: String) async throws {
        let (answer, handled) = try await exchange(raw)
        #expect(answer.hasPrefix("HTTP/1.1 400"), "\(answer)")
        #expect(!answer.contains("ran /hidden") && !handled.contains("/hidden"), "\(answer) \(handled)")
        #expect(handled.isEmpty, "\(handled)")
    }

    @Test func aPlainRequestAndAChunkedOneStillRun() async throws {
        let plain = try await exchange(
            "POST /a HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
        #expect(plain.answer.hasPrefix("HTTP/1.1 200") && plain.handled == ["/a"], "\(plain)")
        let chunked = try await exchange(
            "POST /b HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
                + "2\r\n{}\r\n0\r\n\r\n")
        #expect(chunked.answer.hasPrefix("HTTP/1.1 200") && chunked.handled == ["/b"], "\(chunked)")
    }
}
