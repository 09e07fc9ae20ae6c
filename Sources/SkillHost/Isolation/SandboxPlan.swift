import Foundation

/// What a sandboxed program may reach, computed from a `Sandbox`, the command and its arguments: the program found on
/// PATH, the folders it may execute (the system's, where it and its `#!` interpreter are installed), read (system
/// files, what the sandbox adds, and — only with `readsArgumentFiles` — a file named in its arguments with its
/// folder) and write (`/dev/null`, what the sandbox adds; the caller adds a private temporary folder). The binary's
/// sandbox role applies it, and so does the small `skillhost-sandbox` launcher (no Swift runtime to start) that
/// skill scripts run through.
///
/// Every folder computed here (not granted by the person) is a real path — Landlock opens a rule's path and follows
/// its links, so a link named like a folder would open what it points to — and never one that holds everything:
/// the root, the home folder or a folder above it, `~/.local`, `~/.config` or `/etc` (`SandboxPlan.holdsTooMuch`).
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
        let givenHome = environment["HOME"] ?? NSHomeDirectory()
        let home = SandboxMain.realPath(givenHome) ?? givenHome
        func expand(_ path: String) -> String {
            let expanded = path == "~" ? givenHome : path.hasPrefix("~/") ? givenHome + path.dropFirst(1) : path
            return (expanded as NSString).standardizingPath
        }
        var execute = WorkerConfinement.systemFolders + SandboxMain.installFolders(program, home: home)
        // A script's interpreter (`#!/path/to/venv/bin/python3`, or `#!/usr/bin/env python3`) and where it lives —
        // for a command line that is not the person's (a skill's script), only an interpreter of the system's or
        // one `env` finds on the person's PATH.
        let line = InterpreterLine.read(program)
        for interpreter in line?.programs(path: path, anywhere: sandbox.readsArgumentFiles) ?? [] {
            execute += SandboxMain.installFolders(interpreter, home: home)
        }
        var read = WorkerConfinement.systemFiles + WorkerConfinement.ownProcessFiles + sandbox.read.map(expand)
        // A file the person's command line names (`python3 /srv/mcp/server.py`) with its folder — the file alone
        // when that folder holds too much. Compared as the kernel opens them: resolved, not as text.
        if sandbox.readsArgumentFiles {
            for argument in arguments where argument.hasPrefix("/") {
                guard let file = SandboxMain.realPath(argument) else { continue }
                var info = stat()
                guard stat(file, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { continue }
                let folder = (file as NSString).deletingLastPathComponent
                read.append(holdsTooMuch(folder, home: home) ? file : folder)
            }
        }
        return .success(
            SandboxPlan(
                program: program, execute: execute, read: read, write: ["/dev/null"] + sandbox.write.map(expand),
                network: sandbox.network, directory: sandbox.directory))
    }

    /// Whether `folder` (a real path) holds more than any program's installation or file may open: the root, the
    /// home folder or a folder above it, `~/.local` (other programs' data), `~/.config` (config.json with its
    /// keys) or `/etc` (`/etc/shadow`, keys).
    package static func holdsTooMuch(_ folder: String, home: String) -> Bool {
        folder == "/" || folder == home || home.hasPrefix(folder + "/") || folder == home + "/.local"
            || folder == home + "/.config" || folder == "/etc"
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

extension SandboxMain {
    /// The folders a program was installed in, for it and for what its symbolic link points to: its own folder,
    /// or for `…/bin/x` in a virtual environment (a `pyvenv.cfg` beside `bin`), an installation prefix (`lib`
    /// beside `bin`, such as pyenv's) or under /usr or /opt, the folder above `bin`, which holds its libraries.
    /// Each as its real path, and never one that holds too much (`SandboxPlan.holdsTooMuch`; `/bin/bash` is in
    /// /bin, not a prefix "/"). `home` is a real path.
    package static func installFolders(_ program: String, home: String) -> [String] {
        let candidates = [program, realPath(program) ?? program].map { path -> String in
            let folder = (path as NSString).deletingLastPathComponent
            guard (folder as NSString).lastPathComponent == "bin" else { return folder }
            let prefix = (folder as NSString).deletingLastPathComponent
            var isDirectory: ObjCBool = false
            let hasLibraries =
                FileManager.default.fileExists(atPath: prefix + "/lib", isDirectory: &isDirectory)
                && isDirectory.boolValue
            let isVirtualEnvironment = FileManager.default.fileExists(atPath: prefix + "/pyvenv.cfg")
            let isSystem = prefix == "/usr" || prefix.hasPrefix("/usr/") || prefix.hasPrefix("/opt/")
            let holdsTooMuch = SandboxPlan.holdsTooMuch(realPath(prefix) ?? prefix, home: home)
            return (isVirtualEnvironment || isSystem || hasLibraries) && !holdsTooMuch ? prefix : folder
        }
        var folders: [String] = []
        for candidate in candidates {
            guard let real = realPath(candidate), !SandboxPlan.holdsTooMuch(real, home: home),
                !folders.contains(real)
            else { continue }
            folders.append(real)
        }
        return folders
    }

    /// `command` itself when it holds a slash, else the first executable of that name on `path` (its absolute
    /// folders only) — a regular file either way (a folder passes `access(X_OK)` too).
    static func resolve(_ command: String, path: String) -> String? {
        if command.contains("/") { return isExecutableFile(command) ? command : nil }
        for folder in path.split(separator: ":") where folder.hasPrefix("/") {
            let candidate = "\(folder)/\(command)"
            if isExecutableFile(candidate) { return candidate }
        }
        return nil
    }

    /// Whether `path` is a regular file this process may execute.
    static func isExecutableFile(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFREG && access(path, X_OK) == 0
    }

    /// `path` with every link resolved, nil when it does not exist.
    static func realPath(_ path: String) -> String? {
        guard let resolved = Glibc.realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}

/// A script's `#!` line as the kernel reads it (`fs/binfmt_script.c`): the first 256 bytes, the line up to its
/// newline with trailing spaces and tabs trimmed, the interpreter up to the first space, tab or NUL, and the rest —
/// after spaces and tabs — one optional argument. Bytes, not characters: a space followed by a combining mark is a
/// space to the kernel.
package struct InterpreterLine: Sendable, Equatable {
    /// The interpreter's path as the kernel takes it.
    package let interpreter: String
    /// The one argument the kernel passes before the script, if any.
    package let argument: String?

    /// The line of a file's first bytes; nil when the kernel would not run it as a script, or the interpreter or
    /// argument is not UTF-8 (then nothing is granted for it).
    package init?(_ head: some Collection<UInt8>) {
        var buffer = Array(head.prefix(256))
        buffer += [UInt8](repeating: 0, count: 256 - buffer.count)
        guard buffer[0] == UInt8(ascii: "#"), buffer[1] == UInt8(ascii: "!") else { return nil }
        func isSpaceOrTab(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        func firstNotSpaceOrTab(_ from: Int, _ end: Int) -> Int? {
            (from..<max(from, end)).first { !isSpaceOrTab(buffer[$0]) }
        }
        func firstTerminator(_ from: Int, _ end: Int) -> Int? {
            (from..<max(from, end)).first { isSpaceOrTab(buffer[$0]) || buffer[$0] == 0 }
        }
        let bufferEnd = 255
        var end: Int
        if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
            end = newline
        } else {
            // No newline: the kernel refuses a line that is all blanks, or whose interpreter may be cut short.
            guard let start = firstNotSpaceOrTab(2, bufferEnd), firstTerminator(start, bufferEnd) != nil else {
                return nil
            }
            end = bufferEnd
        }
        while end > 2, isSpaceOrTab(buffer[end - 1]) { end -= 1 }
        guard let name = firstNotSpaceOrTab(2, end), name != end else { return nil }
        let separator = firstTerminator(name, end)
        guard let interpreter = String(validating: buffer[name..<(separator ?? end)], as: UTF8.self) else {
            return nil
        }
        self.interpreter = interpreter
        if let separator, buffer[separator] != 0, let start = firstNotSpaceOrTab(separator, end) {
            let bytes = buffer[start..<end].prefix { $0 != 0 }
            guard let argument = String(validating: bytes, as: UTF8.self) else { return nil }
            self.argument = argument
        } else {
            argument = nil
        }
    }

    /// The `#!` line of the file at `path`, if it has one the kernel would run.
    package static func read(_ path: String) -> InterpreterLine? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        return InterpreterLine((try? handle.read(upToCount: 256)) ?? Data())
    }

    /// The programs this line runs, as real paths of executable files: the interpreter — an absolute path (a
    /// relative one is the kernel's to resolve in the script's folder), and unless `anywhere`, one of the system's
    /// (`/usr`, `/bin`, `/lib…`, `/opt`) — and with `env`, the program `env` finds on `path` when the line is
    /// `env [-S] [-i] [NAME=VALUE…] PROGRAM …` (any other option, such as `-C DIR`, and env's program is not known:
    /// nothing is granted for it).
    package func programs(path: String, anywhere: Bool) -> [String] {
        guard interpreter.hasPrefix("/"), let real = SandboxMain.realPath(interpreter),
            SandboxMain.isExecutableFile(real),
            anywhere || Self.systemPrefixes.contains(where: { real.hasPrefix($0 + "/") })
        else { return [] }
        var programs = [real]
        guard (real as NSString).lastPathComponent == "env", let argument else { return programs }
        let words = argument.utf8.split(whereSeparator: { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") })
            .compactMap { String($0) }
        for word in words {
            if ["-S", "-i", "-", "--ignore-environment", "--split-string"].contains(word) { continue }
            if word.hasPrefix("-") { break }  // an option env takes a value with, or one not known here
            if word.contains("=") { continue }
            if let found = SandboxMain.resolve(word, path: path), let resolved = SandboxMain.realPath(found) {
                programs.append(resolved)
            }
            break
        }
        return programs
    }

    /// Where a script's own interpreter may lie for it to be granted (`programs(path:anywhere:)`).
    static let systemPrefixes = WorkerConfinement.systemFolders + ["/opt"]
}
