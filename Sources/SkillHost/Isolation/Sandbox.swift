import CProcess
import Foundation
import SkillJSON
import Support

/// What a program started in a sandbox may do (config.json: `"mcpServers": {"x": {…, "sandbox": {"network": true,
/// "read": ["~/models"], "write": ["~/repo"]}}}`). It may always read the system's files and run programs from the
/// system folders; read and run what is in the folder it was installed in and its script's interpreter's (see
/// `SandboxPlan`); with `readsArgumentFiles`, read the folder of every file its arguments name by absolute path;
/// and write a private temporary folder. Anything else is what this grants.
public struct Sandbox: Sendable, Equatable {
    public var network = false
    /// Extra readable folders (`~` is the user's home).
    public var read: [String] = []
    /// Extra writable folders.
    public var write: [String] = []
    /// The folder the program starts in (nil: where its parent was).
    package var directory: String?
    /// Whether a file its arguments name (`python3 /srv/mcp/server.py`) may be read with its folder: true for a
    /// command line the person wrote (an MCP server's, a hook's), never for arguments a model chose (a skill's
    /// script), which must not widen what the person granted.
    package var readsArgumentFiles = false

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
        if readsArgumentFiles { object["argument_files"] = true }
        return .object(object)
    }

    package init?(json: JSONValue) {
        guard case .bool(let network)? = json["network"], let read = json["read"]?.arrayValue,
            let write = json["write"]?.arrayValue
        else { return nil }
        self.init(
            network: network, read: read.compactMap(\.stringValue), write: write.compactMap(\.stringValue))
        directory = json["directory"]?.stringValue
        readsArgumentFiles = json["argument_files"] == .bool(true)
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

    private static func fail(_ status: Int32, _ message: String) -> Never {
        StandardStreams.error("skillhost sandbox: \(message)\n")
        exit(status)
    }
}
