import SkillJSON

/// The keywords a rule's `arguments` schema may use: those skillhost's validator checks (SchemaCompiler) and
/// annotations that change nothing. JSON Schema ignores a keyword it does not know — a misspelt `"maximun": 0` made
/// a rule match every call — and skillhost's validator does not check some it knows (`propertyNames`,
/// `dependentRequired`, `format`…): in config.json either is an error, so a rule never matches more than it says.
enum SchemaKeywords {
    /// Keywords whose value is a schema.
    static let schema = ["additionalProperties", "not", "if", "then", "else"]
    /// Keywords whose value is an object of schemas.
    static let schemaMaps = ["properties", "patternProperties", "$defs", "definitions"]
    /// Keywords whose value is an array of schemas.
    static let schemaLists = ["allOf", "anyOf", "oneOf", "prefixItems"]
    /// Keywords whose value is data or a number, never a schema.
    static let values = [
        "type", "enum", "const", "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum",
        "maxLength", "minLength", "pattern", "maxItems", "minItems", "uniqueItems", "maxProperties", "minProperties",
        "required", "$id", "$ref", "$anchor",
    ]
    /// Annotations: they check nothing and change nothing.
    static let annotations = [
        "title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly", "$schema", "$comment",
    ]
    /// Keywords of JSON Schema that skillhost's validator does not check.
    static let unchecked = [
        "propertyNames", "contains", "maxContains", "minContains", "dependentRequired", "dependentSchemas",
        "unevaluatedItems", "unevaluatedProperties", "additionalItems", "format", "contentEncoding",
        "contentMediaType", "contentSchema", "dependencies", "$dynamicRef", "$dynamicAnchor", "$vocabulary",
        "$recursiveRef", "$recursiveAnchor",
    ]
    static let checked = schema + schemaMaps + schemaLists + values + ["items"] + annotations

    /// The first keyword of `schema` (at any depth) a rule cannot rely on, as a sentence naming where it is and what
    /// to do; nil when there is none.
    static func unknown(in schema: JSONValue, at pointer: String = "") -> String? {
        guard case .object(let object) = schema else { return nil }
        let place = pointer.isEmpty ? "its top" : pointer
        for (key, value) in object.members {
            let here = pointer + "/" + key
            if unchecked.contains(key) {
                return "has \"\(key)\" at \(place), which skillhost's rules do not check; express the condition "
                    + "with the keywords they do (properties, pattern, enum, maximum, required…)"
            }
            if !checked.contains(key) {
                let hint = EditDistance.closest(to: key, among: checked).map { " (did you mean \"\($0)\"?)" } ?? ""
                return "has \"\(key)\" at \(place), which JSON Schema does not know" + hint
            }
            var members: [(String, JSONValue)] = []
            if Self.schema.contains(key) || key == "items" {
                if case .array(let list) = value {
                    members = list.enumerated().map { ("/\($0.offset)", $0.element) }
                } else {
                    members = [("", value)]
                }
            }
            if schemaMaps.contains(key), case .object(let map) = value {
                members = map.members.map { ("/" + $0.key, $0.value) }
            }
            if schemaLists.contains(key), case .array(let list) = value {
                members = list.enumerated().map { ("/\($0.offset)", $0.element) }
            }
            for (suffix, member) in members {
                if let problem = unknown(in: member, at: here + suffix) { return problem }
            }
        }
        return nil
    }
}
