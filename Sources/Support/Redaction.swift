import Foundation

/// Removes credentials from text that quotes a server (error bodies repeat keys: "Incorrect API key provided:
/// sk-…"): the configured key wherever it appears, and anything shaped like a bearer token or an API key.
package enum Redaction {
    /// What a removed secret is replaced with.
    static let mask = "[redacted]"

    // Patterns are fixed and valid, so compiling them cannot fail; `try?` keeps a failure from being fatal anyway.
    private static let patterns: [(NSRegularExpression, needles: [String])] = [
        (#"(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{8,}"#, ["bearer"]),
        (#"\b(?:sk|pk|rk)-[A-Za-z0-9_*-]{8,}"#, ["sk-", "pk-", "rk-"]),
        (
            #"\b(?:ghp|gho|ghu|ghs|github_pat|xox[abprs]|AKIA)[A-Za-z0-9_-]{8,}"#,
            ["ghp", "gho", "ghu", "ghs", "github_pat", "xox", "AKIA"]
        ),
    ].compactMap { pattern, needles in (try? NSRegularExpression(pattern: pattern)).map { ($0, needles) } }

    /// Query parameters whose values are credentials (`?api-key=…`, `&token=…`, `sig=`), by name, any case.
    private static let secretParameters = [
        "key", "api-key", "api_key", "apikey", "x-api-key", "token", "access_token", "refresh_token", "id_token",
        "private_token", "client_secret", "auth", "password", "pass", "secret", "sig", "signature", "code",
        "x-amz-signature", "x-amz-security-token", "subscription-key",
    ]

    /// `text` with the credentials of every URL in it removed: user information (`https://me:pw@host/` →
    /// `https://[redacted]@host/`) and the values of key-like query parameters (`?api-key=…`). For every place a
    /// URL is written: records, the history, `config show`, banners and errors.
    package static func url(_ text: String) -> String {
        guard text.contains("://") else { return text }
        var result = text
        // user:password@ (or a lone user@) right after the scheme, up to the host.
        // Neither pattern runs past a quote or a backslash: a URL inside a JSON string stays inside it (a record line
        // must still parse), and an "@" in later text is not taken for the URL's.
        if let pattern = try? NSRegularExpression(pattern: #"(?i)([a-z][a-z0-9+.-]*://)[^/?#@\s"'<>\\]+@"#) {
            let range = NSRange(result.startIndex..<result.endIndex, in: result)
            result = pattern.stringByReplacingMatches(in: result, range: range, withTemplate: "$1\(mask)@")
        }
        let names = secretParameters.map(NSRegularExpression.escapedPattern(for:)).joined(separator: "|")
        if let pattern = try? NSRegularExpression(pattern: #"(?i)([?&;#](?:"# + names + #")=)[^&#\s"'<>\\]*"#) {
            let range = NSRange(result.startIndex..<result.endIndex, in: result)
            result = pattern.stringByReplacingMatches(in: result, range: range, withTemplate: "$1\(mask)")
        }
        return result
    }

    package static func redact(_ text: String, secrets: [String?]) -> String {
        var result = url(text)
        for secret in secrets.compactMap({ $0 }) where secret.count >= 4 {
            result = result.replacingOccurrences(of: secret, with: mask)
        }
        // A pattern runs only on text that holds what it starts with (the expressions are slow on long text): one
        // pass over the bytes finds which.
        let present = needlesPresent(result)
        for (index, (pattern, _)) in patterns.enumerated() where present & (1 << index) != 0 {
            let range = NSRange(result.startIndex..<result.endIndex, in: result)
            result = pattern.stringByReplacingMatches(in: result, range: range, withTemplate: mask)
        }
        return result
    }

    /// The needles as bytes, each with the pattern it belongs to; only the bearer pattern ignores case (its needle
    /// is matched against ASCII-lowercased text).
    private static let needleBytes: [(bytes: [UInt8], pattern: Int, foldsCase: Bool)] = patterns.enumerated().flatMap {
        index, entry in
        entry.needles.map { (Array($0.utf8), index, $0 == "bearer") }
    }

    /// Bytes some needle starts with (either case for the case-folding one).
    private static let firstBytes: [Bool] = {
        var table = [Bool](repeating: false, count: 256)
        for needle in needleBytes {
            guard let first = needle.bytes.first else { continue }
            table[Int(first)] = true
            if needle.foldsCase { table[Int(first & ~0x20)] = true }
        }
        return table
    }()

    /// A bit per pattern whose needles occur in `text`.
    static func needlesPresent(_ text: String) -> Int {
        var text = text
        return text.withUTF8 { bytes -> Int in
            var present = 0
            var index = 0
            while index < bytes.count {
                let byte = bytes[index]
                if firstBytes[Int(byte)] {
                    for needle in needleBytes where present & (1 << needle.pattern) == 0 {
                        let length = needle.bytes.count
                        guard index + length <= bytes.count else { continue }
                        var matched = true
                        for offset in 0..<length {
                            var candidate = bytes[index + offset]
                            if needle.foldsCase, candidate >= 0x41, candidate <= 0x5A { candidate |= 0x20 }
                            if candidate != needle.bytes[offset] {
                                matched = false
                                break
                            }
                        }
                        if matched { present |= 1 << needle.pattern }
                    }
                }
                index += 1
            }
            return present
        }
    }
}
