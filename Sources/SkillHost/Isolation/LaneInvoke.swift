import SkillJSON

/// An `invoke` as it travels on the direct lane (`WorkerLane`): `C<id>\t<skill>\t<context's length>\t<context>`
/// followed by the arguments' JSON text — the host's text as it is, which the worker hands a JSON skill unchanged —
/// and its answer when it succeeded with no undo: `O<id>\t` followed by the result's JSON text, or `R<id>\t`
/// followed by the result as the plugin set it (`Skill.LaneAnswer.text`), which the host decodes and checks. No
/// JSON-RPC envelope is built or parsed; everything else on the lane (and all of the main channel) is JSON-RPC.
enum LaneInvoke {
    struct Call: Equatable {
        let id: Int64
        let skill: String
        let context: String
        let arguments: String
        /// `arguments` are the host's conversion for a typed skill (`NativeWorker.typedArguments`): the line starts
        /// with `T` (only the C worker reads it).
        var typed = false
    }

    static func encode(_ call: Call) -> String {
        var line = call.typed ? "T" : "C"
        line.reserveCapacity(call.skill.utf8.count + call.context.utf8.count + call.arguments.utf8.count + 48)
        line.append(String(call.id))
        line.append("\t")
        line.append(call.skill)
        line.append("\t")
        line.append(String(call.context.utf8.count))
        line.append("\t")
        line.append(call.context)
        line.append(call.arguments)
        return line
    }

    /// Whether `bytes` are an `invoke` in this form (else they are a JSON-RPC message).
    static func isCall(_ bytes: [UInt8]) -> Bool { bytes.first == UInt8(ascii: "C") }

    /// The call, or nil when the bytes are not one (the worker answers that as a broken request).
    static func decode(_ bytes: [UInt8]) -> Call? {
        guard isCall(bytes) else { return nil }
        var index = 1
        /// The text up to the next tab, which is skipped.
        func field() -> String? {
            guard let tab = bytes[index...].firstIndex(of: 9) else { return nil }
            defer { index = tab + 1 }
            return String(decoding: bytes[index..<tab], as: UTF8.self)
        }
        guard let id = field().flatMap({ Int64($0) }), let skill = field(),
            let length = field().flatMap({ Int($0) }), length >= 0, length <= bytes.count - index
        else { return nil }
        let context = String(decoding: bytes[index..<(index + length)], as: UTF8.self)
        let arguments = String(decoding: bytes[(index + length)...], as: UTF8.self)
        return Call(id: id, skill: skill, context: context, arguments: arguments)
    }

    /// The answer to call `id` that succeeded with `result` and no undo.
    static func encodeSuccess(id: Int64, result: JSONValue) -> String { "O\(id)\t\(result.jsonText)" }

    /// The answer to call `id` that succeeded with the plugin's result `text`, undecoded.
    static func encodeText(id: Int64, text: String) -> String { "R\(id)\t\(text)" }

    /// The call's id and the plugin's result bytes; nil when the bytes are not an answer in this form.
    static func decodeText(_ bytes: [UInt8]) -> (id: Int64, result: [UInt8])? {
        guard bytes.first == UInt8(ascii: "R"), let tab = bytes.firstIndex(of: 9),
            let id = Int64(String(decoding: bytes[1..<tab], as: UTF8.self))
        else { return nil }
        return (id, Array(bytes[(tab + 1)...]))
    }

    /// Whether `bytes` are a success in this form.
    static func isSuccess(_ bytes: [UInt8]) -> Bool { bytes.first == UInt8(ascii: "O") }

    /// The call's id and its result; nil when the bytes are not a success in this form or its result is not JSON.
    static func decodeSuccess(_ bytes: [UInt8]) -> (id: Int64, result: JSONValue)? {
        guard isSuccess(bytes), let tab = bytes.firstIndex(of: 9),
            let id = Int64(String(decoding: bytes[1..<tab], as: UTF8.self)),
            let result = WorkerProtocol.parse(Array(bytes[(tab + 1)...]))
        else { return nil }
        return (id, result)
    }
}
