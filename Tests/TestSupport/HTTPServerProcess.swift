import Foundation

/// Sends SIGTERM to `process` (if it runs) and waits for its exit on a thread of its own.
func terminateAndWait(_ process: Process) async {
    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
        Thread {
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
            done.resume()
        }.start()
    }
}

/// `skillhost mcp --http 127.0.0.1:0 …` running as a real process: started, its endpoint read from the line it
/// prints, stopped with SIGTERM.
package final class HTTPServerProcess: Sendable {
    private let process: Process
    /// The MCP endpoint, e.g. http://127.0.0.1:41234/mcp.
    package let url: String
    package let port: Int

    /// Starts the server and waits (off the cooperative pool, up to a generous cap) for its "serving MCP at" line.
    package static func start(arguments: [String], environment: [String: String]) async throws -> HTTPServerProcess {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(
                    with: Result { try HTTPServerProcess(arguments: arguments, environment: environment) })
            }.start()
        }
    }

    private init(arguments: [String], environment: [String: String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Paths.skillhost)
        process.arguments = ["mcp", "--http", "127.0.0.1:0"] + arguments
        process.environment = environment
        let errors = privatePipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try launch(process)
        self.process = process
        let descriptor = errors.fileHandleForReading.fileDescriptor
        var text = ""
        let deadline = ContinuousClock.now + .seconds(120)
        var found: (String, Int)?
        while found == nil, ContinuousClock.now < deadline {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 1000) >= 0 else { break }
            if poller.revents == 0 { continue }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = read(descriptor, &chunk, chunk.count)
            guard count > 0 else { break }
            text += String(decoding: chunk[0..<count], as: UTF8.self)
            if let range = text.range(of: #"serving MCP at (https?://[^ ]+:(\d+)/mcp)"#, options: .regularExpression) {
                let match = String(text[range]).replacingOccurrences(of: "serving MCP at ", with: "")
                let portText = match.split(separator: ":").last?.split(separator: "/").first ?? ""
                found = (match, Int(portText) ?? 0)
            }
        }
        guard let found else {
            process.terminate()
            throw FixtureError.compileFailed("skillhost mcp --http did not start: \(text)")
        }
        (url, port) = found
        // The rest of standard error is drained so the server never blocks writing it.
        let handle = errors.fileHandleForReading
        Thread {
            while !handle.availableData.isEmpty {}
        }.start()
    }

    /// SIGTERM, then waits for the exit (off the cooperative pool).
    package func stop() async { await terminateAndWait(process) }

    /// SIGTERM without waiting (for `defer`).
    package func terminate() { if process.isRunning { process.terminate() } }

    package var isRunning: Bool { process.isRunning }
    package var terminationStatus: Int32 { process.terminationStatus }
}
