import Dispatch
import Foundation
import SkillHost
import SkillJSON

// MCP servers measured from a native client: one JSON-RPC line out, read lines until the answer with that id comes
// back, parse it. The client costs a few microseconds, so the figures are the servers' (plus the pipe floor),
// not a Python client's (the Python SDK client alone adds ~200 µs per call; a minimal Python client ~75 µs).
//
//   .build/release/skillhost-bench --mcp-compare <path to mcp-server-time> [--calls N] [--runs R]

/// A child process speaking line-delimited JSON-RPC on its stdin/stdout.
final class LineClient {
    private let process = Process()
    private let toChild = Pipe()
    private let fromChild = Pipe()
    private let input: Int32
    private let output: Int32
    private var buffer: [UInt8] = []
    private var chunk = [UInt8](repeating: 0, count: 65536)

    init(_ command: [String]) throws {
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        process.standardInput = toChild
        process.standardOutput = fromChild
        process.standardError = FileHandle.nullDevice
        try process.run()
        input = toChild.fileHandleForWriting.fileDescriptor
        output = fromChild.fileHandleForReading.fileDescriptor
    }

    func send(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(input, $0.baseAddress, $0.count) }
    }

    func readLine() -> [UInt8]? {
        while true {
            if let newline = buffer.firstIndex(of: 10) {
                let line = Array(buffer[..<newline])
                buffer.removeSubrange(...newline)
                return line
            }
            let count = chunk.withUnsafeMutableBytes { read(output, $0.baseAddress, $0.count) }
            if count <= 0 { return nil }
            buffer.append(contentsOf: chunk[0..<count])
        }
    }

    /// Sends a request and returns the response with its id (notifications in between are skipped).
    func request(_ id: Int, _ method: String, _ params: JSONValue) -> JSONValue? {
        send(
            JSONValue.object(
                JSONObject([
                    (key: "jsonrpc", value: "2.0"), (key: "id", value: .int(Int64(id))),
                    (key: "method", value: .string(method)), (key: "params", value: params),
                ])
            ).jsonText)
        while let line = readLine() {
            guard let message = try? JSONValue(parsing: line) else { continue }
            if message["id"] == .int(Int64(id)) { return message }
        }
        return nil
    }

    func close() {
        try? toChild.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}

func mcpCompare(_ options: Options, serverTime: String) throws {
    let skillhost = bundledPluginFolder() + "/skillhost"
    let servers: [(String, [String], String, JSONValue)] = [
        ("skillhost mcp, calculator", [skillhost, "mcp"], "calculator", ["expression": "(23+7)*2"]),
        ("skillhost mcp, clock_now", [skillhost, "mcp"], "clock_now", ["time_zone": "Europe/Paris"]),
        (
            "mcp-server-time, get_current_time", [serverTime, "--local-timezone", "UTC"], "get_current_time",
            ["timezone": "Europe/Paris"]
        ),
    ]
    let calls = min(options.calls, 2000)
    // What the skill itself costs, called in-process on this thread (no server, no pipe).
    let registry = try SkillRegistry(
        configuration: .init(dataDirectory: URL(fileURLWithPath: NSTemporaryDirectory() + "skillhost-bench-data")))
    registry.loadFolder(bundledPluginFolder()) { $0.hasPrefix("libskill-") }
    for (tool, arguments) in [
        ("calculator", #"{"expression":"(23+7)*2"}"#), ("clock_now", #"{"time_zone":"Europe/Paris"}"#),
    ] {
        let runs = measure(Options(["--calls", "2000", "--runs", "3"])) {
            _ = registry.invokeOnCurrentThread(tool, arguments: arguments)
        }
        print(Row(name: "\(tool) in-process, calling thread", runs: runs).line)
    }
    registry.shutdown()
    print("")
    print("MCP tools/call from a native client: \(options.runs) runs × \(calls) calls after 50 warm-up calls")
    print("")
    print(
        "| server, tool | start → initialize answered (median of runs) | tools/call median | p10 | p90 | spread of medians |"
    )
    print("|---|---|---|---|---|---|")
    for (name, command, tool, arguments) in servers {
        var readies: [Double] = []
        var runs: [Run] = []
        for _ in 0..<options.runs {
            let start = now()
            let client = try LineClient(command)
            let initialize: JSONValue = [
                "protocolVersion": "2025-06-18", "capabilities": .object(JSONObject()),
                "clientInfo": ["name": "skillhost-bench", "version": "1"],
            ]
            guard client.request(0, "initialize", initialize)?["result"] != nil else {
                print("\(name): no answer to initialize")
                return
            }
            readies.append(Double(now() - start))
            client.send(#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            let params: JSONValue = ["name": .string(tool), "arguments": arguments]
            var samples: [Double] = []
            for index in 0..<(50 + calls) {
                let begin = now()
                let reply = client.request(index + 1, "tools/call", params)
                let elapsed = Double(now() - begin)
                guard let result = reply?["result"], result["isError"] != .bool(true) else {
                    print("\(name): tools/call failed: \(reply?.jsonText ?? "no answer")")
                    return
                }
                if index >= 50 { samples.append(elapsed) }
            }
            runs.append(Run(samples: samples))
            client.close()
        }
        let ready = Run(samples: readies).percentile(0.5) / 1e6
        let row = Row(name: name, runs: runs).line.dropFirst(2)
        print(
            "| \(name.split(separator: ",")[0]) — \(tool) | \(String(format: "%.1f ms", ready)) | "
                + row.split(separator: "|").dropFirst().joined(separator: "|") + "|")
    }
}
