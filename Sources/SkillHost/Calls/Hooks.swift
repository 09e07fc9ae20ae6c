import Foundation
import SkillJSON

/// When a hook runs.
public enum HookEvent: String, Sendable, CaseIterable {
    /// Before a call runs (after the policy allowed it or said ask): may allow, deny, ask, or rewrite the arguments.
    case beforeCall = "before_call"
    /// After a call ended, with its outcome: only sees.
    case afterCall = "after_call"
    /// When a call needs a person's yes: answers instead of a person (headless use); "ask" leaves it to one.
    case permission
    /// When an agent turn starts and ends: only see.
    case turnStart = "turn_start"
    case turnEnd = "turn_end"
}

/// A program the host runs at an event, for the skills its pattern matches. It reads one JSON object on standard
/// input and answers one on standard output; it runs with a worker's environment (none of the host's secrets).
public struct Hook: Sendable, Equatable {
    /// Skill ids it is run for (a glob; `*` for every call, and for turn events).
    public let pattern: String
    /// The program and its arguments; `~/` at the start of the program is the home folder, a bare name is looked
    /// up on PATH.
    public let command: [String]
    public let timeout: Duration
    /// What a hook that fails (cannot start, times out, exits non-zero, answers what is not an answer) means: deny
    /// (the default) or allow.
    public let allowOnError: Bool
    /// Confined like an MCP server (`"sandbox"`): what it may read, write and reach; nil: not confined.
    public let sandbox: Sandbox?

    public init(
        pattern: String = "*", command: [String], timeout: Duration = .seconds(5), allowOnError: Bool = false,
        sandbox: Sandbox? = nil
    ) {
        self.pattern = pattern
        self.command = command
        self.timeout = timeout
        self.allowOnError = allowOnError
        self.sandbox = sandbox
    }

    /// How sentences name it: its program as configured.
    public var name: String { command.first ?? "(empty)" }
}

/// The hooks of each event, in the order the configuration lists them.
public struct Hooks: Sendable, Equatable {
    public var events: [HookEvent: [Hook]]
    /// The skillhost binary, whose sandbox role starts a confined hook (nil: confined hooks cannot start).
    public var launcher: String?

    public init(_ events: [HookEvent: [Hook]] = [:], launcher: String? = nil) {
        self.events = events
        self.launcher = launcher
    }

    public var isEmpty: Bool { events.values.allSatisfy(\.isEmpty) }

    /// The hooks of `event` for skill `id`, in order.
    func matching(_ event: HookEvent, _ id: String) -> [Hook] {
        (events[event] ?? []).filter { Glob.matches($0.pattern, id) }
    }
}

/// A hook's answer to `before_call` or `permission`.
struct HookAnswer: Sendable, Equatable {
    enum Decision: String, Sendable { case allow, deny, ask }

    var decision: Decision?
    var reason: String?
    /// Rewritten arguments (before_call), validated again against the skill's schema.
    var arguments: JSONValue?

    /// Reads a hook's standard output: one JSON object, `{"decision": …, "reason": …, "arguments": {…}}`, every
    /// member optional; or why it is not an answer.
    static func read(_ text: String) -> Result<HookAnswer, HookFailure> {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.isEmpty { return .success(HookAnswer()) }
        guard let value = try? JSONValue(parsing: trimmed), let object = value.objectValue else {
            return .failure(.garbage(String(trimmed.prefix(80))))
        }
        var answer = HookAnswer()
        if let given = object["decision"] {
            guard let name = given.stringValue, let decision = Decision(rawValue: name) else {
                return .failure(.garbage("\"decision\" " + given.jsonText.prefix(40) + ", not allow, deny or ask"))
            }
            answer.decision = decision
        }
        answer.reason = object["reason"]?.stringValue.map { String($0.prefix(500)) }
        if let arguments = object["arguments"] {
            guard arguments.objectValue != nil else { return .failure(.garbage("\"arguments\" that is not an object")) }
            answer.arguments = arguments
        }
        return .success(answer)
    }
}

/// Why a hook gave no answer.
enum HookFailure: Error, Sendable, Equatable, CustomStringConvertible {
    case cannotStart(String)
    case timedOut(Duration)
    case exited(Int32, String)
    case garbage(String)

    var description: String {
        switch self {
        case .cannotStart(let why): return "could not start (\(why))"
        case .timedOut(let limit): return "did not answer within \(Int(limit.milliseconds)) ms"
        case .exited(let status, let said):
            return "exited with status \(status)" + (said.isEmpty ? "" : ": \(said)")
        case .garbage(let text): return "answered \(text), not a JSON object like {\"decision\": \"allow\"}"
        }
    }
}
