import Foundation
import MCP
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

    /// Starts every configured server (concurrently) and registers its tools.
    static func start(_ config: Config, registry: SkillRegistry, log: @escaping @Sendable (LogRecord) -> Void) async
        -> MCPSources
    {
        let sources = config.mcpServers.map {
            MCPSkillSource(name: $0.name, configuration: $0.configuration, registry: registry, log: log)
        }
        let failures = await withTaskGroup(of: String?.self) { group in
            for source in sources {
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

    func stop() { sources.forEach { $0.stop() } }
}
