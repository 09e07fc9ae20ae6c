import SkillJSON
import SkillSDK

/// Checks a plugin's descriptors against ABI v1 and compiles what the host needs to call its skills.
/// Collects every problem it can find, so `skillhost check` can show them all at once.
enum DescriptorValidator {
    struct Validated {
        let name: String
        let version: String
        let description: String
        let skills: [ValidatedSkill]
        /// `SKILL_CAP_*` bits (since 1.1; for a v1.0 plugin: network when a skill is open-world).
        let capabilities: PluginCapabilities
        /// Extra readable folders (since 1.1), as declared ("~/models").
        let readPaths: [String]
        /// `snapshot` (since 1.1), if the plugin has one.
        let snapshot: RawFunction<PluginSnapshot.Function>?
        /// Its views (since 1.4), which its skills name.
        var views: [SkillView] = []
    }

    /// The sizes of the v1.0 structs on LP64 (x86_64, aarch64), written as literals on purpose: a plugin built
    /// against v1.0 must keep loading when later minor versions add fields, so the minimum is never `sizeof` of
    /// today's struct. `HeaderTests` checks them against a frozen copy of the v1.0 header.
    static let minimumPluginSize = 72
    static let minimumDescriptorSize = 80
    static let maximumSkills: UInt32 = 4096

    /// Whether a struct of `size` bytes (its `struct_size`) has the field at `offset` of `length` bytes: fields a
    /// later minor version added are read only when the plugin's struct is that long.
    static func has(_ size: UInt32, _ offset: Int?, _ length: Int = 8) -> Bool {
        guard let offset else { return false }
        return Int(size) >= offset + length
    }

    static let maximumReadPaths = 64

    /// Validates the record at `pointer`, in this process.
    static func validate(_ pointer: UnsafePointer<skill_plugin>) -> Result<Validated, ProblemList> {
        validate(RawPlugin(reading: pointer), worker: nil)
    }

    /// Validates a plugin record; `worker` runs the skills whose functions are in a worker's process.
    // swiftlint:disable:next function_body_length cyclomatic_complexity
    static func validate(_ plugin: RawPlugin, worker: IsolatedPlugin?) -> Result<Validated, ProblemList> {
        // struct_size and the ABI fields sit in the first 8 bytes, which every version has.
        guard Int(plugin.structSize) >= minimumPluginSize else {
            return .failure(
                ProblemList([
                    .structTooSmall(
                        structName: "skill_plugin", size: Int(plugin.structSize), minimum: minimumPluginSize)
                ]))
        }
        guard plugin.abiMajor == SKILL_ABI_MAJOR, let body = plugin.body else {
            return .failure(ProblemList([.abiMajorMismatch(plugin: Int(plugin.abiMajor), host: Int(SKILL_ABI_MAJOR))]))
        }
        var problems: [PluginProblem] = []
        if plugin.abiMinor > SKILL_ABI_MINOR {
            problems.append(.abiMinorTooNew(plugin: Int(plugin.abiMinor), host: Int(SKILL_ABI_MINOR)))
        }
        let name = body.name
        if let name, isValidPluginName(name) {
        } else {
            problems.append(.invalidPluginName(name))
        }
        let version = body.version ?? ""
        if version.isEmpty { problems.append(.missingVersion) }

        var skills: [ValidatedSkill] = []
        if body.skillCount == 0 || !body.hasSkills {
            problems.append(.noSkills)
        } else if body.skillCount > maximumSkills {
            problems.append(.other("declares \(body.skillCount) skills; at most \(maximumSkills) are supported"))
        } else {
            let stride = body.descriptors.first?.structSize ?? 0
            var seen: Set<String> = []
            for (index, descriptor) in body.descriptors.enumerated() {
                if index > 0, descriptor.structSize != stride {
                    problems.append(
                        .skill(
                            index: index, id: nil,
                            reason: "struct_size \(descriptor.structSize) differs from the first descriptor's "
                                + "\(stride); build every descriptor with the same header"))
                    continue
                }
                switch validateSkill(descriptor, index: index, freeString: body.freeString, worker: worker) {
                case .success(let skill):
                    if !seen.insert(skill.id).inserted {
                        problems.append(.duplicateSkillID(skill.id))
                    } else {
                        skills.append(skill)
                    }
                case .failure(let skillProblems): problems.append(contentsOf: skillProblems.problems)
                }
            }
        }
        // Since 1.1: capabilities and read paths.
        var capabilities = PluginCapabilities()
        var readPaths: [String] = []
        if let bits = body.capabilities {
            capabilities = PluginCapabilities(rawValue: bits)
            if !PluginCapabilities.known.isSuperset(of: capabilities) {
                problems.append(
                    .other(
                        "capabilities 0x\(String(bits, radix: 16)) contain unknown bits; use SKILL_CAP_NETWORK, "
                            + "SKILL_CAP_READ_FS, SKILL_CAP_WRITE_FS and SKILL_CAP_EXEC"))
            }
        } else if skills.contains(where: { $0.flags.contains(.openWorld) }) {
            capabilities = .network  // a v1.0 plugin that talks to the world
        }
        for (index, path) in (body.readPaths ?? []).enumerated() {
            guard index < maximumReadPaths else {
                problems.append(.other("read_paths lists more than \(maximumReadPaths) folders"))
                break
            }
            if path.hasPrefix("/") || path.hasPrefix("~/") || path == "~" {
                readPaths.append(path)
            } else {
                problems.append(
                    .other("read_paths[\(index)] \"\(path)\" is not absolute; use /… or ~/… (the user's home)"))
            }
        }
        // Since 1.4: the views, and every skill's view among them.
        let views = ViewValidator.validate(body, plugin: name ?? "")
        problems += views.problems
        if body.viewCount == nil, skills.contains(where: { $0.view != nil }) {
            problems.append(
                .other(
                    "its skills name views, but its skill_plugin record (struct_size \(plugin.structSize)) is too short "
                        + "to declare them; build it with skill_sdk.h 1.4 or later"))
        }
        for (index, skill) in skills.enumerated() {
            if let view = skill.view, !views.views.contains(where: { $0.name == view }) {
                problems.append(
                    .skill(
                        index: index, id: skill.id,
                        reason: "names view \"\(view.prefix(80))\", which the plugin does not declare in views"))
            }
        }
        guard problems.isEmpty, let name else { return .failure(ProblemList(problems)) }
        var validated = Validated(
            name: name, version: version, description: body.description ?? "",
            skills: skills, capabilities: capabilities, readPaths: readPaths, snapshot: body.snapshot)
        validated.views = views.views
        return .success(validated)
    }

    /// The v1.0 fields of a plugin record, read without touching a byte past them.
    static func v1_0Part(_ pointer: UnsafePointer<skill_plugin>) -> skill_plugin {
        var copy = skill_plugin()
        withUnsafeMutableBytes(of: &copy) { target in
            target.copyMemory(from: UnsafeRawBufferPointer(start: pointer, count: minimumPluginSize))
        }
        return copy
    }

    /// The v1.0 fields of a descriptor, likewise.
    static func v1_0Part(_ pointer: UnsafePointer<skill_descriptor>) -> skill_descriptor {
        var copy = skill_descriptor()
        withUnsafeMutableBytes(of: &copy) { target in
            target.copyMemory(from: UnsafeRawBufferPointer(start: pointer, count: minimumDescriptorSize))
        }
        return copy
    }

    // swiftlint:disable:next function_body_length cyclomatic_complexity
    static func validateSkill(
        _ raw: RawDescriptor, index: Int, freeString: RawPlugin.FreeString?, worker: IsolatedPlugin?
    ) -> Result<ValidatedSkill, ProblemList> {
        guard Int(raw.structSize) >= minimumDescriptorSize, let descriptor = raw.fields else {
            return .failure(
                ProblemList([
                    .structTooSmall(
                        structName: "skill_descriptor", size: Int(raw.structSize), minimum: minimumDescriptorSize)
                ]))
        }
        let id = descriptor.id
        var problems: [PluginProblem] = []
        func problem(_ reason: String) { problems.append(.skill(index: index, id: id, reason: reason)) }

        if let id {
            if !isValidSkillID(id) {
                problem("id is invalid; use a lowercase letter followed by up to 63 of a-z, 0-9 and _")
            }
        } else {
            problem("id is missing; set skill_descriptor.id")
        }
        let description = descriptor.description ?? ""
        if description.isEmpty {
            problem("description is missing; the model needs it to decide when to call the skill")
        }
        let risk = SkillRisk(code: descriptor.risk)
        if risk == nil {
            problem("risk \(descriptor.risk) is unknown; use SKILL_RISK_READ_ONLY, _MUTATING or _DESTRUCTIVE")
        }
        let flags = SkillFlags(rawValue: descriptor.flags)
        if !SkillFlags.known.isSuperset(of: flags) {
            problem(
                "flags 0x\(String(descriptor.flags, radix: 16)) contain unknown bits; use SKILL_IDEMPOTENT, "
                    + "SKILL_OPEN_WORLD and SKILL_SERIAL")
        }

        // The declared schema, if any.
        var declared: JSONValue?
        if let text = descriptor.inputSchema {
            do {
                let parsed = try JSONValue(parsing: text)
                if parsed["type"] != .string("object") {
                    problem("input schema must be an object schema (\"type\": \"object\")")
                } else {
                    declared = parsed
                }
            } catch {
                problem("input schema is not valid JSON: \(error)")
            }
        }

        var implementation: Skill.Implementation?
        var schemaDocument = declared
        var kind = SkillKind.json
        var generatedOutput: JSONValue?
        switch (descriptor.invoke, descriptor.signature) {
        case (.some, .some):
            problem("sets both invoke and signature; a skill is either a JSON skill or a typed skill")
        case (.some(let invoke), nil):
            if descriptor.inputSchema == nil {
                problem("JSON skill has no input_schema; describe its arguments as a JSON Schema object")
            }
            switch invoke {
            case .address(let function): implementation = .json(function)
            case .inWorker: implementation = worker.map { .remote($0) }
            }
        case (nil, .some(let text)):
            kind = .typed(signature: text)
            do {
                let signature = try TypedSignature.parse(text)
                // A typed skill's result is its return type: its result schema follows from the signature.
                generatedOutput = signature.returnType == .void ? ["type": "null"] : signature.returnType.schema
                if let declared {
                    for disagreement in signature.disagreements(with: declared) {
                        problem("declared input schema disagrees with the signature: \(disagreement)")
                    }
                } else {
                    schemaDocument = signature.generatedSchema
                }
                switch descriptor.function {
                case .address(let function)?:
                    do {
                        implementation = .typed(
                            try TypedFunction(signature: signature, function: function, freeString: freeString))
                    } catch {
                        problem(error.description)
                    }
                case .inWorker?: implementation = worker.map { .remote($0) }
                case nil:
                    problem("typed skill has a signature but no function pointer")
                }
            } catch {
                problem("signature \"\(text)\" is invalid: \(error)")
            }
        case (nil, nil):
            problem(
                "JSON skill without invoke: set invoke, or make it a typed skill with signature and function")
        }

        var schema: JSONSchema?
        if let schemaDocument {
            do { schema = try JSONSchema(schemaDocument) } catch { problem("input schema is invalid: \(error)") }
        }
        // Since 1.1: the result's schema.
        var output: (document: JSONValue, schema: JSONSchema?)?
        if let text = descriptor.outputSchema {
            do {
                let document = try JSONValue(parsing: text)
                output = (document, try JSONSchema(document))
            } catch {
                problem("output schema is invalid: \(error)")
            }
        }
        // A result schema that follows from the signature is only described, never checked: the typed call's
        // conversion makes exactly the return type (an int32 in range, a finite double), so a check finds nothing.
        if output == nil, let generatedOutput { output = (generatedOutput, nil) }
        // Since 1.3: how a result reads as a sentence.
        var answer: AnswerTemplate?
        if let text = descriptor.answer {
            do { answer = try AnswerTemplate(text) } catch { problem(error.description) }
        }
        // Since 1.4: who may call it (0: both).
        let audienceBits = descriptor.audience ?? 0
        if audienceBits & ~UInt32(3) != 0 {
            problem(
                "audience 0x\(String(audienceBits, radix: 16)) contains unknown bits; use SKILL_AUDIENCE_MODEL and "
                    + "SKILL_AUDIENCE_VIEW (0: both)")
        }
        guard problems.isEmpty, let id, let risk, let schema, let implementation else {
            return .failure(ProblemList(problems))
        }
        let title = descriptor.title ?? ""
        var validated = ValidatedSkill(
            id: id, title: title.isEmpty ? id : title, description: description, risk: risk, flags: flags,
            timeout: descriptor.timeoutMilliseconds == 0 ? nil : .milliseconds(Int(descriptor.timeoutMilliseconds)),
            schema: schema,
            schemaIsGenerated: declared == nil, kind: kind, implementation: implementation,
            outputSchema: output?.document, output: output?.schema ?? nil, answer: answer)
        validated.view = descriptor.view
        validated.audience = audienceBits == 0 ? [.model, .view] : SkillAudience(rawValue: audienceBits)
        return .success(validated)
    }

    /// `[a-z0-9_-]{1,48}`
    /// Names skillhost's own sources use (its skill folders' tools, its browser window's): a plugin of the same
    /// name would be taken for them (a view's reach and a folder's view are decided by the source's name).
    static let reservedPluginNames: Set<String> = ["skills", "ui"]

    static func isValidPluginName(_ name: String) -> Bool {
        guard !reservedPluginNames.contains(name) else { return false }
        let bytes = Array(name.utf8)
        return (1...48).contains(bytes.count)
            && bytes.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x5F || $0 == 0x2D }
    }

    /// `^[a-z][a-z0-9_]{0,63}$`
    static func isValidSkillID(_ id: String) -> Bool {
        let bytes = Array(id.utf8)
        guard let first = bytes.first, (0x61...0x7A).contains(first), bytes.count <= 64 else { return false }
        return bytes.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x5F }
    }
}
