import Foundation
import SkillJSON

/// The result of one invocation, whatever happened: the skill's value or a `SkillFailure` — exactly one, by
/// construction — with how long it took and, for a mutating call, how to reverse it.
public struct SkillOutcome: Sendable, Equatable {
    /// How the call ended, as `call --json` and the worker wire spell it (`ok`, `error`, `timeout`, `cancelled`,
    /// `invalid_args`): a view of `ending`, coarser than `FailureCode`.
    public enum Status: String, Sendable, CaseIterable {
        case ok
        case error
        case timeout
        case cancelled
        case invalidArgs = "invalid_args"
    }

    /// The skill's value (a string when the plugin returned plain text), or why there is none.
    public var ending: Result<JSONValue, SkillFailure>
    /// Wall time from the start of `invoke` until the caller resumed.
    public var duration: Duration
    /// The reversing call a mutating skill registered with `set_undo`.
    public var undo: UndoAction?

    public init(_ ending: Result<JSONValue, SkillFailure>, duration: Duration = .zero, undo: UndoAction? = nil) {
        self.ending = ending
        self.duration = duration
        self.undo = undo
    }

    /// A call that returned `value`.
    public static func success(_ value: JSONValue, undo: UndoAction? = nil) -> SkillOutcome {
        SkillOutcome(.success(value), undo: undo)
    }

    /// A failed outcome with its code and a sentence: `.failure(code: .unknownSkill, "unknown skill …")`.
    public static func failure(code: FailureCode, _ message: String) -> SkillOutcome {
        SkillOutcome(.failure(SkillFailure(code: code, message: message)))
    }

    /// A call refused before it ran, with the refusal's sentence for `audience`.
    public static func refused(_ refusal: Refusal, for audience: Audience) -> SkillOutcome {
        SkillOutcome(.failure(SkillFailure(refusal, for: audience)))
    }

    /// The failure, for anything but a value.
    public var failure: SkillFailure? {
        if case .failure(let failure) = ending { return failure }
        return nil
    }

    /// The value, for a call that returned one.
    public var result: JSONValue? {
        if case .success(let value) = ending { return value }
        return nil
    }

    /// The failure's sentence, for anything but a value.
    public var error: String? { failure?.message }

    /// The failure's code (nil for a value): what code branches on, never the sentence.
    public var code: FailureCode? { failure?.code }

    /// The wire status.
    public var status: Status { failure?.code.status ?? .ok }

    /// Replaces a failure's sentence (a value stays as it is).
    mutating func reword(_ message: String) {
        if case .failure(var failure) = ending {
            failure.message = message
            ending = .failure(failure)
        }
    }

    /// Milliseconds, as a double.
    public var durationMilliseconds: Double { duration.milliseconds }

    /// `{"status":"ok","result":60,"duration_ms":0.41}` — the shape `skillhost call --json` prints; a failure
    /// has `error` (the sentence) and `code` (`unknown_skill`, `not_permitted`, …) instead of `result`.
    public var envelope: JSONValue {
        var object = JSONObject([(key: "status", value: .string(status.rawValue))])
        switch ending {
        case .success(let value): object["result"] = value
        case .failure(let failure): object["error"] = .string(failure.message)
        }
        object["duration_ms"] = .double((durationMilliseconds * 1000).rounded() / 1000)
        if let code { object["code"] = .string(code.rawValue) }
        if let undo { object["undo"] = undo.json }
        return .object(object)
    }
}

/// Why a call returned no value: a code for code to branch on, a sentence for people, and — for a call refused
/// before it ran — the typed refusal.
public struct SkillFailure: Error, Sendable, Equatable {
    public var code: FailureCode
    /// One sentence: what happened, and what to do about it where there is something to do.
    public var message: String
    /// Set when the call was refused before it ran (unknown skill, denied, declined, nobody to confirm).
    public var refusal: Refusal?

    public init(code: FailureCode, message: String) {
        self.code = code
        self.message = message
    }

    /// A refusal, with its sentence for `audience`.
    public init(_ refusal: Refusal, for audience: Audience) {
        self.code = refusal.code
        self.message = refusal.sentence(for: audience)
        self.refusal = refusal
    }
}

/// Why a call returned no result. Front ends branch on it (an unknown skill adds a hint about plugins that
/// failed to load; a refusal is not a crash), never on the wording of the sentence.
///
/// A struct over a private value, as `PluginProblem.Code` is: a new code can be added without breaking an
/// embedder's `switch` (which needs a `default`), and codes compare and pattern-match as before.
public struct FailureCode: RawRepresentable, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// The code as the wire and the history write it (`unknown_skill`, `invalid_args`, …).
    public let rawValue: String

    /// The code named `rawValue`; nil for a name no code has.
    public init?(rawValue: String) {
        guard Self.allCases.contains(where: { $0.rawValue == rawValue }) else { return nil }
        self.rawValue = rawValue
    }

    private init(_ rawValue: String) { self.rawValue = rawValue }

    public var description: String { rawValue }

    /// No skill has the id.
    public static let unknownSkill = FailureCode("unknown_skill")
    /// The arguments are not JSON, break the schema, or the skill rejected them.
    public static let invalidArguments = FailureCode("invalid_args")
    /// The policy denied the call, or nobody confirmed it.
    public static let notPermitted = FailureCode("not_permitted")
    /// The skill ran (or was to run) and failed: an error it reported, a crash, a result it may not return.
    public static let failed = FailureCode("failed")
    public static let timeout = FailureCode("timeout")
    public static let cancelled = FailureCode("cancelled")

    public static let allCases: [FailureCode] = [
        .unknownSkill, .invalidArguments, .notPermitted, .failed, .timeout, .cancelled,
    ]

    /// The code a wire status without its own code stands for.
    init?(_ status: SkillOutcome.Status) {
        switch status {
        case .ok: return nil
        case .error: self = .failed
        case .timeout: self = .timeout
        case .cancelled: self = .cancelled
        case .invalidArgs: self = .invalidArguments
        }
    }

    /// The status an outcome with this code has.
    var status: SkillOutcome.Status {
        switch self {
        case .invalidArguments: return .invalidArgs
        case .timeout: return .timeout
        case .cancelled: return .cancelled
        default: return .error
        }
    }
}

/// A call that reverses a mutating call: run `skillID` with `arguments` — then, for a composite skill, the reversing
/// calls in `then`, in order (its steps' undos, last step first).
public struct UndoAction: Sendable, Equatable {
    public let skillID: String
    public let arguments: JSONValue
    /// More reversing calls, run after this one in order.
    public internal(set) var then: [UndoAction] = []

    /// What `skill` set with `set_undo(target, argumentText)`; nil (and a sentence to `warn`) when the arguments are
    /// not a JSON object.
    init?(skill: String, target: String, argumentText: String, warn: (String) -> Void) {
        guard let parsed = try? JSONValue(parsing: argumentText), parsed.objectValue != nil else {
            warn("\(skill): set_undo ignored: its arguments are not a JSON object")
            return nil
        }
        self.init(skillID: target, arguments: parsed)
    }

    /// Every call, in the order they run.
    public var calls: [UndoAction] {
        [UndoAction(skillID: skillID, arguments: arguments)] + then
    }

    /// `{"skill": …, "arguments": …}` (+ `"then": […]`), as `call --json` prints it and the history keeps it.
    package var json: JSONValue {
        var object = JSONObject([(key: "skill", value: .string(skillID)), (key: "arguments", value: arguments)])
        if !then.isEmpty { object["then"] = .array(then.map(\.json)) }
        return .object(object)
    }

    init(skillID: String, arguments: JSONValue, then: [UndoAction] = []) {
        self.skillID = skillID
        self.arguments = arguments
        self.then = then
    }

    /// An undo read back from its `json` (the history); nil when it is not one.
    package init?(json: JSONValue) {
        guard let skill = json["skill"]?.stringValue, let arguments = json["arguments"] else { return nil }
        skillID = skill
        self.arguments = arguments
        then = (json["then"]?.arrayValue ?? []).compactMap { UndoAction(json: $0) }
    }
}

/// Progress reported by a running skill.
public struct SkillProgress: Sendable, Equatable {
    public let done: Double
    /// nil when the total is unknown.
    public let total: Double?
    public let message: String?
}

/// One line for the host's log.
public struct LogRecord: Sendable, Equatable {
    public enum Level: Int, Sendable, Comparable {
        case debug = 0, info, warning, error
        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }

        init(code: Int32) { self = Level(rawValue: Int(max(0, min(3, code)))) ?? .info }
    }

    public let level: Level
    /// The plugin (or "host") the line comes from.
    public let source: String
    public let message: String

    public init(level: Level, source: String, message: String) {
        self.level = level
        self.source = source
        self.message = message
    }
}

extension Duration {
    /// The duration in milliseconds, as a double.
    public var milliseconds: Double {
        Double(components.seconds) * 1000 + Double(components.attoseconds) / 1e15
    }

    /// `0.4 ms`, `12.0 ms`, `1.5 s` — for cards and traces.
    public var shortDescription: String {
        milliseconds < 1000 ? String(format: "%.1f ms", milliseconds) : String(format: "%.1f s", milliseconds / 1000)
    }
}

/// Formats durations for messages: `250 ms`, `10 s`, `1.5 s`.
func humanDuration(_ duration: Duration) -> String {
    let milliseconds = duration.milliseconds
    if milliseconds < 1000 { return "\(Int(milliseconds.rounded())) ms" }
    let seconds = milliseconds / 1000
    if seconds.rounded() == seconds { return "\(Int(seconds)) s" }
    return "\((seconds * 10).rounded() / 10) s"
}
