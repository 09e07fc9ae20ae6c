import Foundation
import SkillJSON

/// The offline router's answer after its calls ran, written as a person would: numbers rounded to at most six
/// significant digits (integers exact), with the units the call was about (`72 °F = 22.2222 °C`,
/// `15*23+4 = 349`), objects as short `key: value` lines in the order the skill wrote them, lists one item per
/// line, and failures as `skill failed: reason`.
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
            let rendered = render(result.content, call: call, tool: tool, places: places)
            return "\(call.name):" + (rendered.hasPrefix("\n") ? "" : " ") + rendered
        }
        return label + " " + lines.joined(separator: "\n")
    }

    /// One call's result, with the context of its arguments.
    static func render(_ content: String, call: ToolCall, tool: ToolDefinition?, places: Int? = nil) -> String {
        guard let value = try? JSONValue(parsing: content) else { return content }
        let arguments = (try? JSONValue(parsing: call.arguments))?.objectValue ?? JSONObject()
        switch value {
        case .int, .double:
            let number = places.map { format(value, places: $0) } ?? format(value)
            if let expression = argument(arguments, tool, role: .expression) { return "\(expression) = \(number)" }
            if let conversion = conversion(arguments, tool: tool, name: call.name) {
                return "\(conversion.amount) = \(number)\(conversion.unit.map { " " + $0 } ?? "")"
            }
            return number
        case .bool(let flag): return flag ? "yes" : "no"
        case .string(let text): return text
        case .null: return "nothing"
        case .object(let object): return object.count == 0 ? "nothing" : "\n" + lines(of: object, indent: "  ")
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

    /// An object as `key: value` lines, in its own order.
    static func lines(of object: JSONObject, indent: String) -> String {
        object.members.map { "\(indent)\($0.key): \(inline($0.value))" }.joined(separator: "\n")
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
