import CHTTP
import Foundation
import Support

/// How `skillhost mcp --http` serves: where, for whom, and within which bounds.
package struct MCPHTTPConfiguration: Sendable {
    /// An IP literal: 127.0.0.1 (the default), ::1, 0.0.0.0 …
    package var address = "127.0.0.1"
    package var port: UInt16 = 8765
    /// The MCP endpoint's path.
    package var path = "/mcp"
    /// Origins allowed besides the loopback ones (`http://localhost:*`, `http://127.0.0.1:*`, `http://[::1]:*`),
    /// exactly as browsers send them: "https://app.example.com".
    package var allowedOrigins: [String] = []
    /// SHA-256 digests of the accepted bearer tokens. Empty: no authentication (loopback only).
    package var tokenDigests: [[UInt8]] = []
    /// RFC 9728: the authorization servers announced at `/.well-known/oauth-protected-resource` (their tokens'
    /// signatures are not validated here: accepted tokens are the configured ones).
    package var authorizationServers: [String] = []
    /// The resource's canonical URL for that metadata (default: http://<address>:<port><path>).
    package var resource: String?
    /// Calls one client (a token, else an address) may have in flight; more are answered 429.
    package var callsPerClient = 64
    /// Serve the 2025-11-25 session form (Mcp-Session-Id, GET stream, DELETE, Last-Event-ID) beside the stateless one.
    package var sessions = true
    /// Older-client sessions kept at once; beyond it a new one is refused (503) until one ends or expires.
    package var maximumSessions = 1000
    /// Older-client sessions one owner keeps at once: a token's holder gives up its own least recently used one
    /// beyond it; without tokens (an owner is a user of this machine, or an address) a new one is refused, since
    /// programs of one owner cannot be told apart — no session is ever ended by another's `initialize`.
    package var maximumSessionsPerClient = 100
    /// Seconds a session may go unused (no request, no open stream) before it ends.
    package var sessionIdleSeconds = 1800
    /// Host names a loopback server answers besides localhost, 127.0.0.1 and [::1] (DNS-rebinding defence).
    package var allowedHosts: [String] = []
    /// Seconds between keep-alive comments on open streams.
    package var keepAliveSeconds = 15
    /// PEM texts for HTTPS.
    package var tls: (certificate: String, key: String)?
    package var limits = HTTPServer.Limits()

    package init() {}

    /// Whether `address` reaches only this machine.
    package var isLoopback: Bool {
        address == "127.0.0.1" || address == "::1" || address.hasPrefix("127.") || address == "localhost"
    }

    /// The SHA-256 digest of a token, as stored in `tokenDigests`.
    package static func digest(of token: String) -> [UInt8] { HTTPGuard.sha256(token) }

    /// A digest from its hex text (64 characters), as config.json holds it.
    package static func digest(hex: String) -> [UInt8]? {
        let characters = Array(hex.lowercased().utf8)
        guard characters.count == 64 else { return nil }
        var bytes: [UInt8] = []
        var index = 0
        while index < 64 {
            guard let high = Self.nibble(characters[index]), let low = Self.nibble(characters[index + 1]) else {
                return nil
            }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    private static func nibble(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return character - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return character - UInt8(ascii: "a") + 10
        default: return nil
        }
    }

    /// The hex text of a digest.
    package static func hex(_ digest: [UInt8]) -> String { digest.map { String(format: "%02x", $0) }.joined() }
}
