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
        let port = Int(server.port)
        let request =
            "GET /x HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Long-Name-Prefix: a\r\nX-Long: b\r\nMcp-Name:   calc\r\n"
            + "Accept: 1\r\naccept: 2\r\nEmpty:\r\nConnection: close\r\n\r\n"
        let answer = try await offPool { String(decoding: try rawExchange(port: port, request), as: UTF8.self) }
        let body = answer.components(separatedBy: "\r\n\r\n").last ?? ""
        #expect(body == "x-long=[b] mcp-name=[calc] accept=[1] empty=[] x=nil missing=nil host=[127.0.0.1]")
    }
}
