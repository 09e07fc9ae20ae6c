import SkillHost
import SkillJSON

/// The MCP constants both sides use — protocol revisions, `_meta` keys, and how skillhost names itself — in one
/// place, so the server and the client can never disagree.
enum MCPProtocol {
    /// Revisions with the `initialize` handshake, oldest first.
    static let handshakeVersions = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]
    /// The stateless revision: `server/discover` and `_meta` on every request.
    static let statelessVersion = "2026-07-28"
    static let allVersions = handshakeVersions + [statelessVersion]
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

    /// The `_meta` a client puts on every request of the stateless revision `version` (merged into `existing`).
    static func clientMeta(_ version: String, merging existing: JSONValue? = nil) -> JSONValue {
        var meta = existing?.objectValue ?? JSONObject()
        meta[Meta.protocolVersion] = .string(version)
        meta[Meta.clientInfo] = implementation
        meta[Meta.clientCapabilities] = .object(JSONObject())
        return .object(meta)
    }

    /// `initialize`'s parameters: the newest handshake revision, no capabilities.
    static var initializeParams: JSONObject {
        JSONObject([
            (key: "protocolVersion", value: .string(latestHandshakeVersion)),
            // MCP Apps: skillhost's browser renders servers' views (ui:// resources).
            (
                key: "capabilities",
                value: ["extensions": ["io.modelcontextprotocol/ui": ["mimeTypes": ["text/html;profile=mcp-app"]]]]
            ),
            (key: "clientInfo", value: implementation),
        ])
    }

    /// `subscriptions/listen`'s parameters for tool list changes.
    static func listen(_ version: String) -> JSONValue {
        ["notifications": ["toolsListChanged": true], "_meta": clientMeta(version)]
    }

    /// `{"name":"skillhost","version":…}`: `serverInfo` and `clientInfo` alike, with the host's version.
    static var implementation: JSONValue { ["name": "skillhost", "version": .string(SkillRegistry.hostVersion)] }
}
