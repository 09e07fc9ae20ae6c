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

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
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
    let client = try KeepAliveClient(target: target)
    for index in 0..<200 {
        guard client.succeeded(client.call(index)) else {
            throw BenchError("\(target.name): a warm-up call failed")
        }
    }
    return try (0..<runs).map { _ in
        var samples: [Double] = []
        samples.reserveCapacity(calls)
        for index in 0..<calls {
            let start = now()
            let status = client.call(index)
            samples.append(Double(now() - start))
            guard client.succeeded(status) else { throw BenchError("\(target.name): call \(index) failed") }
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
            guard let client = try? KeepAliveClient(target: target) else {
                results.withLock { $0.failures += calls }
                return
            }
            var samples: [Double] = []
            var failures = 0
            for index in 0..<calls {
                let begin = now()
                let status = client.call(index)
                samples.append(Double(now() - begin))
                if !client.succeeded(status) { failures += 1 }
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

/// `clients` threads, each on its own connection, all calling for the same `seconds` once every one is connected
/// and has made a first call: (calls/s, all latencies, failures). The rate counts only that window, in which every
/// client is busy — not the threads' start, the connects, or the last clients finishing alone.
func sustained(_ target: HTTPTarget, clients: Int, seconds: Double) -> (Double, Run, Int) {
    let results = Mutex<(samples: [Double], failures: Int, ended: UInt64)>(([], 0, 0))
    let ready = DispatchSemaphore(value: 0)
    let go = DispatchSemaphore(value: 0)
    let window = Mutex<(start: UInt64, end: UInt64)>((0, 0))
    let group = DispatchGroup()
    for _ in 0..<clients {
        group.enter()
        Thread {
            defer { group.leave() }
            let client = try? KeepAliveClient(target: target)
            let warm = client.map { $0.succeeded($0.call(0)) } ?? false
            ready.signal()
            go.wait()
            guard let client, warm else {
                results.withLock { $0.failures += 1 }
                return
            }
            let end = window.withLock { $0.end }
            var samples: [Double] = []
            samples.reserveCapacity(Int(seconds * 4000))
            var failures = 0
            var index = 1
            var finished = now()
            while finished < end {
                let begin = finished
                let status = client.call(index)
                finished = now()
                samples.append(Double(finished - begin))
                if !client.succeeded(status) { failures += 1 }
                index += 1
            }
            results.withLock {
                $0.samples += samples
                $0.failures += failures
                $0.ended = max($0.ended, finished)
            }
        }.start()
    }
    for _ in 0..<clients { ready.wait() }
    let start = now()
    window.withLock { $0 = (start, start + UInt64(seconds * 1e9)) }
    for _ in 0..<clients { go.signal() }
    group.wait()
    let (samples, failures, ended) = results.withLock { $0 }
    guard ended > start else { return (0, Run(samples: [0]), failures) }  // no client got to call
    return (Double(samples.count) / (Double(ended - start) / 1e9), Run(samples: samples), failures)
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
        HTTPTarget(name: "floor", port: floor.port, headers: [], fixedBody: #"{"jsonrpc":"2.0","id":1,"method":"x"}"#),
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
    print("32 concurrent clients, each on its own keep-alive connection, all calling for 1.5 s once connected; 3 runs")
    print("")
    print("| run | calls/s | p50 | p99 | failed |")
    print("|---|---|---|---|---|")
    var concurrentCalls = 0
    for run in 1...3 {
        let (rate, latencies, failures) = sustained(target, clients: 32, seconds: 1.5)
        concurrentCalls += latencies.samples.count
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
    print(
        "| 0 (after the \(concurrentCalls) concurrent calls above) | \(server.residentKiB / 1024) MiB "
            + "(\(server.residentKiB) KiB) |")
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
