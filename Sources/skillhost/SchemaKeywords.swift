import SkillJSON

/// The keywords of JSON Schema (draft 2020-12) a rule's `arguments` schema may use. The standard ignores a keyword it
/// does not know — so a misspelt `"maximun": 0` made a rule match every call; in config.json such a keyword is an
/// error with a suggestion.
enum SchemaKeywords {
    /// Keywords whose value is a schema.
    static let schema = [
        "additionalProperties", "items", "not", "if", "then", "else", "contains", "propertyNames", "unevaluatedItems",
        "unevaluatedProperties", "additionalItems",
    ]
    /// Keywords whose value is an object of schemas.
    static let schemaMaps = ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"]
    /// Keywords whose value is an array of schemas.
    static let schemaLists = ["allOf", "anyOf", "oneOf", "prefixItems"]
    /// Keywords whose value is data or a number, never a schema.
    static let values = [
        "type", "enum", "const", "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum",
        "maxLength", "minLength", "pattern", "maxItems", "minItems", "uniqueItems", "maxContains", "minContains",
        "maxProperties", "minProperties", "required", "dependentRequired", "format", "title", "description",
        "default", "examples", "deprecated", "readOnly", "writeOnly", "$schema", "$id", "$ref", "$anchor",
        "$dynamicRef", "$dynamicAnchor", "$comment", "$vocabulary", "contentEncoding", "contentMediaType",
        "contentSchema", "dependencies",
    ]
    static let all = schema + schemaMaps + schemaLists + values

    /// The first keyword of `schema` (at any depth) that JSON Schema does not know, as a sentence naming where it is
    /// and what was probably meant; nil when there is none.
    static func unknown(in schema: JSONValue, at pointer: String = "") -> String? {
        guard case .object(let object) = schema else { return nil }
        for (key, value) in object.members {
            let here = pointer + "/" + key
            if !all.contains(key) {
                let hint = EditDistance.closest(to: key, among: all).map { " (did you mean \"\($0)\"?)" } ?? ""
                return "has \"\(key)\" at \(pointer.isEmpty ? "its top" : pointer), which JSON Schema does not know"
                    + hint
            }
            if Self.schema.contains(key), let problem = unknown(in: value, at: here) { return problem }
            if schemaMaps.contains(key), case .object(let members) = value {
                for (name, member) in members.members {
                    if let problem = unknown(in: member, at: here + "/" + name) { return problem }
                }
            }
            if schemaLists.contains(key), case .array(let members) = value {
                for (index, member) in members.enumerated() {
                    if let problem = unknown(in: member, at: here + "/\(index)") { return problem }
                }
            }
        }
        return nil
    }
}
