import SkillHost
import SkillJSON

/// Why a turn ended.
public enum FinishReason: Error, Sendable, Equatable {
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

    /// A short name: answered, nothing_matched, step_limit, cancelled, repeated_call, model_error, refused.
    public var name: String {
        switch self {
        case .answered: return "answered"
        case .nothingMatched: return "nothing_matched"
        case .stepLimitReached: return "step_limit"
        case .cancelled: return "cancelled"
        case .repeatedCall: return "repeated_call"
        case .modelError: return "model_error"
        case .refused: return "refused"
        }
    }

    /// A sentence for the user.
    public var explanation: String {
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
        }
    }
}

/// A call waiting for the user's decision.
public struct ConfirmationRequest: Sendable, Equatable {
    public let callID: String
    public let skill: SkillInfo
    /// The exact (validated) arguments the skill would receive.
    public let arguments: JSONValue

    public init(callID: String, skill: SkillInfo, arguments: JSONValue) {
        self.callID = callID
        self.skill = skill
        self.arguments = arguments
    }

    public static func == (lhs: ConfirmationRequest, rhs: ConfirmationRequest) -> Bool {
        lhs.callID == rhs.callID && lhs.skill.id == rhs.skill.id && lhs.arguments == rhs.arguments
    }
}

/// What happens during a turn, in order, for any front end to render.
public enum AgentEvent: Sendable, Equatable {
    /// A model request is on its way (step number, from 1).
    case thinking(step: Int)
    /// A piece of the answer text.
    case textDelta(String)
    /// A skill call starts; `arguments` as the skill receives them (or as the model wrote them if unusable).
    case toolCallStarted(id: String, skill: String, arguments: String)
    /// A running skill reported progress.
    case toolCallProgress(id: String, progress: SkillProgress)
    /// A skill call succeeded.
    case toolCallFinished(id: String, skill: String, result: JSONValue, duration: Duration)
    /// A skill call failed, was refused or could not run; `error` is what the model is told.
    case toolCallFailed(id: String, skill: String, error: String, duration: Duration)
    /// A mutating or destructive call waits for the front end's confirmation hook.
    case confirmationNeeded(ConfirmationRequest)
    /// Token usage of one model response.
    case usage(Usage)
    /// The turn is over.
    case finished(FinishReason)
}
