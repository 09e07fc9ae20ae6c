import CProcess
import Foundation

/// A program the host starts and speaks to over pipes (an MCP server), started the way workers are: as the leader
/// of its own process group, with default signal dispositions and an empty signal mask (whatever thread starts it),
/// no descriptor of the host's but the three pipes, and the environment given. Stopped for sure by `stop`.
package struct ChildProcess: Sendable {
    package let pid: pid_t
    /// The host's ends: write to `input`, read `output` and `errors`.
    package let input: Int32
    package let output: Int32
    package let errors: Int32

    /// Why a program could not be started: the system's words.
    package struct SpawnError: Error, CustomStringConvertible {
        package let description: String
    }

    /// Starts `path` with `arguments` (not including argv[0]).
    package static func spawn(_ path: String, _ arguments: [String], environment: [String: String]) -> Result<
        ChildProcess, SpawnError
    > {
        var pid: pid_t = 0
        var input: Int32 = -1
        var output: Int32 = -1
        var errors: Int32 = -1
        let result = withSpawnStrings([path] + arguments, environment) { argv, envp in
            skillhost_spawn(path, argv, envp, &pid, &input, &output, &errors)
        }
        guard result == 0 else { return .failure(SpawnError(description: String(cString: strerror(result)))) }
        return .success(ChildProcess(pid: pid, input: input, output: output, errors: errors))
    }

    /// Stops the process group: waits up to `grace` for it to end by itself (its input should already be closed),
    /// then SIGTERM, up to `grace` more, then SIGKILL. `isGone` says whether the process has ended (the caller
    /// reaps it). Blocks.
    package func stop(grace: Duration, isGone: () -> Bool) {
        func wait(_ duration: Duration) -> Bool {
            let deadline = ContinuousClock.now + duration
            while ContinuousClock.now < deadline {
                if isGone() { return true }
                usleep(5000)
            }
            return isGone()
        }
        if wait(grace) { return }
        _ = skillhost_kill_group(pid, SIGTERM)
        if wait(grace) { return }
        _ = skillhost_kill_group(pid, SIGKILL)
    }
}

/// Runs `body` with `arguments` and `environment` as the NULL-terminated arrays of C strings a spawn takes (valid
/// only during `body`).
func withSpawnStrings<Result>(
    _ arguments: [String], _ environment: [String: String],
    _ body: (UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?, UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?)
        -> Result
) -> Result {
    let argv = arguments.map { strdup($0) }
    defer { argv.forEach { free($0) } }
    let envp = environment.map { strdup("\($0.key)=\($0.value)") }
    defer { envp.forEach { free($0) } }
    var argvPointers: [UnsafeMutablePointer<CChar>?] = argv + [nil]
    var envPointers: [UnsafeMutablePointer<CChar>?] = envp + [nil]
    return argvPointers.withUnsafeMutableBufferPointer { argvBuffer in
        envPointers.withUnsafeMutableBufferPointer { envBuffer in body(argvBuffer.baseAddress, envBuffer.baseAddress) }
    }
}
