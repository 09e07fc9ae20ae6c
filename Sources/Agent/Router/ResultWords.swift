import SkillHost
import SkillJSON

/// A call's result as a person reads it, for a card's one line: the skill's own sentence (its answer template)
/// when it declares one and the result has what it names, else the result in words as the offline router words it
/// ("(23+7)*2 = 60", "Count 2, Mean 3.5"). One line, at most `limit` characters.
package enum ResultWords {
    package static func line(_ result: JSONValue, arguments: JSONValue, skill: SkillInfo, limit: Int = 200) -> String {
        let call = ToolCall(id: "", name: skill.id, arguments: arguments.jsonText)
        let tool = ToolDefinition(skill)
        let content = result.displayText
        let words =
            RouterAnswer.sentence(content, call: call, tool: tool, places: nil)
            ?? RouterAnswer.render(content, call: call, tool: tool)
        let line = words.split(whereSeparator: \.isNewline).joined(separator: " · ")
        return line.count > limit ? String(line.prefix(limit - 1)) + "…" : line
    }
}
