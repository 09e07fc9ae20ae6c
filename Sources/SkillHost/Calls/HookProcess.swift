import Foundation
import SkillJSON

/// Runs one hook: starts its program (a process group of its own, a worker's environment), writes the input,
/// reads at most `outputLimit` bytes of its answer until it exits or its timeout passes (then its group is
/// killed), through `BoundedProcess`. Blocks the calling thread: never call it from the cooperative pool.
enum HookProcess {
    static let outputLimit = 64 << 10

    static func run(_ hook: Hook, input: JSONValue, event: HookEvent, launcher: String? = nil) -> Result<
        String, HookFailure
    > {
        guard let program = resolve(hook.name) else {
            return .failure(.cannotStart("no program \(hook.name) on PATH"))
        }
        // A hook decides for the person: one that others can change is theirs, not the person's (as ssh refuses
        // keys others can write).
        // Its program, and the files its command line names (`["/bin/sh", "~/hooks/approve.sh"]`: the script decides).
        let home = ProcessInfo.processInfo.environment["HOME"]
        let named = hook.command.dropFirst().compactMap { argument -> String? in
            if argument.hasPrefix("~/"), let home { return home + argument.dropFirst(1) }
            return argument.hasPrefix("/") ? argument : nil
        }
        let scripts = named.filter { path in
            var info = stat()
            return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFREG
        }
        for path in [program] + scripts {
            if let reason = writableByOthers(path) { return .failure(.cannotStart(reason)) }
        }
        var path = program
        var arguments = Array(hook.command.dropFirst())
        if var sandbox = hook.sandbox {
            // The skillhost binary's sandbox role confines itself, then becomes the hook. Its command line is the
            // person's (config.json), so a file it names is read with its folder.
            guard let launcher else { return .failure(.cannotStart("no skillhost binary to confine it with")) }
            sandbox.readsArgumentFiles = true
            arguments = sandbox.launcherArguments(command: program, arguments: arguments)
            path = launcher
        }
        let environment = ChildEnvironment.minimal(adding: ["SKILLHOST_HOOK_EVENT": event.rawValue])
        switch BoundedProcess.run(
            path, arguments, environment: environment, input: input.jsonText, timeout: hook.timeout,
            outputLimit: outputLimit)
        {
        case .failure(.cannotStart(let why)): return .failure(.cannotStart(why))
        case .failure(.timedOut(let limit)): return .failure(.timedOut(limit))
        case .failure(.cancelled): return .failure(.cannotStart("cancelled"))
        case .success(let ending):
            guard ending.status == 0 else {
                let said =
                    String(decoding: ending.errors.prefix(300), as: UTF8.self)
                    .split(separator: "\n").first.map(String.init) ?? ""
                return .failure(.exited(ending.status, said))
            }
            return .success(String(decoding: ending.output, as: UTF8.self))
        }
    }

    /// Why `program` could be changed by someone other than its owner, the person and root, or nil: the file, or a
    /// folder above it, writable by its group or by everyone (a folder with the sticky bit, such as /tmp, lets no
    /// one replace another's file), or the file owned by another user.
    static func writableByOthers(_ program: String) -> String? {
        let me = geteuid()
        var path = (program as NSString).standardizingPath
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }  // not there: it fails to start with its own sentence
        if info.st_uid != me && info.st_uid != 0 {
            return "\(path) belongs to another user; a hook must be yours or root's"
        }
        if info.st_mode & 0o022 != 0 {
            return "\(path) can be changed by other users (mode \(String(info.st_mode & 0o777, radix: 8))); "
                + "chmod go-w it"
        }
        while path != "/" {
            path = (path as NSString).deletingLastPathComponent
            guard stat(path, &info) == 0 else { return nil }
            if info.st_uid != me && info.st_uid != 0 {
                return "\(program) lies in \(path), which belongs to another user; move the hook into a folder of "
                    + "your own"
            }
            let sticky = info.st_mode & S_ISVTX != 0
            if info.st_mode & 0o022 != 0 && !sticky {
                return "\(program) lies in \(path), which other users can write (mode "
                    + "\(String(info.st_mode & 0o777, radix: 8))); move the hook into a folder only you can write"
            }
        }
        return nil
    }

    /// `~/x` in the home folder; a bare name on PATH; anything else as given.
    static func resolve(_ program: String) -> String? {
        let environment = ProcessInfo.processInfo.environment
        if program.hasPrefix("~/"), let home = environment["HOME"] { return home + program.dropFirst(1) }
        if program.contains("/") { return program }
        for folder in (environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let candidate = "\(folder)/\(program)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }
}
