import SkillJSON

/// What an MCP skill source needs from a connection to its server, whatever carries it: a child process on
/// stdio (`MCPConnection`) or Streamable HTTP (`MCPHTTPConnection`).
protocol MCPServerConnection: Sendable {
    /// "2026-07-28" once the server was found to speak the stateless revision; nil for the handshake generation.
    var statelessVersion: String? { get }
    /// Negotiates the protocol; returns the server's name and version.
    func handshake(timeout: Duration) async throws(MCPClientError) -> (name: String, version: String)
    /// One request and its answer within `timeout`; cancelling the caller cancels the request.
    func request(_ method: String, _ params: JSONObject, timeout: Duration) async throws(MCPClientError) -> JSONValue
    /// Asks for tool list changes (a `subscriptions/listen` stream, or the older generation's own channel).
    func listenForToolChanges()
    /// Ends the connection (and the server, when it is a child process).
    func close()
}

extension MCPConnection: MCPServerConnection {}
