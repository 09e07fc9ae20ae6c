import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A real HTTP/1.1 server on 127.0.0.1 for provider tests: each connection gets the next scripted reply.
package final class LoopbackServer: Sendable {
    /// One scripted reply.
    package struct Reply: Sendable {
        package var status = 200
        package var headers: [(String, String)] = [("Content-Type", "text/event-stream")]
        /// Body pieces, each sent after its delay.
        package var pieces: [(String, Duration)] = []
        /// After the pieces, keep the connection open until the client closes it.
        package var holdOpen = false
        /// Send nothing at all; wait until the client goes away.
        package var silent = false

        package init(
            status: Int = 200, headers: [(String, String)] = [("Content-Type", "text/event-stream")],
            pieces: [(String, Duration)] = [], holdOpen: Bool = false
        ) {
            self.status = status
            self.headers = headers
            self.pieces = pieces
            self.holdOpen = holdOpen
        }

        /// SSE events (`data:` payloads), sent one by one.
        package static func events(_ payloads: [String], delay: Duration = .zero, terminator: String = "\n\n") -> Reply
        {
            Reply(pieces: payloads.map { ("data: \($0)\(terminator)", delay) })
        }

        package static func status(_ status: Int, _ body: String, headers: [(String, String)] = []) -> Reply {
            Reply(status: status, headers: [("Content-Type", "application/json")] + headers, pieces: [(body, .zero)])
        }
    }

    /// A request as received.
    package struct Request: Sendable {
        package let head: String
        package let body: String

        package func header(_ name: String) -> String? {
            for line in head.split(separator: "\r\n") {
                let parts = line.split(separator: ":", maxSplits: 1)
                if parts.count == 2, parts[0].lowercased() == name.lowercased() {
                    return parts[1].trimmingCharacters(in: .whitespaces)
                }
            }
            return nil
        }
    }

    private struct State {
        var replies: [Reply]
        package var requests: [Request] = []
        var clientClosed = 0
    }

    package let port: Int
    private let listener: Int32
    private let state: Mutex<State>

    package init(_ replies: [Reply]) throws {
        state = Mutex(State(replies: replies))
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.listener = listener
        var one: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = loopbackAddress()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) }
        }
        guard bound == 0, listen(listener, 16) == 0 else {
            port = 0
            throw POSIXError(.EADDRINUSE)
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        let port = Int(UInt16(bigEndian: address.sin_port))
        self.port = port
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    package var baseURL: URL { URL(string: "http://127.0.0.1:\(port)/v1") ?? URL(fileURLWithPath: "/") }
    package var requests: [Request] { state.withLock { $0.requests } }
    /// Connections the client closed while the server was still holding them open.
    package var clientClosedConnections: Int { state.withLock { $0.clientClosed } }

    /// Stops accepting. The accepting thread closes the socket as it ends: closed here, its number could be given
    /// to another test's new socket while the thread still waits in accept() on it, and serve that test's clients.
    package func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
    }

    private func acceptLoop() {
        while true {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else {
                if errno == EINTR { continue }
                close(listener)
                return
            }
            let thread = Thread { [self] in serve(connection) }
            thread.start()
        }
    }

    private func serve(_ connection: Int32) {
        defer { close(connection) }
        var received = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var headEnd: Int?
        while headEnd == nil {
            let count = read(connection, &buffer, buffer.count)
            guard count > 0 else { return }
            received += buffer[0..<count]
            headEnd = Self.find([13, 10, 13, 10], in: received)
        }
        guard let headEnd else { return }
        let head = String(decoding: received[0..<headEnd], as: UTF8.self)
        let request0 = Request(head: head, body: "")
        let length = Int(request0.header("Content-Length") ?? "0") ?? 0
        while received.count < headEnd + 4 + length {
            let count = read(connection, &buffer, buffer.count)
            guard count > 0 else { break }
            received += buffer[0..<count]
        }
        let body = String(decoding: received[(headEnd + 4)...], as: UTF8.self)
        let reply = state.withLock { state -> Reply in
            state.requests.append(Request(head: head, body: body))
            return state.replies.isEmpty
                ? .status(500, #"{"error":{"message":"script exhausted"}}"#) : state.replies.removeFirst()
        }
        if reply.silent {
            while read(connection, &buffer, buffer.count) > 0 {}
            state.withLock { $0.clientClosed += 1 }
            return
        }
        var response = "HTTP/1.1 \(reply.status) Scripted\r\nConnection: close\r\n"
        for (name, value) in reply.headers { response += "\(name): \(value)\r\n" }
        response += "\r\n"
        guard send(connection, response) else { return }
        for (piece, delay) in reply.pieces {
            if delay > .zero {
                Thread.sleep(
                    forTimeInterval: Double(delay.components.attoseconds) / 1e18 + Double(delay.components.seconds))
            }
            guard send(connection, piece) else {
                state.withLock { $0.clientClosed += 1 }
                return
            }
        }
        if reply.holdOpen {
            // Wait until the client goes away (read returns 0 or fails).
            while read(connection, &buffer, buffer.count) > 0 {}
            state.withLock { $0.clientClosed += 1 }
        }
    }

    private func send(_ connection: Int32, _ text: String) -> Bool {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBytes { Glibc.send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            == bytes.count
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for index in 0...(haystack.count - needle.count) where Array(haystack[index..<index + needle.count]) == needle {
            return index
        }
        return nil
    }
}
