import Foundation
import SkillJSON

/// A composite skill as its file declares it (`NAME.skill.json`): a skill that chains others. Parsed and checked
/// once, at load; nothing in it depends on which skills are registered (that is the catalog's resolution).
///
/// ```json
/// {"id": "mark_all_read", "description": "…",
///  "input_schema": {"type": "object", "properties": {"folder": {"type": "string"}}, "required": ["folder"]},
///  "steps": [
///    {"call": "notes_search", "with": {"query": "${input.folder}"}, "as": "found"},
///    {"for_each": "${found}", "call": "notes_update", "with": {"id": "${item.id}", "read": true}},
///    {"result": {"updated": "${found.length}"}}]}
/// ```
struct CompositeDefinition: Sendable {
    let id: String
    let title: String
    let description: String
    let version: String
    let inputSchema: JSONValue
    let schema: JSONSchema
    /// The least risk it has whatever its steps are (`"risk"`); its steps can only raise it.
    let declaredRisk: SkillRisk
    let timeout: Duration?
    let steps: [Step]
    /// The steps as written, for `list --json` and `/skill`.
    let written: [JSONValue]

    /// One entry of `steps`.
    enum Step: Sendable {
        case call(Call)
        /// `{"result": …}`, the last entry: the composite's result.
        case result(CompositeTemplate)
    }

    struct Call: Sendable {
        let skill: String
        let arguments: CompositeTemplate
        /// `as`: the name later steps read its result by.
        let name: String?
        /// `for_each`: the array it runs over, once per element.
        let forEach: CompositeReference?
        /// Its arguments need nothing but the input, so they can be checked before anything runs.
        let needsOnlyInput: Bool
    }

    /// The skills its steps call, in order, each once.
    var calledSkills: [String] {
        var seen = Set<String>()
        return steps.compactMap {
            guard case .call(let call) = $0, seen.insert(call.skill).inserted else { return nil }
            return call.skill
        }
    }

    private static let topKeys = [
        "id", "title", "description", "version", "input_schema", "risk", "timeout_ms", "steps",
    ]
    private static let stepKeys = ["call", "with", "as", "for_each"]
    private static let reservedNames: Set<String> = ["input", "item", "index"]

    /// Parses and checks a file's bytes; every problem found is returned, each one sentence.
    static func parse(_ bytes: [UInt8]) -> Result<CompositeDefinition, CompositeErrors> {
        let document: JSONValue
        do { document = try JSONValue(parsing: bytes, maximumDepth: 64) } catch {
            return .failure(CompositeErrors([CompositeError("is not valid JSON: \(error.located(in: bytes))")]))
        }
        guard let object = document.objectValue else {
            return .failure(
                CompositeErrors([CompositeError("must be a JSON object with \"id\", \"description\" and \"steps\"")]))
        }
        var problems: [CompositeError] = []
        func problem(_ text: String) { problems.append(CompositeError(text)) }

        for key in object.keys where !topKeys.contains(key) {
            let hint = EditDistance.closest(to: key, among: topKeys).map { " (did you mean \"\($0)\"?)" } ?? ""
            problem("has an unknown key \"\(key)\"\(hint)")
        }
        let id = object["id"]?.stringValue ?? ""
        if !DescriptorValidator.isValidSkillID(id) {
            problem(
                object["id"] == nil
                    ? "has no \"id\"; give the skill an id of a-z, 0-9 and _ starting with a letter"
                    : "\"id\" \(object["id"]?.jsonText ?? "") is invalid; use a-z, 0-9 and _, starting with a letter "
                        + "(at most 64)")
        }
        let description = object["description"]?.stringValue ?? ""
        if description.isEmpty { problem("has no \"description\"; say what the skill does, for the model") }
        let title = object["title"]?.stringValue ?? id
        let version = object["version"]?.stringValue ?? "1.0.0"

        let inputSchema = object["input_schema"] ?? ["type": "object"]
        var schema: JSONSchema?
        if inputSchema["type"]?.stringValue != "object" {
            problem("\"input_schema\" must be an object schema (\"type\": \"object\")")
        } else {
            do { schema = try JSONSchema(inputSchema) } catch { problem("\"input_schema\" is invalid: \(error)") }
        }

        var declaredRisk = SkillRisk.readOnly
        if let risk = object["risk"] {
            if let name = risk.stringValue, let parsed = SkillRisk(rawValue: name) {
                declaredRisk = parsed
            } else {
                problem("\"risk\" must be \"read-only\", \"mutating\" or \"destructive\", not \(risk.jsonText)")
            }
        }
        var timeout: Duration?
        if let value = object["timeout_ms"] {
            if case .int(let ms) = value, (1...3_600_000).contains(ms) {
                timeout = .milliseconds(ms)
            } else {
                problem("\"timeout_ms\" must be a whole number of milliseconds from 1 to 3600000")
            }
        }

        let written = object["steps"]?.arrayValue ?? []
        if object["steps"]?.arrayValue == nil || written.isEmpty {
            problem("has no \"steps\"; list the calls it makes, e.g. [{\"call\": \"notes_search\", \"with\": {…}}]")
        } else if written.count > CompositeLimits.steps {
            problem("has \(written.count) steps; a composite skill has at most \(CompositeLimits.steps)")
        }
        var steps: [Step] = []
        var names = Set<String>()
        for (offset, entry) in written.prefix(CompositeLimits.steps).enumerated() {
            let place = "step \(offset + 1)"
            switch parseStep(entry, place: place, isLast: offset == written.count - 1, names: names, id: id) {
            case .success(let step):
                if case .call(let call) = step, let name = call.name { names.insert(name) }
                steps.append(step)
            case .failure(let errors): problems += errors.list
            }
        }
        guard problems.isEmpty, let schema else { return .failure(CompositeErrors(problems)) }
        return .success(
            CompositeDefinition(
                id: id, title: title, description: description, version: version, inputSchema: inputSchema,
                schema: schema, declaredRisk: declaredRisk, timeout: timeout, steps: steps, written: written))
    }

    private static func parseStep(
        _ entry: JSONValue, place: String, isLast: Bool, names: Set<String>, id: String
    ) -> Result<Step, CompositeErrors> {
        guard let object = entry.objectValue else {
            return .failure(
                CompositeErrors([CompositeError("\(place) must be an object with \"call\" (or \"result\")")]))
        }
        var problems: [CompositeError] = []
        func problem(_ text: String) { problems.append(CompositeError(text)) }
        /// References may name the input, earlier steps, and inside `for_each` the element and its position.
        func checkRoots(_ references: [CompositeReference], inLoop: Bool, what: String) {
            for reference in references {
                let root = reference.root
                if root == "input" || names.contains(root) { continue }
                if inLoop, root == "item" || root == "index" { continue }
                if root == "item" || root == "index" {
                    problem("\(place) \(what): \(reference.written) is only defined inside a \"for_each\" step")
                } else {
                    problem(
                        "\(place) \(what): \(reference.written) names \"\(root)\", which no earlier step defines "
                            + "with \"as\"")
                }
            }
        }

        if let result = object["result"] {
            if object.count > 1 { problem("\(place): a \"result\" step has no other keys") }
            if !isLast { problem("\(place): \"result\" must be the last step") }
            do throws(CompositeError) {
                let template = try CompositeTemplate(result, where: "\(place) \"result\"")
                checkRoots(template.references, inLoop: false, what: "\"result\"")
                return problems.isEmpty ? .success(.result(template)) : .failure(CompositeErrors(problems))
            } catch { return .failure(CompositeErrors(problems + [error])) }
        }
        for key in object.keys where !stepKeys.contains(key) {
            let hint = EditDistance.closest(to: key, among: stepKeys + ["result"]).map { " (did you mean \"\($0)\"?)" }
            problem("\(place) has an unknown key \"\(key)\"\(hint ?? "")")
        }
        let skill = object["call"]?.stringValue ?? ""
        if !DescriptorValidator.isValidSkillID(skill) {
            problem(
                object["call"] == nil
                    ? "\(place) has no \"call\"; name the skill it calls"
                    : "\(place): \"call\" \(object["call"]?.jsonText ?? "") is not a skill id")
        } else if skill == id {
            problem("\(place) calls \(id) itself; a composite skill cannot call itself (a cycle: \(id) → \(id))")
        }
        var name: String?
        if let value = object["as"] {
            if let text = value.stringValue, isValidName(text), !reservedNames.contains(text) {
                if names.contains(text) { problem("\(place): \"as\": \"\(text)\" is already used by an earlier step") }
                name = text
            } else {
                problem(
                    "\(place): \"as\" must be a name of a-z, 0-9 and _ other than input, item and index, not "
                        + value.jsonText)
            }
        }
        var forEach: CompositeReference?
        if let value = object["for_each"] {
            do throws(CompositeError) {
                guard case .reference(let reference) = try CompositeTemplate(value, where: "\(place) \"for_each\"")
                else {
                    throw CompositeError(
                        "\(place): \"for_each\" must be one reference to an array, like \"${found}\", not "
                            + value.jsonText)
                }
                checkRoots([reference], inLoop: false, what: "\"for_each\"")
                forEach = reference
            } catch { problem(error.description) }
        }
        let with = object["with"] ?? .object(JSONObject())
        var arguments: CompositeTemplate = .literal(with)
        if with.objectValue == nil {
            problem("\(place): \"with\" must be an object of the arguments, not \(with.jsonText)")
        } else {
            do throws(CompositeError) {
                arguments = try CompositeTemplate(with, where: "\(place) \"with\"")
                checkRoots(arguments.references, inLoop: forEach != nil, what: "\"with\"")
            } catch { problem(error.description) }
        }
        guard problems.isEmpty else { return .failure(CompositeErrors(problems)) }
        return .success(
            .call(
                Call(
                    skill: skill, arguments: arguments, name: name, forEach: forEach,
                    needsOnlyInput: forEach == nil && arguments.references.allSatisfy { $0.root == "input" })))
    }

    /// `[a-z_][a-z0-9_]{0,63}`: a root of a reference or an `as` name.
    static func isValidName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard let first = bytes.first, (0x61...0x7A).contains(first) || first == 0x5F, bytes.count <= 64 else {
            return false
        }
        return bytes.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x5F }
    }

    /// One line per step, for people: `1. notes_search(query: ${input.folder}) → found`.
    var planLines: [String] {
        written.enumerated().map { offset, step in "\(offset + 1). " + Self.planLine(step) }
    }

    static func planLine(_ step: JSONValue) -> String {
        if let result = step["result"] { return "result: \(result.jsonText)" }
        let arguments = (step["with"]?.objectValue?.members ?? []).map { "\($0.key): \(planValue($0.value))" }
        var line = "\(step["call"]?.stringValue ?? "?")(\(arguments.joined(separator: ", ")))"
        if let each = step["for_each"]?.stringValue { line = "for each in \(each): " + line }
        if let name = step["as"]?.stringValue { line += " → \(name)" }
        return line
    }

    private static func planValue(_ value: JSONValue) -> String {
        if case .string(let text) = value, text.hasPrefix("${"), text.hasSuffix("}") { return text }
        return value.jsonText
    }
}
