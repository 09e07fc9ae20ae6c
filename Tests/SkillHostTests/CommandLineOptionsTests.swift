import Foundation
import TestSupport
import Testing

/// Every command-line option is declared once (issue #65: each was written four times — parsing, help, completion,
/// man page): the man page (made from every help text), the three completion scripts and the parser all name the
/// same options, and an option a help text names is one the parser takes.
struct CommandLineOptionsTests {
    let environment = cliEnvironment(home: Paths.temporaryDirectory("options-home"))

    func run(_ arguments: [String]) throws -> ProcessResult {
        try runProcess(Paths.skillhost, arguments, environment: environment)
    }

    func options(in text: String) -> Set<String> {
        Set(text.matches(of: #/(?:^|[^\w-])(--[a-z][a-z-]*)/#).map { String($0.output.1) })
    }

    @Test func helpCompletionAndParsingNameTheSameOptions() throws {
        let manual = options(in: try run(["help", "--man"]).stdout)
        let bash = try run(["completion", "bash"]).stdout
        let offered = try #require(bash.firstMatch(of: #/compgen -W "(--[^"]*)"/#)).output.1
        let completed = Set(offered.split(separator: " ").map(String.init))
        #expect(
            manual == completed,
            "in the manual only: \(manual.subtracting(completed)); completed only: \(completed.subtracting(manual))")
        let zsh = options(in: try run(["completion", "zsh"]).stdout)
        let fish = Set(
            try run(["completion", "fish"]).stdout.matches(of: #/-l ([a-z-]+)/#).map { "--" + String($0.output.1) })
        #expect(zsh == completed)
        #expect(fish == completed)
        // The parser takes each of them: a flag, or an option that asks for its value — never "unknown option".
        for option in completed {
            let parsed = try run(["version", option])
            #expect(!parsed.stderr.contains("unknown option"), "\(option): \(parsed.stderr)")
        }
        let unknown = try run(["list", "--jsno"])
        #expect(unknown.status == 2)
        #expect(unknown.stderr.contains("unknown option --jsno"), "\(unknown.stderr)")
        #expect(unknown.stderr.contains("did you mean --json?"), "\(unknown.stderr)")
    }

    /// A value that completes as a file completes as one for every such option (`--record` did not).
    @Test func pathOptionsCompleteFiles() throws {
        let bash = try run(["completion", "bash"]).stdout
        let line = try #require(
            bash.split(separator: "\n").first { $0.contains("compgen -f") && $0.contains("--plugins") })
        for option in ["--plugins", "--record", "--tls-cert", "--tls-key", "--dir", "--sdk"] {
            #expect(line.contains(option), "\(line)")
        }
    }

    /// A command's option lines come from the table (issue #65): they name exactly the options its usage line
    /// names, besides those every command takes, each description starting in one column.
    @Test(arguments: ["list", "call", "ask"])
    func aCommandsOptionLinesMatchItsUsage(_ command: String) throws {
        let help = try run([command, "--help"]).stdout
        let usage = help.components(separatedBy: "\n\n").first ?? ""
        let lines = help.split(separator: "\n").filter { $0.hasPrefix("  --") }
        let listed = Set(lines.compactMap { $0.firstMatch(of: #/^  (--[a-z-]+)/#).map { String($0.output.1) } })
        let every: Set = ["--plugins", "--no-default-plugins", "--isolate", "--version", "--raw", "--help"]
        #expect(listed == options(in: usage).subtracting(every), "\(help)")
        // Where each description starts: after the first run of two or more spaces that follows the name.
        let columns = Set(lines.compactMap { $0.firstMatch(of: #/^  \S.*?\s{2,}/#)?.output.count })
        #expect(columns.count == 1, "one column: \(lines)")
    }
}
