import CProcess
import Foundation
import SkillHost
import TestSupport
import Testing

@testable import MCP

/// MCP servers started with a "sandbox": the skillhost binary's sandbox role confines itself and becomes the
/// server, which then may read the system and its own installation, write only what the sandbox names, and reach
/// the network only when allowed.
@Suite(.serialized)
struct MCPSandboxTests {
    func source(_ name: String, _ command: String, _ arguments: [String], sandbox: Sandbox, registry: SkillRegistry)
        -> MCPSkillSource
    {
        var configuration = MCPServerConfiguration.patient(command: command, arguments: arguments)
        configuration.sandbox = sandbox
        configuration.launcher = Paths.skillhost
        return MCPSkillSource(name: name, configuration: configuration, registry: registry)
    }

    func text(_ registry: SkillRegistry, _ skill: String, _ arguments: String) async -> String? {
        await registry.invoke(skill, arguments: arguments).result?.stringValue
    }

    /// The reference server from PyPI (a script in a virtual environment) starts and answers inside the sandbox.
    @Test func theReferenceTimeServerRunsSandboxed() async throws {
        let python = try await PythonPeers.ensure()
        let registry = try makeRegistry()
        defer { registry.shutdown() }
        let time = source(
            "time", (python as NSString).deletingLastPathComponent + "/mcp-server-time", ["--local-timezone", "UTC"],
            sandbox: Sandbox(), registry: registry)
        try await time.start()
        defer { time.stop() }
        let now = await registry.invoke("get_current_time", arguments: #"{"timezone":"Asia/Tokyo"}"#)
        #expect(now.result?["timezone"] == "Asia/Tokyo", "\(now.error ?? "")")
    }

    @Test func aSandboxedServerReachesOnlyWhatItIsGiven() async throws {
        let python = try await PythonPeers.ensure()
        let listener = try LoopbackListener()
        let readable = Paths.temporaryDirectory("sandbox-readable")
        let writable = Paths.temporaryDirectory("sandbox-writable")
        let secret = Paths.temporaryDirectory("sandbox-secret")
        try "shared".write(toFile: readable + "/a.txt", atomically: true, encoding: .utf8)
        try "secret".write(toFile: secret + "/b.txt", atomically: true, encoding: .utf8)
        let registry = try makeRegistry()
        defer { registry.shutdown() }
        let probing = source(
            "probing", python, [Paths.fixtures + "/probing_mcp_server.py"],
            sandbox: Sandbox(read: [readable], write: [writable]), registry: registry)
        try await probing.start()
        defer { probing.stop() }
        #expect(await text(registry, "read_file", #"{"path":"\#(readable)/a.txt"}"#) == "ok: shared")
        #expect(
            await text(registry, "read_file", #"{"path":"\#(secret)/b.txt"}"#) == "PermissionError: Permission denied")
        #expect(await text(registry, "write_file", #"{"path":"\#(writable)/c.txt"}"#) == "ok: written")
        #expect(
            await text(registry, "write_file", #"{"path":"\#(readable)/c.txt"}"#)
                == "PermissionError: Permission denied")
        #expect(
            await text(registry, "connect", #"{"port":\#(listener.port)}"#)
                == "PermissionError: Operation not permitted")
        #expect(listener.connections == 0)
        #expect(
            await text(registry, "signal_parent", "{}") == "PermissionError: Operation not permitted"
                || skillhost_landlock_abi() < 6)
        // A UNIX datagram to a socket file outside the sandbox (issue #28: socket(AF_UNIX, SOCK_RAW), sendmsg).
        let receiver = try UnixDatagramReceiver()
        #expect(
            await text(registry, "unix_datagram", #"{"path":"\#(receiver.path)"}"#)
                == "PermissionError: Operation not permitted")
        #expect(!receiver.received, "no datagram arrived")
        // Metadata (issue #28): a mode or times outside what it may write stay as they were; in its own folder
        // they change, through the supervisor.
        let modeBefore = try FileManager.default.attributesOfItem(atPath: secret + "/b.txt")[.posixPermissions] as? Int
        #expect(
            await text(registry, "chmod", #"{"path":"\#(secret)/b.txt","mode":511}"#)
                == "PermissionError: Operation not permitted")
        #expect(
            try FileManager.default.attributesOfItem(atPath: secret + "/b.txt")[.posixPermissions] as? Int == modeBefore
        )
        #expect(await text(registry, "chmod", #"{"path":"\#(writable)/c.txt","mode":416}"#) == "ok: changed")
        let changed = try FileManager.default.attributesOfItem(atPath: writable + "/c.txt")
        #expect(changed[.posixPermissions] as? Int == 0o640)
        #expect((changed[.modificationDate] as? Date)?.timeIntervalSince1970 == 0)
        // Its supervisor is a process forked before the sandbox closed (a program's listener cannot reach the
        // host); it ends with the server.
        func supervisors() -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).filter { entry in
                guard Int(entry) != nil,
                    let name = try? String(contentsOfFile: "/proc/\(entry)/comm", encoding: .utf8),
                    name.hasPrefix("skillhost-meta"),
                    let line = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline")
                else { return false }
                return String(decoding: line, as: UTF8.self).contains(writable)
            }
        }
        #expect(supervisors().count == 1)
        probing.stop()
        let deadline = ContinuousClock.now + .seconds(60)
        while !supervisors().isEmpty, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        #expect(supervisors().isEmpty, "the supervisor ended with the server")

        // With the network allowed, the same server connects.
        let networked = try makeRegistry()
        defer { networked.shutdown() }
        let online = source(
            "online", python, [Paths.fixtures + "/probing_mcp_server.py"], sandbox: Sandbox(network: true),
            registry: networked)
        try await online.start()
        defer { online.stop() }
        #expect(await text(networked, "connect", #"{"port":\#(listener.port)}"#) == "ok: hello")
    }

    /// What a sandboxed program may read of where it is installed: never the root, the home folder or ~/.local.
    @Test func installFoldersStayNarrow() throws {
        let home = Paths.temporaryDirectory("sandbox-home")
        try FileManager.default.createDirectory(atPath: home + "/.local/bin", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: home + "/.local/lib", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: home + "/venv/bin", withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: home + "/venv/pyvenv.cfg", contents: Data())
        #expect(SandboxMain.installFolders("/usr/bin/true", home: home).first == "/usr")
        // /bin is beside /lib at the root: the root is never an installation prefix (it would open everything).
        #expect(!SandboxMain.installFolders("/bin/bash", home: home).contains("/"))
        #expect(
            SandboxMain.installFolders("/bin/bash", home: home).first
                == URL(fileURLWithPath: "/bin").resolvingSymlinksInPath().path)
        #expect(SandboxMain.installFolders(home + "/.local/bin/server", home: home).first == home + "/.local/bin")
        #expect(SandboxMain.installFolders(home + "/venv/bin/server", home: home).first == home + "/venv")
        #expect(SandboxMain.installFolders(home + "/server", home: home).first == nil)
        #expect(SandboxMain.installFolders("/server", home: home).first == nil)
    }

    /// Through config.json and the real binary: the sandboxed server's tool cannot read a file outside what the
    /// sandbox gives, and a sandboxed server that cannot start is named.
    @Test func aSandboxFromTheConfigHoldsThroughTheCommandLine() async throws {
        let python = try await PythonPeers.ensure()
        let home = Paths.temporaryDirectory("sandbox-config-home")
        try FileManager.default.createDirectory(atPath: home + "/config/skillhost", withIntermediateDirectories: true)
        try "key".write(toFile: home + "/secret.txt", atomically: true, encoding: .utf8)
        let config = home + "/config/skillhost/config.json"
        try
            #"{"mcpServers": {"probing": {"command": "\#(python)", "args": ["\#(Paths.fixtures)/probing_mcp_server.py"], "sandbox": true, "start_timeout_s": 120, "timeout_s": 120}}}"#
            .write(toFile: config, atomically: true, encoding: .utf8)
        let environment = cliEnvironment(home: home)
        let call = try await runProcessOffPool(
            Paths.skillhost, ["call", "read_file", #"{"path":"\#(home)/secret.txt"}"#], environment: environment)
        #expect(call.stdout == "PermissionError: Permission denied\n", "\(call.stdout)\(call.stderr)")
        let listed = try await runProcessOffPool(Paths.skillhost, ["list"], environment: environment)
        #expect(
            listed.stdout.contains(
                "own process (MCP server) · sandboxed: no network, reads its installation, writes only a temporary "
                    + "folder\n"), "\(listed.stdout)")

        try #"{"mcpServers": {"gone": {"command": "no-such-server-\#(UUID().uuidString.prefix(6))", "sandbox": true}}}"#
            .write(toFile: config, atomically: true, encoding: .utf8)
        let list = try await runProcessOffPool(Paths.skillhost, ["list"], environment: environment)
        #expect(list.stdout.contains("mcp server gone: "), "\(list.stdout)")
    }
}
