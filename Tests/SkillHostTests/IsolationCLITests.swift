import Foundation
import TestSupport
import Testing

@testable import SkillHost

/// Process isolation through the real `skillhost` binary: plugins outside the bundled folder run in worker
/// processes by default, `--isolate` and config.json choose otherwise, and the messages are exact.
@Suite(.serialized)
struct IsolationCLITests: DrivesSkillhost {
    let home: String
    let folder: String
    let environment: [String: String]

    init() throws {
        home = Paths.temporaryDirectory("isolation-home")
        folder = Paths.temporaryDirectory("isolation-plugins")
        _ = try Fixture.compileFile("faults.c", into: folder)
        _ = try Fixture.compileFile("ctor_crash.c", into: folder)
        for leftover in ["faults.c", "ctor_crash.c"] {
            try? FileManager.default.removeItem(atPath: folder + "/" + leftover)
        }
        var environment = cliEnvironment(home: home)
        environment["SKILLHOST_PLUGINS"] = nil
        environment["SKILLHOST_LOG"] = nil
        self.environment = environment
    }

    /// The shared runner, with this suite's plugins folder.
    func skillhost(_ arguments: [String], stdin: String? = nil) async throws -> ProcessResult {
        try await skillhostOffPool(arguments + ["--plugins", folder], stdin: stdin)
    }

    func writeConfig(_ text: String) throws {
        try FileManager.default.createDirectory(atPath: home + "/config/skillhost", withIntermediateDirectories: true)
        try text.write(toFile: home + "/config/skillhost/config.json", atomically: true, encoding: .utf8)
    }

    /// The row of `list`'s plugin table that starts with `plugin` ("faults 1.0.0").
    static func row(_ listing: String, _ plugin: String) -> String? {
        listing.split(separator: "\n").map(String.init).first { $0.hasPrefix(plugin + " ") && $0.contains("/") }
    }

    /// A plugin's child that keeps the worker's pipes open and leaves its group — for a session of its own
    /// (setsid) or only a process group of its own, in the host's session (setpgid) — then its worker crashes: the
    /// crash is reported as a crash, `call` exits, and the child does not outlive skillhost.
    @Test(arguments: [false, true])
    func nothingAPluginStartsOutlivesTheHost(groupOnly: Bool) async throws {
        let pidFile = Paths.temporaryDirectory("cli-orphan") + "/pid"
        let result = try await skillhost([
            "call", "fault_orphan", #"{"pid_file":"\#(pidFile)","setpgid":\#(groupOnly)}"#,
        ])
        #expect(result.status == 1)
        #expect(result.stderr.hasPrefix(#"error: plugin "faults" crashed (killed by SIGSEGV)"#))
        let orphan = try #require(pid_t(try String(contentsOfFile: pidFile, encoding: .utf8)))
        let gone = await eventually { kill(orphan, 0) != 0 }
        if !gone { kill(orphan, SIGKILL) }
        #expect(gone, "the plugin's orphan was stopped")
    }

    @Test func listShowsWhereEachPluginRunsAndTheRejectedConstructor() async throws {
        let result = try await skillhost(["list"])
        #expect(result.status == 0)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasPrefix("calculator 1.0.0  1 ") && $0.hasSuffix("  in-process · not confined") })
        #expect(
            lines.contains {
                $0.hasPrefix("faults 1.0.0      25 ")
                    && $0.hasSuffix("  process · confined: no network, runs programs, reads and writes all your files")
            })
        #expect(
            lines.contains(
                "  ctor_crash.so: crashed while loading (killed by SIGSEGV); a constructor or init is broken, so it "
                    + "was not loaded"))
        let all = try await skillhost(["list", "--json", "--isolate", "all"])
        #expect(all.stdout.contains(#""isolation": "process""#))
        #expect(!all.stdout.contains(#""isolation": "in-process""#))
    }

    @Test func checkSurvivesACrashingConstructor() async throws {
        let result = try await runProcessOffPool(
            Paths.skillhost, ["check", folder + "/ctor_crash.so"], environment: environment)
        #expect(result.status == 1)
        #expect(
            result.stdout
                == "\(folder)/ctor_crash.so: rejected, 1 problem:\n  - crashed while loading (killed by SIGSEGV); "
                + "a constructor or init is broken, so it was not loaded\n")
    }

    @Test func aCrashIsAnErrorAndTheHostCarriesOn() async throws {
        let crash = try await skillhost(["call", "fault_segv"])
        #expect(crash.status == 1)
        #expect(crash.stderr == "error: plugin \"faults\" crashed (killed by SIGSEGV)\n")
        let hang = try await skillhost(["call", "fault_spin", "--timeout", "300ms"])
        #expect(hang.status == 4)
        #expect(hang.stderr == "timeout: fault_spin timed out after 300 ms\n")
    }

    @Test func isolateNoneRunsThirdPartyPluginsInProcess() async throws {
        let result = try await skillhost(["call", "fault_ok", "--isolate", "none"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("\"pid\":\(String(result.stdout.filter(\.isNumber)))"))
        let list = try await skillhost(["list", "--isolate", "none"])
        #expect(Self.row(list.stdout, "faults 1.0.0")?.hasSuffix("  in-process · not confined") == true)
        // The constructor is still probed in a child: the host survives it.
        #expect(list.stdout.contains("ctor_crash.so: crashed while loading"))
    }

    @Test func inProcessPluginsCannotCorruptTheMCPChannel() async throws {
        let input =
            [
                #"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
                #"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fault_stdout","arguments":{}}}"#,
            ].joined(separator: "\n") + "\n"
        let result = try await skillhost(["mcp", "--isolate", "none"], stdin: input)
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == 2)
        #expect(lines.last?.contains(#""text":"printed""#) == true)
        #expect(result.stderr.contains("not even json"))
    }

    @Test func configChoosesModesAndLimitsWithClearErrors() async throws {
        try writeConfig(#"{"isolation": {"default": "in-process", "plugins": {"calculator": "process"}}}"#)
        let list = try await skillhost(["list"])
        #expect(
            Self.row(list.stdout, "calculator 1.0.0")?.hasSuffix(
                "  process · confined: no network, no programs, reads system files, writes its data dir") == true)
        #expect(Self.row(list.stdout, "faults 1.0.0")?.hasSuffix("  in-process · not confined") == true)

        try writeConfig(#"{"isolation": {"default": "sandbox"}}"#)
        let bad = try await skillhost(["list"])
        #expect(bad.status == 2)
        #expect(
            bad.stderr == "skillhost: \(home)/config/skillhost/config.json: isolation.default must be \"process\" or "
                + "\"in-process\"\nhint: fix the file or remove it\n")
        try writeConfig(#"{"isolation": {"memroy_mb": 512}}"#)
        let typo = try await skillhost(["list"])
        #expect(
            typo.stderr.hasPrefix(
                "skillhost: \(home)/config/skillhost/config.json: unknown setting isolation.memroy_mb (did you mean "
                    + "\"memory_mb\"?); known: default, plugins, memory_mb"))
        let flag = try await skillhost(["list", "--isolate", ","])
        #expect(flag.status == 2)
        #expect(
            flag.stderr == "skillhost: --isolate , names no plugin\nhint: use --isolate all, --isolate none or "
                + "--isolate notes,units\n")
    }

    /// Grants and denials from config.json, as `list` shows them and a blocked call names them; and their errors.
    @Test func grantsAndDenialsFromTheConfig() async throws {
        try writeConfig(#"{"isolation": {"deny": {"faults": ["exec"]}, "grant": {"calculator": ["network"]}}}"#)
        let list = try await skillhost(["list", "--isolate", "all"])
        #expect(
            Self.row(list.stdout, "faults 1.0.0")?.hasSuffix(
                "  process · confined: no network, no programs, reads and writes all your files; declared but denied: "
                    + "run-programs") == true, "\(list.stdout)")
        #expect(
            Self.row(list.stdout, "calculator 1.0.0")?.hasSuffix(
                "  process · confined: network, no programs, reads system files, writes its data dir; granted beyond "
                    + "its declaration: network") == true)
        let orphan = try await skillhost(["call", "fault_orphan", "{}"])
        #expect(!orphan.stderr.contains("[faults] stderr: skillhost worker: blocked"), "logged at info level only")
        #expect(
            orphan.stderr.contains(
                "error: plugin \"faults\" crashed (killed by SIGSEGV); its last words: skillhost "
                    + "worker: blocked clone()"), "\(orphan.stderr)")

        try writeConfig(#"{"isolation": {"grant": {"weather": ["net"]}}}"#)
        let bad = try await skillhost(["list"])
        #expect(bad.status == 2)
        #expect(
            bad.stderr == "skillhost: \(home)/config/skillhost/config.json: isolation.grant.weather[0] is \"net\"; use "
                + "\"network\", \"read\", \"write\", \"exec\", \"read:<folder>\" or \"write:<folder>\" (a folder is "
                + "absolute or starts with ~)\nhint: fix the file or remove it\n")
        try writeConfig(#"{"isolation": {"require_confinement": "yes"}}"#)
        #expect(
            try await skillhost(["list"]).stderr.hasPrefix(
                "skillhost: \(home)/config/skillhost/config.json: isolation.require_confinement must be true or false"))
        try writeConfig(#"{"mcpServers": {"x": {"command": "x", "sandbox": {"net": true}}}}"#)
        #expect(
            try await skillhost(["list"]).stderr.hasPrefix(
                "skillhost: \(home)/config/skillhost/config.json: unknown setting mcpServers.x.sandbox.net; known: "
                    + "network, read, write"))
        try writeConfig(#"{"mcpServers": {"x": {"command": "x", "sandbox": {"write": ["repo"]}}}}"#)
        #expect(
            try await skillhost(["list"]).stderr.hasPrefix(
                "skillhost: \(home)/config/skillhost/config.json: mcpServers.x.sandbox.write[0] must be a folder that "
                    + "is absolute or starts with ~"))
    }

    @Test func aMemoryLimitFromTheConfigStopsAHog() async throws {
        try writeConfig(#"{"isolation": {"memory_mb": 768}}"#)
        let result = try await skillhost(["call", "fault_hog"])
        #expect(result.status == 1)
        #expect(result.stderr.hasPrefix("error: plugin \"faults\" crashed"))
    }
}
