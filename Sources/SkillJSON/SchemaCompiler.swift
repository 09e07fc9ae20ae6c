import Foundation

/// Why a JSON Schema cannot be used: where in the schema (a JSON pointer) and what is wrong.
public struct SchemaError: Error, Equatable, CustomStringConvertible, Sendable {
    /// JSON pointer into the schema, `""` for the root.
    public let pointer: String
    /// What is wrong, e.g. `"minimum" must be a number`.
    public let reason: String
    /// The schema is well-formed but dangerous to run (a cycle that never reaches the value, or a fan-out too
    /// large): it must not be used at all, not even by skipping validation.
    public var isHazard = false

    public var description: String { pointer.isEmpty ? reason : "at \(pointer): \(reason)" }
}

/// Turns a JSON Schema document into a graph of `SchemaNode`s and resolves `$ref`s inside the document
/// (JSON pointers, `$id`-relative URIs and `$anchor`s). References to other documents are rejected.
struct SchemaCompiler {
    /// Every addressable node: "<resource-uri>#<json-pointer>" and "<resource-uri>#<anchor>".
    private var index: [String: SchemaNode] = [:]
    private var references: [(node: SchemaNode, target: String, pointer: String)] = []
    /// Every node, in the order they were made.
    private var nodes: [SchemaNode] = []

    static let defaultBase = "https://skillhost.invalid/schema.json"

    /// The root and whether validating against it can cost more than a walk over the value (patterns, `$ref`,
    /// combinators): only then does validation need the caller's deadline.
    static func compile(_ document: JSONValue) throws(SchemaError) -> (root: SchemaNode, mayBeCostly: Bool) {
        var compiler = SchemaCompiler()
        let root = try compiler.node(document, base: defaultBase, localPointer: "", pointer: "")
        for reference in compiler.references {
            guard let target = compiler.index[reference.target] else {
                throw SchemaError(
                    pointer: reference.pointer,
                    reason: "$ref \"\(reference.node.refText ?? "")\" does not point inside this schema "
                        + "(only references within the schema are supported)")
            }
            reference.node.ref = target
        }
        try SchemaCost.check(compiler.nodes)
        let costly = compiler.nodes.contains { node in
            node.pattern != nil || !node.patternProperties.isEmpty || node.refText != nil || !node.allOf.isEmpty
                || !node.anyOf.isEmpty || !node.oneOf.isEmpty || node.not != nil || node.ifSchema != nil
        }
        return (root, costly)
    }

    private mutating func node(_ value: JSONValue, base: String, localPointer: String, pointer: String)
        throws(SchemaError) -> SchemaNode
    {
        let node = SchemaNode()
        node.pointer = pointer
        nodes.append(node)
        index[base + "#" + localPointer] = node
        switch value {
        case .bool(let accept):
            node.rejectsEverything = !accept
            return node
        case .object(let object):
            var base = base
            var localPointer = localPointer
            if case .string(let id)? = object["$id"] {
                base = Self.stripFragment(Self.resolve(id, against: base))
                localPointer = ""
                index[base + "#"] = node
            }
            if case .string(let anchor)? = object["$anchor"] { index[base + "#" + anchor] = node }
            try fill(node, from: object, base: base, localPointer: localPointer, pointer: pointer)
            return node
        default:
            throw SchemaError(
                pointer: pointer, reason: "a schema must be an object or a boolean, got \(value.typeName)")
        }
    }

    // swiftlint:disable:next function_body_length cyclomatic_complexity
    private mutating func fill(
        _ node: SchemaNode, from object: JSONObject, base: String, localPointer: String, pointer: String
    ) throws(SchemaError) {
        func sub(_ value: JSONValue, _ keys: String...) throws(SchemaError) -> SchemaNode {
            let suffix = keys.map { "/" + Self.escapePointerToken($0) }.joined()
            return try self.node(value, base: base, localPointer: localPointer + suffix, pointer: pointer + suffix)
        }
        func number(_ key: String) throws(SchemaError) -> Double? {
            guard let value = object[key] else { return nil }
            guard let d = value.doubleValue else {
                throw SchemaError(pointer: pointer, reason: "\"\(key)\" must be a number, got \(value.typeName)")
            }
            return d
        }
        /// A bound kept as written (an integer stays exact beyond 2^53).
        func bound(_ key: String) throws(SchemaError) -> JSONValue? {
            guard let value = object[key] else { return nil }
            guard value.doubleValue != nil else {
                throw SchemaError(pointer: pointer, reason: "\"\(key)\" must be a number, got \(value.typeName)")
            }
            return value
        }
        func count(_ key: String) throws(SchemaError) -> Int? {
            guard let value = object[key] else { return nil }
            guard let d = value.doubleValue, d >= 0, d.rounded() == d, d < 1e15 else {
                throw SchemaError(pointer: pointer, reason: "\"\(key)\" must be a non-negative integer")
            }
            return Int(d)
        }
        func schemaList(_ key: String) throws(SchemaError) -> [SchemaNode] {
            guard let value = object[key] else { return [] }
            guard case .array(let elements) = value, !elements.isEmpty else {
                throw SchemaError(pointer: pointer, reason: "\"\(key)\" must be a non-empty array of schemas")
            }
            var nodes: [SchemaNode] = []
            for (position, element) in elements.enumerated() { nodes.append(try sub(element, key, String(position))) }
            return nodes
        }
        func regex(_ source: String, _ key: String) throws(SchemaError) -> NSRegularExpression {
            do { return try NSRegularExpression(pattern: source) } catch {
                throw SchemaError(pointer: pointer, reason: "\"\(key)\" is not a valid regular expression: \(source)")
            }
        }

        if let type = object["type"] {
            var types = SchemaTypes()
            let names: [JSONValue]
            switch type {
            case .string: names = [type]
            case .array(let elements): names = elements
            default: names = [.null]
            }
            for name in names {
                guard case .string(let text) = name, let parsed = SchemaTypes(name: text) else {
                    throw SchemaError(
                        pointer: pointer,
                        reason: "\"type\" must be a type name (null, boolean, integer, number, string, array, "
                            + "object) or an array of them")
                }
                types.insert(parsed)
            }
            node.types = types
        }
        if let values = object["enum"] {
            guard case .array(let elements) = values else {
                throw SchemaError(pointer: pointer, reason: "\"enum\" must be an array")
            }
            node.enumValues = elements
        }
        if let value = object["const"] {
            node.constValue = value
            node.hasConst = true
        }
        if let value = object["properties"] {
            guard case .object(let members) = value else {
                throw SchemaError(pointer: pointer, reason: "\"properties\" must be an object")
            }
            for member in members.members {
                node.properties.append((member.key, try sub(member.value, "properties", member.key)))
            }
            node.indexProperties()
        }
        if let value = object["patternProperties"] {
            guard case .object(let members) = value else {
                throw SchemaError(pointer: pointer, reason: "\"patternProperties\" must be an object")
            }
            for member in members.members {
                node.patternProperties.append(
                    (try regex(member.key, "patternProperties"), try sub(member.value, "patternProperties", member.key))
                )
            }
        }
        if let value = object["additionalProperties"] {
            node.additionalProperties = try sub(value, "additionalProperties")
        }
        if let value = object["required"] {
            guard case .array(let names) = value else {
                throw SchemaError(pointer: pointer, reason: "\"required\" must be an array of property names")
            }
            for name in names {
                guard case .string(let text) = name else {
                    throw SchemaError(pointer: pointer, reason: "\"required\" must be an array of property names")
                }
                node.required.append(text)
            }
        }
        node.minProperties = try count("minProperties")
        node.maxProperties = try count("maxProperties")
        node.prefixItems = try schemaList("prefixItems")
        if let value = object["items"] {
            if case .array = value {
                throw SchemaError(
                    pointer: pointer, reason: "\"items\" must be a schema (use \"prefixItems\" for tuples in 2020-12)")
            }
            node.items = try sub(value, "items")
        }
        node.minItems = try count("minItems")
        node.maxItems = try count("maxItems")
        if case .bool(let unique)? = object["uniqueItems"] { node.uniqueItems = unique }
        node.minimum = try bound("minimum")
        node.maximum = try bound("maximum")
        node.exclusiveMinimum = try bound("exclusiveMinimum")
        node.exclusiveMaximum = try bound("exclusiveMaximum")
        node.multipleOf = try number("multipleOf")
        if let m = node.multipleOf, m <= 0 {
            throw SchemaError(pointer: pointer, reason: "\"multipleOf\" must be greater than 0")
        }
        node.minLength = try count("minLength")
        node.maxLength = try count("maxLength")
        if let value = object["pattern"] {
            guard case .string(let source) = value else {
                throw SchemaError(pointer: pointer, reason: "\"pattern\" must be a string")
            }
            node.pattern = (source, try regex(source, "pattern"))
        }
        node.allOf = try schemaList("allOf")
        node.anyOf = try schemaList("anyOf")
        node.oneOf = try schemaList("oneOf")
        if let value = object["not"] { node.not = try sub(value, "not") }
        if let value = object["if"] { node.ifSchema = try sub(value, "if") }
        if let value = object["then"] { node.thenSchema = try sub(value, "then") }
        if let value = object["else"] { node.elseSchema = try sub(value, "else") }
        for key in ["$defs", "definitions"] {
            guard let value = object[key] else { continue }
            guard case .object(let members) = value else {
                throw SchemaError(pointer: pointer, reason: "\"\(key)\" must be an object of schemas")
            }
            for member in members.members { _ = try sub(member.value, key, member.key) }
        }
        if let value = object["$ref"] {
            guard case .string(let text) = value else {
                throw SchemaError(pointer: pointer, reason: "\"$ref\" must be a string")
            }
            node.refText = text
            references.append((node, Self.normalizeReference(Self.resolve(text, against: base)), pointer))
        }
        node.defaultValue = object["default"]
    }

    // MARK: URIs and pointers

    /// A JSON Pointer token: "~" as "~0", "/" as "~1". Called for every keyword of every schema compiled: most
    /// tokens have neither and come back as they are (Foundation's replacingOccurrences cost a worker's start
    /// about 40 µs).
    static func escapePointerToken(_ token: String) -> String {
        guard token.utf8.contains(where: { $0 == UInt8(ascii: "~") || $0 == UInt8(ascii: "/") }) else { return token }
        var escaped = ""
        for character in token.unicodeScalars {
            switch character {
            case "~": escaped += "~0"
            case "/": escaped += "~1"
            default: escaped.unicodeScalars.append(character)
            }
        }
        return escaped
    }

    static func stripFragment(_ uri: String) -> String {
        guard let hash = uri.firstIndex(of: "#") else { return uri }
        return String(uri[..<hash])
    }

    /// RFC 3986 reference resolution (via Foundation), with same-document fragments handled directly so that
    /// non-hierarchical bases (URNs) work too.
    static func resolve(_ reference: String, against base: String) -> String {
        if reference.hasPrefix("#") { return stripFragment(base) + reference }
        if let url = URL(string: reference), url.scheme != nil { return reference }
        guard let baseURL = URL(string: base), let resolved = URL(string: reference, relativeTo: baseURL) else {
            return reference
        }
        return resolved.absoluteString
    }

    /// "<uri>#<fragment>" with the fragment percent-decoded; a missing fragment becomes "#".
    static func normalizeReference(_ uri: String) -> String {
        guard let hash = uri.firstIndex(of: "#") else { return uri + "#" }
        let fragment = String(uri[uri.index(after: hash)...])
        return String(uri[..<hash]) + "#" + (fragment.removingPercentEncoding ?? fragment)
    }
}

/// What a schema costs before any value is checked: subschemas that apply to the *same* value (`$ref`, `allOf`,
/// `anyOf`, `oneOf`, `not`, `if`/`then`/`else`) must not form a cycle — it would never reach the value and
/// recurse forever — and must not branch into more than `maximumFanOut` checks of one value (26 `anyOf`s of two
/// `$ref`s each would be 2^26). Recursion through `properties`, `items` and the like is legal: each step moves
/// into the value, so the value's depth bounds it.
enum SchemaCost {
    static let maximumFanOut = 100_000

    static func sameValueChildren(_ node: SchemaNode) -> [SchemaNode] {
        var children = node.allOf + node.anyOf + node.oneOf
        for child in [node.ref, node.not, node.ifSchema, node.thenSchema, node.elseSchema] {
            if let child { children.append(child) }
        }
        return children
    }

    static func check(_ nodes: [SchemaNode]) throws(SchemaError) {
        enum Mark { case visiting, done }
        var marks: [ObjectIdentifier: Mark] = [:]
        var fanOut: [ObjectIdentifier: Int] = [:]
        // Iterative depth-first search (a hostile schema can be deep): each frame is a node and its next child.
        for start in nodes where marks[ObjectIdentifier(start)] == nil {
            var stack: [(node: SchemaNode, children: [SchemaNode], next: Int)] = [(start, sameValueChildren(start), 0)]
            marks[ObjectIdentifier(start)] = .visiting
            while let top = stack.last {
                if top.next < top.children.count {
                    stack[stack.count - 1].next += 1
                    let child = top.children[top.next]
                    switch marks[ObjectIdentifier(child)] {
                    case .visiting?:
                        let cycle = stack.drop { $0.node !== child }.map(\.node) + [child]
                        throw SchemaError(
                            pointer: child.pointer,
                            reason: "subschemas refer to each other in a cycle that never moves into the value ("
                                + cycle.map { "#" + $0.pointer }.joined(separator: " → ")
                                + "); a schema may refer back to itself only below \"properties\", \"items\" or "
                                + "another keyword that moves into the value", isHazard: true)
                    case .done?: continue
                    case nil:
                        marks[ObjectIdentifier(child)] = .visiting
                        stack.append((child, sameValueChildren(child), 0))
                    }
                } else {
                    stack.removeLast()
                    marks[ObjectIdentifier(top.node)] = .done
                    var total = 1
                    for child in top.children {
                        total = min(maximumFanOut + 1, total + fanOut[ObjectIdentifier(child), default: 1])
                    }
                    fanOut[ObjectIdentifier(top.node)] = total
                    if total > maximumFanOut {
                        throw SchemaError(
                            pointer: top.node.pointer,
                            reason: "checking one value here would apply over \(maximumFanOut) subschemas ($ref, "
                                + "anyOf, allOf and oneOf branches multiply); simplify the schema", isHazard: true)
                    }
                }
            }
        }
    }
}
