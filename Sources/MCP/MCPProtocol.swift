import SkillHost
import SkillJSON

/// The MCP constants both sides use — protocol revisions, `_meta` keys, and how skillhost names itself — in one
/// place, so the server and the client can never disagree.
enum MCPProtocol {
    /// Revisions with the `initialize` handshake, oldest first.
    static let handshakeVersions = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]
    /// The stateless revision: `server/discover` and `_meta` on every request.
    static let statelessVersion = "2026-07-28"
    static var allVersions: [String] { handshakeVersions + [statelessVersion] }
    /// The newest handshake revision, what the client asks for.
    static var latestHandshakeVersion: String { handshakeVersions[handshakeVersions.count - 1] }
    /// The only revision with JSON-RPC batches.
    static let batchVersion = "2025-03-26"

    /// `_meta` keys of the stateless revision.
    enum Meta {
        static let protocolVersion = "io.modelcontextprotocol/protocolVersion"
        static let clientInfo = "io.modelcontextprotocol/clientInfo"
        static let clientCapabilities = "io.modelcontextprotocol/clientCapabilities"
        static let serverInfo = "io.modelcontextprotocol/serverInfo"
        static let subscriptionID = "io.modelcontextprotocol/subscriptionId"
        static let progressToken = "progressToken"
    }

    /// `{"name":"skillhost","version":…}`: `serverInfo` and `clientInfo` alike, with the host's version.
    static var implementation: JSONValue { ["name": "skillhost", "version": .string(SkillRegistry.hostVersion)] }
}
