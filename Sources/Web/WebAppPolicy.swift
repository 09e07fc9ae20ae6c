import SkillHost
import SkillJSON

/// What a view (an MCP App) may do in the browser, built from what its resource declares — never more: the content
/// security policy of its frame (MCP Apps 2026-01-26, "Mitigations": the declared domains in their directives, the
/// restrictive default when nothing is declared) and the frame's `allow` attribute from its permissions.
enum WebAppPolicy {
    /// The policy when a view declares no `csp` (the specification's default, with the directives its sandbox rules
    /// add: no nested frames, no plugins, no other base).
    static let restrictive =
        "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
        + "img-src 'self' data:; media-src 'self' data:; connect-src 'none'; frame-src 'none'; object-src 'none'; "
        + "base-uri 'self'"

    /// The policy for a view that declares `csp`: each list's origins in its directives, nothing undeclared. An
    /// entry that could be read as more than an origin (a space, quote, semicolon, comma, a keyword, a scheme — but
    /// `blob:` among the resources: the view's own blobs, which bundled apps load their code from) is dropped —
    /// a plugin's were checked at load, an MCP server's arrive unchecked.
    static func contentSecurityPolicy(_ csp: JSONValue?) -> String {
        guard let csp, case .object = csp else { return restrictive }
        func origins(_ key: String) -> [String] {
            (csp[key]?.arrayValue ?? []).prefix(32).compactMap(\.stringValue).filter {
                ViewValidator.isOrigin($0) || (key == "resourceDomains" && $0 == "blob:")
            }
        }
        func directive(_ name: String, _ base: [String], _ key: String) -> String {
            ([name] + base + origins(key)).joined(separator: " ")
        }
        let resources = "resourceDomains"
        let frames = origins("frameDomains")
        let bases = origins("baseUriDomains")
        return [
            "default-src 'none'",
            directive("script-src", ["'self'", "'unsafe-inline'"], resources),
            directive("style-src", ["'self'", "'unsafe-inline'"], resources),
            directive("connect-src", ["'self'"], "connectDomains"),
            directive("img-src", ["'self'", "data:"], resources),
            directive("font-src", ["'self'"], resources),
            directive("media-src", ["'self'", "data:"], resources),
            "frame-src " + (frames.isEmpty ? "'none'" : frames.joined(separator: " ")),
            "object-src 'none'",
            "base-uri " + (bases.isEmpty ? "'self'" : bases.joined(separator: " ")),
        ].joined(separator: "; ")
    }

    /// The frame's `allow` attribute: each declared permission the host grants, by its Permissions Policy name.
    static func allowAttribute(_ permissions: JSONValue?) -> String {
        let names = [
            ("camera", "camera"), ("microphone", "microphone"), ("geolocation", "geolocation"),
            ("clipboardWrite", "clipboard-write"),
        ]
        return names.filter { permissions?[$0.0]?.objectValue != nil }.map(\.1).joined(separator: "; ")
    }
}
