import Dispatch
import Foundation
import MCP
import SkillJSON
import Support
import Synchronization

// MCP tools/call over HTTP from one native client (raw keep-alive sockets, a few microseconds of its own), against
// the loopback floor (a libmicrohttpd server answering a fixed body), `skillhost mcp --http` and FastMCP's HTTP
// server with an equivalent tool; then 32 concurrent clients against skillhost, and its memory over 100,000 calls.
//
//   .build/release/skillhost-bench --http-compare [--fastmcp <python with fastmcp>] [--calls N] [--runs R]

/// One keep-alive HTTP/1.1 connection: POST a body, read the answer (Content-Length or chunked). It shares the
/// machine's two cores with the server it measures, so a call costs it little: the request is written into one
/// reused buffer, the answer parsed in place on bytes, and only the body is copied out.
final class KeepAliveClient {
    private let socket: Int32
    /// Received bytes: `start..<count` is unread.
    private var buffer = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: 1 << 16)
    private var start = 0
    private var count = 0
    private var request: [UInt8] = []
    let port: Int

    init(port: Int) throws {
        self.port = port
        socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard connected else {
            buffer.deallocate()
            throw BenchError("cannot connect to port \(port)")
        }
        var one: Int32 = 1
        setsockopt(socket, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        request.reserveCapacity(4096)
    }

    deinit {
        close(socket)
        buffer.deallocate()
    }

    /// Sends a POST and returns the answer's status and body; nil when the connection failed or the answer was
    /// not HTTP.
    func post(_ path: String, headers: [(String, String)], body: String) -> (status: Int, body: [UInt8])? {
        request.removeAll(keepingCapacity: true)
        for piece in ["POST ", path, " HTTP/1.1\r\nHost: 127.0.0.1:"] { request.append(contentsOf: piece.utf8) }
        appendDecimal(port)
        request.append(contentsOf: "\r\nContent-Type: application/json\r\n".utf8)
        request.append(contentsOf: "Accept: application/json, text/event-stream\r\nContent-Length: ".utf8)
        appendDecimal(body.utf8.count)
        request.append(contentsOf: "\r\n".utf8)
        for (name, value) in headers {
            for piece in [name, ": ", value, "\r\n"] { request.append(contentsOf: piece.utf8) }
        }
        request.append(contentsOf: "\r\n".utf8)
        request.append(contentsOf: body.utf8)
        var sent = 0
        while sent < request.count {
            let written = request.withUnsafeBytes {
                send(socket, $0.baseAddress.map { $0 + sent }, $0.count - sent, Int32(MSG_NOSIGNAL))
            }
            guard written > 0 else { return nil }
            sent += written
        }
        guard let headEnd = find(Self.headEnd) else { return nil }
        let head = start..<headEnd
        // "HTTP/1.1 200 …": the status is the three digits after the first space.
        guard let space = head.first(where: { buffer[$0] == 32 }), space + 4 <= head.upperBound,
            let status = decimal(in: (space + 1)..<(space + 4))
        else { return nil }
        let length = headerValue(Self.contentLength, in: head).flatMap { decimal(in: $0) }
        // The servers measured send Transfer-Encoding only as chunked (HTTP/1.1 ends every coding with it).
        let chunked = headerValue(Self.transferEncoding, in: head) != nil
        start = headEnd + Self.headEnd.count
        if let length { return readExactly(length).map { (status, $0) } }
        guard chunked else { return (status, []) }
        var payload: [UInt8] = []
        while true {
            guard let lineEnd = find(Self.lineEnd) else { return nil }
            var size = 0
            for position in start..<lineEnd {
                guard let digit = Self.hexDigit(buffer[position]) else { break }
                size = size * 16 + digit
            }
            start = lineEnd + 2
            if size == 0 {
                guard let end = find(Self.lineEnd) else { return nil }
                start = end + 2
                return (status, payload)
            }
            guard let content = readExactly(size), readExactly(2) != nil else { return nil }
            payload += content
        }
    }

    private static let headEnd: [UInt8] = [13, 10, 13, 10]
    private static let lineEnd: [UInt8] = [13, 10]
    private static let contentLength = Array("\r\ncontent-length:".utf8)
    private static let transferEncoding = Array("\r\ntransfer-encoding:".utf8)

    private static func hexDigit(_ byte: UInt8) -> Int? {
        switch byte {
        case 48...57: Int(byte - 48)
        case 97...102: Int(byte - 87)
        case 65...70: Int(byte - 55)
        default: nil
        }
    }

    private func appendDecimal(_ value: Int) {
        var divisor = 1
        while divisor * 10 <= value { divisor *= 10 }
        while divisor > 0 {
            request.append(UInt8(48 + value / divisor % 10))
            divisor /= 10
        }
    }

    /// Reads more, first moving the unread bytes to the front (or growing the buffer) when the end is near;
    /// returns how far the unread bytes moved back, nil at the end of the connection.
    private func fill() -> Int? {
        var moved = 0
        if buffer.count - count < 4096 {
            if start > 0 {
                moved = start
                if count > start, let base = buffer.baseAddress { memmove(base, base + start, count - start) }
                count -= start
                start = 0
            }
            if buffer.count - count < 4096 {
                let grown = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: buffer.count * 2)
                _ = grown.initialize(from: buffer[0..<count])
                buffer.deallocate()
                buffer = grown
            }
        }
        let received = recv(socket, buffer.baseAddress.map { $0 + count }, buffer.count - count, 0)
        guard received > 0 else { return nil }
        count += received
        return moved
    }

    /// Where `marker` begins in the unread bytes, reading more until it comes; nil at the end of the connection.
    private func find(_ marker: [UInt8]) -> Int? {
        var from = start
        while true {
            var index = from
            while index + marker.count <= count {
                if buffer[index] == marker[0] {
                    var offset = 1
                    while offset < marker.count, buffer[index + offset] == marker[offset] { offset += 1 }
                    if offset == marker.count { return index }
                }
                index += 1
            }
            from = max(start, count - marker.count + 1)
            guard let moved = fill() else { return nil }
            from -= moved
        }
    }

    /// The decimal number written in `range` (spaces around it skipped).
    private func decimal(in range: Range<Int>) -> Int? {
        var value: Int?
        for position in range {
            let byte = buffer[position]
            if byte == 32 || byte == 9 { continue }
            guard byte >= 48, byte <= 57 else { return nil }
            value = (value ?? 0) * 10 + Int(byte - 48)
        }
        return value
    }

    /// The value's range of the header line beginning with `marker` ("\r\nname:", name in lower case).
    private func headerValue(_ marker: [UInt8], in head: Range<Int>) -> Range<Int>? {
        var index = head.lowerBound
        while index + marker.count <= head.upperBound {
            var offset = 0
            while offset < marker.count {
                var byte = buffer[index + offset]
                if byte >= 65, byte <= 90 { byte += 32 }
                guard byte == marker[offset] else { break }
                offset += 1
            }
            if offset == marker.count {
                let valueStart = index + marker.count
                var valueEnd = valueStart
                while valueEnd < head.upperBound, buffer[valueEnd] != 13 { valueEnd += 1 }
                return valueStart..<valueEnd
            }
            index += 1
        }
        return nil
    }

    private func readExactly(_ length: Int) -> [UInt8]? {
        while count - start < length { guard fill() != nil else { return nil } }
        let content = Array(buffer[start..<(start + length)])
        start += length
        return content
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// How one server is spoken to: the request's headers and body for call `index`, and whether an answer is good.
struct HTTPTarget: Sendable {
    let name: String
    let port: Int
    var headers: [(String, String)]
    let body: @Sendable (Int) -> String

    /// A 2026-07-28 stateless tools/call.
    static func stateless(name: String, port: Int, tool: String, arguments: String) -> HTTPTarget {
        let meta =
            #""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#
        return HTTPTarget(
            name: name, port: port,
            headers: [("MCP-Protocol-Version", "2026-07-28"), ("Mcp-Method", "tools/call"), ("Mcp-Name", tool)]
        ) { index in
            #"{"jsonrpc":"2.0","id":\#(index),"method":"tools/call","params":{"name":"\#(tool)","arguments":\#(arguments),\#(meta)}}"#
        }
    }

    /// Whether an answer is a tool result (JSON, or one SSE event carrying it) that did not fail.
    static func succeeded(_ answer: (status: Int, body: [UInt8])?) -> Bool {
        guard let (status, body) = answer, status == 200 else { return false }
        return find(result, in: body) != nil && find(failed, in: body) == nil
    }

    private static let result = Array(#""result""#.utf8)
    private static let failed = Array(#""isError":true"#.utf8)

    /// Where `marker` first occurs in `bytes` at or after `from`.
    static func find(_ marker: [UInt8], in bytes: [UInt8], from: Int = 0) -> Int? {
        guard let first = marker.first, bytes.count >= marker.count else { return nil }
        var index = from
        while index + marker.count <= bytes.count {
            if bytes[index] == first, bytes[index..<(index + marker.count)].elementsEqual(marker) { return index }
            index += 1
        }
        return nil
    }
}

/// A child process that prints a line naming its port on standard error or output.
final class ServerProcess {
    let process = Process()
    let port: Int

    init(_ command: [String], portPattern: String, environment: [String: String]? = nil) throws {
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        if let environment { process.environment = environment }
        let pipe = Pipe()
        process.standardError = pipe
        process.standardOutput = pipe
        try process.run()
        var text = ""
        let handle = pipe.fileHandleForReading
        var found: Int?
        let deadline = Date().addingTimeInterval(120)
        while found == nil, Date() < deadline {
            let data = handle.availableData
            if data.isEmpty { break }
            text += String(decoding: data, as: UTF8.self)
            if let range = text.range(of: portPattern, options: .regularExpression) {
                found = Int(text[range].split(separator: ":").last?.prefix { $0.isNumber } ?? "")
            }
        }
        guard let found else { throw BenchError("server did not start: \(text)") }
        port = found
        Thread { while !handle.availableData.isEmpty {} }.start()
    }

    /// Resident memory in KiB (VmRSS), 0 when unknown.
    var residentKiB: Int {
        let status = (try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }

    func stop() {
        process.terminate()
        process.waitUntilExit()
    }
}

/// Per-call latencies of `calls` sequential calls on one connection, after 200 warm-up calls.
func sequential(_ target: HTTPTarget, calls: Int, runs: Int) throws -> [Run] {
    let client = try KeepAliveClient(port: target.port)
    for index in 0..<200 {
        guard HTTPTarget.succeeded(client.post("/mcp", headers: target.headers, body: target.body(index))) else {
            throw BenchError("\(target.name): a warm-up call failed")
        }
    }
    return try (0..<runs).map { _ in
        var samples: [Double] = []
        samples.reserveCapacity(calls)
        for index in 0..<calls {
            let start = now()
            let answer = client.post("/mcp", headers: target.headers, body: target.body(index))
            samples.append(Double(now() - start))
            guard HTTPTarget.succeeded(answer) else { throw BenchError("\(target.name): call \(index) failed") }
        }
        return Run(samples: samples)
    }
}

/// `clients` threads, each on its own connection, `calls` calls each: (calls/s, all latencies, failures).
func concurrent(_ target: HTTPTarget, clients: Int, calls: Int) -> (Double, Run, Int) {
    let results = Mutex<(samples: [Double], failures: Int)>(([], 0))
    let group = DispatchGroup()
    let start = now()
    for _ in 0..<clients {
        group.enter()
        Thread {
            defer { group.leave() }
            guard let client = try? KeepAliveClient(port: target.port) else {
                results.withLock { $0.failures += calls }
                return
            }
            var samples: [Double] = []
            var failures = 0
            for index in 0..<calls {
                let begin = now()
                let answer = client.post("/mcp", headers: target.headers, body: target.body(index))
                samples.append(Double(now() - begin))
                if !HTTPTarget.succeeded(answer) { failures += 1 }
            }
            results.withLock {
                $0.samples += samples
                $0.failures += failures
            }
        }.start()
    }
    group.wait()
    let seconds = Double(now() - start) / 1e9
    let (samples, failures) = results.withLock { $0 }
    return (Double(clients * calls) / seconds, Run(samples: samples), failures)
}

/// FastMCP's HTTP server with a calculator tool equivalent to the bundled one (+ - * / and parentheses).
let fastMCPServer = """
    import ast, operator, socket, sys
    from fastmcp import FastMCP
    mcp = FastMCP("calc")
    OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}
    def value(node):
        if isinstance(node, ast.BinOp): return OPS[type(node.op)](value(node.left), value(node.right))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub): return -value(node.operand)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)): return node.value
        raise ValueError("unsupported expression")
    @mcp.tool(annotations={"readOnlyHint": True})
    def calculator(expression: str) -> str:
        \"\"\"Evaluates an arithmetic expression.\"\"\"
        result = value(ast.parse(expression, mode="eval").body)
        return str(int(result) if float(result).is_integer() else result)
    sock = socket.socket(); sock.bind(("127.0.0.1", 0)); port = sock.getsockname()[1]; sock.close()
    print(f"listening on 127.0.0.1:{port}", file=sys.stderr, flush=True)
    mcp.run(transport="http", host="127.0.0.1", port=port, log_level="warning")
    """

func httpCompare(_ options: Options, fastMCPPython: String?) throws {
    let skillhost = bundledPluginFolder() + "/skillhost"
    let calls = min(options.calls, 5000)
    let runs = options.runs
    print("MCP tools/call over HTTP, keep-alive, one native client: \(runs) runs × \(calls) calls after 200 warm-up")
    print("")
    print("| server | median | p10 | p90 | spread of medians |")
    print("|---|---|---|---|---|")
    // The floor: the same HTTP library answering a fixed body, in this process.
    let fixed = Array(
        #"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"60"}],"isError":false}}"#.utf8)
    let floor = try HTTPFloorServer(body: fixed)
    let floorRuns = try sequential(
        HTTPTarget(name: "floor", port: floor.port, headers: []) { _ in #"{"jsonrpc":"2.0","id":1,"method":"x"}"# },
        calls: calls, runs: runs)
    print(Row(name: "loopback HTTP floor (libmicrohttpd, fixed answer)", runs: floorRuns).line)
    floor.stop()
    print(Row(name: "raw TCP round trip, 120 bytes each way (blocking reads)", runs: try rawTCP(calls, runs)).line)

    let server = try ServerProcess(
        [skillhost, "mcp", "--http", "127.0.0.1:0"], portPattern: "127\\.0\\.0\\.1:[0-9]+/mcp")
    let target = HTTPTarget.stateless(
        name: "skillhost", port: server.port, tool: "calculator", arguments: #"{"expression":"(23+7)*2"}"#)
    let skillhostRuns = try sequential(target, calls: calls, runs: runs)
    print(Row(name: "skillhost mcp --http, calculator", runs: skillhostRuns).line)

    var fastRuns: [Run] = []
    if let python = fastMCPPython {
        let script = NSTemporaryDirectory() + "skillhost-bench-fastmcp.py"
        try fastMCPServer.write(toFile: script, atomically: true, encoding: .utf8)
        let fast = try ServerProcess([python, script], portPattern: "127\\.0\\.0\\.1:[0-9]+")
        // FastMCP speaks the same stateless revision; the same client and request.
        Thread.sleep(forTimeInterval: 1.0)  // uvicorn prints before it accepts
        var fastTarget = HTTPTarget.stateless(
            name: "FastMCP", port: fast.port, tool: "calculator", arguments: #"{"expression":"(23+7)*2"}"#)
        fastTarget.headers.append(("Connection", "keep-alive"))
        fastRuns = try sequential(fastTarget, calls: min(calls, 1000), runs: runs)
        print(Row(name: "FastMCP (Python, uvicorn), calculator", runs: fastRuns).line)
        fast.stop()
    }
    let median: ([Run]) -> Double = { runs in runs.map { $0.percentile(0.5) }.sorted()[runs.count / 2] }
    if !fastRuns.isEmpty {
        print("")
        print(String(format: "p50 ratio FastMCP / skillhost: %.1f×", median(fastRuns) / median(skillhostRuns)))
    }

    print("")
    print("32 concurrent clients, each on its own keep-alive connection, 3 runs × 32 × 1,000 calls")
    print("")
    print("| run | calls/s | p50 | p99 | failed |")
    print("|---|---|---|---|---|")
    for run in 1...3 {
        let (rate, latencies, failures) = concurrent(target, clients: 32, calls: 1000)
        print(
            String(
                format: "| %d | %.0f | %.2f ms | %.2f ms | %d |", run, rate, latencies.percentile(0.5) / 1e6,
                latencies.percentile(0.99) / 1e6, failures))
    }

    print("")
    print("skillhost resident memory over 100,000 calls (4 clients)")
    print("")
    print("| calls so far | VmRSS |")
    print("|---|---|")
    print("| 0 (after 96,000 warm-up calls above) | \(server.residentKiB / 1024) MiB (\(server.residentKiB) KiB) |")
    for step in 1...5 {
        _ = concurrent(target, clients: 4, calls: 5000)
        print("| \(step * 20_000) | \(server.residentKiB / 1024) MiB (\(server.residentKiB) KiB) |")
    }
    server.stop()
}

/// The loopback floor: libmicrohttpd answering every request at once with a fixed body.
final class HTTPFloorServer {
    private let server: HTTPServer
    var port: Int { Int(server.port) }

    init(body: [UInt8]) throws {
        server = try HTTPServer(address: "127.0.0.1", port: 0) { _, exchange in
            exchange.respond(200, headers: [("Content-Type", "application/json")], body: body)
        }
    }

    func stop() { server.stop() }
}

/// The loopback TCP floor: a thread echoes 120-byte messages on one connection (blocking reads, `TCP_NODELAY`);
/// the client times each send → whole answer read.
func rawTCP(_ calls: Int, _ runs: Int) throws -> [Run] {
    let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(listener) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(listener, $0, length) == 0 && listen(listener, 1) == 0 && getsockname(listener, $0, &length) == 0
        }
    }
    guard bound else { throw BenchError("cannot listen for the raw TCP round trip") }
    let size = 120
    /// Reads exactly `size` bytes; false at the end.
    @Sendable func readAll(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer) -> Bool {
        var got = 0
        while got < size {
            let count = recv(descriptor, buffer + got, size - got, 0)
            if count <= 0 { return false }
            got += count
        }
        return true
    }
    let echo = Thread {
        let peer = accept(listener, nil, nil)
        guard peer >= 0 else { return }
        defer { close(peer) }
        var one: Int32 = 1
        setsockopt(peer, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 8)
        defer { buffer.deallocate() }
        while readAll(peer, buffer) { _ = send(peer, buffer, size, Int32(MSG_NOSIGNAL)) }
    }
    echo.start()
    let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(client) }
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(client, $0, length) == 0 }
    }
    guard connected else { throw BenchError("cannot connect for the raw TCP round trip") }
    var one: Int32 = 1
    setsockopt(client, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    let buffer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 8)
    defer { buffer.deallocate() }
    memset(buffer, 0x61, size)
    func roundTrip() throws -> Double {
        let start = now()
        guard send(client, buffer, size, Int32(MSG_NOSIGNAL)) == size, readAll(client, buffer) else {
            throw BenchError("the raw TCP round trip failed")
        }
        return Double(now() - start)
    }
    for _ in 0..<200 { _ = try roundTrip() }
    return try (0..<runs).map { _ in Run(samples: try (0..<calls).map { _ in try roundTrip() }) }
}
