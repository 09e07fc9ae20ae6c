import Foundation
import SkillJSON

/// The embedded default model when no endpoint is configured. Not a language model and never pretends to be
/// one: it ranks the offered skills against the request (BM25 over name, description and argument names), fills
/// the arguments from the text guided by each schema (numbers, enum values, expressions, zone names, dates,
/// quoted or remaining text), calls the best skill whose required arguments it could fill, and answers with the
/// result, labelled as offline. When nothing matches it says so plainly.
public final class OfflineRouter: ModelProvider {
    public let displayName = "offline router"

    public init() {}

    public func stream(_ request: ModelRequest) -> AsyncThrowingStream<ModelChunk, any Error> {
        let chunks = respond(to: request)
        return AsyncThrowingStream { continuation in
            for chunk in chunks { continuation.yield(chunk) }
            continuation.finish()
        }
    }

    func respond(to request: ModelRequest) -> [ModelChunk] {
        guard let last = request.messages.last else { return [.text("[offline router] nothing to answer")] }
        if last.role == .tool {
            return [.text(summarize(request.messages))]
        }
        let text = request.messages.last(where: { $0.role == .user })?.content ?? ""
        if let call = route(text, tools: request.tools) {
            return [
                .toolCall(
                    ToolCall(
                        id: "offline_\(request.messages.count)", name: call.name, arguments: call.arguments.jsonText))
            ]
        }
        let names = request.tools.prefix(8).map(\.name).joined(separator: ", ")
        return [
            .text(
                "[offline router] No skill matches “\(text)”. Without a model (set OPENAI_BASE_URL) I can only run "
                    + "skills for requests that name what they do\(names.isEmpty ? "" : ", e.g. \(names)").")
        ]
    }

    /// The answer after the calls ran: each result (or error), labelled.
    func summarize(_ messages: [Message]) -> String {
        guard let assistant = messages.lastIndex(where: { $0.role == .assistant }) else { return "[offline router]" }
        let calls = messages[assistant].toolCalls
        let results = messages[(assistant + 1)...].filter { $0.role == .tool }
        let lines = calls.map { call -> String in
            guard let result = results.first(where: { $0.toolCallID == call.id }) else {
                return "\(call.name): no result"
            }
            return result.isError ? "\(call.name) failed — \(result.content)" : "\(call.name): \(result.content)"
        }
        return "[offline router] " + lines.joined(separator: "\n")
    }

    /// The best tool whose required arguments can be filled from `text`, with those arguments.
    public func route(_ text: String, tools: [ToolDefinition]) -> (name: String, arguments: JSONValue)? {
        guard !tools.isEmpty else { return nil }
        var scores = Dictionary(SkillSelector(tools: tools).rank(text).map { ($0.id, $0.score) }, uniquingKeysWith: max)
        // An arithmetic expression is a strong signal for a tool that takes one; so are mentioned enum values
        // (units, modes) for the tools that accept them.
        if ArgumentExtractor.expression(in: text) != nil {
            for tool in tools where tool.parameters["properties"]?["expression"] != nil {
                scores[tool.name, default: 0] += 5
            }
        }
        for tool in tools {
            guard let properties = tool.parameters["properties"]?.objectValue else { continue }
            let mentioned = ArgumentExtractor.enumMentions(in: text, properties: properties).map(\.value)
            let filled = properties.members.filter { member in
                (member.value["enum"]?.arrayValue ?? []).contains { mentioned.contains($0) }
            }.count
            if filled > 0 { scores[tool.name, default: 0] += 3 * Double(filled) }
        }
        let ranked = tools.filter { (scores[$0.name] ?? 0) > 0 }.sorted {
            (scores[$0.name] ?? 0) > (scores[$1.name] ?? 0)
        }
        for tool in ranked {
            if let arguments = ArgumentExtractor(text: text, tool: tool).fill() {
                return (tool.name, .object(arguments))
            }
        }
        return nil
    }
}

/// Fills a tool's arguments from free text, guided by its JSON Schema.
struct ArgumentExtractor {
    let text: String
    let tool: ToolDefinition

    /// The arguments, or nil when a required one cannot be found.
    func fill() -> JSONObject? {
        guard let properties = tool.parameters["properties"]?.objectValue else { return JSONObject() }
        let required = Set((tool.parameters["required"]?.arrayValue ?? []).compactMap(\.stringValue))
        var numbers = Self.numbers(in: text)
        var enumMentions = Self.enumMentions(in: text, properties: properties)
        var zones = Self.matches(#"\b(?:[A-Z][A-Za-z_]+/[A-Za-z_/]+|UTC|GMT)\b"#, in: text)
        var usedText = false
        var arguments = JSONObject()
        for (name, schema) in properties.members {
            let types = Self.types(of: schema)
            var value: JSONValue?
            if let options = schema["enum"]?.arrayValue {
                // "from" prefers the value right after a number ("3 kg"); otherwise mentions are taken in order.
                let candidates = enumMentions.indices.filter { options.contains(enumMentions[$0].value) }
                let preferred = name == "from" ? candidates.first { enumMentions[$0].afterNumber } : nil
                if let index = preferred ?? candidates.first { value = enumMentions.remove(at: index).value }
            } else if types.contains("integer") || types.contains("number") {
                if let index = numbers.firstIndex(where: { !types.contains("integer") || $0.rounded() == $0 }),
                    required.contains(name) || !numbers.isEmpty
                {
                    let number = numbers.remove(at: index)
                    value =
                        types.contains("integer") || number.rounded() == number ? .int(Int64(number)) : .double(number)
                }
            } else if types.contains("boolean") {
                let lowered = text.lowercased()
                if lowered.contains(" true") || lowered.contains(" yes") { value = .bool(true) }
                if lowered.contains(" false") || lowered.contains(" no ") { value = .bool(false) }
            } else if types.contains("string") {
                // Free text fills one argument: the first required one (optional ones only if none is required).
                let free =
                    !["expression", "date", "time", "from", "to"].contains(name.lowercased())
                    && !name.lowercased().contains("zone")
                if free, usedText || (!required.contains(name) && !required.isEmpty) {
                    value = nil
                } else {
                    value = string(for: name, zones: &zones).map { .string($0) }
                    if free, value != nil { usedText = true }
                }
            }
            if let value {
                arguments[name] = value
            } else if required.contains(name) {
                return nil
            }
        }
        return arguments
    }

    private func string(for name: String, zones: inout [String]) -> String? {
        let lowered = name.lowercased()
        if lowered.contains("expression") { return Self.expression(in: text) }
        if lowered.contains("zone") || lowered == "from" || lowered == "to" {
            return zones.isEmpty ? nil : zones.removeFirst()
        }
        if lowered == "date" { return Self.matches(#"\d{4}-\d{2}-\d{2}"#, in: text).first }
        if lowered == "time" {
            return Self.matches(#"\d{4}-\d{2}-\d{2}[T ]\d{1,2}:\d{2}|\b\d{1,2}:\d{2}\b"#, in: text).first
        }
        if let quoted = Self.matches(#""[^"]+"|“[^”]+”|'[^']+'"#, in: text).first {
            return String(quoted.dropFirst().dropLast())
        }
        if let colon = text.firstIndex(of: ":") {
            let rest = text[text.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            if !rest.isEmpty { return rest }
        }
        // The text without the words that name the skill.
        let toolWords = Set(SkillSelector.terms(tool.name + " " + tool.description)).union(SkillSelector.stopWords)
        let words = text.split(separator: " ")
        let rest = words.drop { toolWords.contains(SkillSelector.terms(String($0)).first ?? "") }
        let joined = rest.joined(separator: " ").trimmingCharacters(in: .whitespaces)
        return joined.isEmpty ? nil : joined
    }

    static func types(of schema: JSONValue) -> Set<String> {
        switch schema["type"] {
        case .string(let name)?: return [name]
        case .array(let names)?: return Set(names.compactMap(\.stringValue))
        default: return []
        }
    }

    /// Numbers in the text, in order (not those inside dates, times or zone names).
    static func numbers(in text: String) -> [Double] {
        let cleaned = text.replacingOccurrences(
            of: #"\d{4}-\d{2}-\d{2}|\d{1,2}:\d{2}"#, with: " ", options: .regularExpression)
        return matches(#"(?<![\w.])-?\d+(?:\.\d+)?"#, in: cleaned).compactMap(Double.init)
    }

    /// The arithmetic part of a request: from the first digit, parenthesis, minus or function name to the end,
    /// without trailing punctuation. nil when there is no operator between numbers.
    static func expression(in text: String) -> String? {
        // Dates and times are not arithmetic.
        let text = text.replacingOccurrences(
            of: #"\d{4}-\d{2}-\d{2}(?:[T ]\d{1,2}:\d{2}(?::\d{2})?)?|\b\d{1,2}:\d{2}\b"#, with: " ",
            options: .regularExpression)
        let pattern = #"(?:sqrt|sin|cos|tan|log|ln|abs|pi|[\d(.\-−])[\d\s.+\-−*/×÷^%()a-z]*"#
        guard let candidate = matches(pattern, in: text).max(by: { $0.count < $1.count }) else { return nil }
        let trimmed = candidate.trimmingCharacters(in: CharacterSet(charactersIn: " ?.!=,"))
        let hasOperator =
            trimmed.range(
                of: #"[\d)]\s*[+\-−*/×÷^%]\s*[\d(a-z.]|^(sqrt|sin|cos|tan|log|ln|abs)\("#, options: .regularExpression)
            != nil
        return hasOperator ? trimmed : nil
    }

    /// Enum values mentioned in the text, in the order mentioned (with common unit names as aliases), and whether
    /// each follows a number.
    static func enumMentions(in text: String, properties: JSONObject) -> [(value: JSONValue, afterNumber: Bool)] {
        let values = Set(properties.members.flatMap { $0.value["enum"]?.arrayValue ?? [] }.compactMap(\.stringValue))
        guard !values.isEmpty else { return [] }
        var mentions: [(value: JSONValue, afterNumber: Bool)] = []
        let words = text.lowercased().split(whereSeparator: { !$0.isLetter && !$0.isNumber && $0 != "_" && $0 != "." })
            .map(String.init)
        for (index, word) in words.enumerated() {
            // "in" is a preposition unless it follows a number ("12 in to cm").
            if word == "in", index == 0 || Double(words[index - 1]) == nil { continue }
            let token = aliases[word] ?? word
            if values.contains(token) {
                mentions.append((.string(token), index > 0 && Double(words[index - 1]) != nil))
            }
        }
        return mentions
    }

    static let aliases: [String: String] = [
        "celsius": "c", "centigrade": "c", "fahrenheit": "f", "kelvin": "k", "millimeters": "mm", "millimetres": "mm",
        "centimeters": "cm", "centimetres": "cm", "meters": "m", "metres": "m", "meter": "m", "metre": "m",
        "kilometers": "km", "kilometres": "km", "inches": "in", "inch": "in", "feet": "ft", "foot": "ft",
        "yards": "yd", "yard": "yd", "miles": "mi", "mile": "mi", "milligrams": "mg", "grams": "g", "gram": "g",
        "kilograms": "kg", "kilogram": "kg", "kilos": "kg", "tonnes": "t", "tons": "t", "ounces": "oz",
        "ounce": "oz", "pounds": "lb", "pound": "lb", "lbs": "lb",
    ]

    static func matches(_ pattern: String, in text: String) -> [String] {
        guard let regex = try? NSRegularExpression(pattern: pattern) else { return [] }
        let range = NSRange(text.startIndex..<text.endIndex, in: text)
        return regex.matches(in: text, range: range).compactMap { Range($0.range, in: text).map { String(text[$0]) } }
    }
}
