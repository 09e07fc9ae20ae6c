import CHTTP
import Foundation

/// The checks every request to a skillhost HTTP server passes before anything else, whatever it serves (MCP, the
/// browser front end): the Host header against DNS rebinding, the Origin header against other sites' pages, and
/// bearer tokens compared by digest in constant time.
package struct HTTPGuard: Sendable {
    /// Served on a loopback address: only loopback names (and the configured ones) are accepted as Host.
    package let isLoopback: Bool
    package let allowedHosts: [String]
    package let allowedOrigins: [String]
    /// Origins must name this port too (the browser front end: another local site on another port is another
    /// application); nil accepts any loopback origin (MCP's rule).
    package let originPort: UInt16?
    /// The Host headers a loopback client usually sends (`127.0.0.1:<port>`, `localhost:<port>`, …).
    private let usualHosts: Set<String>

    package init(
        isLoopback: Bool, port: UInt16, allowedHosts: [String], allowedOrigins: [String], originPort: UInt16? = nil
    ) {
        self.isLoopback = isLoopback
        self.allowedHosts = allowedHosts
        self.allowedOrigins = allowedOrigins
        self.originPort = originPort
        usualHosts = Set(["127.0.0.1", "localhost", "[::1]"].flatMap { [$0, "\($0):\(port)"] })
    }

    /// A Host header's name (without its port) is a loopback one or one configured.
    package func hostAllowed(_ host: String) -> Bool {
        // What nearly every client sends, found without parsing.
        if usualHosts.contains(host) { return true }
        var name = host.lowercased()
        if name.hasPrefix("["), let close = name.firstIndex(of: "]") {
            name = String(name[...close])
        } else if let colon = name.lastIndex(of: ":") {
            name = String(name[..<colon])
        }
        if name.hasSuffix(".") { name.removeLast() }
        if allowedHosts.contains(where: { $0.lowercased() == name }) { return true }
        if ["localhost", "[::1]"].contains(name) || name.hasSuffix(".localhost") { return true }
        // 127.0.0.0/8 written as a dotted quad.
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }

    /// An Origin header names a page of a loopback name (on `originPort`, when set) or one configured.
    package func originAllowed(_ origin: String) -> Bool {
        if allowedOrigins.contains(origin) { return true }
        guard let url = URL(string: origin), let scheme = url.scheme, scheme == "http" || scheme == "https",
            let host = url.host
        else { return false }
        if let originPort, url.port.map(UInt16.init) != originPort { return false }
        return ["localhost", "127.0.0.1", "[::1]", "::1"].contains(host)
    }

    /// Whether `token` is one of those whose SHA-256 digests are `accepted`; every digest is compared, each in
    /// constant time, so the answer's time says nothing about the token. Returns the matching digest.
    package static func match(_ token: String, among accepted: [[UInt8]]) -> [UInt8]? {
        let digest = sha256(token)
        var matched = false
        for candidate in accepted where candidate.count == digest.count {
            if skillhost_equal_constant_time(candidate, digest, digest.count) == 1 { matched = true }
        }
        return matched ? digest : nil
    }

    /// The SHA-256 digest of `text`'s UTF-8 bytes.
    package static func sha256(_ text: String) -> [UInt8] { sha256(bytes: Array(text.utf8)) }

    /// The SHA-256 digest of `bytes`.
    package static func sha256(bytes: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        _ = skillhost_sha256(bytes, bytes.count, &digest)
        return digest
    }

    /// `count` random bytes as lower-case hex, from the system's cryptographic source.
    package static func randomHex(_ count: Int) -> String {
        var random = [UInt8](repeating: 0, count: count)
        _ = skillhost_random_bytes(&random, random.count)
        return random.map { String(format: "%02x", $0) }.joined()
    }
}
