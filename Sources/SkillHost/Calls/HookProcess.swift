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
