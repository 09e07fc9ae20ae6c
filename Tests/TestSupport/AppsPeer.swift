import Foundation

/// A third-party MCP App server from PyPI for the browser's tests: anywidget-mcp serving a wigglystuff widget over
/// stdio, fully offline (its view bundles the official ext-apps SDK and fetches the widget's code through app-only
/// tools). Installed once into an environment of its own (its pinned `mcp` and pydantic stay out of the other
/// peers' way).
package enum AppsPeer {
    package static let requirements = ["anywidget-mcp[server]==0.2.1", "wigglystuff==0.5.36"]
    package static let folder = Paths.root.appendingPathComponent(".build/apps-venv").path
    private static let installing = NSLock()

    /// The `anywidget-mcp` executable, installing it if needed (on a thread of its own).
    package static func ensure() async throws -> String {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                installing.lock()
                defer { installing.unlock() }
                continuation.resume(with: Result { try installBlocking() })
            }.start()
        }
    }

    private static func installBlocking() throws -> String {
        let executable = folder + "/bin/anywidget-mcp"
        let marker = folder + "/.installed-" + requirements.joined(separator: "+")
        if FileManager.default.fileExists(atPath: marker) { return executable }
        try PythonPeers.makeEnvironment(folder, requirements)
        _ = FileManager.default.createFile(atPath: marker, contents: Data())
        return executable
    }
}
