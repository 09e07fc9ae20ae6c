import Agent
import Foundation
import SessionUI
import Shell
import SkillFolders
import SkillHost
import SkillJSON
import Support

/// Everything that ends a command early. Rendered in one place (`SkillhostCLI.main`).
enum CLIError: Error {
    /// Bad command line: exit code 2.
    case usage(UsageError)
    /// A failure with a sentence: exit code 1.
    case failure(String)
    /// Arguments a skill's schema refuses, with the sentence: exit code 3.
    case invalidArguments(String)
}

/// Exit codes, as documented in `--help` and docs/reference/exit-codes.md.
enum ExitCode: Int32 {
    case ok = 0, error = 1, usage = 2, invalidArguments = 3, timeout = 4, cancelled = 5
    /// `ask`: the turn stopped at the step limit, on a repeated call, or the offline router matched no skill.
    case stepLimit = 6, repeatedCall = 7, nothingMatched = 8
    /// `ask`: a call the turn asked for was not run — a policy rule refused it, or (non-interactive) there was no
    /// one to confirm it.
    case refused = 9
    /// `ask`: a budget of the turn or the session (config.json's `"budgets"`) was used up.
    case budget = 10

    init(_ status: SkillOutcome.Status) {
        switch status {
        case .ok: self = .ok
        case .error: self = .error
        case .invalidArgs: self = .invalidArguments
        case .timeout: self = .timeout
        case .cancelled: self = .cancelled
        }
    }
}

/// Writes to standard output at once (no buffering, so piped readers see lines as they happen).
/// A reader that went away ends the command quietly with exit 141 (`StandardStreams.out`).
func writeOut(_ text: String) {
    StandardStreams.out(text)
}

/// Writes to standard error, inert: what goes there (errors, plugins' and servers' log lines, activity) carries
/// strangers' text, and the command line styles nothing of its own.
func printError(_ text: String) {
    StandardStreams.error(InertText.make(text) + "\n")
}

/// Writes text for people to standard output, inert (plugin names, titles, descriptions, results, file names are
/// strangers' text). JSON goes out with `writeOut`: it escapes what needs escaping itself.
func writeText(_ text: String) {
    writeOut(InertText.make(text))
}

@main
struct SkillhostCLI {
    static let version = SkillRegistry.hostVersion

    static func main() async {
        // A peer that went away (an MCP client or server, a closed pipe) is an error to report, not a reason to die.
        signal(SIGPIPE, SIG_IGN)
        // The worker role (process isolation): started by the host, never by people.
        if CommandLine.arguments.count > 1, CommandLine.arguments[1] == "worker" {
            // The template forks the later workers (`WorkerTemplates`); it ends when the host does.
            if CommandLine.arguments.dropFirst(2) == ["--template"] { WorkerTemplates.serve() }
            guard let launch = WorkerLaunch(arguments: Array(CommandLine.arguments.dropFirst(2))) else {
                printError("skillhost: worker is started by skillhost itself for plugins in process mode")
                exit(ExitCode.usage.rawValue)
            }
            WorkerMain.run(launch)
        }
        // The sandbox role: confines itself, then becomes an MCP server configured with a "sandbox".
        if CommandLine.arguments.count > 1, CommandLine.arguments[1] == "sandbox" {
            SandboxMain.run(Array(CommandLine.arguments.dropFirst(2)))
        }
        // What plugins start and abandon (a setsid() child of a worker that died) comes to this process, which
        // stops it: nothing a plugin starts outlives skillhost.
        ProcessTree.adoptOrphans()
        // A host that died without cleaning up (SIGKILL, a crash) left its private folder behind: swept on a thread
        // of its own (a crowded $TMPDIR must not delay the start), finished before exit. A signal to stop removes
        // this host's folder before exiting.
        let swept = DispatchSemaphore(value: 0)
        Thread {
            TemporaryDirectories.sweepStale()
            swept.signal()
        }.start()
        let stopSignals = [SIGTERM, SIGHUP].map { number -> DispatchSourceSignal in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                TemporaryDirectories.removeAll()
                // What this host adopted (orphans of what it started) goes with it.
                ProcessTree.killAdoptedOrphans()
                exit(128 + number)
            }
            source.resume()
            return source
        }
        defer { stopSignals.forEach { $0.cancel() } }
        let code: Int32
        do throws(CLIError) {
            let arguments: [String]
            do { arguments = try UTF8Input.commandLine() } catch { throw CLIError.usage(error) }
            code = try await run(arguments, environment: ProcessInfo.processInfo.environment)
        } catch {
            switch error {
            case .usage(let usage):
                printError("skillhost: \(usage.message)")
                if let hint = usage.hint { printError("hint: \(hint)") }
                code = ExitCode.usage.rawValue
            case .failure(let message):
                printError("skillhost: \(message)")
                code = ExitCode.error.rawValue
            case .invalidArguments(let message):
                printError("skillhost: \(message)")
                code = ExitCode.invalidArguments.rawValue
            }
        }
        swept.wait()
        exit(code)
    }

    static func run(_ arguments: [String], environment: [String: String]) async throws(CLIError) -> Int32 {
        let line: ParsedCommandLine
        do { line = try CommandLineParser.parse(arguments) } catch { throw .usage(error) }
        let threshold = logThreshold(environment)
        let log: @Sendable (LogRecord) -> Void = { record in
            guard record.level >= threshold else { return }
            printError("[\(record.source)] \(record.message)")
        }

        switch line.command {
        case .version:
            writeOut(VersionInfo.text)
            return ExitCode.ok.rawValue
        case .manual:
            writeOut(Manual.roff)
            return ExitCode.ok.rawValue
        case .completion(let shell):
            writeOut(Completion.script(for: shell))
            return ExitCode.ok.rawValue
        case .policy(let skill, let arguments):
            let host = try await Host.open(line, environment: environment, log: log)
            defer { host.close() }
            writeText(try PolicyCommand.explain(skill: skill, arguments: arguments, registry: host.registry))
            return ExitCode.ok.rawValue
        case .trust(let name):
            var isFolder: ObjCBool = false
            if name == "." || name == ".." || name.contains("/"),
                FileManager.default.fileExists(atPath: name, isDirectory: &isFolder), isFolder.boolValue
            {
                // A project folder: its own skill folders may load.
                writeText(try TrustedProjects.trust(name, environment: environment))
                return ExitCode.ok.rawValue
            }
            let host = try await Host.open(line, environment: environment, log: log)
            defer { host.close() }
            await host.mcp.startDeferred()
            writeText(try TrustCommand.run(name, registry: host.registry))
            return ExitCode.ok.rawValue
        case .config(let action):
            switch action {
            case "path": writeOut(ConfigCommand.path(environment))
            case "check": writeText(try ConfigCommand.check(environment))
            default: writeText(try ConfigCommand.show(environment))
            }
            return ExitCode.ok.rawValue
        case .new(let plugin):
            writeOut(try NewCommand.run(plugin, environment: environment))
            return ExitCode.ok.rawValue
        case .plugin(let action, let argument):
            return try await PluginCommand.run(action, argument, line: line, environment: environment, log: log)
        case .help(let topic):
            guard let text = Help.text(for: topic) else {
                throw .usage(
                    UsageError(
                        "no help for \"\(topic ?? "")\"",
                        hint: "commands: \(CommandLineParser.commands.joined(separator: ", "))"))
            }
            writeOut(text + "\n")
            return ExitCode.ok.rawValue
        case .list(let json, let watch):
            let host = try await Host.open(line, environment: environment, log: log, reportMCPFailures: false)
            defer { host.close() }
            let failures = host.mcp.failures
            if json {
                writeOut(ListOutput.json(host.setup, skillFolders: host.skillFolders, mcpFailures: failures))
            } else {
                writeText(ListOutput.table(host.setup, skillFolders: host.skillFolders, mcpFailures: failures))
            }
            if watch { await ListOutput.follow(host.setup, json: json) }
            return ExitCode.ok.rawValue
        case .check(let file, let json):
            guard FileManager.default.fileExists(atPath: file) else {
                throw .failure("\(file): no such file")
            }
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: file, isDirectory: &isFolder), isFolder.boolValue {
                // What the person's config.json grants it, when that reads (the verdict does not depend on it).
                let grants = (try? Config.load(environment)).map { config in
                    SkillGrants(config.skills.grants, home: environment["HOME"] ?? NSHomeDirectory())
                }
                return SkillFolderCommand.check(file, json: json, grants: grants ?? SkillGrants())
            }
            if file.hasSuffix(".skill.json") {
                // Checked against the skills a host would have: the bundled and the user's plugins.
                let setup = try HostSetup.assemble(
                    extraFolders: [], defaultFolders: true, environment: environment,
                    config: try Config.load(environment), isolate: line.isolate, log: { _ in })
                defer { setup.registry.shutdown() }
                let result = setup.registry.checkComposite(file: file)
                if json {
                    writeOut(CheckOutput.compositeJSON(result))
                } else {
                    writeText(CheckOutput.compositeText(result, file: file))
                }
                if case .failure = result { return ExitCode.error.rawValue }
                return ExitCode.ok.rawValue
            }
            let setup = try HostSetup.assemble(
                extraFolders: [], defaultFolders: false, environment: environment,
                config: try Config.load(environment), isolate: line.isolate, log: log)
            defer { setup.registry.shutdown() }
            let result = setup.registry.check(file: file)
            let bundled = HostSetup.bundledFolder().map {
                IsolationConfig.resolved($0) == IsolationConfig.resolved((file as NSString).deletingLastPathComponent)
            }
            if json {
                writeOut(CheckOutput.json(result))
            } else {
                writeText(CheckOutput.text(result, file: file, bundled: bundled ?? false))
            }
            if case .failure = result { return ExitCode.error.rawValue }
            return ExitCode.ok.rawValue
        case .mcp(let options):
            let output = MCPCommand.protectStandardOutput()
            let host = try await Host.open(line, environment: environment, log: log)
            defer { host.close() }
            let watch = host.setup.watch()
            defer { watch.stop() }
            // Skill folders that change reach clients as tools/list_changed (the registry's change).
            let skillFolders = SkillFolderWatcher(tools: host.skillFolders, registry: host.registry) { lines in
                for line in lines { log(LogRecord(level: .info, source: "skills", message: line)) }
            }
            defer { skillFolders.stop() }
            if let http = try MCPHTTPSettings.resolve(options, config: host.config, environment: environment) {
                try await MCPCommand.serveHTTP(
                    registry: host.registry, configuration: http,
                    sessionToolCalls: host.config.budgets.mcpSessionToolCalls, skillFolders: host.skillFolders)
            } else {
                await MCPCommand.run(
                    registry: host.registry, output: output, sessionToolCalls: host.config.budgets.mcpSessionToolCalls,
                    skillFolders: host.skillFolders)
            }
            return ExitCode.ok.rawValue
        case .web(let http):
            let host = try await Host.open(line, environment: environment, log: log)
            defer { host.close() }
            let watch = host.setup.watch()
            defer { watch.stop() }
            host.mcp.startDeferredInBackground()
            return try await WebCommand.run(http: http, host: host, environment: environment, log: log)
        case .sessions:
            // Listing is reading: no history file is made for it.
            guard FileManager.default.fileExists(atPath: ShellLauncher.historyPath(environment)) else {
                writeOut("No saved sessions.\n")
                return ExitCode.ok.rawValue
            }
            let store = try ShellLauncher.openStore(environment)
            return try ShellLauncher.listSessions(store)
        case .shell(let resume):
            return try await ShellLauncher.run(line: line, resume: resume, environment: environment, log: log)
        case .ask(let options):
            let host = try await Host.open(line, environment: environment, log: log)
            defer { host.close() }
            host.mcp.startDeferredInBackground()
            let store = options.resume != nil || options.save ? try ShellLauncher.openStore(environment) : nil
            return try await AskCommand.run(
                registry: host.registry, config: host.config, options, store: store, log: log)
        case .replay(let file, let live, let json, let answersFromRecord):
            let host = try await Host.open(line, environment: environment, log: log)
            defer { host.close() }
            return try await ReplayCommand.run(
                file, live: live, json: json, answersFromRecord: answersFromRecord, registry: host.registry,
                config: host.config)
        case .call(let skill, let arguments, let json, let timeout, let confirmed):
            let host = try await Host.open(line, environment: environment, log: log)
            defer { host.close() }
            if let failure = await host.mcp.prepare(skill) { printError("skillhost: \(failure)") }
            // A skill an MCP server serves (`server/name`) needs its server started.
            if SkillFolderTools.toolIDs.contains(skill), arguments?.contains("/") == true {
                await host.mcp.startDeferred()
            }
            return try await CallCommand.run(
                registry: host.registry, skill: skill, arguments: arguments,
                json: json, timeout: timeout, confirmed: confirmed, missingBundled: host.setup.missingBundledNotice)
        }
    }

    /// `SKILLHOST_LOG=debug|info|warning|error` (default warning).
    static func logThreshold(_ environment: [String: String]) -> LogRecord.Level {
        switch environment["SKILLHOST_LOG"]?.lowercased() {
        case "debug"?: return .debug
        case "info"?: return .info
        case "error"?: return .error
        default: return .warning
        }
    }
}
