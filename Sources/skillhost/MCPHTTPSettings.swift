import Foundation
import MCP
import SkillHost
import SkillJSON

/// config.json's `"mcp"` section — how `skillhost mcp` serves Streamable HTTP:
///
/// ```json
/// "mcp": {"http": "127.0.0.1:8765", "tokens": ["<sha256 hex of a token>"], "allowed_origins": ["https://app.example"],
///         "authorization_servers": ["https://auth.example"], "resource": "https://mcp.example/mcp",
///         "allowed_hosts": ["mcp.internal"], "sessions": true, "sessions_per_client": 100, "calls_per_client": 64,
///         "max_body_mb": 4, "idle_timeout_s": 30, "header_timeout_s": 10, "max_connections": 1024}
/// ```
struct MCPHTTPSettings: Sendable {
    var http: String?
    var tokens: [[UInt8]] = []
    var allowedOrigins: [String] = []
    var allowedHosts: [String] = []
    var authorizationServers: [String] = []
    var resource: String?
    var sessions = true
    var callsPerClient = 64
    var sessionsPerClient = 100
    var sessionIdleSeconds = 1800
    var maximumBodyMB = 4
    var idleTimeoutSeconds = 30
    var headerTimeoutSeconds = 10
    var maximumConnections = 1024

    static let keys = [
        "http", "tokens", "allowed_origins", "allowed_hosts", "authorization_servers", "resource", "sessions",
        "sessions_per_client", "calls_per_client", "max_body_mb", "idle_timeout_s", "header_timeout_s",
        "max_connections", "session_idle_s",
    ]

    static func parse(_ value: JSONValue) throws(UsageError) -> MCPHTTPSettings {
        guard let object = value.objectValue else {
            throw UsageError("\"mcp\" must be an object such as {\"http\": \"127.0.0.1:8765\"}")
        }
        var settings = MCPHTTPSettings()
        func strings(_ value: JSONValue, _ key: String) throws(UsageError) -> [String] {
            guard let items = value.arrayValue, let texts = Optional(items.compactMap(\.stringValue)),
                texts.count == items.count
            else { throw UsageError("mcp.\(key) must be an array of strings") }
            return texts
        }
        func whole(_ value: JSONValue, _ key: String, _ range: ClosedRange<Int64>) throws(UsageError) -> Int {
            guard case .int(let number) = value, range.contains(number) else {
                throw UsageError("mcp.\(key) must be a whole number from \(range.lowerBound) to \(range.upperBound)")
            }
            return Int(number)
        }
        for (key, member) in object.members {
            switch key {
            case "http":
                guard let text = member.stringValue, (try? address(text)) != nil else {
                    throw UsageError("mcp.http must be an address and port such as \"127.0.0.1:8765\"")
                }
                settings.http = text
            case "tokens":
                for (index, text) in try strings(member, key).enumerated() {
                    guard let digest = MCPHTTPConfiguration.digest(hex: text) else {
                        throw UsageError(
                            "mcp.tokens[\(index)] is not a SHA-256 digest (64 hex digits); store the hash, never the "
                                + "token: printf %s \"$TOKEN\" | sha256sum")
                    }
                    settings.tokens.append(digest)
                }
            case "allowed_origins": settings.allowedOrigins = try strings(member, key)
            case "allowed_hosts": settings.allowedHosts = try strings(member, key)
            case "sessions_per_client": settings.sessionsPerClient = try whole(member, key, 1...10_000)
            case "session_idle_s": settings.sessionIdleSeconds = try whole(member, key, 1...604_800)
            case "authorization_servers": settings.authorizationServers = try strings(member, key)
            case "resource":
                guard let text = member.stringValue, URL(string: text)?.scheme != nil else {
                    throw UsageError("mcp.resource must be the endpoint's URL, such as \"https://mcp.example/mcp\"")
                }
                settings.resource = text
            case "sessions":
                guard case .bool(let flag) = member else { throw UsageError("mcp.sessions must be true or false") }
                settings.sessions = flag
            case "calls_per_client": settings.callsPerClient = try whole(member, key, 1...100_000)
            case "max_body_mb": settings.maximumBodyMB = try whole(member, key, 1...1024)
            case "idle_timeout_s": settings.idleTimeoutSeconds = try whole(member, key, 1...86_400)
            case "header_timeout_s": settings.headerTimeoutSeconds = try whole(member, key, 1...300)
            case "max_connections": settings.maximumConnections = try whole(member, key, 16...100_000)
            default:
                let hint = EditDistance.closest(to: key, among: keys).map { " (did you mean \"\($0)\"?)" } ?? ""
                throw UsageError(
                    "mcp has no setting \"\(key)\"\(hint); the settings are \(keys.joined(separator: ", "))")
            }
        }
        return settings
    }

    /// "127.0.0.1:8765", "[::1]:8765", "0.0.0.0:80" or a bare port ("8765": loopback).
    static func address(_ text: String) throws(UsageError) -> (host: String, port: UInt16) {
        let problem = UsageError(
            "\(text) is not an address and port", hint: "use e.g. 127.0.0.1:8765, [::1]:8765 or 8765")
        if let port = UInt16(text) { return ("127.0.0.1", port) }
        var host: Substring
        var portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { throw problem }
            host = text[text.index(after: text.startIndex)..<close]
            portText = text[text.index(after: close)...].drop { $0 == ":" }
        } else {
            guard let colon = text.lastIndex(of: ":") else { throw problem }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        }
        if host == "localhost" { host = "127.0.0.1" }
        guard let port = UInt16(portText), !host.isEmpty else { throw problem }
        return (String(host), port)
    }

    /// The HTTP configuration to serve with: `--http` over config.json's `mcp.http`; nil for stdio.
    static func resolve(_ options: MCPOptions, config: Config, environment: [String: String]) throws(CLIError)
        -> MCPHTTPConfiguration?
    {
        let settings = config.mcp
        guard let text = options.http ?? settings.http else {
            if options.tlsCertificate != nil {
                throw .usage(
                    UsageError("--tls-cert needs --http", hint: "skillhost mcp --http 127.0.0.1:8765 --tls-cert …"))
            }
            return nil
        }
        let where_: (host: String, port: UInt16)
        do throws(UsageError) { where_ = try address(text) } catch { throw .usage(error) }
        var configuration = MCPHTTPConfiguration()
        configuration.address = where_.host
        configuration.port = where_.port
        configuration.tokenDigests = settings.tokens
        if let token = environment["SKILLHOST_MCP_TOKEN"], !token.isEmpty {
            configuration.tokenDigests.append(MCPHTTPConfiguration.digest(of: token))
        }
        configuration.allowedOrigins = settings.allowedOrigins
        configuration.allowedHosts = settings.allowedHosts
        configuration.maximumSessionsPerClient = settings.sessionsPerClient
        configuration.sessionIdleSeconds = settings.sessionIdleSeconds
        configuration.authorizationServers = settings.authorizationServers
        configuration.resource = settings.resource
        configuration.sessions = settings.sessions
        configuration.callsPerClient = settings.callsPerClient
        configuration.limits.maximumBody = settings.maximumBodyMB << 20
        configuration.limits.idleTimeoutSeconds = settings.idleTimeoutSeconds
        configuration.limits.headerTimeoutSeconds = settings.headerTimeoutSeconds
        configuration.limits.maximumConnections = settings.maximumConnections
        configuration.limits.reservedConnections = min(64, settings.maximumConnections / 4)
        if let certificate = options.tlsCertificate, let key = options.tlsKey {
            func pem(_ path: String, _ what: String) throws(CLIError) -> String {
                switch BoundedFile.read(path, limit: 1 << 20) {
                case .success(.bytes(let bytes)): return String(decoding: bytes, as: UTF8.self)
                case .success(.missing): throw .failure("cannot read the TLS \(what) \(path): no such file")
                case .failure(let problem): throw .failure("the TLS \(what) \(path) \(problem)")
                }
            }
            let certificateText = try pem(certificate, "certificate")
            let keyText = try pem(key, "key")
            configuration.tls = (certificateText, keyText)
        }
        return configuration
    }
}
