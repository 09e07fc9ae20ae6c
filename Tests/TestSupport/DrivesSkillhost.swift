import Foundation

/// A test that drives the `skillhost` binary as a person does, in a home of its own: the one command-line runner
/// every such test shares (issue #65: thirteen suites each wrote their own).
package protocol DrivesSkillhost {
    /// The home the binary sees (its XDG folders inside it, as `cliEnvironment(home:)` names them).
    var home: String { get }
    /// The environment the binary runs in; by default `cliEnvironment(home:)`.
    var environment: [String: String] { get }
}

extension DrivesSkillhost {
    package var environment: [String: String] { cliEnvironment(home: home) }

    /// `environment` with `extra` variables set (a nil value removes one).
    private func environment(adding extra: [String: String?]) -> [String: String] {
        var environment = self.environment
        for (key, value) in extra { environment[key] = value }
        return environment
    }

    /// Runs `skillhost arguments…` with `stdin` piped in and `extra` variables; blocks this thread until it ends.
    package func skillhost(_ arguments: [String], stdin: String? = nil, extra: [String: String?] = [:]) throws
        -> ProcessResult
    {
        try runProcess(Paths.skillhost, arguments, environment: environment(adding: extra), stdin: stdin)
    }

    package func skillhost(_ arguments: [String], _ extra: [String: String?]) throws -> ProcessResult {
        try skillhost(arguments, extra: extra)
    }

    package func skillhost(_ arguments: String..., stdin: String? = nil, extra: [String: String?] = [:]) throws
        -> ProcessResult
    {
        try skillhost(arguments, stdin: stdin, extra: extra)
    }

    /// Runs `skillhost arguments…` in `directory`, as a person does in a project's folder.
    package func skillhost(_ arguments: [String], in directory: String) throws -> ProcessResult {
        try runProcess(Paths.skillhost, arguments, environment: environment, directory: directory)
    }

    /// The same on a thread of its own, off the cooperative pool (for async tests: a run may take seconds).
    package func skillhostOffPool(_ arguments: [String], stdin: String? = nil, extra: [String: String?] = [:])
        async throws -> ProcessResult
    {
        try await runProcessOffPool(Paths.skillhost, arguments, environment: environment(adding: extra), stdin: stdin)
    }

    package func skillhostOffPool(_ arguments: String..., stdin: String? = nil, extra: [String: String?] = [:])
        async throws -> ProcessResult
    {
        try await skillhostOffPool(arguments, stdin: stdin, extra: extra)
    }
}
