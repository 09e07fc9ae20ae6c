/// Every command-line option, declared once: the parser reads every option by this table (a flag is set, an option
/// with a value keeps the values given, then each is read for what it means); completion takes its names (bash also
/// which values complete as files and which from fixed choices); `--help` its "Options for every command" block (and
/// the man page, made from the help texts). `CommandLineOptionsTests` holds the help texts, the completions and the
/// parser to this table.
struct CommandLineOption: Sendable {
    /// What the option takes after it.
    enum Value: Sendable, Equatable {
        /// Nothing: a flag.
        case none
        /// A file or folder (completed as one).
        case path
        /// One of these words (completed from them).
        case choice([String])
        /// Anything else: an id, a number, a duration, an address.
        case text
    }

    let name: String
    var alias: String?
    let value: Value
    /// How `--help` writes the value (`<dir>`, `N`), nil for a flag.
    var placeholder: String?
    /// One line for the help block of options every command takes; nil for an option of some commands only (its
    /// command's help says it).
    var everyCommand: String?
    /// What the option does in each command's help that lists it, by command (continuation lines after "\n", each
    /// with the spaces it adds to the column).
    var commands: [String: String] = [:]

    static let all: [CommandLineOption] = [
        CommandLineOption(
            name: "--plugins", value: .path, placeholder: "<dir>",
            everyCommand: "also load plugins from <dir> (repeatable)"),
        CommandLineOption(
            name: "--no-default-plugins", value: .none,
            everyCommand: "skip the bundled plugins and the user plugins folder"),
        CommandLineOption(
            name: "--isolate", value: .choice(["all", "none"]), placeholder: "all|none|<plugin>,…",
            everyCommand: "run these plugins in worker processes (default: all but the bundled ones)"),
        CommandLineOption(name: "--version", value: .none, everyCommand: "print the version"),
        CommandLineOption(
            name: "--raw", value: .none, everyCommand: "the shell leaves model answers as sent (no markdown layout)"),
        CommandLineOption(
            name: "--help", alias: "-h", value: .none, everyCommand: "show the help of the command it follows"),
        CommandLineOption(
            name: "--json", value: .none,
            commands: [
                "list": #"print {"skills": [...], "plugins": [...], "failures": [...], "kept_images": {...}} instead"#,
                "call": #"""
                print {"status": "ok"|"error"|"timeout"|"cancelled"|"invalid_args",
                       "result"|"error": ..., "duration_ms": ...}
                """#,
                "ask": "print every event as a JSON line",
            ]),
        CommandLineOption(
            name: "--watch", value: .none,
            commands: [
                "list": """
                then keep watching the plugins folders and print one line per change (loaded, replaced,
                unloaded, failed) until Ctrl-C; with --json, one JSON object per line
                """
            ]),
        CommandLineOption(
            name: "--timeout", value: .text, placeholder: "<duration>",
            commands: [
                "call": """
                deadline for this call, with its unit: 500ms, 2s, 1.5s, 1m; from 1 ms to
                24 hours (a bare number is refused: seconds or milliseconds?)
                (default: the skill's, else 10s)
                """
            ]),
        CommandLineOption(
            name: "--yes", alias: "-y", value: .none,
            commands: [
                "call": """
                confirm a call the policy would ask about (a destructive skill); without a
                terminal to ask on, such a call needs it. A "deny" rule in config.json still wins.
                """
            ]),
        CommandLineOption(
            name: "--step-limit", value: .text, placeholder: "N",
            commands: ["ask": "model requests per turn (default 8)"]),
        CommandLineOption(
            name: "--record", value: .path, placeholder: "<file>",
            commands: ["ask": "write the turn as a .skillrec (skillhost replay <file> runs it again offline)"]),
        CommandLineOption(
            name: "--save", value: .none,
            commands: ["ask": "keep the turn in the history as a new session; its id is said on standard error"]),
        CommandLineOption(
            name: "--resume", value: .text, placeholder: "<id>",
            commands: ["ask": "continue a saved session (skillhost sessions lists them) with its whole context"]),
        CommandLineOption(
            name: "--rewind", value: .text, placeholder: "N",
            commands: [
                "ask": """
                with --resume: first go back to before your message N — the changes made since are
                undone newest first (those with no way back are named), the conversation is cut there
                """
            ]),
        CommandLineOption(name: "--http", value: .text, placeholder: "<address:port>"),
        CommandLineOption(name: "--tls-cert", value: .path, placeholder: "<file>"),
        CommandLineOption(name: "--tls-key", value: .path, placeholder: "<file>"),
        CommandLineOption(name: "--lang", value: .choice(["c", "cpp", "swift"]), placeholder: "c|cpp|swift"),
        CommandLineOption(name: "--dir", value: .path, placeholder: "<dir>"),
        CommandLineOption(name: "--sdk", value: .path, placeholder: "<prefix>"),
        CommandLineOption(name: "--kind", value: .choice(["plugin", "skill"]), placeholder: "plugin|skill"),
        CommandLineOption(name: "--with-view", value: .none),
        CommandLineOption(name: "--skills", value: .choice(["recorded", "live"]), placeholder: "recorded|live"),
        CommandLineOption(name: "--answers-from-record", value: .none),
        CommandLineOption(name: "--man", value: .none),
    ]

    /// The option `word` names (its name or alias).
    static func named(_ word: String) -> CommandLineOption? { all.first { $0.name == word || $0.alias == word } }

    /// The names completion offers.
    static var names: [String] { all.map(\.name) }

    /// The options whose value is a file or folder.
    static var pathNames: [String] { all.filter { $0.value == .path }.map(\.name) }

    /// The `--help` block of options every command takes, aligned as the rest of the help.
    static var everyCommandBlock: String {
        all.compactMap { option -> String? in
            guard let line = option.everyCommand else { return nil }
            let head = "  " + option.name + (option.placeholder.map { " " + $0 } ?? "")
            return head.count <= 24
                ? head.padding(toLength: 26, withPad: " ", startingAt: 0) + line
                : head + "\n" + String(repeating: " ", count: 26) + line
        }.joined(separator: "\n")
    }

    /// The option lines of `command`'s help, in the table's order, the descriptions starting in one column (three
    /// spaces after the longest name).
    static func block(for command: String) -> String {
        let listed = all.compactMap { option -> (head: String, text: String)? in
            guard let text = option.commands[command] else { return nil }
            let names = option.name + (option.alias.map { ", " + $0 } ?? "")
            return ("  " + names + (option.placeholder.map { " " + $0 } ?? ""), text)
        }
        let column = (listed.map(\.head.count).max() ?? 0) + 3
        return listed.map { head, text in
            text.split(separator: "\n", omittingEmptySubsequences: false).enumerated().map { index, line in
                (index == 0
                    ? head.padding(toLength: column, withPad: " ", startingAt: 0)
                    : String(repeating: " ", count: column)) + line
            }.joined(separator: "\n")
        }.joined(separator: "\n")
    }
}
