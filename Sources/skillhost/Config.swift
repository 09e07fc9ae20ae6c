import Agent
import Foundation
import MCP
import SkillFolders
import SkillHost
import SkillJSON
import Support

/// `$XDG_CONFIG_HOME/skillhost/config.json`, with environment variables taking precedence.
///
/// ```json
/// {"base_url": "http://localhost:11434/v1", "api_key": "…", "model": "qwen2.5:7b",
///  "step_limit": 8, "max_tools": 24, "request_timeout_s": 120,
///  "policy": {"wipe_*": "deny", "notes_*": "ask"}, "disabled_skills": ["slugify"],
///  (or "policy": [{"skill": "notes_delete", "arguments": {…}, "then": "allow"}, …]),
///  "isolation": {"default": "process"}, "max_result_mb": 16, "max_plugin_mb": 256}
/// ```
struct Config: Sendable {
    var baseURL: URL?
    var apiKey: String?
    var model: String?
    var stepLimit: Int?
    var maximumTools: Int?
    var requestTimeout: TimeInterval?
    var rules: [PolicyRule] = []
    /// `"hooks"`: programs run before and after calls, for permission, and at turns.
    var hooks = Hooks()
    /// `"budgets"` (and the model's price from `"prices"`): what a turn and a session may use.
    var budgets = Budgets()
    /// `"prices"` as written, read once the model is known.
    var prices: JSONValue?
    var disabledSkills: Set<String> = []
    /// MCP servers whose tools join the registry, by name (the shape MCP clients use).
    var mcpServers: [(name: String, configuration: MCPServerConfiguration)] = []
    /// Which plugins run in worker processes, and the workers' limits.
    var isolation = IsolationConfig()
    /// Skill results longer than this many bytes become an error.
    var resultLimit: Int?
    var pluginLimit: Int?
    /// `"snapshot_budget_bytes"`: plugin state each model request may carry.
    var snapshotBudget: Int?
    /// `"mcp"`: how `skillhost mcp` serves over HTTP.
    var mcp = MCPHTTPSettings()
    /// `"web": {"http": "127.0.0.1:8780"}`: where `skillhost web` serves.
    var webHTTP: String?
    /// `"record": true` (records in `$XDG_STATE_HOME/skillhost/records`) or a folder: every shell session and every
    /// `ask` writes a `.skillrec` there. The folder once the environment is known; nil: nothing is recorded.
    var recordFolder: String?
    /// `"record"` as written: false, true, or a folder.
    var record: JSONValue?
    /// `"skills"`: Agent Skills folders — extra folders, trusted projects, grants for their scripts.
    var skills = SkillsConfig()
    /// The skill folders' catalogue for the model (set by `Host.open` once the folders are found).
    var skillCatalogue: (@Sendable () -> String?)?
    /// Where it was read from (nil when there is no file).
    var file: String?

    static let keys = [
        "base_url", "api_key", "model", "step_limit", "max_tools", "request_timeout_s", "policy", "disabled_skills",
        "mcpServers", "isolation", "max_result_mb", "max_plugin_mb", "mcp", "snapshot_budget_bytes", "web", "hooks",
        "budgets", "prices", "record", "skills",
    ]

    static func path(_ environment: [String: String]) -> String {
        if let xdg = environment["XDG_CONFIG_HOME"], xdg.hasPrefix("/") { return xdg + "/skillhost/config.json" }
        return (environment["HOME"] ?? NSHomeDirectory()) + "/.config/skillhost/config.json"
    }

    /// The largest config.json read (a configuration is a few kilobytes; this is checked before reading).
    static let maximumBytes = 1 << 20

    /// Reads the file (if any) and applies the environment. Every problem is one sentence naming the file and key.
    static func load(_ environment: [String: String]) throws(CLIError) -> Config {
        var config = Config()
        let path = path(environment)
        switch BoundedFile.read(path, limit: Self.maximumBytes) {
        case .success(.missing): break
        case .success(.bytes(let bytes)): config = try parse(Data(bytes), file: path)
        case .failure(let problem):
            throw .usage(UsageError("\(path) \(problem)", hint: "fix the file or remove it"))
        }
        if let url = environment["OPENAI_BASE_URL"], !url.isEmpty {
            guard let parsed = URL(string: url), parsed.scheme?.hasPrefix("http") == true else {
                throw .usage(
                    UsageError("OPENAI_BASE_URL \(url) is not an http(s) URL", hint: "e.g. http://localhost:11434/v1"))
            }
            config.baseURL = parsed
        }
        if let key = environment["OPENAI_API_KEY"], !key.isEmpty { config.apiKey = key }
        if let model = environment["SKILLHOST_MODEL"], !model.isEmpty { config.model = model }
        switch config.record {
        case .bool(true)?:
            let state =
                environment["XDG_STATE_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
                ?? (environment["HOME"] ?? NSHomeDirectory()) + "/.local/state"
            config.recordFolder = state + "/skillhost/records"
        case .string(let folder)?:
            let home = environment["HOME"] ?? NSHomeDirectory()
            config.recordFolder = folder.hasPrefix("~") ? home + folder.dropFirst() : folder
        default: break
        }
        if let prices = config.prices {
            // The price of the model in use (known only now: the environment may name it).
            config.budgets.price = try BudgetsConfig.price(prices, model: config.model) { message in
                .usage(UsageError("\(path): \(message)", hint: "fix the file or remove it"))
            }
        }
        return config
    }

    static func parse(_ data: Data, file: String) throws(CLIError) -> Config {
        func fail(_ message: String) -> CLIError {
            .usage(UsageError("\(file): \(message)", hint: "fix the file or remove it"))
        }
        /// A duration in seconds, from 1 ms to a day.
        func seconds(_ value: JSONValue, _ key: String) throws(CLIError) -> Duration {
            guard let seconds = value.doubleValue, seconds >= 0.001, seconds <= 86_400 else {
                throw fail("\"\(key)\" must be a number of seconds from 0.001 to 86400 (a day)")
            }
            return .milliseconds(Int64((seconds * 1000).rounded()))
        }
        let document: JSONValue
        let bytes = [UInt8](data)
        do { document = try JSONValue(parsing: bytes) } catch { throw fail(error.located(in: bytes)) }
        guard let object = document.objectValue else { throw fail("expected a JSON object") }
        var config = Config(file: file)
        for (key, value) in object.members {
            switch key {
            case "base_url":
                guard let text = value.stringValue, let url = URL(string: text), url.scheme?.hasPrefix("http") == true
                else { throw fail("\"base_url\" must be an http(s) URL such as \"http://localhost:11434/v1\"") }
                config.baseURL = url
            case "api_key":
                guard let text = value.stringValue else { throw fail("\"api_key\" must be a string") }
                config.apiKey = text
            case "model":
                guard let text = value.stringValue, !text.isEmpty else { throw fail("\"model\" must be a model name") }
                config.model = text
            case "step_limit", "max_tools":
                guard case .int(let number) = value, number > 0, number <= 1000 else {
                    throw fail("\"\(key)\" must be a whole number from 1 to 1000")
                }
                if key == "step_limit" { config.stepLimit = Int(number) } else { config.maximumTools = Int(number) }
            case "request_timeout_s":
                config.requestTimeout = try seconds(value, "request_timeout_s").milliseconds / 1000
            case "record":
                switch value {
                case .bool: config.record = value
                case .string(let folder) where folder.hasPrefix("/") || folder.hasPrefix("~"): config.record = value
                default:
                    throw fail(
                        "\"record\" must be true (records go to ~/.local/state/skillhost/records), false, or a folder "
                            + "that is absolute or starts with ~")
                }
            case "snapshot_budget_bytes":
                guard case .int(let bytes) = value, bytes >= 0, bytes <= 1_000_000 else {
                    throw fail(
                        "\"snapshot_budget_bytes\" must be a whole number of bytes from 0 (no snapshots) to 1000000")
                }
                config.snapshotBudget = Int(bytes)
            case "mcp":
                do throws(UsageError) { config.mcp = try MCPHTTPSettings.parse(value) } catch {
                    throw fail(error.message)
                }
            case "web":
                guard let settings = value.objectValue, settings.members.allSatisfy({ $0.key == "http" }),
                    let http = settings["http"]?.stringValue, (try? MCPHTTPSettings.address(http)) != nil
                else {
                    throw fail(
                        "\"web\" must be {\"http\": \"ADDRESS:PORT\"}, for example {\"http\": \"127.0.0.1:8780\"}")
                }
                config.webHTTP = http
            case "policy": config.rules = try PolicyConfig.rules(value, fail: fail)
            case "hooks": config.hooks = try HooksConfig.hooks(value, fail: fail)
            case "skills": config.skills = try SkillsConfig.parse(value, fail: fail)
            case "budgets": config.budgets = try BudgetsConfig.budgets(value, over: Budgets(), fail: fail)
            case "prices": config.prices = value
            case "mcpServers":
                guard let servers = value.objectValue else {
                    throw fail("\"mcpServers\" must map server names to {\"command\": …, \"args\": […], \"env\": {…}}")
                }
                for (name, server) in servers.members {
                    if server["url"] != nil {
                        config.mcpServers.append((name, try remoteServer(name, server, fail: fail)))
                        continue
                    }
                    guard case .string(let command)? = server["command"], !command.isEmpty else {
                        throw fail(
                            "mcpServers.\(name) needs a \"command\" (the program that starts the server) or a \"url\" "
                                + "(a server on the network)")
                    }
                    let arguments = server["args"]?.arrayValue?.compactMap(\.stringValue) ?? []
                    if let args = server["args"], args.arrayValue?.count != arguments.count {
                        throw fail("mcpServers.\(name).args must be an array of strings")
                    }
                    var environment: [String: String] = [:]
                    for (key, value) in server["env"]?.objectValue?.members ?? [] {
                        guard let text = value.stringValue else {
                            throw fail("mcpServers.\(name).env.\(key) must be a string")
                        }
                        environment[key] = text
                    }
                    var configuration = MCPServerConfiguration(
                        command: command, arguments: arguments, environment: environment)
                    if let value = server["timeout_s"] {
                        configuration.callTimeout = try seconds(value, "mcpServers.\(name).timeout_s")
                    }
                    if let value = server["start_timeout_s"] {
                        configuration.startTimeout = try seconds(value, "mcpServers.\(name).start_timeout_s")
                    }
                    if let value = server["sandbox"] {
                        configuration.sandbox = try sandbox(value, "mcpServers.\(name).sandbox", fail: fail)
                        configuration.launcher = HostSetup.executablePath()
                    }
                    config.mcpServers.append((name, configuration))
                }
            case "isolation": config.isolation = try IsolationConfig.parse(value, fail: fail)
            case "max_result_mb":
                guard let megabytes = value.doubleValue, megabytes > 0, megabytes <= 1024 else {
                    throw fail("\"max_result_mb\" must be a number of megabytes from 1 to 1024")
                }
                config.resultLimit = Int(megabytes * 1_048_576)
            case "max_plugin_mb":
                guard let megabytes = value.doubleValue, megabytes >= 1, megabytes <= 4096 else {
                    throw fail("\"max_plugin_mb\" must be a number of megabytes from 1 to 4096")
                }
                config.pluginLimit = Int(megabytes * 1_048_576)
            case "disabled_skills":
                guard let ids = value.arrayValue?.compactMap(\.stringValue), ids.count == value.arrayValue?.count else {
                    throw fail("\"disabled_skills\" must be an array of skill ids")
                }
                config.disabledSkills = Set(ids)
            default:
                let hint = EditDistance.closest(to: key, among: keys).map { " (did you mean \"\($0)\"?)" } ?? ""
                throw fail("unknown setting \"\(key)\"\(hint); known settings: \(keys.joined(separator: ", "))")
            }
        }
        return config
    }

    /// `{"url": "https://…/mcp", "headers": {…}, "bearer_token_env": "X_TOKEN", "timeout_s": …, "start_timeout_s": …}`.
    static func remoteServer(_ name: String, _ server: JSONValue, fail: (String) -> CLIError) throws(CLIError)
        -> MCPServerConfiguration
    {
        guard let text = server["url"]?.stringValue, let url = URL(string: text),
            ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host != nil
        else { throw fail("mcpServers.\(name).url must be an http(s) URL such as \"https://mcp.example/mcp\"") }
        var configuration = MCPServerConfiguration(command: "")
        configuration.url = url
        for (key, value) in server.objectValue?.members ?? [] {
            switch key {
            case "url": break
            case "headers":
                for (field, member) in value.objectValue?.members ?? [] {
                    guard let text = member.stringValue else {
                        throw fail("mcpServers.\(name).headers.\(field) must be a string")
                    }
                    configuration.headers[field] = text
                }
                if value.objectValue == nil { throw fail("mcpServers.\(name).headers must map names to strings") }
            case "bearer_token_env":
                guard let variable = value.stringValue, !variable.isEmpty else {
                    throw fail("mcpServers.\(name).bearer_token_env must name an environment variable")
                }
                configuration.bearerTokenEnvironment = variable
            case "timeout_s", "start_timeout_s":
                guard let seconds = value.doubleValue, seconds >= 0.001, seconds <= 86_400 else {
                    throw fail("\"mcpServers.\(name).\(key)\" must be a number of seconds from 0.001 to 86400 (a day)")
                }
                let duration = Duration.milliseconds(Int64((seconds * 1000).rounded()))
                if key == "timeout_s" {
                    configuration.callTimeout = duration
                } else {
                    configuration.startTimeout = duration
                }
            default:
                throw fail(
                    "mcpServers.\(name) has no setting \"\(key)\" for a server by URL (url, headers, bearer_token_env, "
                        + "timeout_s, start_timeout_s)")
            }
        }
        return configuration
    }

    /// The configured model provider: the OpenAI-compatible endpoint when one is set, else the offline router.
    /// The model: the offline router, or the configured server (reporting through `log`).
    func provider(log: @escaping @Sendable (LogRecord) -> Void = { _ in }) throws(CLIError) -> any ModelProvider {
        guard let baseURL else { return OfflineRouter() }
        guard let model else {
            throw .usage(
                UsageError(
                    "a model endpoint is set (\(Redaction.url(baseURL.absoluteString))) but no model",
                    hint: "set SKILLHOST_MODEL or \"model\" in \(file ?? "config.json")"))
        }
        var configuration = OpenAIConfiguration(baseURL: baseURL, apiKey: apiKey, model: model)
        if let requestTimeout { configuration.requestTimeout = requestTimeout }
        configuration.log = log
        return OpenAIProvider(configuration: configuration)
    }

    /// A new record's path in the `"record"` folder (made private if needed), named for the moment and the
    /// process; nil when nothing is to be recorded.
    func recordPath() throws(CLIError) -> String? {
        guard let folder = recordFolder else { return nil }
        do { _ = try PrivateFiles.directory(folder) } catch {
            throw .failure(
                "cannot make the record folder \(folder) (\"record\" in config.json): \(error.localizedDescription)")
        }
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyyMMdd-HHmmss"
        formatter.locale = Locale(identifier: "en_US_POSIX")
        return folder + "/\(formatter.string(from: Date()))-\(getpid()).skillrec"
    }

    func agentConfiguration(stepLimit override: Int?) -> AgentConfiguration {
        var configuration = AgentConfiguration()
        if let limit = override ?? stepLimit { configuration.stepLimit = limit }
        if let maximumTools { configuration.maximumTools = maximumTools }
        if let snapshotBudget { configuration.snapshotBudget = snapshotBudget }
        configuration.disabledSkills = disabledSkills
        configuration.budgets = budgets
        configuration.pinnedTools = SkillFolderTools.toolIDs
        configuration.context = skillCatalogue
        return configuration
    }
}

extension Config {
    /// `"sandbox": true` (the defaults: no network, no extra folders) or `{"network": true, "read": ["~/models"],
    /// "write": ["~/repo"]}`.
    static func sandbox(_ value: JSONValue, _ key: String, fail: (String) -> CLIError) throws(CLIError) -> Sandbox {
        if case .bool(true) = value { return Sandbox() }
        let example = #"{"network": true, "read": ["~/models"], "write": ["~/repo"]}"#
        guard let object = value.objectValue else { throw fail("\(key) must be true or an object such as \(example)") }
        var sandbox = Sandbox()
        func folders(_ value: JSONValue, _ name: String) throws(CLIError) -> [String] {
            guard let items = value.arrayValue else { throw fail("\(key).\(name) must be a list of folders") }
            return try items.enumerated().map { (index, item) throws(CLIError) in
                guard let path = item.stringValue, path.hasPrefix("/") || path.hasPrefix("~") else {
                    throw fail("\(key).\(name)[\(index)] must be a folder that is absolute or starts with ~")
                }
                return path
            }
        }
        for (name, item) in object.members {
            switch name {
            case "network":
                guard case .bool(let allowed) = item else { throw fail("\(key).network must be true or false") }
                sandbox.network = allowed
            case "read": sandbox.read = try folders(item, name)
            case "write": sandbox.write = try folders(item, name)
            default:
                throw fail("unknown setting \(key).\(name); known: \(Sandbox.keys.joined(separator: ", "))")
            }
        }
        return sandbox
    }
}
