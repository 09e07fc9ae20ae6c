import Foundation
import SkillHost
import SkillJSON

extension SkillFolderTools {
    /// Interpreters for scripts that are not executable themselves, by extension (found on PATH).
    static let interpreters = ["py": "python3", "sh": "sh", "bash": "bash", "js": "node", "rb": "ruby", "pl": "perl"]

    /// `skill_run`: the script confined through the skillhost binary's sandbox role, on a thread of its own (never
    /// the cooperative pool); cancelling the call kills it.
    func run(_ arguments: JSONValue) async -> SkillOutcome {
        let name = arguments["name"]?.stringValue ?? ""
        if let served = remoteSkill(name) {
            return .failure(
                code: .notPermitted,
                "skill \(name) is served by MCP server \(served.server): its scripts are a remote party's code and do "
                    + "not run here — read them with skill_read, or install the skill as a folder of your own to run "
                    + "them")
        }
        guard let skill = scan.skill(name) else { return .failure(code: .failed, "there is no skill \(name)") }
        let relative = arguments["script"]?.stringValue ?? ""
        let script: String
        switch SkillFolderFiles.resolve(relative, in: skill) {
        case .failure(let error): return .failure(code: .failed, error.message)
        case .success(let path): script = path
        }
        guard let launcher = settings.launcher else {
            return .failure(
                code: .failed, "scripts cannot run here: the skillhost binary that confines them is not found")
        }
        let given = (arguments["arguments"]?.arrayValue ?? []).compactMap(\.stringValue)
        var command = script
        var commandArguments = given
        if access(script, X_OK) != 0 || !Self.startsWithInterpreterLine(script) {
            let suffix = (script as NSString).pathExtension.lowercased()
            guard let interpreter = Self.interpreters[suffix] else {
                return .failure(
                    code: .failed,
                    "\(relative) in skill \(name) is neither executable with a #! line nor a script skillhost knows "
                        + "how to run (.py, .sh, .bash, .js, .rb, .pl)")
            }
            command = interpreter
            commandArguments = [script] + given
        }
        // What the person granted this folder (never a name it declares), and nothing its arguments name: the
        // model chose them. The folder is resolved once: the one granted is the one given to the script.
        let realFolder = SkillFolderFiles.realPath(skill.folder)
        var sandbox = settings.grants.grant(for: skill, realFolder: realFolder)?.sandbox ?? Sandbox()
        sandbox.readsArgumentFiles = false
        if let folder = realFolder {
            // A folder linked in from where it holds too much (a link to the home folder) is not given to a script.
            let home = SkillFolderFiles.realPath(settings.grants.home) ?? settings.grants.home
            guard !SandboxPlan.holdsTooMuch(folder, home: home) else {
                return .failure(
                    code: .notPermitted,
                    "skill \(name)'s folder is \(folder), which holds too much to give its scripts; move the skill "
                        + "into a folder of its own")
            }
            sandbox.read.append(folder)
            sandbox.directory = folder
        }
        var environment = ChildEnvironment.minimal(adding: ["SKILLHOST_SKILL": name])
        environment["PATH"] = Self.scriptPath(environment["PATH"])
        // The launcher makes the script's temporary folder inside one of this run's own, removed when it ends
        // (each run left a folder with what the script wrote behind).
        let scratch = Self.scratchFolder()
        if let scratch { environment["TMPDIR"] = scratch }
        defer { if let scratch { try? FileManager.default.removeItem(atPath: scratch) } }
        let childEnvironment = environment
        // The small launcher beside the binary applies the plan computed here (a millisecond's start); without it
        // the binary's own sandbox role does the same (the Swift runtime's start, some 20 ms).
        var path = launcher
        var launcherArguments = sandbox.launcherArguments(command: command, arguments: commandArguments)
        let fast = (launcher as NSString).deletingLastPathComponent + "/skillhost-sandbox"
        if access(fast, X_OK) == 0 {
            switch SandboxPlan.make(sandbox, command: command, arguments: commandArguments, environment: environment) {
            case .failure(let problem):
                return .failure(code: .failed, "\(relative) could not start: \(problem.message)")
            case .success(let plan):
                path = fast
                launcherArguments = plan.launcherArguments(commandArguments)
            }
        }
        let program = path
        let line = launcherArguments
        let input = arguments["input"]?.stringValue
        let timeout = settings.timeout
        let limit = settings.outputLimit
        let cancel = BoundedProcess.Cancel()
        let ending = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                Thread {
                    continuation.resume(
                        returning: BoundedProcess.run(
                            program, line, environment: childEnvironment, input: input, timeout: timeout,
                            outputLimit: limit, cancel: cancel))
                }.start()
            }
        } onCancel: {
            cancel()
        }
        return Self.outcome(
            ending, script: relative, skill: name, grantKey: settings.grants.key(for: skill), network: sandbox.network)
    }

    /// The run as a result: exit 0 → `{exit_code, stdout, stderr}`; anything else a failure that says what the
    /// script said and how it was confined.
    static func outcome(
        _ ending: Result<BoundedProcess.Ending, BoundedProcess.Failure>, script: String, skill: String,
        grantKey: String, network: Bool
    ) -> SkillOutcome {
        switch ending {
        case .failure(.cannotStart(let why)): return .failure(code: .failed, "\(script) could not start: \(why)")
        case .failure(.timedOut(let limit)):
            return .failure(
                code: .timeout, "\(script) was stopped after \(Int(limit.milliseconds / 1000)) s (its time limit)")
        case .failure(.cancelled): return .failure(code: .cancelled, "\(script) was stopped: the call was cancelled")
        case .success(let ending):
            let output = String(decoding: ending.output, as: UTF8.self)
            let errors = String(decoding: ending.errors, as: UTF8.self)
            let truncated = ending.truncated ? " (output cut at its limit)" : ""
            if ending.status == 0 {
                var object = JSONObject([
                    (key: "exit_code", value: 0), (key: "stdout", value: .string(output)),
                    (key: "stderr", value: .string(errors)),
                ])
                if ending.truncated { object["truncated"] = true }
                return .success(.object(object))
            }
            if ending.status == 70, errors.hasPrefix("skillhost sandbox:") {
                return .failure(
                    code: .failed,
                    "\(script) could not be confined, so it did not run: "
                        + errors.trimmingCharacters(in: .whitespacesAndNewlines))
            }
            let said = [errors, output].map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
                .filter { !$0.isEmpty }.joined(separator: "\n")
            // How it was confined is said only when what it wrote shows a refusal: a script that failed for its own
            // reasons (a missing package, exit 2) is not told to ask for the network.
            let refused = Self.refusalSigns.contains { said.localizedCaseInsensitiveContains($0) }
            return .failure(
                code: .failed,
                "\(script) exited with status \(ending.status)\(truncated)"
                    + (said.isEmpty ? "" : ": \(String(said.suffix(2000)))")
                    + (refused
                        ? ". It ran confined: it may read skill \(skill)'s folder and the system, write only its "
                            + "temporary folder ($TMPDIR)"
                            + (network
                                ? ""
                                : ", and has no network — if it needs more, grant it in config.json: "
                                    + "\"skills\": {\"grant\": {\"\(grantKey)\": [\"network\"]}}") : ""))
        }
    }

    /// What a refused system call leaves in a script's output (EACCES, EPERM, no network, a read-only file system).
    static let refusalSigns = [
        "permission denied", "operation not permitted", "eacces", "eperm", "read-only file system",
        "network is unreachable", "temporary failure in name resolution", "name or service not known",
        "could not resolve host", "errno 13", "errno 1]",
    ]

    /// A private (0700) folder for one run under the host's temporary folder; nil when none can be made (the
    /// launcher then makes its own under /tmp).
    static func scratchFolder() -> String? {
        var template = Array((NSTemporaryDirectory() + "/skillhost-run-XXXXXX").utf8CString)
        return template.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress.flatMap { mkdtemp($0) }.map { String(cString: $0) }
        }
    }

    /// The PATH a script runs with: the host's, without version managers' shim folders (pyenv, rbenv, asdf —
    /// scripts that need the manager's whole folder, which a confined script cannot run); the interpreters they
    /// stand for are then found where the system has them.
    static func scriptPath(_ path: String?) -> String {
        let folders = (path ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":").filter { !$0.hasSuffix("/shims") }
        return folders.isEmpty ? "/usr/local/bin:/usr/bin:/bin" : folders.joined(separator: ":")
    }

    /// Whether the file starts with `#!`.
    static func startsWithInterpreterLine(_ path: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        return (try? handle.read(upToCount: 2)) == Data("#!".utf8)
    }
}
