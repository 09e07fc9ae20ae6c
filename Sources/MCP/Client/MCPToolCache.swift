import CHTTP
import Foundation
import SkillHost
import SkillJSON

/// The last tool list of one configured MCP server, kept between runs so `skillhost list` and `call` need not
/// start every server (three servers cost 1.8 s before a native call could run): a JSON file named by a
/// fingerprint of the server's configuration — command, arguments, environment, URL, headers, sandbox — so any
/// change to it makes the old list unused.
struct MCPToolCache: Sendable {
    let file: URL

    init(folder: URL, configuration: MCPServerConfiguration) {
        var text = "\(configuration.command)\u{0}\(configuration.arguments.joined(separator: "\u{0}"))\u{0}"
        text += configuration.environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(
            separator: "\u{0}")
        text += "\u{0}\(configuration.url?.absoluteString ?? "")\u{0}"
        text += configuration.headers.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(
            separator: "\u{0}")
        text += "\u{0}\(configuration.bearerTokenEnvironment ?? "")\u{0}\(String(describing: configuration.sandbox))"
        let bytes = Array(text.utf8)
        var digest = [UInt8](repeating: 0, count: 32)
        _ = skillhost_sha256(bytes, bytes.count, &digest)
        file = folder.appendingPathComponent(digest.prefix(16).map { String(format: "%02x", $0) }.joined() + ".json")
    }

    /// The cached tools and the server's version, when a readable list is there.
    func load() -> (tools: [JSONValue], version: String, saved: Date)? {
        guard case .success(.bytes(let bytes)) = BoundedFile.read(file.path, limit: 16 << 20),
            let value = try? JSONValue(parsing: bytes), let tools = value["tools"]?.arrayValue
        else { return nil }
        let saved = value["saved"]?.doubleValue.map { Date(timeIntervalSince1970: $0) } ?? Date.distantPast
        return (tools, value["version"]?.stringValue ?? "", saved)
    }

    /// Writes the list (atomically: a reader never sees half of it), in a folder and a file only the user can read
    /// (tool lists can name what a private server does). Returns a sentence when it could not.
    func store(_ tools: [JSONValue], version: String) -> String? {
        let value: JSONValue = [
            "tools": .array(tools), "version": .string(version), "saved": .double(Date().timeIntervalSince1970),
        ]
        do {
            _ = try PrivateFiles.directory(file.deletingLastPathComponent().path)
            let partial = file.deletingLastPathComponent().appendingPathComponent(".\(file.lastPathComponent).partial")
            _ = unlink(partial.path)
            guard
                FileManager.default.createFile(
                    atPath: partial.path, contents: nil, attributes: [.posixPermissions: 0o600])
            else { throw CocoaError(.fileWriteNoPermission) }
            _ = chmod(partial.path, 0o600)
            try Data(value.jsonText.utf8).write(to: partial)
            guard rename(partial.path, file.path) == 0 else { throw POSIXError(.EIO) }
            return nil
        } catch {
            return "could not keep the tool list in \(file.path) (\(error.localizedDescription)); the server will be "
                + "started again next time"
        }
    }
}

extension MCPSkillSource {
    /// Registers the tools cached from an earlier run without starting the server; its first call starts it (and
    /// refreshes the tools). Returns false when nothing is cached — then `start()` it.
    package func startOnFirstUse() -> Bool {
        guard let cached = cache?.load() else { return false }
        let fresh = state.withLock { state -> Bool in
            guard state.connection == nil, !state.stopped else { return false }
            state.deferred = true
            return true
        }
        guard fresh else { return false }
        setServerVersion(cached.version)
        register(cached.tools, description: "MCP server \(name) (tools as cached; it starts on first use)")
        return true
    }

    /// Whether `skill` is one of this server's tools and the server waits for its first use: then start it
    /// (`startForFirstUse`) before the call, so its start does not count against the call's deadline.
    package func waitsForFirstUse(of skill: String) -> Bool {
        state.withLock { $0.deferred } && registry.skill(skill)?.plugin == sourceName
    }

    /// Starts the server if it waits for its first use; the reason when it could not.
    package func startForFirstUse() async -> String? { await startDeferred()?.message }

    /// Starts a server registered by `startOnFirstUse`, once, however many calls ask at the same time. Returns
    /// the reason when it failed (the next call tries again).
    func startDeferred() async -> MCPClientError? {
        let task = state.withLock { state -> Task<MCPClientError?, Never>? in
            guard state.deferred else { return nil }
            if let starting = state.starting { return starting }
            let task = Task { [self] () -> MCPClientError? in
                do throws(MCPClientError) {
                    try await start()
                    return nil
                } catch { return error }
            }
            state.starting = task
            return task
        }
        guard let task else { return nil }
        let failure = await task.value
        state.withLock { state in
            state.starting = nil
            if failure == nil { state.deferred = false }
        }
        return failure.map { MCPClientError("MCP server \(name) could not be started for this call: \($0.message)") }
    }
}
