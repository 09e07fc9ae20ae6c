import Foundation
import SkillFolders
import SkillHost
import SkillJSON
import Synchronization

/// How to start one MCP server, in the shape MCP clients' configurations use
/// (`{"command": "mcp-server-time", "args": ["--local-timezone", "UTC"], "env": {}}`).
package struct MCPServerConfiguration: Sendable, Equatable {
    package var command: String
    package var arguments: [String]
    package var environment: [String: String]
    /// Deadline of each tool call (nil: the registry's default).
    package var callTimeout: Duration?
    /// Deadline of the handshake and `tools/list`.
    package var startTimeout: Duration = .seconds(20)
    /// When set, the server runs confined as it says, started through `launcher` (the skillhost binary's
    /// `sandbox` role).
    package var sandbox: Sandbox?
    /// The skillhost executable that starts sandboxed servers.
    package var launcher: String?
    /// A server on the network, spoken to over Streamable HTTP instead of starting `command`.
    package var url: URL?
    /// Headers sent with every HTTP request (`"headers": {"X-Team": "…"}`).
    package var headers: [String: String] = [:]
    /// The environment variable holding the bearer token for an HTTP server (its value is never logged).
    package var bearerTokenEnvironment: String?

    /// Where the server is, as `list` shows it: the command, or the URL.
    package var location: String { url?.absoluteString ?? command }

    package init(
        command: String, arguments: [String] = [], environment: [String: String] = [:], callTimeout: Duration? = nil
    ) {
        self.command = command
        self.arguments = arguments
        self.environment = environment
        self.callTimeout = callTimeout
    }
}

/// An MCP server's tools as skills in the registry, beside the native ones: named `<tool>`, or `<server>_<tool>`
/// where that is needed to stay unique and valid; risk and flags from the annotations (untrusted: without them a
/// tool counts as destructive, so it is asked about). A server that exits is restarted with backoff; its tools
/// answer "unavailable" meanwhile. `notifications/tools/list_changed` refreshes the tools (a 2026-07-28 server
/// sends it on the `subscriptions/listen` stream opened after the handshake; an older one unasked).
package final class MCPSkillSource: Sendable {
    package let name: String
    let configuration: MCPServerConfiguration
    let registry: SkillRegistry
    let log: @Sendable (LogRecord) -> Void
    /// Where the skills the server serves (Skills Over MCP) are offered, beside the local skill folders.
    let skillFolders: SkillFolderTools?
    /// Waits before a restart; tests substitute one that records the waits instead of sleeping.
    let sleep: @Sendable (Duration) async throws -> Void
    let state = Mutex(State())

    struct State {
        var connection: MCPClientSession?
        var stopped = false
        var failures = 0
        var lastExit: Int32?
        /// Registered from the cache and not started yet: the first call starts it (`startOnFirstUse`).
        var deferred = false
        /// A start in progress, which concurrent first calls wait for.
        var starting: Task<MCPClientError?, Never>?
    }

    /// Where the last tool list is kept between runs (`MCPToolCache`); nil: not kept.
    let cache: MCPToolCache?

    package init(
        name: String, configuration: MCPServerConfiguration, registry: SkillRegistry, cacheFolder: URL? = nil,
        log: @escaping @Sendable (LogRecord) -> Void = { _ in }, skillFolders: SkillFolderTools? = nil,
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
    ) {
        self.name = name
        self.skillFolders = skillFolders
        cache = cacheFolder.map { MCPToolCache(folder: $0, configuration: configuration) }
        self.configuration = configuration
        self.registry = registry
        self.log = log
        self.sleep = sleep
    }

    /// Starts the server and registers its tools. Throws (with the reason) when the first start fails; later
    /// exits are handled by restarting.
    package func start() async throws(MCPClientError) {
        try await connect()
    }

    /// Stops the server and removes its tools.
    package func stop() {
        let connection = state.withLock { state -> MCPClientSession? in
            state.stopped = true
            defer { state.connection = nil }
            return state.connection
        }
        connection?.close()
        registry.unregisterExternal(source: sourceName)
        skillFolders?.setRemote([], server: name, registry: registry)
    }

    var sourceName: String { "mcp:\(name)" }

    /// The running connection, if any (for tests).
    var connection: MCPClientSession? { state.withLock { $0.connection } }

    private func connect() async throws(MCPClientError) {
        let onNotification: @Sendable (String, JSONValue) -> Void = { [weak self] method, _ in
            guard method == "notifications/tools/list_changed", let self else { return }
            self.refreshSoon()
        }
        let transport: any MCPTransport
        if let url = configuration.url {
            let token = configuration.bearerTokenEnvironment.flatMap { ProcessInfo.processInfo.environment[$0] }
            if let variable = configuration.bearerTokenEnvironment, token?.isEmpty != false {
                throw MCPClientError(
                    "MCP server \(name) needs a bearer token in $\(variable), which is not set; export it or remove "
                        + "\"bearer_token_env\"")
            }
            transport = MCPHTTPTransport(
                name: name, url: url, headers: configuration.headers, bearerToken: token,
                clock: registry.configuration.clock, onNotification: onNotification)
        } else {
            transport = try MCPStdioTransport(
                name: name, command: configuration.command, arguments: configuration.arguments,
                environment: configuration.environment,
                sandbox: configuration.sandbox.flatMap { sandbox in configuration.launcher.map { (sandbox, $0) } },
                clock: registry.configuration.clock, onNotification: onNotification,
                onExit: { [weak self] status in self?.exited(status) })
        }
        let connection = MCPClientSession(name: name, transport: transport)
        state.withLock { $0.connection = connection }
        let info = try await connection.handshake(timeout: configuration.startTimeout)
        connection.listenForToolChanges()
        state.withLock { $0.failures = 0 }
        try await refresh(serverVersion: info.version)
    }

    private let serverVersion = Mutex("")
    /// The server's views read at the last refresh, by address.
    private let viewPages = Mutex<[String: SkillView]>([:])

    func setServerVersion(_ version: String) { serverVersion.withLock { $0 = version } }

    /// Lists the tools and (re)registers them.
    func refresh(serverVersion version: String? = nil) async throws(MCPClientError) {
        if let version { serverVersion.withLock { $0 = version } }
        guard let connection = state.withLock({ $0.connection }) else { return }
        var tools: [JSONValue] = []
        var cursor: JSONValue?
        var pages = 0
        repeat {
            var params = JSONObject()
            if let cursor { params["cursor"] = cursor }
            let page = try await connection.request("tools/list", params, timeout: configuration.startTimeout)
            tools += page["tools"]?.arrayValue ?? []
            cursor = page["nextCursor"].flatMap { $0 == .null ? nil : $0 }
            pages += 1
            // Bounded: a server whose cursor never ends, or that lists more tools than are kept, is read no further.
        } while cursor != nil && pages < 1000 && tools.count <= Self.maximumTools
        // A server that serves skills offers them to skillhost's own skill tools; its copies of those tools (for
        // clients that know nothing of skills) would only stand in their way.
        if await refreshSkills(connection) {
            tools.removeAll { SkillFolderTools.toolIDs.contains($0["name"]?.stringValue ?? "") }
        }
        let views = await readViews(tools, connection)
        viewPages.withLock { $0 = views }
        register(tools, description: "MCP server \(name)")
        if let cache,
            let problem = cache.store(Array(tools.prefix(Self.maximumTools)), version: serverVersion.withLock { $0 })
        {
            log(LogRecord(level: .warning, source: sourceName, message: problem))
        }
    }

    /// The skills the server serves (`skills/list`), offered under `<server>/<name>`; a server without the extension
    /// (an error) serves none. Their files are read on demand through `resources/read`.
    /// Returns whether the server serves skills.
    @discardableResult
    func refreshSkills(_ connection: MCPClientSession) async -> Bool {
        guard let skillFolders else { return false }
        let entries: [JSONValue]
        do throws(MCPClientError) {
            entries =
                try await connection.request("skills/list", JSONObject(), timeout: configuration.startTimeout)[
                    "skills"]?.arrayValue ?? []
        } catch {
            skillFolders.setRemote([], server: name, registry: registry)
            return false
        }
        let server = name
        let timeout = configuration.startTimeout
        let read: @Sendable (String) async -> Result<[UInt8], SkillFolderError> = { uri in
            do throws(MCPClientError) {
                let result = try await connection.request(
                    "resources/read", JSONObject([(key: "uri", value: .string(uri))]), timeout: timeout)
                guard let content = result["contents"]?.arrayValue?.first else {
                    return .failure(SkillFolderError("MCP server \(server) returned nothing for \(uri)"))
                }
                if let text = content["text"]?.stringValue { return .success(Array(text.utf8)) }
                if let blob = content["blob"]?.stringValue, let data = Data(base64Encoded: blob) {
                    return .success(Array(data))
                }
                return .failure(SkillFolderError("MCP server \(server) returned \(uri) as neither text nor a blob"))
            } catch {
                return .failure(SkillFolderError("MCP server \(server) could not read \(uri): \(error.message)"))
            }
        }
        let skills = entries.compactMap { RemoteSkill(entry: $0, server: server, read: read) }
        skillFolders.setRemote(skills, server: server, registry: registry)
        return true
    }

    /// Tools one server may offer; more are left out, said once (a server, or a tampered tool cache, naming
    /// 100,000 tools grew pins.json past what skillhost reads back).
    static let maximumTools = 2000

    /// Registers `tools` (a server's `tools/list`) as skills, at most `maximumTools` of them.
    func register(_ listed: [JSONValue], description: String) {
        var tools = listed
        if tools.count > Self.maximumTools {
            tools = Array(tools.prefix(Self.maximumTools))
            if !saidTooMany.exchange(true, ordering: .relaxed) {
                log(
                    LogRecord(
                        level: .warning, source: sourceName,
                        message: "MCP server \(name) lists \(listed.count) tools; the first \(Self.maximumTools) are "
                            + "used (more would be more than anyone reads, and each is pinned)"))
            }
        }
        let taken = Set(registry.skills.filter { $0.plugin != sourceName }.map(\.id))
        let names = tools.compactMap { $0["name"]?.stringValue }
        let ids = Self.skillIDs(for: names, server: name, taken: taken)
        for (tool, id) in zip(names, ids) where id != Self.skillID(for: tool, server: name, taken: taken) {
            if renamed.withLock({ $0.insert(tool).inserted }) {
                log(
                    LogRecord(
                        level: .warning, source: sourceName,
                        message: "tool \(tool) is named \(id): its name and another tool's make the same skill id"))
            }
        }
        let skills = zip(tools.filter { $0["name"]?.stringValue != nil }, ids).map { tool, id in
            skill(for: tool, named: tool["name"]?.stringValue ?? "", id: id)
        }
        let skipped = registry.registerExternal(
            source: sourceName, version: serverVersion.withLock { $0 },
            description: description, location: "mcp server \(name) (\(configuration.location))",
            skills: skills,
            sandbox: configuration.launcher == nil ? nil : configuration.sandbox)
        for reason in skipped {
            log(LogRecord(level: .warning, source: sourceName, message: "tool skipped: \(reason)"))
        }
    }

    /// One refresh at a time: change notifications that arrive meanwhile make one more, however many they are (a
    /// server that floods `list_changed` costs one `tools/list` after another, not a task each).
    private let refreshing = Mutex<(running: Bool, again: Bool)>((false, false))

    func refreshSoon() {
        let start = refreshing.withLock { state -> Bool in
            if state.running {
                state.again = true
                return false
            }
            state.running = true
            return true
        }
        guard start else { return }
        Task { [weak self] in
            while let self {
                try? await self.refresh()
                let more = self.refreshing.withLock { state -> Bool in
                    if state.again {
                        state.again = false
                        return true
                    }
                    state.running = false
                    return false
                }
                if !more { return }
            }
        }
    }

    /// Tools whose id had to be made unique, each said once.
    private let renamed = Mutex(Set<String>())
    /// Whether the warning that the server lists more tools than are kept was said (once).
    private let saidTooMany = Atomic<Bool>(false)

    /// Ids for all of a server's tools, in order: `skillID` for each, and where two come out the same (`x-y` and
    /// `x.y` both make `srv_x_y`) the later ones, in the server's order, get `_2`, `_3`… — deterministic, so the
    /// same list always gives the same ids.
    static func skillIDs(for tools: [String], server: String, taken: Set<String>) -> [String] {
        var used = taken
        // The next suffix to try for each base: 100,000 tools of one name cost linear time, not a search from _2
        // for each.
        var next: [String: Int] = [:]
        return tools.map { tool in
            let base = skillID(for: tool, server: server, taken: taken)
            var id = base
            var suffix = next[base] ?? 2
            while used.contains(id) {
                id = String(base.prefix(60)) + "_\(suffix)"
                suffix += 1
            }
            if id != base { next[base] = suffix }
            used.insert(id)
            return id
        }
    }

    /// A valid skill id for a tool: the tool's own name when possible, else `<server>_<tool>`.
    static func skillID(for tool: String, server: String, taken: Set<String>) -> String {
        func sanitize(_ text: String) -> String {
            var id = String(text.lowercased().map { ($0.isASCII && ($0.isLetter || $0.isNumber)) ? $0 : "_" })
            if let first = id.first, !first.isLetter { id = "t_" + id }
            return String(id.prefix(64))
        }
        let plain = sanitize(tool)
        if plain == tool, !taken.contains(plain) { return plain }
        return sanitize("\(server)_\(tool)")
    }

    private func skill(for tool: JSONValue, named toolName: String, id: String) -> ExternalSkill {
        let annotations = tool["annotations"]
        let readOnly = annotations?["readOnlyHint"] == .bool(true)
        // Untrusted hints: unless the server says it is read-only or not destructive, assume the worst.
        let risk: SkillRisk =
            readOnly ? .readOnly : (annotations?["destructiveHint"] == .bool(false) ? .mutating : .destructive)
        var flags: SkillFlags = []
        if annotations?["idempotentHint"] == .bool(true) { flags.insert(.idempotent) }
        if annotations?["openWorldHint"] != .bool(false) { flags.insert(.openWorld) }
        var schema = tool["inputSchema"] ?? ["type": "object"]
        if schema["type"] == nil, case .object(var object) = schema {
            object["type"] = "object"
            schema = .object(object)
        }
        let title = tool["title"]?.stringValue ?? annotations?["title"]?.stringValue ?? toolName
        let view = Self.viewURI(tool).flatMap { uri in viewPages.withLock { $0[uri] } }
        let audience = Self.audience(tool)
        let info = SkillInfo(
            id: id, title: title, description: tool["description"]?.stringValue ?? title, plugin: sourceName,
            pluginVersion: serverVersion.withLock { $0 }, file: "mcp server \(name) (\(configuration.location))",
            risk: risk, flags: flags, timeout: configuration.callTimeout, inputSchema: schema, schemaIsGenerated: false,
            kind: .external, outputSchema: nil, answer: nil, declares: [], view: view, audience: audience)
        // A tool that shows its result in a view, or that only views call: its result reaches the view as it came
        // (an app's own tools carry what it needs in `_meta`), so the whole result is the skill's.
        let whole = view != nil || audience == [.view]
        return ExternalSkill(info: info) { [weak self] arguments in
            guard let self else { return .failure(code: .failed, "the MCP server is gone") }
            return await self.call(toolName, arguments, whole: whole)
        }
    }

    /// Calls `tool`. `whole`: the tool's result is for a view, which takes it as it came (every content item, the
    /// structured content, `_meta`): that is the skill's result.
    func call(_ tool: String, _ arguments: JSONValue, whole: Bool = false) async -> SkillOutcome {
        if state.withLock({ $0.deferred }), let failure = await startDeferred() {
            return .failure(code: .failed, failure.message)
        }
        guard let connection = state.withLock({ $0.connection }) else {
            let status = state.withLock { $0.lastExit }.map { " (it exited with status \($0))" } ?? ""
            return .failure(
                code: .failed, "MCP server \(name) is not running\(status); it is being restarted, try again shortly")
        }
        do throws(MCPClientError) {
            let result = try await connection.request(
                "tools/call", JSONObject([(key: "name", value: .string(tool)), (key: "arguments", value: arguments)]),
                timeout: .seconds(3600))  // the registry applies the real deadline
            let text = (result["content"]?.arrayValue ?? []).compactMap { $0["text"]?.stringValue }.joined(
                separator: "\n")
            if result["isError"] == .bool(true) {
                return .failure(code: .failed, text.isEmpty ? "the tool failed without a message" : text)
            }
            if whole, case .object(let members) = result {
                return SkillOutcome.success(
                    .object(
                        JSONObject(
                            members.members.filter { ["content", "structuredContent", "_meta"].contains($0.key) })))
            }
            if let structured = result["structuredContent"], structured != .null {
                // A scalar or list sent as {"result": …} (skillhost and others wrap them so): the value itself,
                // when the text says the same.
                if let members = structured.objectValue, members.count == 1, let value = members["result"],
                    (try? JSONValue(parsing: text)) == value || value.displayText == text
                {
                    return SkillOutcome.success(value)
                }
                return SkillOutcome.success(structured)
            }
            return SkillOutcome.success((try? JSONValue(parsing: text)) ?? .string(text))
        } catch {
            if Task.isCancelled { return .failure(code: .cancelled, "\(tool) was cancelled") }
            if error.code == -32602 { return .failure(code: .invalidArguments, error.message) }
            return .failure(code: .failed, error.message)
        }
    }

    /// The wait before restarting a server that exited `failures` times: 0.5 s doubling up to 30 s.
    static func restartDelay(afterFailures failures: Int) -> Duration {
        min(.seconds(30), .milliseconds(500) * (1 << min(max(failures - 1, 0), 16)))
    }

    /// The server exited: restart it with backoff (0.5 s doubling to 30 s) until it stays up or the source stops.
    private func exited(_ status: Int32) {
        let (stopped, failures) = state.withLock { state -> (Bool, Int) in
            state.connection = nil
            state.lastExit = status
            state.failures += 1
            return (state.stopped, state.failures)
        }
        guard !stopped else { return }
        log(
            LogRecord(
                level: .warning, source: sourceName,
                message: "MCP server \(name) exited with status \(status); restarting"))
        let delay = Self.restartDelay(afterFailures: failures)
        Task { [weak self, sleep] in
            try? await sleep(delay)
            guard let self, !self.state.withLock({ $0.stopped }) else { return }
            do throws(MCPClientError) { try await self.connect() } catch {
                self.log(LogRecord(level: .warning, source: self.sourceName, message: error.message))
            }
        }
    }
}
