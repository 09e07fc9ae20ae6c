import Foundation

/// The environment of processes the host starts for code it does not trust (plugin workers, MCP servers): what a
/// program needs to run — `PATH`, `HOME`, the user's name, locale and time zone, `TMPDIR` — and nothing else, so
/// the host's secrets (`OPENAI_API_KEY`, tokens, cloud credentials) never reach them. What a user wants a server to
/// have is passed explicitly (`"env"` in config.json).
package enum ChildEnvironment {
    /// Variables passed through by name.
    package static let kept: Set<String> = ["PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "TMPDIR"]

    /// The kept variables of `environment` (plus every `LC_*`), with `extra` on top.
    package static func minimal(
        from environment: [String: String] = ProcessInfo.processInfo.environment, adding extra: [String: String] = [:]
    ) -> [String: String] {
        var result = environment.filter { kept.contains($0.key) || $0.key.hasPrefix("LC_") }
        result.merge(extra) { $1 }
        return result
    }
}
