import CProcess
import Foundation
import SkillJSON

/// What a program started in a sandbox may do (config.json: `"mcpServers": {"x": {…, "sandbox": {"network": true,
/// "read": ["~/models"], "write": ["~/repo"]}}}`). It may always read the system's files and run programs from the
/// system folders; read and run what is in the folder it was installed in (see `SandboxMain.installFolders`) and
/// its script's interpreter's; read the folder of every file its arguments name by absolute path (the file alone
/// when that folder is the root or the home folder); and write a private temporary folder. Anything else is what
/// this grants.
public struct Sandbox: Sendable, Equatable {
    public var network = false
    /// Extra readable folders (`~` is the user's home).
    public var read: [String] = []
    /// Extra writable folders.
    public var write: [String] = []
    /// The folder the program starts in (nil: where its parent was).
    package var directory: String?

    public init(network: Bool = false, read: [String] = [], write: [String] = []) {
        self.network = network
        self.read = read
        self.write = write
    }

    /// `sandboxed: no network, reads its installation + 1 folder, writes 1 folder`.
    public var summary: String {
        func plus(_ count: Int) -> String { count == 0 ? "" : " + \(count) folder\(count == 1 ? "" : "s")" }
        return "sandboxed: \(network ? "network" : "no network"), reads its installation\(plus(read.count)), "
            + (write.isEmpty
                ? "writes only a temporary folder" : "writes \(write.count) folder\(write.count == 1 ? "" : "s")")
    }

    /// The keys config.json accepts.
    public static let keys = ["network", "read", "write"]

    package var json: JSONValue {
        var object = JSONObject([
            (key: "network", value: .bool(network)), (key: "read", value: .array(read.map { .string($0) })),
            (key: "write", value: .array(write.map { .string($0) })),
        ])
        if let directory { object["directory"] = .string(directory) }
        return .object(object)
    }

    package init?(json: JSONValue) {
        guard case .bool(let network)? = json["network"], let read = json["read"]?.arrayValue,
            let write = json["write"]?.arrayValue
        else { return nil }
        self.init(
            network: network, read: read.compactMap(\.stringValue), write: write.compactMap(\.stringValue))
        directory = json["directory"]?.stringValue
    }

    /// The arguments (after argv[0]) that make the skillhost binary start `command arguments` confined as this
    /// says, through its `sandbox` role.
    public func launcherArguments(command: String, arguments: [String]) -> [String] {
        ["sandbox", json.jsonText, "--", command] + arguments
    }
}

/// The `sandbox` role of the binary: `skillhost sandbox '<json>' -- <program> <arguments…>` confines itself and
/// becomes the program (`execve`), which keeps the confinement for good.
package enum SandboxMain {
    /// Never returns: becomes the program, or exits 127 (the program is not found) or 70 (it cannot be confined).
    package static func run(_ arguments: [String]) -> Never {
        guard arguments.count >= 3, arguments[1] == "--", let value = try? JSONValue(parsing: arguments[0]),
            let sandbox = Sandbox(json: value)
        else { fail(70, "sandbox is started by skillhost itself for MCP servers with a \"sandbox\"") }
        let command = arguments[2]
        let plan: SandboxPlan
        switch SandboxPlan.make(sandbox, command: command, arguments: Array(arguments.dropFirst(3))) {
        case .failure(let problem): fail(127, problem.message)
        case .success(let made): plan = made
        }
        let program = plan.program
        let execute = plan.execute
        let read = plan.read
        var write = plan.write
        var template = Array((NSTemporaryDirectory() + "/skillhost-sandbox-XXXXXX").utf8CString)
        if let folder = template.withUnsafeMutableBufferPointer({ $0.baseAddress.flatMap { mkdtemp($0) } }) {
            let path = String(cString: folder)
            write.append(path)
            setenv("TMPDIR", path, 1)
        }
        var confinement = Confinement(capabilities: [.runPrograms])
        if sandbox.network { confinement.capabilities.insert(.network) }
        let result = WorkerConfinement.confine(
            confinement, execute: execute, read: read, write: write, maximumABI: -1, forExec: true)
        if case .failure(let failure) = result { fail(70, failure.message) }
        if let directory = sandbox.directory, chdir(directory) != 0 {
            fail(70, "cannot start in \(directory): \(String(cString: strerror(errno)))")
        }
        let argv = ([program] + arguments.dropFirst(3)).map { strdup($0) } + [nil]
        execv(program, argv)
        fail(126, "cannot run \(program): \(String(cString: strerror(errno)))")
    }

    /// The folders a program was installed in, for it and for what its symbolic link points to: its own folder,
    /// or for `…/bin/x` in a virtual environment (a `pyvenv.cfg` beside `bin`), an installation prefix (`lib`
    /// beside `bin`, such as pyenv's) or under /usr or /opt, the folder above `bin`, which holds its libraries.
    /// Never the root, the home folder, ~/.local or a folder above the home folder.
    package static func installFolders(_ program: String, home: String) -> [String] {
        [program, realpath(program)].compactMap { path in
            let folder = (path as NSString).deletingLastPathComponent
            if (folder as NSString).lastPathComponent == "bin" {
                let prefix = (folder as NSString).deletingLastPathComponent
                // An installation prefix (`lib` beside `bin`, as pyenv or a toolchain has) — but never one that is
                // the home folder, ~/.local (which holds other programs' data) or holds the home folder.
                // The root itself never is one: `/bin/bash` is in /bin, not a prefix "/" (which would open everything).
                let shared =
                    prefix == "/" || prefix == home || prefix == home + "/.local" || home.hasPrefix(prefix + "/")
                var isDirectory: ObjCBool = false
                let hasLibraries =
                    FileManager.default.fileExists(atPath: prefix + "/lib", isDirectory: &isDirectory)
                    && isDirectory.boolValue
                if !shared && FileManager.default.fileExists(atPath: prefix + "/pyvenv.cfg") || prefix == "/usr"
                    || prefix.hasPrefix("/usr/") || prefix.hasPrefix("/opt/") || (hasLibraries && !shared)
                {
                    return prefix
                }
            }
            return folder == "/" || folder == home ? nil : folder
        }
    }

    /// The interpreters a script names on its `#!` line (with `env`, also the program `env` finds on `path`).
    static func interpreters(of program: String, path: String) -> [String] {
        guard let handle = FileHandle(forReadingAtPath: program) else { return [] }
        defer { try? handle.close() }
        let head = (try? handle.read(upToCount: 256)) ?? Data()
        guard head.starts(with: Array("#!".utf8)) else { return [] }
        let line = String(decoding: head.dropFirst(2).prefix { $0 != 10 }, as: UTF8.self)
        let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        guard let interpreter = words.first else { return [] }
        var result = [interpreter]
        if (interpreter as NSString).lastPathComponent == "env",
            let name = words.dropFirst().first(where: { !$0.hasPrefix("-") }), let found = resolve(name, path: path)
        {
            result.append(found)
        }
        return result
    }

    /// `command` itself when it holds a slash, else the first executable of that name on `path`.
    static func resolve(_ command: String, path: String) -> String? {
        if command.contains("/") { return access(command, X_OK) == 0 ? command : nil }
        for folder in path.split(separator: ":") {
            let candidate = "\(folder)/\(command)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }

    private static func realpath(_ path: String) -> String {
        guard let resolved = Glibc.realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    private static func fail(_ status: Int32, _ message: String) -> Never {
        FileHandle.standardError.write(Data("skillhost sandbox: \(message)\n".utf8))
        exit(status)
    }
}

/// What a sandboxed program may reach, computed from a `Sandbox`, the command and its arguments: the program found on
/// PATH, the folders it may execute (the system's, where it and its `#!` interpreter are installed), read (system
/// files, what the sandbox adds, a file named in its arguments with its folder) and write (`/dev/null`, what the
/// sandbox adds; the caller adds a private temporary folder). The binary's sandbox role applies it, and so does the
/// small `skillhost-sandbox` launcher (no Swift runtime to start) that skill scripts run through.
package struct SandboxPlan: Sendable, Equatable {
    package let program: String
    package let execute: [String]
    package let read: [String]
    package let write: [String]
    package let network: Bool
    package let directory: String?

    package static func make(
        _ sandbox: Sandbox, command: String, arguments: [String],
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> Result<SandboxPlan, SandboxPlanProblem> {
        let path = environment["PATH"] ?? "/usr/bin:/bin"
        guard let program = SandboxMain.resolve(command, path: path) else {
            return .failure(SandboxPlanProblem(message: "\(command): not found on PATH"))
        }
        let home = environment["HOME"] ?? NSHomeDirectory()
        func expand(_ path: String) -> String {
            let expanded = path == "~" ? home : path.hasPrefix("~/") ? home + path.dropFirst(1) : path
            return (expanded as NSString).standardizingPath
        }
        var execute = WorkerConfinement.systemFolders + SandboxMain.installFolders(program, home: home)
        // A script's interpreter (`#!/path/to/venv/bin/python3`, or `#!/usr/bin/env python3`) and where it lives.
        for interpreter in SandboxMain.interpreters(of: program, path: path) {
            execute += SandboxMain.installFolders(interpreter, home: home)
        }
        var read = WorkerConfinement.systemFiles + WorkerConfinement.ownProcessFiles + sandbox.read.map(expand)
        // A file named in the arguments (`python3 /srv/mcp/server.py`) with its folder — unless that folder is the
        // root or the home folder itself: then the file alone.
        for argument in arguments where argument.hasPrefix("/") {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: argument, isDirectory: &isDirectory), !isDirectory.boolValue {
                let folder = (argument as NSString).deletingLastPathComponent
                read.append(folder == "/" || folder == home ? argument : folder)
            }
        }
        return .success(
            SandboxPlan(
                program: program, execute: execute, read: read, write: ["/dev/null"] + sandbox.write.map(expand),
                network: sandbox.network, directory: sandbox.directory))
    }

    /// The `skillhost-sandbox` command line (after its own path) that applies this plan and runs the program with
    /// `arguments`.
    package func launcherArguments(_ arguments: [String]) -> [String] {
        var line: [String] = network ? ["-n"] : []
        if let directory { line += ["-d", directory] }
        for path in execute { line += ["-x", path] }
        for path in read { line += ["-r", path] }
        for path in write { line += ["-w", path] }
        return line + ["--", program] + arguments
    }
}

/// Why a sandbox cannot be planned (the program is not on PATH).
package struct SandboxPlanProblem: Error, Sendable, Equatable {
    package let message: String
}
