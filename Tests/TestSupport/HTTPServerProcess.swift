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

/// `skillhost mcp --http 127.0.0.1:0 …` (or `skillhost web --http 127.0.0.1:0 …`) running as a real process:
/// started, its address read from the line it prints, stopped with SIGTERM.
package final class HTTPServerProcess: Sendable {
    private let process: Process
    /// The MCP endpoint, e.g. http://127.0.0.1:41234/mcp — or for `web`, the page's address with its token.
    package let url: String
    package let port: Int

    /// Starts the server and waits (off the cooperative pool, up to a generous cap) for its "serving MCP at" line.
    package static func start(arguments: [String], environment: [String: String]) async throws -> HTTPServerProcess {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(
                    with: Result {
                        try HTTPServerProcess(
                            arguments: ["mcp", "--http", "127.0.0.1:0"] + arguments, environment: environment,
                            web: false)
                    })
            }.start()
        }
    }

    /// `skillhost web --http 127.0.0.1:0 …`, waiting for its "open http://…/#token=…" line on standard output.
    package static func startWeb(arguments: [String] = [], environment: [String: String]) async throws
        -> HTTPServerProcess
    {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(
                    with: Result {
                        try HTTPServerProcess(
                            arguments: ["web", "--http", "127.0.0.1:0"] + arguments, environment: environment,
                            web: true)
                    })
            }.start()
        }
    }

    private init(arguments: [String], environment: [String: String], web: Bool) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Paths.skillhost)
        process.arguments = arguments
        process.environment = environment
        let announcements = privatePipe()
        let other = privatePipe()
        process.standardError = web ? other : announcements
        process.standardOutput = web ? announcements : other
        process.standardInput = FileHandle.nullDevice
        try launch(process)
        self.process = process
        let pattern =
            web ? #"open (http://[^ ]+:(\d+)/#token=[0-9a-f]+)"# : #"serving MCP at (https?://[^ ]+:(\d+)/mcp)"#
        let prefix = web ? "open " : "serving MCP at "
        let descriptor = announcements.fileHandleForReading.fileDescriptor
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
            if let range = text.range(of: pattern, options: .regularExpression) {
                let match = String(text[range].dropFirst(prefix.count))
                let portText = match.split(separator: ":").last?.split(separator: "/").first ?? ""
                found = (match, Int(portText) ?? 0)
            }
        }
        guard let found else {
            process.terminate()
            throw FixtureError.compileFailed("skillhost \(arguments[0]) --http did not start: \(text)")
        }
        (url, port) = found
        // The rest of both outputs is drained so the server never blocks writing them.
        for handle in [announcements.fileHandleForReading, other.fileHandleForReading] {
            Thread {
                while !handle.availableData.isEmpty {}
            }.start()
        }
    }

    /// SIGTERM, then waits for the exit (off the cooperative pool).
    package func stop() async { await terminateAndWait(process) }

    /// SIGTERM without waiting (for `defer`).
    package func terminate() { if process.isRunning { process.terminate() } }

    package var isRunning: Bool { process.isRunning }
    package var pid: Int32 { process.processIdentifier }
    package var terminationStatus: Int32 { process.terminationStatus }
}
