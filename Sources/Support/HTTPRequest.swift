import Foundation

/// One HTTP request as skillhost sends it: a URL, a method, header fields and an optional body.
package struct HTTPRequest: Sendable {
    package var url: URL
    package var method: String
    package var body: Data?
    /// In the order set; one value per name (case-insensitive).
    package private(set) var headers: [(name: String, value: String)] = []

    package init(url: URL, method: String = "GET", body: Data? = nil) {
        self.url = url
        self.method = method
        self.body = body
    }

    /// Sets a header field, replacing one of the same name. Line breaks and NULs are dropped from the value: a
    /// value that came from a server (a session id) or a config file cannot add header lines of its own.
    package mutating func setHeader(_ value: String, for name: String) {
        let clean = String(value.unicodeScalars.filter { $0 != "\r" && $0 != "\n" && $0 != "\0" })
        let cleanName = String(name.unicodeScalars.filter { $0 != "\r" && $0 != "\n" && $0 != "\0" && $0 != ":" })
        headers.removeAll { $0.name.lowercased() == cleanName.lowercased() }
        headers.append((cleanName, clean))
    }

    /// The value of a header field (case-insensitive name).
    package func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// The request a redirect with `status` to `target` makes, if it is followed: only within the same origin
    /// (scheme, host, port); 303, and 301/302 after a POST, become a GET without a body (as browsers do).
    func redirected(status: Int, to location: String) -> HTTPRequest? {
        guard [301, 302, 303, 307, 308].contains(status), let target = URL(string: location, relativeTo: url),
            Self.origin(of: target.absoluteURL) == Self.origin(of: url)
        else { return nil }
        var next = self
        next.url = target.absoluteURL
        if status == 303 || (status <= 302 && method == "POST") {
            next.method = "GET"
            next.body = nil
            next.headers.removeAll { $0.name.lowercased() == "content-type" }
        }
        return next
    }

    private static func origin(of url: URL) -> String {
        let scheme = url.scheme?.lowercased() ?? ""
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        return "\(scheme)://\(url.host?.lowercased() ?? ""):\(port)"
    }
}
