import Foundation
import TestSupport
import Testing

/// The README and docs/ say what the binary does: every link leads somewhere, every configuration block is one
/// skillhost accepts, the reference pages name every setting and exit code the binary has, and the README's tour
/// runs as written. (The C example of docs/write-a-skill.md is built and run by `CLITests`, the curl example of
/// docs/mcp.md by `MCPHTTPTests`, the Quick start's commands by `SetupScriptTests`.)
struct DocsTests {
    /// Every markdown page of the repository that people read: README, ARCHITECTURE, BENCHMARKS and docs/.
    static func pages() throws -> [String] {
        let root = Paths.root.path
        var pages = ["README.md", "ARCHITECTURE.md", "BENCHMARKS.md"]
        let docs = FileManager.default.enumerator(atPath: root + "/docs")
        while let path = docs?.nextObject() as? String {
            if path.hasSuffix(".md") { pages.append("docs/" + path) }
        }
        return pages
    }

    static func read(_ page: String) throws -> String {
        try String(contentsOf: Paths.root.appendingPathComponent(page), encoding: .utf8)
    }

    /// GitHub's anchor for a heading: lower case, punctuation other than `-` and `_` dropped, spaces as `-`.
    static func anchor(_ heading: String) -> String {
        String(
            heading.lowercased().compactMap { character -> Character? in
                if character == " " { return "-" }
                return character.isLetter || character.isNumber || character == "-" || character == "_"
                    ? character : nil
            })
    }

    static func anchors(_ text: String) -> Set<String> {
        var inCode = false
        var found: Set<String> = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") { inCode.toggle() }
            guard !inCode, line.hasPrefix("#") else { continue }
            found.insert(anchor(String(line.drop { $0 == "#" }.drop { $0 == " " })))
        }
        return found
    }

    @Test func theReadmeIsAFrontPageAndEveryGuideIsReachable() throws {
        let readme = try Self.read("README.md")
        let lines = readme.split(separator: "\n", omittingEmptySubsequences: false).count
        #expect(lines <= 200, "README.md is \(lines) lines; the rest belongs in docs/")
        let index = try Self.read("docs/README.md")
        for page in try Self.pages() where page.hasPrefix("docs/") && page != "docs/README.md" {
            let name = String(page.dropFirst("docs/".count))
            #expect(index.contains("](\(name))"), "docs/README.md does not link \(name)")
        }
    }

    @Test func everyLinkLeadsToAFileAndHeadingThatExist() throws {
        let pattern = try NSRegularExpression(pattern: #"\]\(([^)\s]+)\)"#)
        var checked = 0
        for page in try Self.pages() {
            let text = try Self.read(page)
            let folder = (page as NSString).deletingLastPathComponent
            for match in pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                guard let range = Range(match.range(at: 1), in: text) else { continue }
                let link = String(text[range])
                if link.hasPrefix("http://") || link.hasPrefix("https://") || link.hasPrefix("mailto:") { continue }
                let parts = link.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
                let target =
                    parts[0].isEmpty
                    ? page
                    : ((folder as NSString).appendingPathComponent(String(parts[0])) as NSString).standardizingPath
                let path = Paths.root.appendingPathComponent(target).path
                #expect(FileManager.default.fileExists(atPath: path), "\(page): \(link) leads to no file")
                if parts.count == 2, target.hasSuffix(".md"), FileManager.default.fileExists(atPath: path) {
                    let anchors = Self.anchors(try Self.read(target))
                    #expect(anchors.contains(String(parts[1])), "\(page): \(link) names no heading of \(target)")
                }
                checked += 1
            }
        }
        #expect(checked > 50)
    }

    /// Every ```json block of the docs is a configuration skillhost accepts (a fragment `"key": …` inside braces):
    /// a misspelt key or a wrong value in an example fails here as it would for a reader.
    @Test func everyConfigurationBlockIsAccepted() async throws {
        let home = Paths.temporaryDirectory("docs-config")
        let folder = home + "/config/skillhost"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var checked = 0
        for page in try Self.pages() where page.hasPrefix("docs/") {
            for block in Self.blocks(in: try Self.read(page), language: "json") {
                let text = block.trimmingCharacters(in: .whitespacesAndNewlines)
                try (text.hasPrefix("{") ? text : "{" + text + "}").write(
                    toFile: folder + "/config.json", atomically: true, encoding: .utf8)
                let check = try await runProcessOffPool(
                    Paths.skillhost, ["config", "check"], environment: cliEnvironment(home: home))
                #expect(check.status == 0, "\(page): \(check.stderr)\n\(text)")
                checked += 1
            }
        }
        #expect(checked >= 10)
    }

    /// The fenced blocks of one language, indented ones (inside a list item) included, without their indent.
    static func blocks(in text: String, language: String) -> [String] {
        var blocks: [String] = []
        var current: [Substring]?
        var indent = 0
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.drop { $0 == " " }
            if var lines = current {
                if trimmed == "```" {
                    blocks.append(lines.joined(separator: "\n"))
                    current = nil
                } else {
                    lines.append(line.dropFirst(min(indent, line.prefix { $0 == " " }.count)))
                    current = lines
                }
            } else if trimmed == "```\(language)" {
                indent = line.count - trimmed.count
                current = []
            }
        }
        return blocks
    }

    @Test func theConfigurationReferenceNamesEverySetting() async throws {
        let home = Paths.temporaryDirectory("docs-settings")
        try FileManager.default.createDirectory(atPath: home + "/config/skillhost", withIntermediateDirectories: true)
        try #"{"no_such_setting": 1}"#.write(
            toFile: home + "/config/skillhost/config.json", atomically: true, encoding: .utf8)
        let refused = try await runProcessOffPool(
            Paths.skillhost, ["config", "check"], environment: cliEnvironment(home: home))
        let known = try #require(
            refused.stderr.components(separatedBy: "known settings: ").last?.split(separator: "\n").first)
        let keys = known.components(separatedBy: ", ")
        #expect(keys.count >= 20 && keys.contains("skills"), "\(refused.stderr)")
        try "{}".write(toFile: home + "/config/skillhost/config.json", atomically: true, encoding: .utf8)
        let shown = try await runProcessOffPool(
            Paths.skillhost, ["config", "show"], environment: cliEnvironment(home: home))
        let rows = Set(
            shown.stdout.split(separator: "\n").compactMap { $0.split(separator: " ").first.map(String.init) })
        let reference = try Self.read("docs/reference/configuration.md")
        for key in keys {
            #expect(reference.contains("| `\(key)` |"), "docs/reference/configuration.md has no row for \(key)")
            #expect(rows.contains(key), "skillhost config show has no row for \(key)")
        }
    }

    @Test func theExitCodeReferenceNamesEveryCode() async throws {
        let help = try await runProcessOffPool(
            Paths.skillhost, ["--help"], environment: cliEnvironment(home: Paths.temporaryDirectory("docs-help")))
        let line = try #require(help.stdout.components(separatedBy: "Exit codes: ").last)
        let codes = try NSRegularExpression(pattern: #"(\d+) [a-z]"#).matches(
            in: line, range: NSRange(line.startIndex..., in: line)
        ).compactMap { Range($0.range(at: 1), in: line).map { String(line[$0]) } }
        #expect(codes.count >= 11, "\(line)")
        let reference = try Self.read("docs/reference/exit-codes.md")
        for code in codes + ["141"] {
            #expect(reference.contains("\n| \(code) |"), "docs/reference/exit-codes.md has no row for \(code)")
        }
    }

    /// The README's tour, each command run as written (from a folder that has the clone's `.build/debug` and
    /// `SkillSDK`), in a fresh home, in order: `# → text` means the output holds text, `# exit N: text` the exit
    /// status and the text on either stream; any other line must succeed.
    @Test func theToursCommandsRunAsWritten() async throws {
        let readme = try Self.read("README.md")
        let tour = try #require(
            readme.components(separatedBy: "## A ten-minute tour").dropFirst().first?.components(separatedBy: "\n## ")
                .first)
        let work = Paths.temporaryDirectory("docs-tour")
        // A busy machine's worker start for the plugin the tour builds (the tour is not about start deadlines).
        try givePatientWorkerStarts(home: work)
        try FileManager.default.createDirectory(atPath: work + "/.build", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: work + "/.build/debug", withDestinationPath: Paths.products)
        try FileManager.default.createSymbolicLink(
            atPath: work + "/SkillSDK", withDestinationPath: Paths.root.appendingPathComponent("SkillSDK").path)
        var ran = 0
        for command in Self.commands(in: Self.blocks(in: tour, language: "sh")) {
            let run = try await runProcessOffPool(
                "/bin/sh", ["-c", "cd \"$0\" && " + command.text, work], environment: cliEnvironment(home: work),
                stdin: "")
            let said = run.stdout + run.stderr
            #expect(run.status == command.status, "\(command.text): exit \(run.status)\n\(said)")
            #expect(command.shows.isEmpty || said.contains(command.shows), "\(command.text):\n\(said)")
            ran += 1
        }
        #expect(ran >= 12)
    }

    struct Command {
        let text: String
        let status: Int32
        let shows: String
    }

    /// A block's commands: one line each, with its here-document when it has one.
    static func commands(in blocks: [String]) -> [Command] {
        var commands: [Command] = []
        for block in blocks {
            var lines = block.split(separator: "\n")[...]
            while let line = lines.popFirst() {
                var text = String(line)
                var comment = ""
                if let mark = text.range(of: "  # ") {
                    comment = String(text[mark.upperBound...])
                    text = String(text[..<mark.lowerBound])
                }
                if let start = text.range(of: "<<'") {
                    let end = String(text[start.upperBound...].prefix { $0 != "'" })
                    while let body = lines.popFirst() {
                        text += "\n" + body
                        if body == end { break }
                    }
                }
                var status: Int32 = 0
                var shows = ""
                if comment.hasPrefix("→ ") {
                    shows = String(comment.dropFirst(2))
                } else if comment.hasPrefix("exit "), let code = Int32(comment.dropFirst(5).prefix { $0.isNumber }) {
                    status = code
                    shows = comment.components(separatedBy: ": ").dropFirst().joined(separator: ": ")
                }
                commands.append(Command(text: text, status: status, shows: shows))
            }
        }
        return commands
    }
}
