import Foundation
import SkillJSON

/// The offline router's answer after its calls ran, written as a person would: the sentence the skill declares for
/// its result (`It's 09:11 on Sunday 6 December 2026 in Tokyo (UTC+9).`, `AnswerTemplate`) when it declares one and
/// the result has what it names; otherwise numbers rounded to at most six significant digits (integers exact), with
/// the units or expression the call was about (`72 °F = 22.2222 °C`), other results after the skill's title
/// (`Greatest common divisor: 6`), objects as `name value` pairs named by the output schema's titles, lists one item
/// per line; failures as `skill failed: reason`. The raw result stays in the trace.
enum RouterAnswer {
    static let label = "[offline router]"
    /// At most this many items of a list are shown.
    static let listLimit = 20

    static func summary(_ messages: [Message], tools: [ToolDefinition]) -> String {
        // Every call made since the request (a request of several clauses makes one per step).
        let since = (messages.lastIndex(where: { $0.role == .user }) ?? -1) + 1
        let calls = messages[since...].filter { $0.role == .assistant }.flatMap(\.toolCalls)
        guard !calls.isEmpty else { return label }
        let results = messages[since...].filter { $0.role == .tool }
        let places = since > 0 ? decimalPlaces(asked: messages[since - 1].content) : nil
        let lines = calls.map { call -> String in
            guard let result = results.first(where: { $0.toolCallID == call.id }) else {
                return "\(call.name): no result"
            }
            if result.isError {
                let reason = result.content.hasPrefix("error: ") ? String(result.content.dropFirst(7)) : result.content
                return "\(call.name) failed: \(reason)"
            }
            let tool = tools.first { $0.name == call.name }
            if let sentence = sentence(result.content, call: call, tool: tool, places: places) { return sentence }
            let rendered = render(result.content, call: call, tool: tool, places: places)
            if selfExplaining(result.content, call: call, tool: tool) { return rendered }
            let title = tool?.title ?? call.name
            return "\(title):" + (rendered.hasPrefix("\n") ? "" : " ") + rendered
        }
        // A stranger's result may be megabytes of text: an answer is something to read, the rest is on the trace.
        let shown = lines.map { $0.count > lineLimit ? String($0.prefix(lineLimit)) + " …" : $0 }
        return label + " " + shown.joined(separator: "\n")
    }

    /// At most this many characters of one call's line are shown.
    static let lineLimit = 4_000

    /// The skill's own sentence for a result, nil when it declares none or the result lacks what it names.
    static func sentence(_ content: String, call: ToolCall, tool: ToolDefinition?, places: Int?) -> String? {
        guard let template = tool?.answer else { return nil }
        // A string result is carried as its text.
        let value = (try? JSONValue(parsing: content)) ?? .string(content)
        let arguments = (try? JSONValue(parsing: call.arguments)) ?? .object(JSONObject())
        return template.render(
            result: value, arguments: arguments, number: { number($0, places: places) }, argumentNumber: { format($0) })
    }

    /// Whether a result shown by `render` says what it is about by itself: a number with the expression or the
    /// conversion that produced it.
    static func selfExplaining(_ content: String, call: ToolCall, tool: ToolDefinition?) -> Bool {
        guard let value = try? JSONValue(parsing: content), value.doubleValue != nil else { return false }
        let arguments = (try? JSONValue(parsing: call.arguments))?.objectValue ?? JSONObject()
        return argument(arguments, tool, role: .expression) != nil
            || conversion(arguments, tool: tool, name: call.name) != nil
    }

    /// One call's result, with the context of its arguments.
    static func render(_ content: String, call: ToolCall, tool: ToolDefinition?, places: Int? = nil) -> String {
        guard let value = try? JSONValue(parsing: content) else { return content }
        let arguments = (try? JSONValue(parsing: call.arguments))?.objectValue ?? JSONObject()
        switch value {
        case .int, .double:
            let number = number(value, places: places)
            if let expression = argument(arguments, tool, role: .expression) { return "\(expression) = \(number)" }
            if let conversion = conversion(arguments, tool: tool, name: call.name) {
                return "\(conversion.amount) = \(number)\(conversion.unit.map { " " + $0 } ?? "")"
            }
            return number
        case .bool(let flag): return flag ? "yes" : "no"
        case .string(let text): return text
        case .null: return "nothing"
        case .object(let object):
            if object.count == 0 { return "nothing" }
            let labelled = object.members.map { (key: label(of: $0.key, in: tool), value: $0.value) }
            let scalars = labelled.allSatisfy {
                if case .object = $0.value { return false }
                if case .array = $0.value { return false }
                return true
            }
            let line = labelled.map { "\($0.key) \(inline($0.value))" }.joined(separator: ", ")
            if scalars, labelled.count <= 8, line.count <= 160 { return line }
            return "\n" + labelled.map { "  \($0.key): \(inline($0.value))" }.joined(separator: "\n")
        case .array(let items):
            if items.isEmpty { return "none" }
            var shown = items.prefix(listLimit).map { "  - " + inline($0) }
            if items.count > listLimit { shown.append("  … and \(items.count - listLimit) more") }
            return "\n" + shown.joined(separator: "\n")
        }
    }

    /// The value of the argument playing `role`, as text.
    static func argument(_ arguments: JSONObject, _ tool: ToolDefinition?, role: ArgumentFiller.Role) -> String? {
        guard let properties = tool?.parameters["properties"]?.objectValue else { return nil }
        for (name, schema) in properties.members where ArgumentFiller.role(of: name, schema) == role {
            if let value = arguments[name] { return value.stringValue ?? format(value) }
        }
        return nil
    }

    /// "72 °F" and "°C" for a conversion: a number with `from`/`to` units, or a `x_to_y` tool taking `x`.
    static func conversion(_ arguments: JSONObject, tool: ToolDefinition?, name: String)
        -> (amount: String, unit: String?)?
    {
        let numbers = arguments.members.filter {
            if case .int = $0.value { return true }
            if case .double = $0.value { return true }
            return false
        }
        guard numbers.count == 1, let amount = numbers.first else { return nil }
        if let from = arguments["from"]?.stringValue, let to = arguments["to"]?.stringValue {
            return ("\(format(amount.value)) \(unit(from))", unit(to))
        }
        let parts = name.components(separatedBy: "_to_")
        if parts.count == 2, parts[0] == amount.key || parts[0].hasSuffix(amount.key) {
            return ("\(format(amount.value)) \(unit(parts[0]))", unit(parts[1]))
        }
        return nil
    }

    static func unit(_ name: String) -> String {
        switch name.lowercased() {
        case "c", "celsius": return "°C"
        case "f", "fahrenheit": return "°F"
        case "k", "kelvin": return "K"
        default: return name
        }
    }

    /// What a member of a result is called: the output schema's `title` for it, else its name in words
    /// (`utc_offset` → "utc offset").
    static func label(of key: String, in tool: ToolDefinition?) -> String {
        if let title = tool?.output?["properties"]?[key]?["title"]?.stringValue, !title.isEmpty, title.count <= 40 {
            return title
        }
        return key.replacingOccurrences(of: "_", with: " ")
    }

    /// Any value on one line: objects as `key: value, …`, lists comma-separated.
    static func inline(_ value: JSONValue) -> String {
        switch value {
        case .object(let object): return object.members.map { "\($0.key): \(inline($0.value))" }.joined(separator: ", ")
        case .array(let items): return items.map(inline).joined(separator: ", ")
        case .string(let text): return text
        case .bool(let flag): return flag ? "yes" : "no"
        case .null: return "-"
        case .int, .double: return format(value)
        }
    }

    /// The decimal places the request asks a number to be rounded to: "rounded", "to the nearest whole number" → 0;
    /// "rounded to 2 decimal places", "to 1 decimal", "to 3 dp" → that many (at most 12). Nil when it does not ask.
    static func decimalPlaces(asked request: String) -> Int? {
        let text = Lexicon.digits(request.lowercased())
        if let match = ArgumentText.groupsWithOffsets(
            #"\b(?:round(?:ed)?\s+)?to\s+(\d+)\s*(?:decimal(?:\s+place)?s?|dp|places?|digits? after the point)\b"#,
            in: text
        ).first, let places = Int(match.groups[0]) {
            return min(places, 12)
        }
        if text.range(
            of: #"\b(?:rounded|round it|round that|to the nearest whole(?: number)?)\b"#,
            options: .regularExpression) != nil
        {
            return 0
        }
        return nil
    }

    /// A result's number: rounded to the places the request asked for, else as `format(_:)` writes it.
    static func number(_ value: JSONValue, places: Int?) -> String {
        places.map { format(value, places: $0) } ?? format(value)
    }

    /// A number rounded to `places` decimals, without trailing zeros after the point.
    static func format(_ value: JSONValue, places: Int) -> String {
        guard let number = value.doubleValue, number.isFinite, abs(number) < 1e15 else { return format(value) }
        // Halves away from zero, as a person rounds (printf rounds them to even: 2.5 → 2).
        let scale = Foundation.pow(10, Double(places))
        let rounded = (number * scale).rounded(.toNearestOrAwayFromZero) / scale
        var text = String(format: "%.\(places)f", rounded)
        if text.contains(".") {
            while text.hasSuffix("0") { text.removeLast() }
            if text.hasSuffix(".") { text.removeLast() }
        }
        return text == "-0" ? "0" : text
    }

    /// Integers exact; other numbers to at most six significant digits, without trailing zeros.
    static func format(_ value: JSONValue) -> String {
        switch value {
        case .int(let i): return String(i)
        case .double(let d):
            if d.rounded() == d, abs(d) < 1e15 { return String(Int64(d)) }
            var text = String(format: "%.6g", d)
            if text.contains("."), !text.contains("e") {
                while text.hasSuffix("0") { text.removeLast() }
                if text.hasSuffix(".") { text.removeLast() }
            }
            return text
        default: return value.displayText
        }
    }
}
