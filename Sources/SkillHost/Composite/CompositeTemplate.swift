import Foundation
import SkillJSON

/// A JSON value of a composite skill's file with its `${…}` references parsed once, at load, so a call only walks
/// it. The substitution language (README, "Composite skills"):
///
/// - `"${input.folder}"` — a string that is one reference becomes the referenced value with its type (an array
///   stays an array, `${found.length}` is a number);
/// - `"Done: ${found.length} notes"` — references inside other text are spliced in as text (strings as they are,
///   anything else as JSON);
/// - roots: `input` (the composite's arguments), the `as` name of an earlier step (its result), and inside a
///   `for_each` step `item` (the element) and `index` (its position, from 0);
/// - a path of `.name` members and `.0` positions, or a JSON Pointer (`${found/0/title}`, RFC 6901 with `~0`, `~1`);
///   `.length` of an array, object or string is its count unless an object has a member of that name;
/// - `$${` is a literal `${`.
indirect enum CompositeTemplate: Sendable {
    /// Nothing to substitute.
    case literal(JSONValue)
    /// A string that is one reference: the referenced value.
    case reference(CompositeReference)
    /// Text with references spliced in.
    case text([TextPart])
    case array([CompositeTemplate])
    case object([(key: String, value: CompositeTemplate)])

    enum TextPart: Sendable {
        case literal(String)
        case reference(CompositeReference)
    }

    /// Parses the references in `value`; `where` names the place for error sentences (`step 2 "with"`).
    init(_ value: JSONValue, where place: String) throws(CompositeError) {
        switch value {
        case .string(let text):
            self = try Self.parseText(text, where: place)
        case .array(let elements):
            var templates: [CompositeTemplate] = []
            templates.reserveCapacity(elements.count)
            for element in elements { templates.append(try CompositeTemplate(element, where: place)) }
            self = templates.allSatisfy(\.isLiteral) ? .literal(value) : .array(templates)
        case .object(let object):
            var members: [(key: String, value: CompositeTemplate)] = []
            members.reserveCapacity(object.count)
            for member in object.members {
                members.append((member.key, try CompositeTemplate(member.value, where: place)))
            }
            self = members.allSatisfy(\.value.isLiteral) ? .literal(value) : .object(members)
        default:
            self = .literal(value)
        }
    }

    var isLiteral: Bool {
        if case .literal = self { return true }
        return false
    }

    /// Every reference, in order.
    var references: [CompositeReference] {
        switch self {
        case .literal: return []
        case .reference(let reference): return [reference]
        case .text(let parts):
            return parts.compactMap {
                if case .reference(let reference) = $0 { return reference }
                return nil
            }
        case .array(let elements): return elements.flatMap(\.references)
        case .object(let members): return members.flatMap(\.value.references)
        }
    }

    /// The value with every reference replaced.
    func evaluate(in scope: CompositeScope) throws(CompositeError) -> JSONValue {
        switch self {
        case .literal(let value): return value
        case .reference(let reference): return try reference.resolve(in: scope)
        case .text(let parts):
            var text = ""
            for part in parts {
                switch part {
                case .literal(let literal): text += literal
                case .reference(let reference):
                    let value = try reference.resolve(in: scope)
                    if case .string(let string) = value { text += string } else { text += value.jsonText }
                }
                guard text.utf8.count <= CompositeLimits.textBytes else {
                    throw CompositeError(
                        "a text built from references is over \(byteCount(CompositeLimits.textBytes)) (\(reference(in: parts)))"
                    )
                }
            }
            return .string(text)
        case .array(let elements):
            var values: [JSONValue] = []
            values.reserveCapacity(elements.count)
            for element in elements { values.append(try element.evaluate(in: scope)) }
            return .array(values)
        case .object(let members):
            var values: [(key: String, value: JSONValue)] = []
            values.reserveCapacity(members.count)
            for member in members { values.append((member.key, try member.value.evaluate(in: scope))) }
            return .object(JSONObject(values))
        }
    }

    private func reference(in parts: [TextPart]) -> String {
        parts.compactMap {
            if case .reference(let reference) = $0 { return reference.written }
            return nil
        }.joined(separator: ", ")
    }

    // MARK: Parsing

    private static func parseText(_ text: String, where place: String) throws(CompositeError) -> CompositeTemplate {
        guard text.utf8.contains(UInt8(ascii: "$")) else { return .literal(.string(text)) }
        var parts: [TextPart] = []
        var literal = ""
        var rest = Substring(text)
        while let dollar = rest.firstIndex(of: "$") {
            literal += rest[..<dollar]
            let after = rest[rest.index(after: dollar)...]
            if after.hasPrefix("${") {
                // `$${` is a literal `${`.
                literal += "${"
                rest = after.dropFirst(2)
            } else if after.hasPrefix("{") {
                guard let close = after.firstIndex(of: "}") else {
                    throw CompositeError("\(place): \"\(text)\" has \"${\" without a closing \"}\"")
                }
                let body = String(after[after.index(after: after.startIndex)..<close])
                if !literal.isEmpty {
                    parts.append(.literal(literal))
                    literal = ""
                }
                parts.append(.reference(try CompositeReference(parsing: body, where: place)))
                rest = after[after.index(after: close)...]
            } else {
                literal += "$"
                rest = after
            }
        }
        literal += rest
        if !literal.isEmpty { parts.append(.literal(literal)) }
        if parts.count == 1, case .reference(let reference) = parts[0] { return .reference(reference) }
        if parts.allSatisfy({ if case .literal = $0 { return true } else { return false } }) {
            return .literal(.string(literal))
        }
        return .text(parts)
    }
}

/// `${found.0.title}`, `${found/0/title}`, `${input}`: a root and a path into its value.
struct CompositeReference: Sendable {
    /// `input`, `item`, `index` or an earlier step's `as` name.
    let root: String
    let path: [Segment]
    /// As written, for sentences: `${found.0.title}`.
    let written: String

    struct Segment: Sendable {
        let name: String
        /// From a JSON Pointer: always a member name or a position, never the `length` shorthand.
        let fromPointer: Bool
    }

    init(parsing body: String, where place: String) throws(CompositeError) {
        written = "${\(body)}"
        let trimmed = body.trimmingSpaces
        let rootEnd = trimmed.firstIndex { $0 == "." || $0 == "/" } ?? trimmed.endIndex
        root = String(trimmed[..<rootEnd])
        guard CompositeDefinition.isValidName(root) else {
            throw CompositeError(
                "\(place): \(written) does not start with a name (input, item, index, or an earlier step's \"as\")")
        }
        var segments: [Segment] = []
        let rest = trimmed[rootEnd...]
        if rest.hasPrefix("/") {
            for token in rest.dropFirst().split(separator: "/", omittingEmptySubsequences: false) {
                segments.append(
                    Segment(
                        name: token.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~"),
                        fromPointer: true))
            }
        } else if rest.hasPrefix(".") {
            for token in rest.dropFirst().split(separator: ".", omittingEmptySubsequences: false) {
                guard !token.isEmpty else { throw CompositeError("\(place): \(written) has an empty path segment") }
                segments.append(Segment(name: String(token), fromPointer: false))
            }
        }
        path = segments
    }

    /// The value it names in `scope`.
    func resolve(in scope: CompositeScope) throws(CompositeError) -> JSONValue {
        guard var value = scope.value(of: root) else {
            throw CompositeError("\(written) names \"\(root)\", which has no value here")
        }
        var walked = root
        for segment in path {
            switch value {
            case .object(let object):
                if let member = object[segment.name] {
                    value = member
                } else if segment.name == "length", !segment.fromPointer {
                    value = .int(Int64(object.count))
                } else {
                    throw CompositeError("\(written): \(walked) has no member \"\(segment.name)\"")
                }
            case .array(let elements):
                if let position = Int(segment.name), position >= 0 {
                    guard position < elements.count else {
                        throw CompositeError(
                            "\(written): \(walked) has \(elements.count) element\(elements.count == 1 ? "" : "s"), "
                                + "none at \(position)")
                    }
                    value = elements[position]
                } else if segment.name == "length", !segment.fromPointer {
                    value = .int(Int64(elements.count))
                } else {
                    throw CompositeError("\(written): \(walked) is an array; \"\(segment.name)\" is not a position")
                }
            case .string(let string) where segment.name == "length" && !segment.fromPointer:
                value = .int(Int64(string.count))
            default:
                throw CompositeError("\(written): \(walked) is \(value.typeName), which has no \"\(segment.name)\"")
            }
            walked += segment.fromPointer ? "/\(segment.name)" : ".\(segment.name)"
        }
        return value
    }
}

/// The values references see while a composite runs: its input, the results of earlier steps by `as` name, and
/// inside `for_each` the element and its position.
struct CompositeScope: Sendable {
    var input: JSONValue
    var bound: [String: JSONValue] = [:]
    var item: JSONValue?
    var index: Int?

    func value(of root: String) -> JSONValue? {
        switch root {
        case "input": return input
        case "item": return item
        case "index": return index.map { .int(Int64($0)) }
        default: return bound[root]
        }
    }
}

/// A sentence about a composite skill's file or run.
struct CompositeError: Error, Sendable, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Every problem found in a composite skill's file.
struct CompositeErrors: Error, Sendable {
    let list: [CompositeError]
    init(_ list: [CompositeError]) { self.list = list }
}

/// The bounds every composite lives within: files are written by strangers.
enum CompositeLimits {
    static let fileBytes = 1 << 20
    static let steps = 64
    /// Elements one `for_each` runs over.
    static let forEachItems = 1_000
    /// Skill calls one run of a composite makes, nested composites included.
    static let calls = 10_000
    /// Composites calling composites.
    static let depth = 8
    static let textBytes = 1 << 20
}

extension StringProtocol {
    fileprivate var trimmingSpaces: Substring {
        let s = Substring(self)
        guard let first = s.firstIndex(where: { $0 != " " }), let last = s.lastIndex(where: { $0 != " " }) else {
            return ""
        }
        return s[first...last]
    }
}
