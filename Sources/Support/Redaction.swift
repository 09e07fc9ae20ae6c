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

    package static func redact(_ text: String, secrets: [String?]) -> String {
        var result = text
        for secret in secrets.compactMap({ $0 }) where secret.count >= 4 {
            result = result.replacingOccurrences(of: secret, with: mask)
        }
        for (pattern, needles) in patterns {
            // A pattern runs only on text that holds what it starts with (the expressions are slow on long text).
            // Only the bearer pattern ignores case.
            let options: String.CompareOptions = needles == ["bearer"] ? .caseInsensitive : []
            guard needles.contains(where: { result.range(of: $0, options: options) != nil }) else { continue }
            let range = NSRange(result.startIndex..<result.endIndex, in: result)
            result = pattern.stringByReplacingMatches(in: result, range: range, withTemplate: mask)
        }
        return result
    }
}
