import Agent
import Foundation
import Support
import Synchronization
import TestSupport
import Testing

/// The HTTP transport: backpressure, stopping, redirects, header hygiene.
struct HTTPStreamTests {
    /// A server that answers one request with a body that never ends, counting what it managed to write.
    final class EndlessServer: Sendable {
        let port: Int
        private let listener: Int32
        private let state = Mutex((written: 0, closed: false))

        init() throws {
            (listener, port) = try LoopbackListener.listeningSocket(backlog: 4)
            Thread { [self] in serve() }.start()
        }

        var written: Int { state.withLock { $0.written } }
        var closed: Bool { state.withLock { $0.closed } }

        private func serve() {
            let client = accept(listener, nil, nil)
            close(listener)
            guard client >= 0 else { return }
            defer { close(client) }
            var buffer = [UInt8](repeating: 0, count: 4096)
            _ = read(client, &buffer, buffer.count)
            let head = Array("HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n\r\n".utf8)
            _ = send(client, head, head.count, Int32(MSG_NOSIGNAL))
            let chunk = [UInt8](repeating: UInt8(ascii: "a"), count: 65_536)
            while true {
                let sent = send(client, chunk, chunk.count, Int32(MSG_NOSIGNAL))
                guard sent > 0 else { break }
                state.withLock { $0.written += sent }
            }
            state.withLock { $0.closed = true }
        }
    }

    /// A reader that falls behind pauses the transfer: the server can write only what the transport's window and
    /// the kernel's socket buffers hold (a few MB), not what the network carries in the meantime (with Foundation's
    /// URLSession, hundreds of MB a second). Reading on resumes it; ending the stream closes the connection.
    @Test func aReaderThatFallsBehindPausesTheTransfer() async throws {
        let server = try EndlessServer()
        let request = HTTPRequest(url: URL(string: "http://127.0.0.1:\(server.port)/endless")!)
        var iterator = HTTPStream.start(request, timeout: 60).makeAsyncIterator()
        guard case .head(let status, _)? = try await iterator.next() else {
            Issue.record("no head")
            return
        }
        #expect(status == 200)
        // Not reading for a while: whatever the machine's speed, the server is held back.
        try await Task.sleep(for: .seconds(2))
        let paused = server.written
        #expect(paused < 32 << 20, "the server wrote \(paused >> 20) MB to a reader that read nothing")
        var read = 0
        while read < 64 << 20, case .body(let data)? = try await iterator.next() { read += data.count }
        #expect(read >= 64 << 20, "reading on resumes the transfer")
        _ = consume iterator
        let deadline = ContinuousClock.now + .seconds(30)
        while !server.closed, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(server.closed, "ending the stream closes the connection")
    }

    /// A redirect within the origin is followed (a 307 keeps the method and the body); one to another origin is
    /// delivered as it is, and that origin receives nothing.
    @Test func redirectsAreFollowedOnlyWithinTheOrigin() async throws {
        let server = try LoopbackServer([
            LoopbackServer.Reply(status: 307, headers: [("Location", "/v1/moved")], pieces: []),
            .status(200, "done"),
        ])
        defer { server.stop() }
        var request = HTTPRequest(url: server.baseURL.appendingPathComponent("start"), method: "POST")
        request.body = Data("payload".utf8)
        request.setHeader("Bearer secret", for: "Authorization")
        var status = 0
        var body = Data()
        for try await event in HTTPStream.start(request, timeout: 60) {
            switch event {
            case .head(let code, _): status = code
            case .body(let data): body += data
            }
        }
        #expect(status == 200)
        #expect(String(decoding: body, as: UTF8.self) == "done")
        #expect(
            server.requests.map { $0.head.split(separator: "\r\n").first.map(String.init) ?? "" } == [
                "POST /v1/start HTTP/1.1", "POST /v1/moved HTTP/1.1",
            ])
        #expect(server.requests.last?.body == "payload")

        let other = try LoopbackServer([.status(200, "should not be asked")])
        defer { other.stop() }
        let away = try LoopbackServer([
            LoopbackServer.Reply(
                status: 302, headers: [("Location", "http://127.0.0.1:\(other.port)/v1/x")], pieces: [])
        ])
        defer { away.stop() }
        var delivered = 0
        for try await event in HTTPStream.start(HTTPRequest(url: away.baseURL), timeout: 60) {
            if case .head(let code, _) = event { delivered = code }
        }
        #expect(delivered == 302)
        #expect(other.requests.isEmpty)
    }

    /// A header value (a session id a server chose, a value from a config file) cannot add header lines.
    @Test func headerValuesCannotAddLines() {
        var request = HTTPRequest(url: URL(string: "http://127.0.0.1/")!)
        request.setHeader("abc\r\nX-Injected: 1", for: "Mcp-Session-Id")
        request.setHeader("second", for: "mcp-session-id")
        #expect(request.headers.count == 1)
        #expect(request.header("MCP-SESSION-ID") == "second")
        request.setHeader("abc\r\nX-Injected: 1", for: "Mcp-Session-Id")
        #expect(request.header("Mcp-Session-Id") == "abcX-Injected: 1")
    }

    /// A server that does not listen, and one that never answers, end the stream with a sentence.
    @Test func unreachableAndSilentServersEndTheStreamWithAReason() async throws {
        let closed = try LoopbackServer([])
        let port = closed.port
        closed.stop()
        let refused = HTTPRequest(url: URL(string: "http://127.0.0.1:\(port)/")!)
        await #expect(throws: HTTPTransportError.self) {
            for try await _ in HTTPStream.start(refused, timeout: 60) {}
        }
        do {
            for try await _ in HTTPStream.start(refused, timeout: 60) {}
        } catch {
            #expect("\(error)" == "connection refused")
        }
        var quiet = LoopbackServer.Reply()
        quiet.silent = true
        let silent = try LoopbackServer([quiet])
        defer { silent.stop() }
        do {
            for try await _ in HTTPStream.start(HTTPRequest(url: silent.baseURL), timeout: 0.5) {}
            Issue.record("a silent server ended the stream without an error")
        } catch let error as HTTPTransportError {
            #expect(error.kind == .timedOut)
            #expect("\(error)" == "timed out")
        }
    }
}
