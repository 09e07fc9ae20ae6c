import Foundation

/// A real browser for the front end's tests: Debian's chromium (installed by `.ci/run`) driven by Playwright from
/// PyPI, installed once into the same environment as `PythonPeers` and launched with `executable_path` (Playwright
/// downloads no browser), with axe-core (bundled by axe-playwright-python) for the accessibility scans.
package enum BrowserPeer {
    package static let requirements = ["playwright==1.65.2", "axe-playwright-python==0.1.8"]
    package static let chromium = "/usr/bin/chromium"

    /// The python executable with Playwright, installing it if needed (on a thread of its own).
    package static func ensure() async throws -> String {
        let python = try await PythonPeers.ensure()
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            Thread { continuation.resume(with: Result { try PythonPeers.locked(installBlocking) }) }.start()
        }
        return python
    }

    private static func installBlocking() throws {
        guard FileManager.default.isExecutableFile(atPath: chromium) else {
            throw FixtureError.compileFailed("\(chromium) is missing: apt-get install chromium (.ci/run does)")
        }
        let marker = PythonPeers.folder + "/.installed-" + requirements.joined(separator: "+")
        if FileManager.default.fileExists(atPath: marker) { return }
        let pip = try runProcess(
            PythonPeers.folder + "/bin/pip", ["install", "--quiet", "--disable-pip-version-check"] + requirements,
            environment: userEnvironment())
        guard pip.status == 0 else {
            throw FixtureError.compileFailed("pip install \(requirements.joined(separator: " ")) failed: \(pip.stderr)")
        }
        _ = FileManager.default.createFile(atPath: marker, contents: Data())
    }
}
