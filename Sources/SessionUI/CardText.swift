import SkillHost
import SkillJSON

/// Text pieces of a skill-call card, shared by the shell and `skillhost ask` (package glue, not API).
package enum CardText {
    /// `{"expression":"(23+7)*2"}` → `expression: "(23+7)*2"` (other text unchanged).
    package static func arguments(_ text: String) -> String {
        guard let value = try? JSONValue(parsing: text) else { return text }
        return arguments(value) ?? text
    }

    /// An event's arguments for a card: a value's members as `name: value`; text as the model wrote it.
    package static func arguments(_ arguments: SkillInvocation.Arguments) -> String {
        switch arguments {
        case .value(let value): return Self.arguments(value) ?? value.jsonText
        case .text(let text): return Self.arguments(text)
        }
    }

    private static func arguments(_ value: JSONValue) -> String? {
        value.objectValue.map { $0.members.map { "\($0.key): \($0.value.jsonText)" }.joined(separator: ", ") }
    }

    /// One line of at most `limit` characters (newlines become spaces, an ellipsis marks the cut), made inert:
    /// whatever wrote it, it cannot drive the terminal.
    package static func shorten(_ text: String, _ limit: Int) -> String {
        let line = InertText.make(text.replacingOccurrences(of: "\n", with: " ")).replacingOccurrences(
            of: "\t", with: " ")
        return line.count > limit ? String(line.prefix(max(1, limit - 1))) + "…" : line
    }

}
