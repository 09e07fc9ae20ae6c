import SkillJSON

/// Text pieces of a skill-call card, shared by the shell and `skillhost ask`.
public enum CardText {
    /// `{"expression":"(23+7)*2"}` → `expression: "(23+7)*2"` (other text unchanged).
    public static func arguments(_ text: String) -> String {
        guard let object = (try? JSONValue(parsing: text))?.objectValue else { return text }
        return object.members.map { "\($0.key): \($0.value.jsonText)" }.joined(separator: ", ")
    }

    /// One line of at most `limit` characters (newlines become spaces, an ellipsis marks the cut).
    public static func shorten(_ text: String, _ limit: Int) -> String {
        let line = text.replacingOccurrences(of: "\n", with: " ")
        return line.count > limit ? String(line.prefix(max(1, limit - 1))) + "…" : line
    }
}
