import SkillJSON

/// A command line problem: rendered as `skillhost: <message>` plus a hint, exit code 2.
struct UsageError: Error, Equatable {
    let message: String
    let hint: String?

    init(_ message: String, hint: String? = nil) {
        self.message = message
        self.hint = hint
    }
}

/// The subcommands and their options.
/// `ask`'s options: the question (nil: read from stdin), output, limits, the record to write, and the stored
/// session to continue (`--resume`), going back to before the person's message `rewind` first.
struct AskOptions: Equatable {
    var prompt: String?
    var json = false
    var stepLimit: Int?
    var record: String?
    var resume: String?
    var rewind: Int?
    /// `--save`: keep the turn in the history as a new session (`--resume` continues one).
    var save = false
}

enum Command: Equatable {
    case help(topic: String?)
    case version
    case list(json: Bool, watch: Bool)
    case call(skill: String, arguments: String?, json: Bool, timeout: Duration?, confirmed: Bool)
    case check(file: String, json: Bool)
    case ask(AskOptions)
    /// `replay FILE [--skills recorded|live] [--answers-from-record]`.
    case replay(file: String, live: Bool, json: Bool, answersFromRecord: Bool)
    /// No subcommand: the interactive shell (or, with piped input, one quiet turn).
    case shell(resume: String?)
    case sessions
    case mcp(MCPOptions)
    /// `web [--http ADDRESS:PORT]`: the browser front end.
    case web(http: String?)
    /// `plugin install FILE | remove NAME | list`.
    case plugin(action: String, argument: String?)
    /// `config path | show | check`.
    case config(action: String)
    /// `policy explain SKILL ['<json>']`.
    case policy(skill: String, arguments: String?)
    /// `trust NAME`: a skill, plugin or MCP server whose changed definitions are approved.
    case trust(name: String)
    /// `completion bash | zsh | fish`.
    case completion(shell: String)
    /// `new NAME [--lang c|cpp|swift] [--dir DIR] [--sdk PATH]`.
    case new(NewPlugin)
    /// `help --man`: the manual page (roff), made from the help texts.
    case manual
}

/// What `skillhost new` writes.
struct NewPlugin: Equatable {
    var name: String
    var language = "c"
    var directory: String?
    var sdk: String?
    /// `--kind skill`: an Agent Skills folder (SKILL.md and a script) instead of a plugin.
    var skillFolder = false
    /// `--with-view`: the greeting skill shows its result in a view of the plugin's (an MCP App, ABI 1.4).
    var withView = false
}

/// `skillhost mcp` options: stdio by default; `--http ADDRESS:PORT` serves Streamable HTTP instead.
struct MCPOptions: Equatable {
    var http: String?
    var tlsCertificate: String?
    var tlsKey: String?
}

extension Command {
    /// Who calls, as a skill's context names it (`skill_call_api.context`'s "client").
    var client: String {
        switch self {
        case .ask, .replay: return "ask"
        case .call: return "call"
        case .mcp: return "mcp"
        case .shell: return "shell"
        case .web: return "web"
        case .list, .check, .help, .version, .sessions, .plugin, .config, .completion, .new, .manual, .policy, .trust:
            return "host"
        }
    }
}

/// Everything the command line says.
struct ParsedCommandLine: Equatable {
    var command: Command
    var pluginFolders: [String] = []
    var defaultFolders = true
    /// `--isolate`: overrides the isolation mode of config.json.
    var isolate: IsolateChoice?
    /// `--raw`: the shell leaves answers as the model sent them (no markdown layout).
    var rawAnswers = false
}

/// A small, strict parser: options may appear anywhere after the subcommand; unknown options are errors with a
/// "did you mean" suggestion.
enum CommandLineParser {
    static let commands = [
        "list", "call", "check", "ask", "replay", "sessions", "mcp", "web", "plugin", "new", "config", "policy",
        "trust", "version", "completion", "help",
    ]

    static func parse(_ arguments: [String]) throws(UsageError) -> ParsedCommandLine {
        var positional: [String] = []
        // Every option is read by the table it is declared in: a flag is set, an option with a value keeps each
        // value given (the last counts, `--plugins` takes them all); what they mean is read after.
        var flags: Set<String> = []
        var values: [String: [String]] = [:]
        var index = 0
        var afterDoubleDash = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if afterDoubleDash || !argument.hasPrefix("-") || argument == "-" {
                positional.append(argument)
                continue
            }
            if argument == "--" {
                afterDoubleDash = true
                continue
            }
            var name = argument
            var inlineValue: String?
            if let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            }
            guard let option = CommandLineOption.named(name) else {
                let hint = EditDistance.closest(to: name, among: CommandLineOption.names).map { "did you mean \($0)?" }
                throw UsageError("unknown option \(name)", hint: hint ?? "run skillhost --help for the options")
            }
            guard option.value != .none else {
                flags.insert(option.name)
                continue
            }
            if let inlineValue {
                values[option.name, default: []].append(inlineValue)
            } else {
                guard index < arguments.count else { throw UsageError("\(name) needs a value") }
                values[option.name, default: []].append(arguments[index])
                index += 1
            }
        }
        func last(_ name: String) -> String? { values[name]?.last }

        let folders = values["--plugins"] ?? []
        let defaultFolders = !flags.contains("--no-default-plugins")
        let resume = last("--resume")
        var isolate: IsolateChoice?
        if let text = last("--isolate") { isolate = try IsolateChoice(text) }
        var mcp = MCPOptions()
        mcp.http = last("--http")
        mcp.tlsCertificate = last("--tls-cert")
        mcp.tlsKey = last("--tls-key")
        let language = last("--lang")
        let directory = last("--dir")
        let sdk = last("--sdk")
        var timeout: Duration?
        if let text = last("--timeout") { timeout = try parseDuration(text) }
        let record = last("--record")
        var rewind: Int?
        if let text = last("--rewind") {
            guard let number = Int(text), number >= 1 else {
                throw UsageError(
                    "--rewind \(text) is not one of your messages", hint: "give its number: 1 is your first message")
            }
            rewind = number
        }
        let skillsMode = last("--skills")
        let kind = last("--kind")
        var stepLimit: Int?
        if let text = last("--step-limit") {
            guard let limit = Int(text), limit > 0, limit <= 1000 else {
                throw UsageError(
                    "--step-limit \(text) is not a number of steps", hint: "use a whole number from 1 to 1000")
            }
            stepLimit = limit
        }

        var line = ParsedCommandLine(
            command: .help(topic: nil), pluginFolders: folders, defaultFolders: defaultFolders, isolate: isolate)
        line.rawAnswers = flags.contains("--raw")
        if flags.contains("--version") {
            line.command = .version
            return line
        }
        guard let name = positional.first else {
            line.command = flags.contains("--help") ? .help(topic: nil) : .shell(resume: resume)
            return line
        }
        let rest = Array(positional.dropFirst())
        if flags.contains("--help") {
            line.command = .help(topic: name)
            return line
        }
        let json = flags.contains("--json")
        switch name {
        case "help" where flags.contains("--man"):
            line.command = .manual
        case "help":
            line.command = .help(topic: rest.first)
        case "version":
            try expectCount(rest, max: 0, command: name)
            line.command = .version
        case "plugin":
            let actions = ["install", "remove", "list"]
            guard let action = rest.first, actions.contains(action) else {
                throw UsageError(
                    "plugin needs install FILE, remove NAME or list",
                    hint: "skillhost plugin install ./my-plugin.so")
            }
            try expectCount(rest, max: action == "list" ? 1 : 2, command: "plugin \(action)")
            guard action == "list" || rest.count == 2 else {
                throw UsageError(
                    "plugin \(action) needs a \(action == "install" ? "file" : "plugin name")",
                    hint: action == "install"
                        ? "skillhost plugin install ./my-plugin.so" : "skillhost plugin remove my-plugin")
            }
            line.command = .plugin(action: action, argument: rest.count > 1 ? rest[1] : nil)
        case "config":
            guard let action = rest.first, ["path", "show", "check"].contains(action) else {
                throw UsageError("config needs path, show or check", hint: "skillhost config show")
            }
            try expectCount(rest, max: 1, command: "config")
            line.command = .config(action: action)
        case "policy":
            guard rest.first == "explain", rest.count >= 2 else {
                throw UsageError(
                    "policy needs explain and a skill id", hint: #"skillhost policy explain notes_delete '{"id": 5}'"#)
            }
            try expectCount(rest, max: 3, command: "policy")
            line.command = .policy(skill: rest[1], arguments: rest.count > 2 ? rest[2] : nil)
        case "trust":
            guard let name = rest.first else {
                throw UsageError(
                    "trust needs a skill, plugin or MCP server name, or a project folder",
                    hint: "skillhost trust notes_add, or skillhost trust . for this project's skill folders")
            }
            try expectCount(rest, max: 1, command: "trust")
            line.command = .trust(name: name)
        case "completion":
            guard let shell = rest.first, ["bash", "zsh", "fish"].contains(shell) else {
                throw UsageError(
                    "completion needs bash, zsh or fish",
                    hint: "add eval \"$(skillhost completion bash)\" to ~/.bashrc")
            }
            try expectCount(rest, max: 1, command: "completion")
            line.command = .completion(shell: shell)
        case "new":
            guard let plugin = rest.first else {
                throw UsageError("new needs a plugin name", hint: "skillhost new greeter --lang c")
            }
            try expectCount(rest, max: 1, command: "new")
            if let kind {
                guard kind == "skill" || kind == "plugin" else {
                    throw UsageError(
                        "--kind \(kind) is not one of plugin, skill", hint: "skillhost new \(plugin) --kind skill")
                }
                if kind == "skill" {
                    guard !flags.contains("--with-view") else {
                        throw UsageError(
                            "--with-view makes a plugin's view; a skill folder declares none",
                            hint: "skillhost new \(plugin) --with-view")
                    }
                    line.command = .new(NewPlugin(name: plugin, directory: directory, skillFolder: true))
                    return line
                }
            }
            let chosen = language ?? "c"
            guard ["c", "cpp", "swift"].contains(chosen) else {
                throw UsageError(
                    "--lang \(chosen) is not one of c, cpp, swift", hint: "skillhost new \(plugin) --lang c")
            }
            var project = NewPlugin(name: plugin, language: chosen, directory: directory, sdk: sdk)
            project.withView = flags.contains("--with-view")
            line.command = .new(project)
        case "list":
            try expectCount(rest, max: 0, command: name)
            line.command = .list(json: json, watch: flags.contains("--watch"))
        case "call":
            guard let skill = rest.first else {
                throw UsageError("call needs a skill id", hint: "usage: skillhost call <skill> '<json arguments>'")
            }
            try expectCount(rest, max: 2, command: name)
            line.command = .call(
                skill: skill, arguments: rest.count > 1 ? rest[1] : nil, json: json, timeout: timeout,
                confirmed: flags.contains("--yes"))
        case "ask":
            if let rewind, resume == nil {
                throw UsageError(
                    "--rewind goes back in a resumed session", hint: "skillhost ask --resume <id> --rewind \(rewind) …")
            }
            line.command = .ask(
                AskOptions(
                    prompt: rest.isEmpty ? nil : rest.joined(separator: " "), json: json, stepLimit: stepLimit,
                    record: record, resume: resume, rewind: rewind, save: flags.contains("--save")))
        case "replay":
            guard let file = rest.first else {
                throw UsageError("replay needs a record", hint: "skillhost replay run.skillrec [--skills live]")
            }
            try expectCount(rest, max: 1, command: name)
            guard skillsMode == nil || skillsMode == "recorded" || skillsMode == "live" else {
                throw UsageError(
                    "--skills is recorded (answers from the record) or live (the real plugins)",
                    hint: "skillhost replay \(file) --skills live")
            }
            line.command = .replay(
                file: file, live: skillsMode == "live", json: json,
                answersFromRecord: flags.contains("--answers-from-record"))
        case "sessions":
            try expectCount(rest, max: 0, command: name)
            line.command = .sessions
        case "mcp":
            try expectCount(rest, max: 0, command: name)
            guard (mcp.tlsCertificate == nil) == (mcp.tlsKey == nil) else {
                throw UsageError("--tls-cert and --tls-key go together", hint: "give both PEM files, or neither")
            }
            line.command = .mcp(mcp)
        case "web":
            try expectCount(rest, max: 0, command: name)
            guard mcp.tlsCertificate == nil, mcp.tlsKey == nil else {
                throw UsageError(
                    "skillhost web serves plain HTTP on loopback", hint: "put a TLS proxy in front of it to serve wider"
                )
            }
            line.command = .web(http: mcp.http)
        case "check":
            guard let file = rest.first else {
                throw UsageError("check needs a plugin file", hint: "usage: skillhost check path/to/plugin.so")
            }
            try expectCount(rest, max: 1, command: name)
            line.command = .check(file: file, json: json)
        default:
            let hint = EditDistance.closest(to: name, among: commands).map { "did you mean skillhost \($0)?" }
            throw UsageError("unknown command \"\(name)\"", hint: hint ?? "run skillhost --help for the commands")
        }
        return line
    }

    static func expectCount(_ rest: [String], max: Int, command: String) throws(UsageError) {
        guard rest.count > max else { return }
        throw UsageError(
            "too many arguments for \(command): \(rest[max...].joined(separator: " "))",
            hint: "quote the JSON arguments as one word: skillhost call <skill> '{\"key\": \"value\"}'")
    }

    /// The longest deadline a call may be given, in milliseconds (24 hours).
    static let longestTimeout = 86_400_000.0

    /// `500ms`, `2s`, `1.5s`, `1m`; from 1 ms to 24 hours. A number needs its unit: `0.5` could mean half a second
    /// or half a millisecond, so it is refused with both readings, and a value below 1 ms is refused, never
    /// rounded up to it.
    static func parseDuration(_ text: String) throws(UsageError) -> Duration {
        let units: [(String, Double)] = [("ms", 1), ("s", 1000), ("m", 60_000)]
        var number: String?
        var factor = 1.0
        for (suffix, scale) in units where text.hasSuffix(suffix) {
            number = String(text.dropLast(suffix.count))
            factor = scale
            break
        }
        if number == nil, let bare = Double(text), bare.isFinite, bare > 0 {
            throw UsageError(
                "--timeout \(text) has no unit", hint: "write \(text)s for seconds or \(text)ms for milliseconds")
        }
        guard let number, let value = Double(number), value > 0, value.isFinite else {
            throw UsageError("--timeout \(text) is not a duration", hint: "use a number with a unit: 500ms, 2s, 1m")
        }
        let exact = value * factor
        let milliseconds = exact.rounded()
        guard exact >= 1, milliseconds <= Self.longestTimeout else {
            throw UsageError(
                "--timeout \(text) is out of range", hint: "give a duration from 1 ms to 24 hours (1ms … 1440m)")
        }
        return .milliseconds(Int64(milliseconds))
    }
}
