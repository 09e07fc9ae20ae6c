import Foundation
import SkillJSON
import TestSupport
import Testing

/// What a confined program starts and abandons ends with it, however the child regrouped: a child that leaves its
/// process group with setpgid(0, 0) — staying in skillhost's session — or with setsid(), from a skill's script, a
/// sandboxed hook and a sandboxed MCP server, through the real binary (a plugin's worker that crashes:
/// `IsolationCLITests.nothingAPluginStartsOutlivesTheHost`).
struct LeftoversTests: DrivesSkillhost {
    let home = Paths.temporaryDirectory("leftovers-home")
    var pids: String { home + "/pids" }

    /// Fixtures/regroup.c compiled as a program into `folder`.
    static func regroup(into folder: String) throws -> String {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let output = folder + "/regroup"
        let result = try runProcess(
            "/usr/bin/cc", ["-std=c11", "-Wall", "-Werror", Paths.fixtures + "/regroup.c", "-o", output])
        guard result.status == 0 else { throw FixtureError.compileFailed(result.stderr) }
        return output
    }

    func writeConfig(_ text: String) throws {
        try FileManager.default.createDirectory(atPath: home + "/config/skillhost", withIntermediateDirectories: true)
        try text.write(toFile: home + "/config/skillhost/config.json", atomically: true, encoding: .utf8)
    }

    /// Waits for the process `pid` to be gone (with a cap for a busy machine); kills it if it is not.
    static func isStopped(_ pid: pid_t) async -> Bool {
        let gone = await eventually { kill(pid, 0) != 0 }
        if !gone { kill(pid, SIGKILL) }
        return gone
    }

    func pid(in file: String) throws -> pid_t {
        let text = try String(contentsOfFile: file, encoding: .utf8)
        return try #require(pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)), "\(text)")
    }

    @Test(arguments: ["", "--session"])
    func aSkillScriptsRegroupedChildEndsWithIt(how: String) async throws {
        let folder = home + "/data/skillhost/skills/regroup"
        _ = try Self.regroup(into: folder + "/scripts")
        try """
        ---
        name: regroup
        description: Leaves a child behind. Use when asked to regroup.
        ---
        Run scripts/regroup.sh.
        """.write(toFile: folder + "/SKILL.md", atomically: true, encoding: .utf8)
        try "#!/bin/sh\nexec \"$(dirname \"$0\")/regroup\" \(how)\n".write(
            toFile: folder + "/scripts/regroup.sh", atomically: true, encoding: .utf8)
        chmod(folder + "/scripts/regroup.sh", 0o755)
        let ran = try await skillhostOffPool([
            "call", "skill_run", #"{"name":"regroup","script":"scripts/regroup.sh"}"#,
        ])
        #expect(ran.status == 0, "\(ran.stderr)")
        let printed = try JSONValue(parsing: ran.stdout)["stdout"]?.stringValue ?? ""
        let child = try #require(pid_t(printed.trimmingCharacters(in: .whitespacesAndNewlines)), "\(ran.stdout)")
        #expect(await Self.isStopped(child), "the script's child in a group of its own was stopped")
    }

    @Test(arguments: ["", "--session"])
    func aSandboxedHooksRegroupedChildEndsWithIt(how: String) async throws {
        let program = try Self.regroup(into: home + "/bin")
        try FileManager.default.createDirectory(atPath: pids, withIntermediateDirectories: true)
        let arguments = (how.isEmpty ? [] : [how]) + [pids + "/hook"]
        let command = ([program] + arguments).map { "\"\($0)\"" }.joined(separator: ", ")
        try writeConfig(
            #"{"hooks": {"after_call": [{"command": [\#(command)], "sandbox": {"write": ["\#(pids)"]}}]}}"#)
        let call = try await skillhostOffPool(["call", "calculator", #"{"expression": "1+1"}"#])
        #expect(call.stdout == "2\n", "\(call.stderr)")
        #expect(await Self.isStopped(try pid(in: pids + "/hook")), "the hook's child in a group of its own was stopped")
    }

    @Test(arguments: ["", "--session"])
    func aSandboxedMCPServersRegroupedChildEndsWithIt(how: String) async throws {
        let program = try Self.regroup(into: home + "/bin")
        try FileManager.default.createDirectory(atPath: pids, withIntermediateDirectories: true)
        let arguments = ((how.isEmpty ? [] : [how]) + [pids + "/server"]).map { "\"\($0)\"" }
            .joined(separator: ", ")
        try writeConfig(
            #"{"mcpServers": {"regroup": {"command": "\#(program)", "args": [\#(arguments)], "sandbox": {"write": ["\#(pids)"]}}}}"#
        )
        let listed = try await skillhostOffPool(["list"])
        #expect(listed.stdout.contains("mcp server regroup: "), "\(listed.stdout)\(listed.stderr)")
        #expect(
            await Self.isStopped(try pid(in: pids + "/server")), "the server's child in a group of its own was stopped")
    }
}
