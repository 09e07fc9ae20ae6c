import Foundation
import SkillJSON
import SkillSDK

/// The host's side of `skillhost-worker`, the worker written in C (`Sources/skillhost-worker/protocol.md`). It
/// reports the plugin's records and what each call did as they are; the host applies the ABI's rules to them here,
/// with the same code as to a plugin loaded into itself (`DescriptorValidator`, `Skill.outcome`, `PluginSnapshot`),
/// so both modes accept, refuse and word everything alike.
enum NativeWorker {
    typealias Failure = WorkerProcess.WorkerFailure

    /// Confines the worker (after its peek, when it peeks), asks what it opened, validates it and — when it
    /// passes — has the plugin's `init` run with its data folder (created here). A plugin that cannot load is a
    /// protocol failure whose message is its problems, one sentence a line. `worker` runs the skills. Blocks for at
    /// most `timeout`.
    static func load(
        _ process: WorkerProcess, for worker: IsolatedPlugin, confinement plan: NativeConfinement, file: String,
        timeout: Duration
    ) -> Result<WorkerProtocol.Description, Failure> {
        let start = ContinuousClock.now
        func left() -> Duration { max(timeout - (ContinuousClock.now - start), .milliseconds(1)) }
        let launch = plan.launch
        var declared = launch.declared
        var confinement: Confinement?
        // The worker runs the plugin's constructors before it answers the first request that opens it: `confine`
        // after a peek (whose child runs them too), else `describe`. Its answer is the plugin's records.
        process.loadPhase = .constructors
        let records: Result<JSONValue, Failure>
        let warn = { (text: String) in process.log(LogRecord(level: .warning, source: process.plugin, message: text)) }
        // The first request went with the launch (`opening(for:)`).
        if opening(for: plan) == "declaration" {
            switch process.answerToOpening(timeout: timeout) {
            case .failure(let failure): return .failure(failure)
            case .success(let answer): declared = PluginDeclaration(json: answer)
            }
            let (allowed, specification) = plan.lists(for: declared, warn: warn)
            confinement = allowed
            records = process.request("confine", specification, timeout: left())
        } else {
            confinement = plan.known?.confinement
            records = process.answerToOpening(timeout: left())
        }
        let validated: DescriptorValidator.Validated
        var report: ConfinementReport?
        switch records {
        case .failure(let failure): return .failure(failure)
        case .success(let answer):
            if let reason = answer["confine_failed"]?.stringValue { return .failure(refusal([.other(reason)])) }
            if let confinement {
                report = WorkerConfinement.report(
                    confinement, applied: Int(exactly: answer["applied"]) ?? 0,
                    maximumABI: launch.maximumLandlockABI ?? -1)
                if let report, let reason = WorkerConfinement.refusal(report, rules: launch.rules) {
                    return .failure(refusal([.other(reason)]))
                }
            }
            switch read(answer, worker: worker) {
            case .failure(let failure): return .failure(failure)
            case .success(let value): validated = value
            }
        }
        // Confined by what its peek declared, checked by what it declares now: a plugin that tells the two apart
        // (a constructor can) is refused before its init — its name, capabilities and folders are one declaration.
        if launch.confines, let declared,
            let reason = declared.mismatch(
                name: validated.name, capabilities: validated.capabilities, readPaths: validated.readPaths)
        {
            return .failure(refusal([.other(reason)]))
        }
        // A name another plugin's file holds: refused before its init, and its data folder is never made or given.
        if let other = launch.takenNames[validated.name] {
            return .failure(refusal([.duplicatePluginName(validated.name, otherFile: other)]))
        }
        let data = (launch.dataDirectory as NSString).appendingPathComponent(validated.name)
        do {
            _ = try PrivateFiles.directory(launch.dataDirectory)
            _ = try PrivateFiles.directory(data)
        } catch {
            return .failure(refusal([.other("cannot create its data folder \(data): \(error)")]))
        }
        process.loadPhase = .initialisation
        switch process.request("init", ["data_dir": .string(data)], timeout: left()) {
        case .failure(let failure): return .failure(failure)
        case .success(let answer):
            if let code = Int32(exactly: answer["init_failed"]) {
                return .failure(
                    refusal([.initFailed(code: code, message: answer["message"]?.stringValue ?? "")]))
            }
            if let problem = answer["problem"]?.stringValue { return .failure(refusal([.other(problem)])) }
        }
        var description = WorkerProtocol.Description(
            name: validated.name, version: validated.version, description: validated.description,
            keepsMapped: false,
            skills: validated.skills.map { skill in
                SkillInfo(
                    id: skill.id, title: skill.title, description: skill.description, plugin: validated.name,
                    pluginVersion: validated.version, file: file, risk: skill.risk, flags: skill.flags,
                    timeout: skill.timeout, inputSchema: skill.schema.document,
                    schemaIsGenerated: skill.schemaIsGenerated, kind: skill.kind, outputSchema: skill.outputSchema,
                    answer: skill.answer,
                    declares: PluginCapabilities.declared(validated.capabilities, readPaths: validated.readPaths),
                    view: validated.views.first { $0.name == skill.view }, audience: skill.audience)
            },
            capabilities: validated.capabilities, readPaths: validated.readPaths, confinement: report,
            hasSnapshot: validated.snapshot != nil)
        description.compiled = validated.skills.map { ($0.schema, $0.output) }
        description.declared = launch.confines ? declared : nil
        description.peeked = launch.confines && launch.declared == nil
        return .success(description)
    }

    /// The request a worker confined by `plan` is launched with (`WorkerProcess.spawn(opening:)`): what its peek
    /// learnt (`declaration`), or — confined at its start, or not at all — its records (`describe`).
    static func opening(for plan: NativeConfinement) -> String {
        plan.launch.confines && plan.launch.declared == nil ? "declaration" : "describe"
    }

    /// The worker's `describe` answer, validated.
    static func read(_ answer: JSONValue, worker: IsolatedPlugin?) -> Result<DescriptorValidator.Validated, Failure> {
        if let reason = answer["dlopen_failed"]?.stringValue { return .failure(refusal([.dlopenFailed(reason)])) }
        if answer["missing_entry"] != nil { return .failure(refusal([.missingEntry])) }
        if answer["entry_returned_null"] != nil { return .failure(refusal([.entryReturnedNull])) }
        guard let raw = RawPlugin(report: answer) else {
            return .failure(Failure(message: "its worker sent an unreadable answer to describe"))
        }
        return DescriptorValidator.validate(raw, worker: worker).mapError { refusal($0.problems) }
    }

    /// Problems as the worker's refusal to load: one sentence a line.
    private static func refusal(_ problems: [PluginProblem]) -> Failure {
        Failure(message: problems.map(\.description).joined(separator: "\n"), isProtocolError: true)
    }

    /// A call's outcome from the worker's `raw` report; nil when the answer is not one. An undo whose arguments are
    /// not a JSON object is dropped with a warning through `warn`, as in process.
    static func outcome(
        _ answer: JSONValue, skill: String, resultLimit: Int, warn: (String) -> Void
    ) -> SkillOutcome? {
        guard let raw = answer["raw"], let code = Int32(exactly: raw["code"]) else { return nil }
        var result: [UInt8]?
        if let text = raw["result"]?.stringValue {
            result = Array(text.utf8)
        } else if let hex = raw["result_hex"]?.stringValue {
            guard let bytes = [UInt8](hex: hex) else { return nil }
            result = bytes
        }
        var undo: UndoAction?
        if let action = raw["undo"], let target = action["skill"]?.stringValue,
            let text = action["arguments"]?.stringValue
        {
            undo = UndoAction(skill: skill, target: target, argumentText: text, warn: warn)
        }
        return Skill.outcome(
            skill: skill, code: code, result: result, oversized: Int(exactly: raw["oversized"]),
            error: raw["error"]?.stringValue, undo: undo, resultLimit: resultLimit)
    }

    /// A typed call's arguments converted to the signature's C types as the worker reads them (`typed` in
    /// protocol.md): `{"returns": code, "types": codes, "values": [...]}`, a double as its bits. Conversion fails
    /// as in process (`TypedFunction.store`), with the same sentences.
    static func typedArguments(_ signature: TypedSignature, _ arguments: JSONValue) -> Result<JSONValue, TypedCallError>
    {
        guard case .object(let object) = arguments else {
            return .failure(.argument("", ArgumentReason("expected object, got \(arguments.typeName)")))
        }
        var values: [JSONValue] = []
        for (index, parameter) in signature.parameters.enumerated() {
            guard let value = object.value(parameter.name, expectedAt: index) else {
                return .failure(.argument(parameter.name, ArgumentReason("is missing")))
            }
            var slot: UInt64 = 0
            let stored = withUnsafeMutableBytes(of: &slot) { bytes -> Result<Void, ArgumentReason> in
                guard let base = bytes.baseAddress else { return .failure(ArgumentReason("cannot be stored")) }
                return TypedFunction.store(value, as: parameter.type, into: base).map { free($0) }
            }
            if case .failure(let reason) = stored { return .failure(.argument(parameter.name, reason)) }
            switch parameter.type {
            case .string: values.append(value)
            case .bool: values.append(.int(Int64(slot & 0xFF)))
            case .int32: values.append(.int(Int64(Int32(truncatingIfNeeded: slot))))
            case .int64, .double, .void: values.append(.int(Int64(bitPattern: slot)))
            }
        }
        // A function that reports errors (ABI 1.2) takes the worker's `skill_error` after its arguments: `e`.
        let types = signature.parameters.map { code($0.type) }.joined() + (signature.reportsErrors ? "e" : "")
        if signature.reportsErrors { values.append(0) }
        let spec: JSONValue = [
            "returns": .string(code(signature.returnType)), "types": .string(types), "values": .array(values),
        ]
        return .success(spec)
    }

    private static func code(_ type: CType) -> String {
        switch type {
        case .void: return "v"
        case .bool: return "b"
        case .int32: return "i"
        case .int64: return "l"
        case .double: return "d"
        case .string: return "s"
        }
    }

    /// A typed call's outcome from the worker's `raw` report, converted as in process (`TypedFunction`); nil when
    /// the answer is not one.
    static func typedOutcome(_ answer: JSONValue, returns: CType, skill: String, resultLimit: Int) -> SkillOutcome? {
        guard let raw = answer["raw"], let code = Int32(exactly: raw["code"]) else { return nil }
        guard code == SKILL_OK else {
            return Skill.outcome(
                skill: skill, code: code, result: nil, oversized: nil, error: raw["error"]?.stringValue, undo: nil,
                resultLimit: resultLimit)
        }
        let converted: Result<JSONValue, TypedCallError>
        if returns == .string {
            if let size = Int(exactly: raw["oversized"]) {
                return Skill.outcome(
                    skill: skill, code: code, result: nil, oversized: size, error: nil, undo: nil,
                    resultLimit: resultLimit)
            }
            if let text = raw["result"]?.stringValue {
                converted = .success(.string(text))
            } else if raw["result_hex"] != nil {
                converted = .failure(.invalidUTF8)
            } else {
                converted = .success(.null)
            }
        } else {
            guard let bits = Int64(exactly: raw["returned"]) else { return nil }
            converted = TypedFunction.convert(UInt64(bitPattern: bits), as: returns)
        }
        switch converted {
        case .success(let value): return .success(value)
        case .failure(let error): return .failure(code: .failed, error.description)
        }
    }

    /// The plugin's snapshot from the worker's answer: nil when it has none; nil inside when the answer is not one.
    static func snapshot(_ answer: JSONValue, plugin: String) -> Result<JSONValue, SnapshotError>?? {
        if answer == .null { return .some(nil) }
        guard let code = Int32(exactly: answer["code"]) else { return nil }
        var bytes: [UInt8]?
        if let size = Int(exactly: answer["size"]) {
            // Over the host's limit the worker sends only the size: any bytes of that count are refused alike.
            bytes = answer["bytes"]?.stringValue.map { Array($0.utf8) } ?? [UInt8](repeating: 0, count: size)
        }
        return .some(PluginSnapshot.read(code: code, bytes: bytes, plugin: plugin).map(\.value))
    }
}

extension [UInt8] {
    /// The bytes `"00ff"` stands for (`[0x00, 0xff]`, either case); nil for anything else. On bytes: a worker's
    /// launch carries some 5,000 digits.
    init?(hex: String) {
        func digit(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        let digits = Array(hex.utf8)
        guard digits.count.isMultiple(of: 2) else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        var index = 0
        while index < digits.count {
            guard let high = digit(digits[index]), let low = digit(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        self = bytes
    }
}
