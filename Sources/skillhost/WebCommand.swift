import Agent
import Foundation
import SkillFolders
import SkillHost
import Support
import Web

/// `skillhost web`: the browser front end on the same registry, policy and model as the shell.
enum WebCommand {
    static func run(
        http: String?, host: Host, environment: [String: String], log: @escaping @Sendable (LogRecord) -> Void
    )
        async throws(CLIError) -> Int32
    {
        var configuration = WebConfiguration()
        if let text = http ?? host.config.webHTTP {
            do throws(UsageError) {
                let address = try MCPHTTPSettings.address(text)
                (configuration.address, configuration.port) = (address.host, address.port)
            } catch { throw .usage(error) }
        }
        if let token = environment["SKILLHOST_WEB_TOKEN"], !token.isEmpty { configuration.token = token }
        let folders = host.skillFolders
        configuration.skillFolders = {
            folders.scan.skills.map {
                SkillFolderSummary(
                    name: $0.name, description: $0.description, from: $0.scope.rawValue,
                    frontMatter: $0.frontMatter.json,
                    files: SkillFolderFiles.list($0).files)
            }
                + folders.remoteSkills.map {
                    SkillFolderSummary(
                        name: $0.label, description: $0.description, from: "mcp:" + $0.server,
                        frontMatter: $0.frontMatter, files: [])
                }
        }
        configuration.folderView = { name in
            if case .success(let view)? = folders.view(named: name) { return view }
            return nil
        }
        configuration.activateSkill = { name in
            switch await folders.activate(named: name) {
            case .success(let text): return .success(text)
            case .failure(let error): return .failure(WebRefusal(status: 404, sentence: error.message))
            }
        }
        let provider = try host.config.provider(log: log)
        // A plugin dropped into a folder appears in every tab's skills panel, as in the shell.
        let watch = host.setup.watch()
        defer { watch.stop() }
        let registry = host.registry
        // The window's view is state the agent reads (a snapshot) and changes (the ui_* skills).
        let view = WebView()
        view.register(in: registry)
        let session = WebSession(
            skills: registry, provider: provider, configuration: host.config.agentConfiguration(stepLimit: nil),
            view: view, history: try ShellLauncher.openHistory(environment))
        let skillFolders = SkillFolderWatcher(tools: host.skillFolders, registry: registry) { [weak session] lines in
            session?.post(lines)
        }
        defer { skillFolders.stop() }
        let service: WebService
        do throws(WebError) {
            service = try WebService(session: session, registry: registry, configuration: configuration)
        } catch { throw .failure(error.message) }
        // The one line a person needs; the token is theirs (it is in the fragment, which browsers never send).
        writeOut("open \(service.url)\n")
        await MCPCommand.waitForTermination()
        session.stop()
        service.stop()
        if let unsaved = session.closeHistory() {
            StandardStreams.error("skillhost: \(unsaved)\n")
        }
        return ExitCode.ok.rawValue
    }
}
