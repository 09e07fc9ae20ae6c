import Foundation
import Support
import Synchronization
import TestSupport
import Testing

/// How the HTTP server takes connections: its own listening socket, accepted by one thread that hands each
/// connection to an event thread, so a burst of clients is spread over the event threads; a client that comes while
/// the server is full waits in the listen queue until room is made, instead of being accepted and dropped.
struct HTTPAcceptTests {
    /// A keep-alive HTTP/1.1 client on one loopback connection that reads whole answers (by Content-Length).
    final class Client: Sendable {
        let descriptor: Int32

        /// Connects; a read waits at most `cap` seconds for the server.
        init(port: UInt16, cap: Int = 60) throws {
            guard let descriptor = connectLoopback(port: Int(port)) else { throw POSIXError(.ECONNREFUSED) }
            self.descriptor = descriptor
            // A generous cap, so a server that never answers fails the test instead of hanging it.
            var limit = timeval(tv_sec: cap, tv_usec: 0)
            setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        }

        deinit { close(descriptor) }

        /// Sends a POST to `path` and reads its answer: the status and body, or nil when the connection ended.
        func post(_ path: String) -> (status: Int, body: String)? {
            let request = Array("POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\n{}".utf8)
            let sent = request.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent == request.count else { return nil }
            var answer: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let text = String(decoding: answer, as: UTF8.self)
                if let end = text.range(of: "\r\n\r\n") {
                    let head = text[..<end.lowerBound].lowercased()
                    let length = head.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
                        .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) }
                    let body = text[end.upperBound...]
                    if let length, body.utf8.count >= length {
                        let status = Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0
                        return (status, String(body))
                    }
                }
                let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
                guard count > 0 else { return nil }
                answer += buffer[0..<count]
            }
        }
    }

    /// 32 clients that connect at once are served by both event threads of `skillhost mcp --http` about equally —
    /// compared by the CPU time each thread spent on the same requests (a thread's own clock, not the wall clock:
    /// a busy machine slows both alike). When the event threads accepted for themselves, whichever woke first took
    /// most of a burst (11 and 21 connections, one thread near a full core while the other idled).
    @Test func aBurstOfClientsIsSpreadOverTheEventThreads() async throws {
        let (environment, _) = try MCPHTTPTests.home("mcp-http-spread", config: "{}")
        let server = try await HTTPServerProcess.start(arguments: [], environment: environment)
        defer { server.terminate() }
        let port = UInt16(server.port)
        let answered = try await offPool { () -> Int in
            let clients = try (0..<32).map { _ in try Client(port: port) }
            let count = Mutex(0)
            DispatchQueue.concurrentPerform(iterations: clients.count) { index in
                // An unknown path: the same small amount of work for every request, no skill on another thread.
                let done = (0..<150).filter { _ in clients[index].post("/elsewhere")?.status == 404 }.count
                count.withLock { $0 += done }
            }
            return count.withLock { $0 }
        }
        #expect(answered == 32 * 150)
        let times = try Self.eventThreadTimes(pid: server.pid)
        #expect(times.count == 2, "\(times)")
        let (least, most) = (times.min() ?? 0, times.max() ?? 0)
        // The fault it guards against left one thread idle beside a busy one (far under 0.4); beside the whole suite
        // a fair spread measured as low as 0.57, so the bound leaves room for a busy machine.
        #expect(most > 0 && Double(least) / Double(most) >= 0.4, "event threads' CPU time (ns): \(times)")
    }

    /// The CPU time (ns) of the process's two busiest event threads (libmicrohttpd names them MHD-worker).
    static func eventThreadTimes(pid: Int32) throws -> [Int] {
        let tasks = "/proc/\(pid)/task"
        var times: [Int] = []
        for task in try FileManager.default.contentsOfDirectory(atPath: tasks) {
            guard let name = try? String(contentsOfFile: "\(tasks)/\(task)/comm", encoding: .utf8),
                name.hasPrefix("MHD-worker"),
                let stat = try? String(contentsOfFile: "\(tasks)/\(task)/schedstat", encoding: .utf8),
                let time = stat.split(separator: " ").first.flatMap({ Int($0) })
            else { continue }
            times.append(time)
        }
        return Array(times.sorted().suffix(2))
    }

    /// Clients that come while the server holds its maximum of connections are not accepted and dropped: they
    /// wait in the listen queue and are answered as the server makes room (here by cutting idle connections
    /// beyond the limit less its reserve). Thirty-two at once: a connection handed to an event thread that had
    /// just reached libmicrohttpd's own limit stalled that thread for good (in one run of three before the fix).
    @Test func clientsBeyondTheConnectionLimitWaitForRoom() async throws {
        var limits = HTTPServer.Limits()
        limits.maximumConnections = 16
        limits.reservedConnections = 4
        let server = try HTTPServer(address: "127.0.0.1", port: 0, limits: limits) { _, exchange in
            exchange.respond(200, headers: [("Content-Type", "text/plain")], body: Array("ok".utf8))
        }
        defer { server.stop() }
        let port = server.port
        let (early, late) = try await offPool { () -> (Int, [String]) in
            let full = try (0..<16).map { _ in try Client(port: port) }
            let early = full.filter { $0.post("/x")?.body == "ok" }.count
            // Connecting succeeds (the kernel queues them); the answers come as room is made.
            // Each on a thread of its own, so a stalled server fails the test within one cap (30 s).
            let extra = try (0..<32).map { _ in try Client(port: port, cap: 30) }
            let answers = Mutex([String](repeating: "", count: extra.count))
            let group = DispatchGroup()
            for (index, client) in extra.enumerated() {
                group.enter()
                Thread {
                    let answer = client.post("/x")
                    answers.withLock { $0[index] = answer.map { "\($0.status) \($0.body)" } ?? "none" }
                    group.leave()
                }.start()
            }
            group.wait()
            return (early, answers.withLock { $0 })
        }
        #expect(early == 16)
        #expect(late == Array(repeating: "200 ok", count: 32), "the later clients' answers: \(late)")
        // The first connections were cut to make room; the event threads still serve new clients.
        let after = try await offPool { try Client(port: port).post("/x")?.body }
        #expect(after == "ok")
    }
}
