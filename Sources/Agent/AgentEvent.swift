import SkillHost
import SkillJSON

/// Why a turn ended.
package enum FinishReason: Error, Sendable, Equatable {
    /// The model answered without asking for more calls.
    case answered
    /// The provider found no skill for the request and said so (the offline router).
    case nothingMatched
    /// The step limit was reached while the model still wanted to call skills.
    case stepLimitReached(Int)
    /// The consumer stopped the turn.
    case cancelled
    /// The same skill was called with the same arguments three times in the turn.
    case repeatedCall(skill: String)
    /// The model server failed; the payload is a sentence for the user.
    case modelError(String)
    /// The model answered, but a call it asked for was not run: a policy rule refused it, the person declined it,
    /// or there was no one to confirm it (`skill` is the first such call's).
    case refused(skill: String)
    /// A budget of the turn or the session is used up (the front end may let it go on: `AgentSession.waive`).
    case budgetReached(BudgetReached)

    /// A short name: answered, nothing_matched, step_limit, cancelled, repeated_call, model_error, refused, budget.
    package var name: String {
        switch self {
        case .answered: return "answered"
        case .nothingMatched: return "nothing_matched"
        case .stepLimitReached: return "step_limit"
        case .cancelled: return "cancelled"
        case .repeatedCall: return "repeated_call"
        case .modelError: return "model_error"
        case .refused: return "refused"
        case .budgetReached: return "budget"
        }
    }

    /// A sentence for the user.
    package var explanation: String {
        switch self {
        case .answered: return "answered"
        case .nothingMatched: return "no skill matches the request"
        case .stepLimitReached(let limit):
            return "stopped after \(limit) steps (the step limit); continue the turn to go on"
        case .cancelled: return "interrupted"
        case .repeatedCall(let skill):
            return "stopped: the model called \(skill) with the same arguments three times"
        case .modelError(let message): return message
        case .refused(let skill): return "\(skill) was not run (refused by a policy rule or not confirmed)"
        case .budgetReached(let reached): return "stopped: \(reached.sentence) (the \(reached.key) budget)"
        }
    }
}

/// A call waiting for the user's decision.
package struct ConfirmationRequest: Sendable, Equatable {
    package let callID: String
    package let skill: SkillInfo
    /// The exact (validated) arguments the skill would receive.
    package let arguments: JSONValue
    /// The change this call reverses (`notes_add({"title":"milk"})`), when it is an undo's.
    package var undoing: String?

    package init(callID: String, skill: SkillInfo, arguments: JSONValue, undoing: String? = nil) {
        self.callID = callID
        self.skill = skill
        self.arguments = arguments
        self.undoing = undoing
    }

    /// What will happen, in words for a dialog's title: the skill's title and the arguments that say which thing
    /// (scalars, at most three, each cut to 40 characters; objects and arrays left out) — "Delete a note: id 3",
    /// "Undo notes_add — Delete a note: id 3". Control and bidirectional-override characters (a model's or a
    /// plugin's, which could reorder what the headline shows) are left out.
    package var words: String {
        let text = wordsAsGiven
        return String(
            String.UnicodeScalarView(
                text.unicodeScalars.filter {
                    !($0.properties.generalCategory == .control || $0.properties.generalCategory == .format)
                }))
    }

    private var wordsAsGiven: String {
        var parts: [String] = []
        for (key, value) in arguments.objectValue?.members ?? [] where parts.count < 3 {
            let text: String
            switch value {
            case .string(let string): text = "\"\(string)\""
            case .int, .double, .bool: text = value.jsonText
            default: continue
            }
            parts.append("\(key) \(text.count > 40 ? String(text.prefix(39)) + "…" : text)")
        }
        let title = skill.title.isEmpty ? skill.id : skill.title
        let what = parts.isEmpty ? title : "\(title): \(parts.joined(separator: ", "))"
        guard let undoing else { return what }
        return "Undo \(undoing.count > 80 ? String(undoing.prefix(79)) + "…" : undoing) — \(what)"
    }

    package static func == (lhs: ConfirmationRequest, rhs: ConfirmationRequest) -> Bool {
        lhs.callID == rhs.callID && lhs.skill.id == rhs.skill.id && lhs.arguments == rhs.arguments
    }
}

/// What happens during a turn, in order, for any front end to render.
package enum AgentEvent: Sendable, Equatable {
    /// A model request is on its way (step number, from 1).
    case thinking(step: Int)
    /// A piece of the answer text.
    case textDelta(String)
    /// A step of one skill call: started, progress, finished or failed.
    case toolCall(ToolCallEvent)
    /// A mutating or destructive call waits for the front end's confirmation hook.
    case confirmationNeeded(ConfirmationRequest)
    /// Token usage of one model response.
    case usage(Usage)
    /// The turn is over.
    case finished(FinishReason)
}

/// A step of one skill call the model asked for. Front ends key cards by `id` and branch on `phase` — on a
/// failure's code, never its wording.
package struct ToolCallEvent: Sendable, Equatable {
    /// The model's id for the call.
    package let id: String
    package let skill: String
    package let phase: Phase

    package init(id: String, skill: String, phase: Phase) {
        self.id = id
        self.skill = skill
        self.phase = phase
    }

    package enum Phase: Sendable, Equatable {
        /// The call starts, with its arguments as the skill receives them — or, when they could not be used (not
        /// JSON, an unknown skill), as the model wrote them (`.text`).
        case started(arguments: SkillInvocation.Arguments)
        /// The running skill reported progress.
        case progress(SkillProgress)
        case finished(result: JSONValue, duration: Duration)
        /// Failed, refused or could not run; the failure's message is what the model is told.
        case failed(SkillFailure, duration: Duration)
    }
}

extension SkillInvocation.Arguments {
    /// The arguments as JSON text.
    package var jsonText: String {
        switch self {
        case .value(let value): return value.jsonText
        case .text(let text): return text
        }
    }
}

extension SkillFailure {
    /// A call the person stopped by cancelling the turn (a front end shows it as cancelled, not failed; a call the
    /// host cancelled — its plugin was retired — is a failure with its reason).
    package static let cancelledByTheUser = SkillFailure(code: .cancelled, message: "cancelled by the user")
}
