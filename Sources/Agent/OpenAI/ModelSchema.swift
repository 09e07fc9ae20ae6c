import SkillJSON

/// A skill's input schema as a model server is sent it: what a server can build a grammar from, and the rest in
/// words. Servers that constrain decoding by the schema (llama.cpp's server, through llama-cpp-python) turn a
/// `maxLength` into one grammar rule per character — the calculator's 4096 exceeded llama.cpp's limits, and the
/// server process died of the segfault that followed. Lengths, patterns, formats and item counts stay in skillhost's
/// own validation, which runs on every call anyway; the model reads them in the property's description instead
/// ("at most 4096 characters").
enum ModelSchema {
    /// Keywords left out of what a model server is sent, said in words instead.
    static let described: Set<String> = [
        "maxLength", "minLength", "pattern", "format", "maxItems", "minItems", "uniqueItems", "maxProperties",
        "minProperties", "patternProperties", "multipleOf",
    ]

    /// `schema` without the keywords in `described`, at any depth, each schema that had one with a sentence
    /// added to its description. Bounded like any stranger's schema: past 64 levels a schema is sent as it is.
    static func forModel(_ schema: JSONValue, depth: Int = 0) -> JSONValue {
        guard depth < 64, case .object(let object) = schema else { return schema }
        var kept: [(key: String, value: JSONValue)] = []
        var said: [String] = []
        for (key, value) in object.members {
            if described.contains(key) {
                if let words = words(key, value) { said.append(words) }
                continue
            }
            switch key {
            case "properties", "$defs", "definitions", "dependentSchemas":
                let members = value.objectValue?.members.map {
                    (key: $0.key, value: forModel($0.value, depth: depth + 1))
                }
                kept.append((key, members.map { .object(JSONObject($0)) } ?? value))
            case "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames", "additionalItems",
                "unevaluatedItems", "unevaluatedProperties":
                kept.append((key, forModel(value, depth: depth + 1)))
            case "allOf", "anyOf", "oneOf", "prefixItems", "items":  // `items` may be a list (older drafts)
                kept.append(
                    (
                        key,
                        value.arrayValue.map { .array($0.map { forModel($0, depth: depth + 1) }) }
                            ?? forModel(value, depth: depth + 1)
                    ))
            case "dependencies":  // schemas, or lists of names
                let members = value.objectValue?.members.map {
                    (key: $0.key, value: forModel($0.value, depth: depth + 1))
                }
                kept.append((key, members.map { .object(JSONObject($0)) } ?? value))
            default:
                kept.append((key, value))
            }
        }
        // Without its patternProperties, "additionalProperties": false would leave a grammar only `{}`.
        if object["patternProperties"] != nil { kept.removeAll { $0.key == "additionalProperties" } }
        guard !said.isEmpty else { return .object(JSONObject(kept)) }
        let sentence = said.joined(separator: "; ")
        if let index = kept.firstIndex(where: { $0.key == "description" }), let text = kept[index].value.stringValue {
            kept[index].value = .string(text.isEmpty ? sentence : "\(text) (\(sentence))")
        } else {
            kept.append(("description", .string(sentence)))
        }
        return .object(JSONObject(kept))
    }

    /// A left-out keyword in words, or nil when it says nothing worth saying.
    static func words(_ keyword: String, _ value: JSONValue) -> String? {
        let count = value.integer(in: 0...Int.max)
        func counted(_ bound: String, _ noun: String) -> String? {
            count.map { "\(bound) \($0) \(noun)\($0 == 1 ? "" : "s")" }
        }
        switch keyword {
        case "maxLength": return counted("at most", "character")
        case "minLength": return counted("at least", "character")
        case "maxItems": return counted("at most", "item")
        case "minItems": return counted("at least", "item")
        case "maxProperties": return counted("at most", "member")
        case "minProperties": return counted("at least", "member")
        case "uniqueItems": return value == .bool(true) ? "no item twice" : nil
        case "multipleOf": return value.doubleValue.map { "a multiple of \(JSONValue.double($0).jsonText)" }
        case "format": return value.stringValue.map { "format \(String($0.prefix(40)))" }
        case "pattern":
            return value.stringValue.map { $0.count <= 120 ? "matching the pattern \($0)" : "matching a pattern" }
        case "patternProperties":
            let patterns = value.objectValue?.keys.filter { $0.count <= 60 }.prefix(5).joined(separator: ", ") ?? ""
            return patterns.isEmpty ? "members named by a pattern" : "members whose names match \(patterns)"
        default: return nil
        }
    }
}
