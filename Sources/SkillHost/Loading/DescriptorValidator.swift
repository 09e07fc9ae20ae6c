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
        let snapshot: PluginSnapshot.Function?
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

    static func validate(_ pointer: UnsafePointer<skill_plugin>) -> Result<Validated, ProblemList> {
        // Only the v1.0 part is copied (72 bytes); a v1.0 plugin's struct ends there, and fields added since are
        // read one by one below, when `struct_size` says they exist.
        let plugin = Self.v1_0Part(pointer)
        // struct_size and the ABI fields sit in the first 8 bytes, which every version has.
        guard Int(plugin.struct_size) >= minimumPluginSize else {
            return .failure(
                ProblemList([
                    .structTooSmall(
                        structName: "skill_plugin", size: Int(plugin.struct_size), minimum: minimumPluginSize)
                ]))
        }
        guard plugin.abi_major == SKILL_ABI_MAJOR else {
            return .failure(ProblemList([.abiMajorMismatch(plugin: Int(plugin.abi_major), host: Int(SKILL_ABI_MAJOR))]))
        }
        var problems: [PluginProblem] = []
        if plugin.abi_minor > SKILL_ABI_MINOR {
            problems.append(.abiMinorTooNew(plugin: Int(plugin.abi_minor), host: Int(SKILL_ABI_MINOR)))
        }
        let name = plugin.name.map { pluginString($0) }
        if let name, isValidPluginName(name) {
        } else {
            problems.append(.invalidPluginName(name))
        }
        let version = plugin.version.map { pluginString($0) } ?? ""
        if version.isEmpty { problems.append(.missingVersion) }

        var skills: [ValidatedSkill] = []
        if plugin.skill_count == 0 || plugin.skills == nil {
            problems.append(.noSkills)
        } else if plugin.skill_count > maximumSkills {
            problems.append(.other("declares \(plugin.skill_count) skills; at most \(maximumSkills) are supported"))
        } else if let descriptors = plugin.skills {
            // The array's stride is the size the plugin was compiled with (its first descriptor's struct_size),
            // not this host's sizeof: a v1.0 plugin's descriptors are 80 bytes apart.
            let stride = Int(UnsafeRawPointer(descriptors).load(as: UInt32.self))
            var seen: Set<String> = []
            for index in 0..<(stride >= minimumDescriptorSize ? Int(plugin.skill_count) : 1) {
                let descriptor = UnsafeRawPointer(descriptors).advanced(by: index * stride)
                    .assumingMemoryBound(to: skill_descriptor.self)
                let size = UnsafeRawPointer(descriptor).load(as: UInt32.self)
                if index > 0, Int(size) != stride {
                    problems.append(
                        .skill(
                            index: index, id: nil,
                            reason: "struct_size \(size) differs from the first descriptor's "
                                + "\(stride); build every descriptor with the same header"))
                    continue
                }
                switch validateSkill(descriptor, index: index, freeString: plugin.free_string) {
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
        let raw = UnsafeRawPointer(pointer)
        if has(plugin.struct_size, MemoryLayout<skill_plugin>.offset(of: \.capabilities), 4) {
            let bits = raw.load(
                fromByteOffset: MemoryLayout<skill_plugin>.offset(of: \.capabilities) ?? 0, as: UInt32.self)
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
        if has(plugin.struct_size, MemoryLayout<skill_plugin>.offset(of: \.read_paths)),
            let list = raw.load(
                fromByteOffset: MemoryLayout<skill_plugin>.offset(of: \.read_paths) ?? 0,
                as: UnsafePointer<UnsafePointer<CChar>?>?.self)
        {
            var index = 0
            while let entry = list[index] {
                guard index < maximumReadPaths else {
                    problems.append(.other("read_paths lists more than \(maximumReadPaths) folders"))
                    break
                }
                let path = pluginString(entry)
                if path.hasPrefix("/") || path.hasPrefix("~/") || path == "~" {
                    readPaths.append(path)
                } else {
                    problems.append(
                        .other("read_paths[\(index)] \"\(path)\" is not absolute; use /… or ~/… (the user's home)"))
                }
                index += 1
            }
        }
        var snapshot: PluginSnapshot.Function?
        if has(plugin.struct_size, MemoryLayout<skill_plugin>.offset(of: \.snapshot)) {
            snapshot = raw.load(
                fromByteOffset: MemoryLayout<skill_plugin>.offset(of: \.snapshot) ?? 0,
                as: PluginSnapshot.Function?.self)
        }
        guard problems.isEmpty, let name else { return .failure(ProblemList(problems)) }
        return .success(
            Validated(
                name: name, version: version, description: plugin.description.map { pluginString($0) } ?? "",
                skills: skills, capabilities: capabilities, readPaths: readPaths, snapshot: snapshot))
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
        _ pointer: UnsafePointer<skill_descriptor>, index: Int,
        freeString: (@convention(c) (UnsafeMutablePointer<CChar>?) -> Void)?
    ) -> Result<ValidatedSkill, ProblemList> {
        let descriptor = Self.v1_0Part(pointer)
        guard Int(descriptor.struct_size) >= minimumDescriptorSize else {
            return .failure(
                ProblemList([
                    .structTooSmall(
                        structName: "skill_descriptor", size: Int(descriptor.struct_size),
                        minimum: minimumDescriptorSize)
                ]))
        }
        let id = descriptor.id.map { pluginString($0) }
        var problems: [PluginProblem] = []
        func problem(_ reason: String) { problems.append(.skill(index: index, id: id, reason: reason)) }

        if let id {
            if !isValidSkillID(id) {
                problem("id is invalid; use a lowercase letter followed by up to 63 of a-z, 0-9 and _")
            }
        } else {
            problem("id is missing; set skill_descriptor.id")
        }
        let description = descriptor.description.map { pluginString($0) } ?? ""
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
        if let text = descriptor.input_schema.map({ pluginString($0) }) {
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
        let signatureText = descriptor.signature.map { pluginString($0) }
        switch (descriptor.invoke, signatureText) {
        case (.some, .some):
            problem("sets both invoke and signature; a skill is either a JSON skill or a typed skill")
        case (.some(let invoke), nil):
            if descriptor.input_schema == nil {
                problem("JSON skill has no input_schema; describe its arguments as a JSON Schema object")
            }
            implementation = .json(invoke)
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
                if let function = descriptor.function {
                    do {
                        implementation = .typed(
                            try TypedFunction(signature: signature, function: function, freeString: freeString))
                    } catch {
                        problem(error.description)
                    }
                } else {
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
        if has(descriptor.struct_size, MemoryLayout<skill_descriptor>.offset(of: \.output_schema)),
            let text = UnsafeRawPointer(pointer).load(
                fromByteOffset: MemoryLayout<skill_descriptor>.offset(of: \.output_schema) ?? 0,
                as: UnsafePointer<CChar>?.self)
        {
            do {
                let document = try JSONValue(parsing: pluginString(text))
                output = (document, try JSONSchema(document))
            } catch {
                problem("output schema is invalid: \(error)")
            }
        }
        // A result schema that follows from the signature is only described, never checked: the typed call's
        // conversion makes exactly the return type (an int32 in range, a finite double), so a check finds nothing.
        if output == nil, let generatedOutput { output = (generatedOutput, nil) }
        guard problems.isEmpty, let id, let risk, let schema, let implementation else {
            return .failure(ProblemList(problems))
        }
        let title = descriptor.title.map { pluginString($0) } ?? ""
        return .success(
            ValidatedSkill(
                id: id, title: title.isEmpty ? id : title, description: description, risk: risk, flags: flags,
                timeout: descriptor.timeout_ms == 0 ? nil : .milliseconds(Int(descriptor.timeout_ms)), schema: schema,
                schemaIsGenerated: declared == nil, kind: kind, implementation: implementation,
                outputSchema: output?.document, output: output?.schema ?? nil))
    }

    /// `[a-z0-9_-]{1,48}`
    static func isValidPluginName(_ name: String) -> Bool {
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
