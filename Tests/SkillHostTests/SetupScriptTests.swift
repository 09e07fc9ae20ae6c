import Foundation
import TestSupport
import Testing

/// The README's two commands are the set-up scripts, and the set-up finds nothing missing on a machine that ran
/// it (CI runs it first; the tests need what it installs).
struct SetupScriptTests {
    @Test func theReadmesCommandsAreTheScripts() throws {
        let readme = try String(contentsOf: Paths.root.appendingPathComponent("README.md"), encoding: .utf8)
        let quickStart = readme.components(separatedBy: "## Quick start").dropFirst().first ?? ""
        let blocks = quickStart.components(separatedBy: "```sh\n").dropFirst().map {
            $0.components(separatedBy: "\n```").first ?? ""
        }
        #expect(Array(blocks.prefix(2)) == ["Scripts/run", "Scripts/test"], "\(blocks.prefix(2))")
        let ci = try String(contentsOf: Paths.root.appendingPathComponent(".ci/run"), encoding: .utf8)
        #expect(ci.hasSuffix("\nScripts/test\n"), "CI runs exactly the README's test command")
    }

    @Test func theSetUpFindsNothingMissingHereAndRefusesAWrongPurpose() throws {
        let setup = Paths.root.appendingPathComponent("Scripts/setup").path
        let done = try runProcess(setup, ["test"])
        #expect(done.status == 0 && done.stderr.isEmpty, "\(done.stderr)")
        let wrong = try runProcess(setup, ["everything"])
        #expect(wrong.status == 2 && wrong.stderr == "usage: Scripts/setup run|test\n", "\(wrong.stderr)")
    }
}
