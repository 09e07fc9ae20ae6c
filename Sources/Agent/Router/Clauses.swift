import Foundation

/// A request that asks for several things — "what's 3 plus 3 and delete note 2" — split into its clauses, so
/// the router serves each in order or says which one it left out, instead of silently serving one.
///
/// A clause starts after "and", "then", "also", ";" or ", " when the next word opens a request of its own: a
/// change verb ("delete", "add", …) or a question or command word ("what", "convert", "show", …). So "sum of 40
/// and 2", "eggs and milk" and "80 kg and I'm 1.8 m tall" stay one request. Quoted text is never split.
enum Clauses {
    /// Words that open a request of their own.
    static let openers: Set<String> = Set(Lexicon.changeVerbs.keys).union([
        "what", "whats", "how", "convert", "show", "list", "find", "search", "tell", "give", "calculate", "compute",
        "evaluate", "summarize", "summarise", "count", "roll", "greet", "display", "is", "are", "when", "which",
        "who", "slugify", "look", "write", "play", "send", "book", "translate", "order", "set", "turn", "open",
        "remind", "check", "read", "email", "schedule", "cancel", "make", "draw",
    ])

    /// At most this many clauses are read (the rest stays part of the last one).
    static let limit = 8

    /// The clauses of `text`, in order; one element when it asks for one thing. Only the first 2,000 characters
    /// are looked at for where clauses start (what follows stays in the last clause).
    static func split(_ text: String) -> [String] {
        let scanned = String(text.prefix(2000))
        // Offsets in UTF-16 units are the same in the text and in its prefix.
        let quoted = LabelledFields.quotedRanges(in: scanned).compactMap {
            Range(NSRange($0, in: scanned), in: text)
        }
        guard
            let regex = ArgumentText.regex(
                #"(?:\s*[,;]\s*|\s+)(?:and\s+then|and|then|also)\s+|\s*;\s*"#, caseInsensitive: true)
        else { return [text] }
        var clauses: [String] = []
        var start = text.startIndex
        let all = NSRange(scanned.startIndex..<scanned.endIndex, in: scanned)
        for match in regex.matches(in: scanned, range: all) {
            guard clauses.count < limit - 1, let range = Range(match.range, in: text), range.lowerBound >= start,
                !quoted.contains(where: { $0.contains(range.lowerBound) })
            else { continue }
            let next = Lexicon.words(Lexicon.fold(String(text[range.upperBound...].prefix(40)))).first ?? ""
            guard openers.contains(next) else { continue }
            let clause = text[start..<range.lowerBound].trimmingCharacters(in: .whitespacesAndNewlines)
            if !clause.isEmpty { clauses.append(clause) }
            start = range.upperBound
        }
        let last = text[start...].trimmingCharacters(in: .whitespacesAndNewlines)
        if !last.isEmpty { clauses.append(last) }
        return clauses.isEmpty ? [text] : clauses
    }
}
