import JSONRPC
import SkillHost
import SkillJSON
import Synchronization

/// What carries an MCP client session's messages: a server's standard input and output (`MCPStdioTransport`) or
/// Streamable HTTP (`MCPHTTPTransport`). The session decides what to say; the transport only says it.
protocol MCPTransport: Sendable {
    /// Sends one request (its parameters complete, `_meta` included) and waits for its answer, at most `timeout`;
    /// cancelling the caller cancels the request.
    func request(_ method: String, _ params: JSONObject, timeout: Duration) async throws(MCPClientError) -> JSONValue
    /// Sends a notification; nothing answers it, and a failure to send it is not an error.
    func notify(_ method: String, _ params: JSONValue?, timeout: Duration) async
    /// Keeps the server's notifications coming: a `subscriptions/listen` request with `params` for the stateless
    /// revision, or (nil) whatever the older generation needs (stdio: nothing; HTTP: its GET stream).
    func listen(_ params: JSONValue?)
    /// Whether `error` says the older generation's session was forgotten by the server (then it is negotiated
    /// again, once).
    func forgotSession(_ error: MCPClientError) -> Bool
    /// Ends the transport (and the server, when it is a child process).
    func close()
}

/// Why a request to an MCP server failed, as a sentence.
package struct MCPClientError: Error, Sendable, CustomStringConvertible {
    package let message: String
    /// The JSON-RPC error code when the server answered with an error (or an HTTP status without one).
    package let code: Int?
    /// The server did not answer within the request's time.
    package let timedOut: Bool

    package init(_ message: String, code: Int? = nil, timedOut: Bool = false) {
        self.message = message
        self.code = code
        self.timedOut = timedOut
    }

    package var description: String { message }

    /// The server refused who is asking (HTTP 401 or 403): trying another handshake will not help.
    var isAuthorization: Bool { code == 401 || code == 403 }
}

/// A client's session with one MCP server, whatever carries it, either protocol generation: `server/discover`
/// first (2026-07-28: `_meta` on every request, `subscriptions/listen` for tool changes), else the `initialize`
/// handshake. Written once for both transports.
final class MCPClientSession: Sendable {
    let name: String
    let transport: any MCPTransport
    /// Set when the server speaks the stateless generation.
    private let stateless = Mutex<String?>(nil)

    init(name: String, transport: any MCPTransport) {
        self.name = name
        self.transport = transport
    }

    /// "2026-07-28" once the server was found to speak the stateless revision; nil for the handshake generation.
    var statelessVersion: String? { stateless.withLock { $0 } }

    /// One request and its answer within `timeout` (with the revision's `_meta` when the server is stateless). A
    /// session the server forgot (it restarted) is negotiated again once.
    func request(_ method: String, _ params: JSONObject = JSONObject(), timeout: Duration) async throws(MCPClientError)
        -> JSONValue
    {
        var params = params
        if let version = statelessVersion {
            params["_meta"] = MCPProtocol.clientMeta(version, merging: params["_meta"])
        }
        do throws(MCPClientError) {
            return try await transport.request(method, params, timeout: timeout)
        } catch {
            guard statelessVersion == nil, transport.forgotSession(error) else { throw error }
            _ = try await initialize(timeout: timeout)
            return try await transport.request(method, params, timeout: timeout)
        }
    }

    /// Asks for tool list changes: a `subscriptions/listen` stream (stateless), or the older generation's channel.
    func listenForToolChanges() {
        transport.listen(statelessVersion.map { MCPProtocol.listen($0) })
    }

    func close() { transport.close() }

    /// Negotiates the protocol: `server/discover` when the server knows it, else `initialize` +
    /// `notifications/initialized`. Returns the server's name and version.
    ///
    /// A server that has not answered the probe within 3 s is either still starting or ignores unknown methods:
    /// then both are asked at once — the probe again and `initialize` — and the first useful answer within what is
    /// left of `timeout` wins (an `initialize` refused with -32022, "use the stateless revision", waits for the
    /// probe). So a slow starter is not dropped and a server that ignores the probe is not waited on for long.
    func handshake(timeout: Duration) async throws(MCPClientError) -> (name: String, version: String) {
        let deadline = ContinuousClock.now + timeout
        // A timeout names the handshake's whole time, not what was left of it after the probe.
        let name = name
        func whole(_ error: MCPClientError) -> MCPClientError {
            error.timedOut
                ? MCPClientError(
                    Deadline.timedOut("MCP server \(name)'s answer to initialize", after: timeout)
                        + "; give it longer with start_timeout_s in config.json", timedOut: true)
                : error
        }
        switch await discover(timeout: min(timeout, .seconds(3))) {
        case .stateless(let info): return info
        case .refused(let error): throw error
        case .legacy:
            do throws(MCPClientError) { return try await initialize(timeout: deadline - .now) } catch {
                throw whole(error)
            }
        case .silent: break
        }
        enum Answer: Sendable {
            case discovered(Probe)
            case initialized(Result<(name: String, version: String), MCPClientError>)
        }
        let remaining = max(deadline - .now, .milliseconds(1))
        let outcome = await withTaskGroup(of: Answer.self) {
            group -> Result<(name: String, version: String), MCPClientError> in
            group.addTask { .discovered(await self.discover(timeout: remaining)) }
            group.addTask {
                do throws(MCPClientError) {
                    return .initialized(.success(try await self.initialize(timeout: remaining)))
                } catch { return .initialized(.failure(whole(error))) }
            }
            var initialized: Result<(name: String, version: String), MCPClientError>?
            var probed = false
            for await answer in group {
                switch answer {
                case .discovered(.stateless(let info)):
                    group.cancelAll()
                    return .success(info)
                case .discovered: probed = true
                case .initialized(.success(let info)):
                    group.cancelAll()
                    return .success(info)
                case .initialized(let failure): initialized = failure
                }
                if probed, let initialized { return initialized }
            }
            return initialized
                ?? .failure(
                    MCPClientError(
                        Deadline.timedOut("MCP server \(name)'s answer to initialize", after: timeout)
                            + "; give it longer with start_timeout_s in config.json", timedOut: true))
        }
        return try outcome.get()
    }

    /// What a `server/discover` probe found.
    private enum Probe: Sendable {
        case stateless((name: String, version: String))
        /// The server answered without offering the stateless revision (or with an error): use `initialize`.
        case legacy
        /// No answer within the time given.
        case silent
        /// The server refused who is asking: no handshake will do.
        case refused(MCPClientError)
    }

    private func discover(timeout: Duration) async -> Probe {
        let version = MCPProtocol.statelessVersion
        do throws(MCPClientError) {
            let discovered = try await transport.request(
                "server/discover", JSONObject([(key: "_meta", value: MCPProtocol.clientMeta(version))]),
                timeout: timeout)
            guard discovered["supportedVersions"]?.arrayValue?.contains(.string(version)) == true else {
                return .legacy
            }
            stateless.withLock { $0 = version }
            let info = discovered["serverInfo"] ?? discovered["_meta"]?[MCPProtocol.Meta.serverInfo]
            return .stateless((info?["name"]?.stringValue ?? name, info?["version"]?.stringValue ?? ""))
        } catch {
            if error.isAuthorization { return .refused(error) }
            return error.code == nil && error.timedOut ? .silent : .legacy
        }
    }

    private func initialize(timeout: Duration) async throws(MCPClientError) -> (name: String, version: String) {
        let result = try await transport.request("initialize", MCPProtocol.initializeParams, timeout: timeout)
        await transport.notify("notifications/initialized", nil, timeout: timeout)
        let info = result["serverInfo"]
        return (info?["name"]?.stringValue ?? name, info?["version"]?.stringValue ?? "")
    }
}
