import SkillJSON

/// Text pieces of a skill-call card, shared by the shell and `skillhost ask` (package glue, not API).
package enum CardText {
    /// `{"expression":"(23+7)*2"}` → `expression: "(23+7)*2"` (other text unchanged).
    package static func arguments(_ text: String) -> String {
        guard let object = (try? JSONValue(parsing: text))?.objectValue else { return text }
        return object.members.map { "\($0.key): \($0.value.jsonText)" }.joined(separator: ", ")
    }

    /// One line of at most `limit` characters (newlines become spaces, an ellipsis marks the cut), made inert:
    /// whatever wrote it, it cannot drive the terminal.
    package static func shorten(_ text: String, _ limit: Int) -> String {
        let line = InertText.make(text.replacingOccurrences(of: "\n", with: " ")).replacingOccurrences(
            of: "\t", with: " ")
        return line.count > limit ? String(line.prefix(max(1, limit - 1))) + "…" : line
    }

    /// The error without words the card already shows: `fault_segv failed: plugin … crashed` → `plugin … crashed`,
    /// `error: division by zero` → `division by zero`.
    package static func reason(_ error: String, skill: String) -> String {
        var text = error
        for prefix in ["\(skill) failed: ", "\(skill): ", "error: "] where text.hasPrefix(prefix) {
            text.removeFirst(prefix.count)
        }
        return text
    }
}
