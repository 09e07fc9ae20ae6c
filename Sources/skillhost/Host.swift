import Foundation
import SkillFolders
import SkillHost

/// What most commands run on: the configuration, the registry with its plugin folders loaded, and the configured
/// MCP servers started as skill sources. `close()` stops the servers and unloads the plugins.
struct Host {
    let config: Config
    let setup: HostSetup
    let mcp: MCPSources
    /// The Agent Skills folders, offered as the `skills` source's tools.
    let skillFolders: SkillFolderTools

    var registry: SkillRegistry { setup.registry }

    /// - Parameter reportMCPFailures: print servers that did not start to stderr (`list` shows them instead).
    static func open(
        _ line: ParsedCommandLine, environment: [String: String], log: @escaping @Sendable (LogRecord) -> Void,
        reportMCPFailures: Bool = true
    ) async throws(CLIError) -> Host {
        var config = try Config.load(environment)
        let setup = try HostSetup.assemble(
            extraFolders: line.pluginFolders, defaultFolders: line.defaultFolders, environment: environment,
            config: config, isolate: line.isolate, client: line.command.client, log: log)
        // One-shot commands start a server only when one of its tools is called (tools from the cache meanwhile);
        // the shell and `skillhost mcp` start them all, for their change notifications.
        let onFirstUse: Bool
        switch line.command {
        case .list, .call, .ask: onFirstUse = true
        default: onFirstUse = false
        }
        let skillFolders = skillFolderTools(config, environment: environment)
        skillFolders.register(in: setup.registry)
        config.skillCatalogue = { skillFolders.catalogue() }
        let mcp = await MCPSources.start(
            config, registry: setup.registry, environment: environment, onFirstUse: onFirstUse,
            skillFolders: skillFolders, log: log)
        if reportMCPFailures { for failure in mcp.failures { printError("skillhost: \(failure)") } }
        for notice in skillFolders.scan.notices { log(LogRecord(level: .warning, source: "skills", message: notice)) }
        return Host(config: config, setup: setup, mcp: mcp, skillFolders: skillFolders)
    }

    /// The skill folders of the standard places, the configured ones and — when the working folder is a trusted
    /// project — the project's.
    static func skillFolderTools(_ config: Config, environment: [String: String]) -> SkillFolderTools {
        let home = environment["HOME"] ?? NSHomeDirectory()
        let roots = SkillFolderRoot.standard(
            dataHome: HostSetup.dataHome(environment), home: home,
            project: TrustedProjects.current(environment, configured: config.skills.trustedProjects),
            configured: config.skills.folders.map { $0.hasPrefix("~") ? home + $0.dropFirst() : $0 })
        var settings = SkillFolderTools.Settings()
        settings.grants = SkillGrants(config.skills.grants, home: home)
        if let timeout = config.skills.timeout { settings.timeout = timeout }
        settings.launcher = HostSetup.executablePath()
        return SkillFolderTools(roots: roots, settings: settings)
    }

    func close() {
        mcp.stop()
        setup.registry.shutdown()
    }
}
