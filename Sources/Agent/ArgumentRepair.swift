import Foundation
import SkillJSON

/// Turns what a model wrote as tool arguments into one JSON object, repairing only unambiguous mistakes: code
/// fences, text before or after a single object, an object encoded as a JSON string, empty arguments.
enum ArgumentRepair {
    /// The arguments as a JSON object, or a sentence for the model explaining what to fix.
    static func repair(_ text: String) -> Result<JSONObject, ArgumentError> {
        var candidate = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if candidate.isEmpty { return .success(JSONObject()) }
        if candidate.hasPrefix("```") {
            // ```json\n{...}\n```
            var lines = candidate.split(separator: "\n", omittingEmptySubsequences: false).dropFirst()
            if let last = lines.last, last.trimmingCharacters(in: .whitespaces).hasPrefix("```") {
                lines = lines.dropLast()
            }
            candidate = lines.joined(separator: "\n").trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let parseError: JSONParseError
        do {
            switch try JSONValue(parsing: candidate) {
            case .object(let object): return .success(object)
            case .string(let inner):
                if case .object(let object)? = try? JSONValue(parsing: inner) { return .success(object) }
                return .failure(ArgumentError("arguments must be a JSON object, got a string"))
            case let other:
                return .failure(ArgumentError("arguments must be a JSON object, got \(other.typeName)"))
            }
        } catch {
            parseError = error
        }
        // One object surrounded by other text: take the object if it is the only one.
        if let object = singleEmbeddedObject(candidate) { return .success(object) }
        return .failure(ArgumentError("arguments are not valid JSON (\(parseError.description))"))
    }

    /// The only top-level `{…}` in `text` that parses, if there is exactly one.
    static func singleEmbeddedObject(_ text: String) -> JSONObject? {
        let characters = Array(text.utf8)
        var found: [JSONObject] = []
        var index = 0
        while index < characters.count {
            guard characters[index] == UInt8(ascii: "{") else {
                index += 1
                continue
            }
            guard let end = matchingBrace(characters, from: index),
                case .object(let object)? = try? JSONValue(parsing: Array(characters[index...end]))
            else {
                index += 1
                continue
            }
            found.append(object)
            index = end + 1
        }
        return found.count == 1 ? found[0] : nil
    }

    static func matchingBrace(_ bytes: [UInt8], from start: Int) -> Int? {
        var depth = 0
        var inString = false
        var escaped = false
        for index in start..<bytes.count {
            let byte = bytes[index]
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "{"): depth += 1
            case UInt8(ascii: "}"):
                depth -= 1
                if depth == 0 { return index }
            default: break
            }
        }
        return nil
    }
}

/// Why arguments could not be used.
struct ArgumentError: Error, Equatable {
    let message: String
    init(_ message: String) { self.message = message }
}
