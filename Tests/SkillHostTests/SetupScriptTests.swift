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

/// A generated project's README lines its commands' comments up in one column, whatever the names in them.
struct GeneratedReadmeTests {
    @Test func theCommentsStandInOneColumn() throws {
        let folder = Paths.temporaryDirectory("generated-readme")
        for name in ["greeter", "a_much_longer_plugin_name"] {
            let made = try runProcess(
                "/bin/sh", ["-c", "cd \"$0\" && exec \"$1\" new \"$2\" --lang c", folder, Paths.skillhost, name],
                environment: cliEnvironment(home: folder))
            #expect(made.status == 0, "\(made.stderr)")
            let readme = try String(contentsOfFile: folder + "/\(name)/README.md", encoding: .utf8)
            let block =
                readme.components(separatedBy: "```sh\n").dropFirst().first?.components(separatedBy: "```")
                .first ?? ""
            let columns = Set(
                block.split(separator: "\n").compactMap { $0.range(of: "  # ")?.lowerBound.utf16Offset(in: $0) })
            #expect(columns.count == 1, "\(name): \(block)")
        }
    }
}
