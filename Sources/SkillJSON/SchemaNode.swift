import Foundation

/// The JSON Schema types as a bit set.
struct SchemaTypes: OptionSet, Sendable {
    let rawValue: UInt8
    static let null = SchemaTypes(rawValue: 1 << 0)
    static let boolean = SchemaTypes(rawValue: 1 << 1)
    static let integer = SchemaTypes(rawValue: 1 << 2)
    static let number = SchemaTypes(rawValue: 1 << 3)
    static let string = SchemaTypes(rawValue: 1 << 4)
    static let array = SchemaTypes(rawValue: 1 << 5)
    static let object = SchemaTypes(rawValue: 1 << 6)

    /// In the order messages list them ("string or null").
    static let names: [(String, SchemaTypes)] = [
        ("boolean", .boolean), ("integer", .integer), ("number", .number), ("string", .string), ("array", .array),
        ("object", .object), ("null", .null),
    ]

    init(rawValue: UInt8) { self.rawValue = rawValue }

    init?(name: String) {
        guard let entry = Self.names.first(where: { $0.0 == name }) else { return nil }
        self = entry.1
    }

    /// Whether a value of this JSON type is accepted (`number` accepts integers).
    func accepts(_ value: JSONValue) -> Bool {
        switch value {
        case .null: return contains(.null)
        case .bool: return contains(.boolean)
        case .int: return contains(.integer) || contains(.number)
        case .double(let d):
            return contains(.number) || (contains(.integer) && d.isFinite && d.rounded() == d)
        case .string: return contains(.string)
        case .array: return contains(.array)
        case .object: return contains(.object)
        }
    }

    /// "string", "string or null", "integer, string or null".
    var humanName: String {
        let parts = Self.names.filter { contains($0.1) }.map(\.0)
        guard parts.count > 1, let last = parts.last else { return parts.first ?? "nothing" }
        return parts.dropLast().joined(separator: ", ") + " or " + last
    }
}

/// One compiled (sub)schema.
///
/// A class because `$ref` makes the graph cyclic.
/// - Important: `@unchecked Sendable` is safe because every stored property is written only by `SchemaCompiler`
///   while it builds the graph, before the owning `JSONSchema` is published; afterwards nodes are only read.
final class SchemaNode: @unchecked Sendable {
    /// `false` schema (or a schema that can never match).
    var rejectsEverything = false
    var types: SchemaTypes?
    var enumValues: [JSONValue]?
    var constValue: JSONValue?
    var hasConst = false

    var properties: [(name: String, schema: SchemaNode)] = []
    /// `properties` by name, for schemas with many of them (lookups stay constant-time); see `indexProperties`.
    private var propertyIndex: [MemberName: SchemaNode]?
    var patternProperties: [(pattern: NSRegularExpression, schema: SchemaNode)] = []
    var additionalProperties: SchemaNode?
    var required: [String] = []
    var minProperties: Int?
    var maxProperties: Int?

    var prefixItems: [SchemaNode] = []
    var items: SchemaNode?
    var minItems: Int?
    var maxItems: Int?
    var uniqueItems = false

    /// Numeric bounds as written (`.int` or `.double`), compared exactly (`JSONValue.compareNumbers`).
    var minimum: JSONValue?
    var maximum: JSONValue?
    var exclusiveMinimum: JSONValue?
    var exclusiveMaximum: JSONValue?
    var multipleOf: Double?

    var minLength: Int?
    var maxLength: Int?
    var pattern: (source: String, regex: NSRegularExpression)?

    var allOf: [SchemaNode] = []
    var anyOf: [SchemaNode] = []
    var oneOf: [SchemaNode] = []
    var not: SchemaNode?
    var ifSchema: SchemaNode?
    var thenSchema: SchemaNode?
    var elseSchema: SchemaNode?

    /// `$ref` as written, and its target once resolved.
    var refText: String?
    var ref: SchemaNode?

    var defaultValue: JSONValue?

    /// Where the node is in its document (a JSON pointer), for messages.
    var pointer = ""

    /// The schema of property `name`, if `properties` has one.
    func property(named name: String) -> SchemaNode? {
        if let propertyIndex { return propertyIndex[MemberName(name)] }
        return properties.first { sameScalars($0.name, name) }?.schema
    }

    /// Builds the index of `properties` once they are all in (the compiler calls it).
    func indexProperties() {
        guard properties.count > 8 else { return }
        var index: [MemberName: SchemaNode] = [:]
        index.reserveCapacity(properties.count)
        for property in properties where index[MemberName(property.name)] == nil {
            index[MemberName(property.name)] = property.schema
        }
        propertyIndex = index
    }

    /// True for `true` and `{}`: anything matches, so validation can skip it.
    var acceptsEverything: Bool {
        !rejectsEverything && types == nil && enumValues == nil && !hasConst && properties.isEmpty
            && patternProperties.isEmpty && additionalProperties == nil && required.isEmpty && minProperties == nil
            && maxProperties == nil && prefixItems.isEmpty && items == nil && minItems == nil && maxItems == nil
            && !uniqueItems && minimum == nil && maximum == nil && exclusiveMinimum == nil && exclusiveMaximum == nil
            && multipleOf == nil && minLength == nil && maxLength == nil && pattern == nil && allOf.isEmpty
            && anyOf.isEmpty && oneOf.isEmpty && not == nil && ifSchema == nil && refText == nil
    }
}
