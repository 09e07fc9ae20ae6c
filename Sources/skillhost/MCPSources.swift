import Foundation
import MCP
import SkillFolders
import SkillHost

/// The MCP servers from the configuration, started as skill sources for one command.
final class MCPSources: Sendable {
    let sources: [MCPSkillSource]
    /// One sentence per server that could not be started.
    let failures: [String]

    init(sources: [MCPSkillSource], failures: [String]) {
        self.sources = sources
        self.failures = failures
    }

    /// Where the servers' last tool lists are kept: `$XDG_CACHE_HOME/skillhost/mcp-tools` (default
    /// `~/.cache/skillhost/mcp-tools`).
    static func cacheFolder(_ environment: [String: String]) -> URL {
        let base =
            environment["XDG_CACHE_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? (environment["HOME"] ?? NSHomeDirectory()) + "/.cache"
        return URL(fileURLWithPath: base + "/skillhost/mcp-tools")
    }

    /// Starts every configured server (concurrently) and registers its tools. With `onFirstUse`, a server whose
    /// tools are cached from an earlier run is not started: its cached tools are registered and its first call
    /// starts it.
    static func start(
        _ config: Config, registry: SkillRegistry, environment: [String: String], onFirstUse: Bool,
        skillFolders: SkillFolderTools? = nil, log: @escaping @Sendable (LogRecord) -> Void
    ) async -> MCPSources {
        let folder = cacheFolder(environment)
        let sources = config.mcpServers.map {
            MCPSkillSource(
                name: $0.name, configuration: $0.configuration, registry: registry, cacheFolder: folder, log: log,
                skillFolders: skillFolders)
        }
        let failures = await withTaskGroup(of: String?.self) { group in
            for source in sources where !(onFirstUse && source.startOnFirstUse()) {
                group.addTask {
                    do throws(MCPClientError) {
                        try await source.start()
                        return nil
                    } catch {
                        return "mcp server \(source.name): \(error.message)"
                    }
                }
            }
            return await group.reduce(into: [String]()) { if let failure = $1 { $0.append(failure) } }
        }
        return MCPSources(sources: sources, failures: failures.sorted())
    }

    /// Starts the server that owns `skill` if it waits for its first use — before the call, so the start does not
    /// eat the call's deadline. The sentence when it could not be started.
    func prepare(_ skill: String) async -> String? {
        guard let source = sources.first(where: { $0.waitsForFirstUse(of: skill) }) else { return nil }
        return await source.startForFirstUse()
    }

    /// Starts every server that waits for its first use and waits for them (`trust`: the definitions to approve
    /// are the servers' own, not those cached from an earlier run).
    func startDeferred() async {
        await withTaskGroup(of: Void.self) { group in
            for source in sources { group.addTask { _ = await source.startForFirstUse() } }
        }
    }

    /// Starts every server that waits for its first use, in the background (`ask`: they start while the model
    /// thinks).
    func startDeferredInBackground() {
        for source in sources { Task { _ = await source.startForFirstUse() } }
    }

    func stop() { sources.forEach { $0.stop() } }
}
