import Agent
import Foundation
import History
import SessionUI
import Shell
import SkillFolders
import SkillHost
import Support

/// Assembles and starts the interactive shell (`skillhost` with no subcommand).
enum ShellLauncher {
    static func historyPath(_ environment: [String: String]) -> String {
        HostSetup.dataHome(environment) + "/history.db"
    }

    static func openStore(_ environment: [String: String]) throws(CLIError) -> HistoryStore {
        let store: HistoryStore
        do { store = try HistoryStore(path: historyPath(environment)) } catch { throw .failure(error.description) }
        for notice in store.permissionNotices { StandardStreams.error("skillhost: \(notice)\n") }
        return store
    }

    /// The history for an interactive front end (the shell, `skillhost web`). A damaged one is left untouched: the
    /// front end runs without saving (nil), and says how to recover.
    static func openHistory(_ environment: [String: String]) throws(CLIError) -> HistoryStore? {
        let store: HistoryStore?
        do { store = try HistoryStore(path: historyPath(environment)) } catch  where error.isDamaged {
            StandardStreams.error("skillhost: \(error.message)\n")
            store = nil
        } catch { throw .failure(error.description) }
        for notice in store?.permissionNotices ?? [] {
            StandardStreams.error("skillhost: \(notice)\n")
        }
        return store
    }

    @MainActor
    static func run(
        line: ParsedCommandLine, resume: String?, environment: [String: String],
        log: @escaping @Sendable (LogRecord) -> Void
    ) async throws(CLIError) -> Int32 {
        if Terminal.inputIsTTY || resume != nil { blockInterruptsForShell() }
        let host = try await Host.open(line, environment: environment, log: log)
        defer { host.close() }
        let config = host.config
        let setup = host.setup

        // Piped input: one turn, only the answer on stdout — a model's markdown laid out as plain text unless
        // --raw.
        if !Terminal.inputIsTTY && resume == nil {
            return try await AskCommand.run(
                registry: setup.registry, config: config, AskOptions(), quiet: true, markdown: !line.rawAnswers,
                log: log)
        }

        let store = try openHistory(environment)
        let watch = setup.watch()
        defer { watch.stop() }
        let provider = try config.provider(log: log)
        let folders = setup.folders.map {
            $0.bundled ? "bundled" : $0.path.replacingOccurrences(of: environment["HOME"] ?? "\u{0}", with: "~")
        }
        let skills = setup.registry.skills.count
        let banner =
            "skillhost \(SkillRegistry.hostVersion) · \(provider.displayName) · \(skills) skill\(skills == 1 ? "" : "s") "
            + "from \(folders.joined(separator: ", ")) · /help for commands, Ctrl-D to quit"
        var shellEnvironment = ShellEnvironment(
            registry: setup.registry, store: store,
            terminal: Terminal(environment: environment, rawAnswers: line.rawAnswers),
            folders: setup.folders.map { folder in
                (path: folder.path, include: folder.bundled ? HostSetup.bundledFilter : { @Sendable _ in true })
            },
            provider: { name in
                guard let name else { return try config.provider(log: log) }
                guard config.baseURL != nil else {
                    throw ShellError("the offline router has no models; set OPENAI_BASE_URL to use a model server")
                }
                var changed = config
                changed.model = name
                return try changed.provider(log: log)
            },
            configuration: config.agentConfiguration(stepLimit: nil),
            historyFile: HostSetup.dataHome(environment) + "/input_history", banner: banner)
        shellEnvironment.secrets = [config.apiKey]
        shellEnvironment.skillFolders = host.skillFolders
        if config.recordFolder != nil {
            shellEnvironment.autoRecord = {
                do throws(CLIError) { return .success(try config.recordPath() ?? "") } catch {
                    guard case .failure(let message) = error else { return .failure(ShellError("\(error)")) }
                    return .failure(ShellError(message))
                }
            }
        }
        let shell: Shell
        do {
            shell = try Shell(environment: shellEnvironment, model: SessionViewModel(), resume: resume)
        } catch {
            throw .failure(error.description)
        }
        let skillFolders = SkillFolderWatcher(tools: host.skillFolders, registry: setup.registry) {
            [weak shell] lines in
            shell?.post(lines)
        }
        defer { skillFolders.stop() }
        // The shell blocks on terminal input, so it gets a thread of its own (never the cooperative pool).
        return await withCheckedContinuation { continuation in
            let thread = Thread { continuation.resume(returning: shell.run()) }
            thread.name = "skillhost.shell"
            thread.start()
        }
    }

    /// The sessions that hold a conversation (a shell opened and closed without a word is not one), newest first.
    static func listSessions(_ store: HistoryStore) throws(CLIError) -> Int32 {
        let sessions: [SessionSummary]
        do { sessions = try store.sessions().filter { $0.messageCount > 0 } } catch {
            throw .failure(error.description)
        }
        guard !sessions.isEmpty else {
            writeOut("No saved sessions.\n")
            return 0
        }
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd HH:mm"
        for session in sessions {
            writeText(
                "\(session.id)  \(formatter.string(from: session.started))  \(session.messageCount) messages  "
                    + "\(session.title)\n")
        }
        return 0
    }
}
