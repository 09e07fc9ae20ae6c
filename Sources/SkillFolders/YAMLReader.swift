import CYAML
import SkillJSON

/// A YAML value as a skill's front matter holds it: every scalar is text (no implicit typing — `version: 1.0` is the
/// text "1.0", as the reference validator reads it), mappings keep their order.
package indirect enum YAMLValue: Sendable, Equatable {
    case text(String)
    case list([YAMLValue])
    case map([(key: String, value: YAMLValue)])

    package static func == (lhs: YAMLValue, rhs: YAMLValue) -> Bool {
        switch (lhs, rhs) {
        case (.text(let a), .text(let b)): return a == b
        case (.list(let a), .list(let b)): return a == b
        case (.map(let a), .map(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        default: return false
        }
    }

    package var text: String? {
        if case .text(let text) = self { return text }
        return nil
    }

    package subscript(key: String) -> YAMLValue? {
        guard case .map(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }
}

/// Why a front matter could not be read — a phrase that follows "the front matter" ("uses an alias…") — with the line
/// (1-based, within the front matter) where it was found.
package struct YAMLProblem: Error, Sendable, Equatable {
    package let message: String
    package let line: Int
}

/// Reads YAML with libyaml's event parser, bounded: nesting depth, number of values, and no anchors or aliases (the
/// way a few bytes expand into billions — a "YAML bomb"), no explicit tags, no duplicate keys. `strict` also refuses
/// flow style (`{…}`, `[…]`), as the reference validator does.
package enum YAMLReader {
    /// Deepest nesting accepted.
    package static let maximumDepth = 16
    /// Most values (scalars, lists, maps) in one document.
    package static let maximumValues = 4096

    package static func read(_ text: String, strict: Bool) -> Result<YAMLValue?, YAMLProblem> {
        var parser = yaml_parser_t()
        guard yaml_parser_initialize(&parser) == 1 else {
            return .failure(
                YAMLProblem(message: "could not be read: the YAML parser could not start (out of memory)", line: 1))
        }
        defer { yaml_parser_delete(&parser) }
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBufferPointer { buffer -> Result<YAMLValue?, YAMLProblem> in
            yaml_parser_set_input_string(&parser, buffer.baseAddress, buffer.count)
            var builder = Builder(strict: strict)
            while true {
                var event = yaml_event_t()
                guard yaml_parser_parse(&parser, &event) == 1 else {
                    let reason =
                        "is not valid YAML (" + (parser.problem.map { String(cString: $0) } ?? "unreadable") + ")"
                    return .failure(YAMLProblem(message: reason, line: Int(parser.problem_mark.line) + 1))
                }
                defer { yaml_event_delete(&event) }
                if event.type == YAML_STREAM_END_EVENT { return .success(builder.document) }
                if let problem = builder.take(event) { return .failure(problem) }
                if builder.finishedDocuments > 1 {
                    return .failure(
                        YAMLProblem(
                            message: "holds more than one YAML document", line: Int(event.start_mark.line) + 1))
                }
            }
        }
    }

    /// Builds values from events, keeping the bounds.
    private struct Builder {
        let strict: Bool
        /// An open list or map: its items or members so far (grown in place — rebuilding an enum's payload per
        /// item made 2,040 keys cost a third of a second), a map's keys for the duplicate check, its pending key.
        struct Frame {
            var isMap: Bool
            var items: [YAMLValue] = []
            var members: [(key: String, value: YAMLValue)] = []
            var keys: Set<String> = []
            var key: String?

            var value: YAMLValue { isMap ? .map(members) : .list(items) }
        }

        /// Open lists and maps, innermost last.
        var stack: [Frame] = []
        var document: YAMLValue?
        var values = 0
        var finishedDocuments = 0

        init(strict: Bool) { self.strict = strict }

        mutating func take(_ event: yaml_event_t) -> YAMLProblem? {
            let line = Int(event.start_mark.line) + 1
            switch event.type {
            case YAML_ALIAS_EVENT:
                return YAMLProblem(
                    message: "uses an alias (*name); anchors and aliases are not allowed in a skill's front matter",
                    line: line)
            case YAML_SCALAR_EVENT:
                let scalar = event.data.scalar
                if let problem = check(
                    anchor: scalar.anchor, tag: scalar.tag,
                    implicit: scalar.plain_implicit == 1
                        || scalar.quoted_implicit == 1, line: line)
                {
                    return problem
                }
                let text =
                    scalar.value.map {
                        String(decoding: UnsafeBufferPointer(start: $0, count: scalar.length), as: UTF8.self)
                    } ?? ""
                return add(.text(text), line: line)
            case YAML_SEQUENCE_START_EVENT:
                let start = event.data.sequence_start
                if let problem = check(anchor: start.anchor, tag: start.tag, implicit: start.implicit == 1, line: line)
                {
                    return problem
                }
                if strict, start.style == YAML_FLOW_SEQUENCE_STYLE {
                    return YAMLProblem(
                        message: "uses flow style ([…]); write the list one \"- item\" per line", line: line)
                }
                return open(isMap: false, line: line)
            case YAML_MAPPING_START_EVENT:
                let start = event.data.mapping_start
                if let problem = check(anchor: start.anchor, tag: start.tag, implicit: start.implicit == 1, line: line)
                {
                    return problem
                }
                if strict, start.style == YAML_FLOW_MAPPING_STYLE {
                    return YAMLProblem(
                        message: "uses flow style ({…}); write the mapping one \"key: value\" per line", line: line)
                }
                return open(isMap: true, line: line)
            case YAML_SEQUENCE_END_EVENT, YAML_MAPPING_END_EVENT:
                guard let closed = stack.popLast() else { return nil }
                return attach(closed.value, line: line)
            case YAML_DOCUMENT_END_EVENT:
                finishedDocuments += 1
                return nil
            default:
                return nil
            }
        }

        func check(
            anchor: UnsafeMutablePointer<yaml_char_t>?, tag: UnsafeMutablePointer<yaml_char_t>?, implicit: Bool,
            line: Int
        ) -> YAMLProblem? {
            if let anchor {
                let name = String(cString: anchor)
                return YAMLProblem(
                    message: "sets an anchor (&\(name)); anchors and aliases are not allowed in a skill's front "
                        + "matter", line: line)
            }
            if let tag, !implicit {
                return YAMLProblem(
                    message: "uses an explicit tag (\(String(cString: tag))); write plain values", line: line)
            }
            return nil
        }

        mutating func open(isMap: Bool, line: Int) -> YAMLProblem? {
            values += 1
            guard values <= YAMLReader.maximumValues else {
                return YAMLProblem(message: "holds more than \(YAMLReader.maximumValues) values", line: line)
            }
            guard stack.count < YAMLReader.maximumDepth else {
                return YAMLProblem(message: "nests deeper than \(YAMLReader.maximumDepth) levels", line: line)
            }
            stack.append(Frame(isMap: isMap))
            return nil
        }

        mutating func add(_ value: YAMLValue, line: Int) -> YAMLProblem? {
            values += 1
            guard values <= YAMLReader.maximumValues else {
                return YAMLProblem(message: "holds more than \(YAMLReader.maximumValues) values", line: line)
            }
            return attach(value, line: line)
        }

        /// Puts a finished value into its parent (a list item, a map's key or value) or makes it the document.
        mutating func attach(_ value: YAMLValue, line: Int) -> YAMLProblem? {
            guard let top = stack.indices.last else {
                document = value
                return nil
            }
            guard stack[top].isMap else {
                stack[top].items.append(value)
                return nil
            }
            guard let key = stack[top].key else {
                guard case .text(let key) = value else {
                    return YAMLProblem(
                        message: "has a key that is not plain text (a list or mapping as a key)", line: line)
                }
                guard stack[top].keys.insert(key).inserted else {
                    return YAMLProblem(message: "has the key \"\(key)\" twice", line: line)
                }
                stack[top].key = key
                return nil
            }
            stack[top].members.append((key, value))
            stack[top].key = nil
            return nil
        }
    }
}

extension YAMLValue {
    /// The value as JSON: text as strings, lists as arrays, mappings as objects in their order (the front matter
    /// "rendered verbatim as a JSON object", as Skills Over MCP serves it).
    package var json: JSONValue {
        switch self {
        case .text(let text): return .string(text)
        case .list(let items): return .array(items.map(\.json))
        case .map(let members): return .object(JSONObject(members.map { (key: $0.key, value: $0.value.json) }))
        }
    }
}
