import Foundation

/// Text arguments a request names by label — `titled "call the plumber" with body "Tuesday after 5pm"`,
/// `with the body: Monday 10am`, `body to "sourdough"` — each value running to the next label (or the end), a
/// quoted value taken exactly. Labels inside quoted text are text, not labels.
///
/// A label is the property's name (`_` as a space); a `title` or `name` property is also labelled by "titled",
/// "called" and "named".
struct LabelledFields {
    struct Field: Equatable {
        let name: String
        /// The value as written (quotes removed), or "" when the label is followed by nothing.
        let value: String
        /// Whether the request clearly meant a label here: "with body", "body:" — so an empty value is a value
        /// the request names but does not give.
        let explicit: Bool
        /// From the label's first character to the value's last, in the request.
        let range: Range<String.Index>
    }

    let fields: [Field]
    /// The request with every labelled field cut out.
    let remaining: String

    init(in text: String, names: [String]) {
        let quoted = Self.quotedRanges(in: text)
        var labels: [(name: String, range: Range<String.Index>, explicit: Bool)] = []
        for name in names {
            var alternatives = [NSRegularExpression.escapedPattern(for: name.replacingOccurrences(of: "_", with: " "))]
            if name == "title" || name == "name" { alternatives += ["titled", "called", "named"] }
            let pattern =
                #"(?:\b(with|and)\s+)?(?:\b(?:the|a|its|new)\s+)?\b(?:"# + alternatives.joined(separator: "|")
                + #")\b\s*(:|=|\bis\b|\bof\b|\bto\b|\bas\b)?\s*"#
            guard let regex = ArgumentText.regex(pattern, caseInsensitive: true) else { continue }
            let all = NSRange(text.startIndex..<text.endIndex, in: text)
            for match in regex.matches(in: text, range: all) {
                guard let range = Range(match.range, in: text),
                    !quoted.contains(where: { $0.contains(range.lowerBound) })
                else { continue }
                let connector = Range(match.range(at: 1), in: text) != nil
                let separator = Range(match.range(at: 2), in: text).map { String(text[$0]) }
                labels.append((name, range, connector || separator == ":" || separator == "="))
            }
        }
        labels.sort { $0.range.lowerBound < $1.range.lowerBound }
        // Overlapping matches (a label word inside another's connector): the first wins.
        var kept: [(name: String, range: Range<String.Index>, explicit: Bool)] = []
        for label in labels where kept.last.map({ $0.range.upperBound <= label.range.lowerBound }) ?? true {
            kept.append(label)
        }
        var fields: [Field] = []
        for (index, label) in kept.enumerated() {
            let end = index + 1 < kept.count ? kept[index + 1].range.lowerBound : text.endIndex
            var raw = String(text[label.range.upperBound..<end]).trimmingCharacters(in: .whitespacesAndNewlines)
            var valueEnd = end
            if let quote = raw.first, let close = Self.closing[quote],
                let closing = raw.dropFirst().firstIndex(of: close)
            {
                raw = String(raw[raw.index(after: raw.startIndex)..<closing])
                // Whatever follows the closing quote (up to the next label) is not this field's.
                if let at = text[label.range.upperBound..<end].firstIndex(of: quote),
                    let after = text[text.index(after: at)..<end].firstIndex(of: close)
                {
                    valueEnd = text.index(after: after)
                }
            } else {
                // "… eggs and" before the next label: the connector is not part of the value.
                raw = raw.replacingOccurrences(
                    of: #"[\s,;]*(?:\b(?:and|with))?[\s,;]*$"#, with: "",
                    options: [.regularExpression, .caseInsensitive])
            }
            fields.append(
                Field(name: label.name, value: raw, explicit: label.explicit, range: label.range.lowerBound..<valueEnd))
        }
        self.fields = fields
        var remaining = text
        for field in fields.reversed() { remaining.replaceSubrange(field.range, with: " ") }
        self.remaining = remaining.trimmingCharacters(in: .whitespaces)
    }

    static let closing: [Character: Character] = ["\"": "\"", "“": "”", "'": "'"]

    /// The spans of quoted text ("…", “…”, and '…' not inside a word).
    static func quotedRanges(in text: String) -> [Range<String.Index>] {
        var ranges: [Range<String.Index>] = []
        for pattern in [#""[^"]*""#, #"“[^”]*”"#, #"(?<![\w])'[^']*'(?![\w])"#] {
            guard let regex = ArgumentText.regex(pattern) else { continue }
            let all = NSRange(text.startIndex..<text.endIndex, in: text)
            ranges += regex.matches(in: text, range: all).compactMap { Range($0.range, in: text) }
        }
        return ranges
    }
}
