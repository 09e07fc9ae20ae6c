import SkillJSON

/// A C type a typed skill may use.
enum CType: String, CaseIterable, Sendable {
    case void, bool, int32, int64, double, string

    /// The JSON Schema a parameter of this type generates.
    var schema: JSONValue {
        switch self {
        case .void: return .null
        case .bool: return ["type": "boolean"]
        case .int32: return ["type": "integer", "minimum": .int(Int64(Int32.min)), "maximum": .int(Int64(Int32.max))]
        case .int64: return ["type": "integer"]
        case .double: return ["type": "number"]
        case .string: return ["type": "string"]
        }
    }

    /// JSON Schema type names a declared schema may use for a parameter of this type.
    var compatibleSchemaTypes: Set<String> {
        switch self {
        case .void: return []
        case .bool: return ["boolean"]
        case .int32, .int64: return ["integer"]
        case .double: return ["number", "integer"]
        case .string: return ["string"]
        }
    }
}

/// A parsed typed-skill signature: `RETURN NAME(TYPE NAME, ...)`.
struct TypedSignature: Equatable, Sendable {
    struct Parameter: Equatable, Sendable {
        let name: String
        let type: CType
    }

    let returnType: CType
    let name: String
    /// The arguments, in order (what the schema lists).
    let parameters: [Parameter]
    /// Since ABI 1.2: the signature ends with `error NAME`, so the function takes a `skill_error *` after the
    /// arguments and may report a failure through it.
    var reportsErrors = false

    /// Parses a signature, or throws a sentence saying what is wrong.
    static func parse(_ text: String) throws(SignatureError) -> TypedSignature {
        var scanner = SignatureScanner(text)
        let returnName = try scanner.identifier(what: "a return type")
        guard let returnType = CType(rawValue: returnName) else { throw .unknownType(returnName) }
        let name = try scanner.identifier(what: "the function name")
        try scanner.expect("(")
        var parameters: [Parameter] = []
        var reportsErrors = false
        if scanner.peek(")") {
            try scanner.expect(")")
        } else {
            repeat {
                let typeName = try scanner.identifier(what: "a parameter type")
                if typeName == "void", parameters.isEmpty, scanner.peek(")") { break }
                if typeName == "error" {
                    let errorName = try scanner.identifier(what: "a parameter name after error")
                    guard !parameters.contains(where: { $0.name == errorName }) else {
                        throw .duplicateParameter(errorName)
                    }
                    guard !scanner.atEnd else { throw .expected("')'", found: "the end") }
                    guard scanner.peek(")") else { throw .errorNotLast(errorName) }
                    reportsErrors = true
                    break
                }
                guard let type = CType(rawValue: typeName) else { throw .unknownType(typeName) }
                guard type != .void else { throw .voidParameter }
                let parameterName = try scanner.identifier(what: "a parameter name after \(typeName)")
                guard !parameters.contains(where: { $0.name == parameterName }) else {
                    throw .duplicateParameter(parameterName)
                }
                parameters.append(Parameter(name: parameterName, type: type))
            } while scanner.skip(",")
            try scanner.expect(")")
        }
        guard scanner.atEnd else { throw .trailingText(scanner.rest) }
        guard parameters.count <= 16 else { throw .tooManyParameters(parameters.count) }
        return TypedSignature(
            returnType: returnType, name: name, parameters: parameters, reportsErrors: reportsErrors)
    }

    /// The JSON Schema generated from the parameters: every parameter a required property, nothing else allowed.
    var generatedSchema: JSONValue {
        let properties = JSONObject(parameters.map { (key: $0.name, value: $0.type.schema) })
        return [
            "type": "object",
            "properties": .object(properties),
            "required": .array(parameters.map { .string($0.name) }),
            "additionalProperties": false,
        ]
    }

    /// Problems that make a declared schema disagree with this signature (empty when it agrees).
    func disagreements(with declared: JSONValue) -> [String] {
        var problems: [String] = []
        let properties = declared["properties"]?.objectValue ?? JSONObject()
        let required = Set((declared["required"]?.arrayValue ?? []).compactMap(\.stringValue))
        for parameter in parameters {
            guard let property = properties[parameter.name] else {
                problems.append("parameter \"\(parameter.name)\" is missing from the declared properties")
                continue
            }
            var types: [String] = []
            switch property["type"] {
            case .string(let t)?: types = [t]
            case .array(let list)?: types = list.compactMap(\.stringValue)
            default: break
            }
            if types.isEmpty || !Set(types).isSubset(of: parameter.type.compatibleSchemaTypes) {
                let declaredType = types.isEmpty ? "no type" : "type \"\(types.joined(separator: "\", \""))\""
                problems.append(
                    "property \"\(parameter.name)\" has \(declaredType) but the parameter is \(parameter.type.rawValue)"
                )
            }
            if !required.contains(parameter.name) {
                problems.append("parameter \"\(parameter.name)\" must be listed in \"required\"")
            }
        }
        for key in properties.keys where !parameters.contains(where: { $0.name == key }) {
            problems.append("property \"\(key)\" is not a parameter of the signature")
        }
        return problems
    }
}

/// Why a signature does not parse.
enum SignatureError: Error, Equatable, CustomStringConvertible {
    case expected(String, found: String)
    case unknownType(String)
    case voidParameter
    case duplicateParameter(String)
    case trailingText(String)
    case tooManyParameters(Int)
    case errorNotLast(String)

    var description: String {
        switch self {
        case .expected(let what, let found): return "expected \(what), found \(found)"
        case .unknownType(let name):
            return "unknown type \"\(name)\" (use bool, int32, int64, double or string; void only as a return type; "
                + "error only as the last parameter)"
        case .voidParameter: return "a parameter cannot be void"
        case .duplicateParameter(let name): return "parameter name \"\(name)\" appears twice"
        case .trailingText(let rest): return "unexpected text after ')': \"\(rest)\""
        case .tooManyParameters(let count): return "\(count) parameters; at most 16 are supported"
        case .errorNotLast(let name):
            return "the error parameter \"\(name)\" must be the last one (the function reports through it after "
                + "reading its arguments)"
        }
    }
}

/// Tokenizer for signatures: identifiers and single-character punctuation, whitespace ignored.
struct SignatureScanner {
    let characters: [Character]
    var position = 0

    init(_ text: String) { characters = Array(text) }

    var atEnd: Bool {
        mutating get {
            skipSpaces()
            return position == characters.count
        }
    }

    var rest: String { String(characters[position...]) }

    mutating func skipSpaces() {
        while position < characters.count, characters[position].isWhitespace { position += 1 }
    }

    mutating func peek(_ punctuation: Character) -> Bool {
        skipSpaces()
        return position < characters.count && characters[position] == punctuation
    }

    mutating func skip(_ punctuation: Character) -> Bool {
        guard peek(punctuation) else { return false }
        position += 1
        return true
    }

    mutating func expect(_ punctuation: Character) throws(SignatureError) {
        guard skip(punctuation) else { throw .expected("'\(punctuation)'", found: describeCurrent()) }
    }

    mutating func identifier(what: String) throws(SignatureError) -> String {
        skipSpaces()
        let start = position
        while position < characters.count,
            characters[position] == "_"
                || characters[position].isASCII
                    && (characters[position].isLetter || (position > start && characters[position].isNumber))
        {
            position += 1
        }
        guard position > start else { throw .expected(what, found: describeCurrent()) }
        return String(characters[start..<position])
    }

    func describeCurrent() -> String {
        position < characters.count ? "'\(characters[position])' at \(position + 1)" : "the end"
    }
}
