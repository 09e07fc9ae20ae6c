import Agent
import Foundation
import Shell
import SkillHost
import SkillJSON
import Support

/// `skillhost config path|show|check`: where the configuration lives, what is in effect and where each value
/// came from (secrets never shown), and whether the file is valid.
enum ConfigCommand {
    static func path(_ environment: [String: String]) -> String { Config.path(environment) + "\n" }

    /// Validates the file and the environment as every command does; the sentence of the first problem, or ok.
    static func check(_ environment: [String: String]) throws(CLIError) -> String {
        let file = Config.path(environment)
        _ = try Config.load(environment)
        return FileManager.default.fileExists(atPath: file)
            ? "\(file): ok\n" : "\(file): no file (every setting has its default); ok\n"
    }

    /// Keys whose values are secrets: shown as "set", never echoed.
    static let secretKeys: Set<String> = ["api_key", "headers", "tokens", "env", "state_key"]

    /// One line per setting: `name  value  (from where)`.
    static func show(_ environment: [String: String]) throws(CLIError) -> String {
        _ = try Config.load(environment)  // a file that does not load is said as every command says it
        let file = Config.path(environment)
        let document: JSONObject = {
            guard case .success(.bytes(let bytes)) = BoundedFile.read(file, limit: Config.maximumBytes),
                let value = try? JSONValue(parsing: bytes)
            else { return JSONObject() }
            return value.objectValue ?? JSONObject()
        }()
        var rows: [[String]] = []
        func row(_ key: String, _ value: String, _ source: String) { rows.append([key, value, source]) }
        func fromFile(_ key: String) -> String? {
            document[key].map { Redaction.url(redacted($0, key: key).jsonText) }
        }
        func setting(_ key: String, environmentKey: String? = nil, default fallback: String) {
            if let environmentKey, let value = environment[environmentKey], !value.isEmpty {
                row(key, secretKeys.contains(key) ? "(set)" : Redaction.url(value), "environment \(environmentKey)")
            } else if let value = fromFile(key) {
                row(key, value, "config.json")
            } else {
                row(key, fallback, "default")
            }
        }
        setting("base_url", environmentKey: "OPENAI_BASE_URL", default: "none: the offline router answers")
        setting("api_key", environmentKey: "OPENAI_API_KEY", default: "none")
        setting("model", environmentKey: "SKILLHOST_MODEL", default: "none")
        // The defaults are the ones the code starts from, read from it (never restated here).
        let agent = AgentConfiguration()
        let registry = SkillRegistry.Configuration(dataDirectory: URL(fileURLWithPath: "/"))
        let model = OpenAIConfiguration(baseURL: URL(fileURLWithPath: "/"), apiKey: nil, model: "")
        setting("step_limit", default: "\(agent.stepLimit)")
        setting("max_tools", default: "\(agent.maximumTools)")
        setting("request_timeout_s", default: "\(Int(model.requestTimeout))")
        setting("snapshot_budget_bytes", default: "\(agent.snapshotBudget)")
        setting("max_result_mb", default: "\(registry.resultLimit >> 20)")
        setting("max_plugin_mb", default: "\(registry.maximumPluginSize >> 20)")
        setting("policy", default: "{} (read-only skills run; mutating and destructive ones ask)")
        setting("hooks", default: "{} (no programs run before or after calls)")
        setting(
            "budgets",
            default: "a turn: 500,000 tokens, 200 skill calls, 1,800 s; a session: 5,000,000 tokens, 2,000 skill calls")
        setting("prices", default: "{} (cost is not counted)")
        setting("disabled_skills", default: "[]")
        setting("record", default: "false (sessions are not recorded)")
        setting("skills", default: "{} (skill folders from the usual places; scripts get no grants)")
        setting("isolation", default: "{} (plugins outside the bundled folder run in worker processes)")
        setting("mcpServers", default: "{}")
        setting("mcp", default: "{} (stdio)")
        if environment["SKILLHOST_MCP_TOKEN"].map({ !$0.isEmpty }) == true {
            row("mcp token", "(set)", "environment SKILLHOST_MCP_TOKEN")
        }
        setting("web", default: "{\"http\": \"127.0.0.1:8780\"}")
        if environment["SKILLHOST_WEB_TOKEN"].map({ !$0.isEmpty }) == true {
            row("web token", "(set)", "environment SKILLHOST_WEB_TOKEN")
        }
        var out = "Configuration file: \(file)\(FileManager.default.fileExists(atPath: file) ? "" : " (none)")\n"
        out += "Data: \(HostSetup.dataHome(environment)) · plugins: \(HostSetup.userPluginFolder(environment))\n\n"
        out += Table.render(header: ["SETTING", "VALUE", "FROM"], rows: rows)
        return out
    }

    /// `value` with every secret replaced by "(set)": API keys, header values, tokens, server environments.
    static func redacted(_ value: JSONValue, key: String, depth: Int = 0) -> JSONValue {
        if secretKeys.contains(key) {
            switch value {
            case .object(let object): return .object(JSONObject(object.members.map { ($0.key, "(set)") }))
            case .array(let items): return .array(items.map { _ in "(set)" })
            default: return "(set)"
            }
        }
        guard depth < 16 else { return value }
        switch value {
        case .object(let object):
            return .object(
                JSONObject(object.members.map { ($0.key, redacted($0.value, key: $0.key, depth: depth + 1)) }))
        case .array(let items): return .array(items.map { redacted($0, key: "", depth: depth + 1) })
        default: return value
        }
    }
}
