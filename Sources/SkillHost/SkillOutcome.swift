import Foundation
import SkillJSON

/// The result of one invocation, whatever happened. Exactly one of `result` (status ok) and `error` is set.
public struct SkillOutcome: Sendable, Equatable {
    /// How the call ended.
    public enum Status: String, Sendable, CaseIterable {
        case ok
        case error
        case timeout
        case cancelled
        case invalidArgs = "invalid_args"
    }

    public var status: Status
    /// Why the call returned no result, for code to act on (nil for `.ok`); `error` is the sentence for people.
    public var code: FailureCode?
    /// The skill's result for `.ok` (a string when the plugin returned plain text).
    public var result: JSONValue?
    /// A sentence for every other status.
    public var error: String?
    /// Wall time from the start of `invoke` until the caller resumed.
    public var duration: Duration
    /// The reversing call a mutating skill registered with `set_undo`.
    public var undo: UndoAction?

    public init(
        status: Status, result: JSONValue? = nil, error: String? = nil, duration: Duration = .zero,
        undo: UndoAction? = nil
    ) {
        self.status = status
        self.code = FailureCode(status)
        self.result = result
        self.error = error
        self.duration = duration
        self.undo = undo
    }

    /// A failed outcome with a sentence.
    public static func failure(_ status: Status, _ message: String) -> SkillOutcome {
        SkillOutcome(status: status, error: message)
    }

    /// A failed outcome with its code and a sentence: `.failure(code: .unknownSkill, "unknown skill …")`.
    public static func failure(code: FailureCode, _ message: String) -> SkillOutcome {
        var outcome = SkillOutcome(status: code.status, error: message)
        outcome.code = code
        return outcome
    }

    /// Milliseconds, as a double.
    public var durationMilliseconds: Double { duration.milliseconds }

    /// `{"status":"ok","result":60,"duration_ms":0.41}` — the shape `skillhost call --json` prints; a failure
    /// has `error` (the sentence) and `code` (`unknown_skill`, `not_permitted`, …) instead of `result`.
    public var envelope: JSONValue {
        var object = JSONObject([(key: "status", value: .string(status.rawValue))])
        if status == .ok {
            object["result"] = result ?? .null
        } else {
            object["error"] = .string(error ?? status.rawValue)
        }
        object["duration_ms"] = .double((durationMilliseconds * 1000).rounded() / 1000)
        if let code { object["code"] = .string(code.rawValue) }
        if let undo { object["undo"] = undo.json }
        return .object(object)
    }
}

/// Why a call returned no result. Front ends branch on it (an unknown skill adds a hint about plugins that
/// failed to load; a refusal is not a crash), never on the wording of the sentence.
public enum FailureCode: String, Sendable, CaseIterable {
    /// No skill has the id.
    case unknownSkill = "unknown_skill"
    /// The arguments are not JSON, break the schema, or the skill rejected them.
    case invalidArguments = "invalid_args"
    /// The policy denied the call, or nobody confirmed it.
    case notPermitted = "not_permitted"
    /// The skill ran (or was to run) and failed: an error it reported, a crash, a result it may not return.
    case failed
    case timeout
    case cancelled

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
        case .unknownSkill, .notPermitted, .failed: return .error
        case .invalidArguments: return .invalidArgs
        case .timeout: return .timeout
        case .cancelled: return .cancelled
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

    /// Every call, in the order they run.
    public var calls: [UndoAction] {
        [UndoAction(skillID: skillID, arguments: arguments)] + then
    }

    /// `{"skill": …, "arguments": …}` (+ `"then": […]`), as `call --json` prints it.
    var json: JSONValue {
        var object = JSONObject([(key: "skill", value: .string(skillID)), (key: "arguments", value: arguments)])
        if !then.isEmpty { object["then"] = .array(then.map(\.json)) }
        return .object(object)
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
