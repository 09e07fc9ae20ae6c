import Agent
import Foundation
import SkillHost
import SkillJSON

/// What the page receives on its event stream, one JSON object per server-sent event: the session's events as the
/// agent emits them (`AgentEvent`), the person's messages, and the answer laid out once complete. Every object has
/// a `type` and `t`, the server's clock in milliseconds since 1970 (the page measures its own delay against it).
/// Text is text: the page puts every string into the DOM as text, except `html`, which `WebMarkdown` made safe.
enum WebEvent {
    /// The longest result or argument text an event carries in full (the card shows the start of it).
    static let maximumText = 64 << 10

    /// The session began anew (a new tab, or a new conversation): forget what was shown.
    static func reset() -> JSONValue { stamped(["type": "reset"]) }

    /// The person's message, for every tab watching.
    /// The person's message `number` (1 is the first: what a rewind goes back to before).
    static func user(_ text: String, number: Int) -> JSONValue {
        stamped(["type": "user", "text": .string(text), "number": .int(Int64(number))])
    }

    /// The answer as HTML once the turn has ended: it replaces the text streamed so far — or, `fresh`, it is a
    /// stored answer shown anew (an opened conversation).
    static func answer(markdown text: String, fresh: Bool = false) -> JSONValue {
        stamped(["type": "answer", "html": .string(WebMarkdown.html(text)), "fresh": .bool(fresh)])
    }

    /// The answer so far laid out while it streams (a model's markdown), so the page never shows raw table pipes and
    /// fences and does not jump at the end: sent to the tabs watching, never kept for later ones.
    static func partial(markdown text: String) -> JSONValue {
        stamped(["type": "partial", "html": .string(WebMarkdown.html(text))])
    }

    /// An answer written as plain text (the offline router's), its lines kept; otherwise as `answer(markdown:)`.
    static func answer(_ text: String, markdown: Bool, fresh: Bool = false) -> JSONValue {
        guard !markdown else { return answer(markdown: text, fresh: fresh) }
        return stamped(["type": "answer", "html": .string(WebMarkdown.plain(text)), "fresh": .bool(fresh)])
    }

    /// Who answers now (the person picked another): the page's picker follows it.
    static func model(_ name: String) -> JSONValue { stamped(["type": "model", "name": .string(name)]) }

    /// Whether the last mutating call can be undone (the Undo button follows it).
    static func undoable(_ available: Bool) -> JSONValue {
        stamped(["type": "undoable", "available": .bool(available)])
    }

    /// A line about the session that is neither the person's nor the model's (an undone call).
    static func notice(_ text: String) -> JSONValue { stamped(["type": "notice", "text": .string(text)]) }

    /// The conversation shown changed (a new one, one opened, the first message of one): lists are fetched again.
    static func conversation(_ id: String?) -> JSONValue {
        stamped(["type": "conversation", "id": id.map { .string($0) } ?? .null])
    }

    /// The conversation was deleted: the tabs showing it go to a new one.
    static func deleted(_ id: String) -> JSONValue { stamped(["type": "deleted", "id": .string(id)]) }

    /// Whether a turn runs now (the send button and stop follow it).
    static func running(_ running: Bool) -> JSONValue { stamped(["type": "running", "running": .bool(running)]) }

    /// A confirmation another tab answered (or the turn's end withdrew): close its prompt.
    static func confirmed(_ id: String) -> JSONValue { stamped(["type": "confirmed", "id": .string(id)]) }

    /// The view (theme, panel, text size) every tab renders, after a change or when a tab connects.
    static func view(_ view: JSONValue) -> JSONValue { stamped(["type": "view", "view": view]) }

    /// The skills changed: a plugin came, went or failed to load (`line` says which, as the shell says it), or a
    /// tab enabled or disabled one (no `line`). Tabs fetch the skills again.
    static func skills(_ line: String? = nil) -> JSONValue {
        guard let line else { return stamped(["type": "skills"]) }
        return stamped(["type": "skills", "line": .string(line)])
    }

    /// `event` for the page; `plan`: a composite call's steps, which its card lists when it starts.
    /// - Parameters:
    ///   - plan: a composite's steps, for its card when it starts.
    ///   - words: a finished call's result as a person reads it, for its card's one line.
    ///   - extra: more of a card: its view, its result for the view, the card of the view that made the call.
    static func encode(
        _ event: AgentEvent, plan: [String]? = nil, words: String? = nil, extra: JSONObject = JSONObject()
    ) -> JSONValue {
        switch event {
        case .thinking(let step): return stamped(["type": "thinking", "step": .int(Int64(step))])
        case .textDelta(let text): return stamped(["type": "delta", "text": .string(text)])
        case .toolCall(let call):
            var card = card(call)
            for (key, value) in extra.members { card[key] = value }
            if let plan, case .started = call.phase { card["plan"] = .array(plan.map { .string(bounded($0)) }) }
            if let words { card["words"] = .string(bounded(words)) }
            return stamped(.object(card))
        case .confirmationNeeded(let request):
            var question = confirmation(request)
            for (key, value) in extra.members { question[key] = value }
            return stamped(.object(question))
        case .usage(let usage):
            return stamped([
                "type": "usage", "prompt": .int(Int64(usage.promptTokens)),
                "completion": .int(Int64(usage.completionTokens)),
            ])
        case .finished(let reason):
            return stamped([
                "type": "finished", "reason": .string(reason.name), "explanation": .string(reason.explanation),
            ])
        }
    }

    /// A step of a call's card. The phases: running (with the arguments), progress, succeeded (a short result
    /// and the full one), failed (the sentence and its code), cancelled.
    private static func card(_ call: ToolCallEvent) -> JSONObject {
        var card = JSONObject([
            (key: "type", value: "card"), (key: "id", value: .string(call.id)),
            (key: "skill", value: .string(call.skill)),
        ])
        switch call.phase {
        case .started(let arguments):
            card["phase"] = "running"
            card["arguments"] = .string(bounded(arguments.jsonText))
        case .progress(let progress):
            card["phase"] = "progress"
            card["done"] = .double(progress.done)
            if let total = progress.total { card["total"] = .double(total) }
            if let message = progress.message { card["message"] = .string(bounded(message)) }
        case .finished(let result, let duration):
            card["phase"] = "succeeded"
            card["result"] = .string(bounded(result.displayText))
            card["ms"] = .double(duration.milliseconds)
        case .failed(let failure, let duration):
            // A no from the person is not a failure: the card says "Declined", the sentence one click away.
            let declined = failure.code == .notPermitted && isDeclined(failure.message, skill: call.skill)
            card["phase"] = failure == .cancelledByTheUser ? "cancelled" : declined ? "declined" : "failed"
            card["error"] = .string(bounded(failure.message))
            card["code"] = .string(failure.code.rawValue)
            card["ms"] = .double(duration.milliseconds)
        }
        return card
    }

    /// Whether `message` is the sentence of a call of `skill` the person said no to (live, or as the history kept it).
    static func isDeclined(_ message: String, skill: String) -> Bool {
        message == Refusal.declined(skill: skill).sentence(for: .embedder)
    }

    /// The exact call a person is asked about: skill, arguments, risk, and a composite's plan.
    private static func confirmation(_ request: ConfirmationRequest) -> JSONObject {
        var object = JSONObject([
            (key: "type", value: "confirm"), (key: "id", value: .string(request.callID)),
            (key: "skill", value: .string(request.skill.id)),
            (key: "title", value: .string(bounded(request.words))),
            (key: "arguments", value: .string(bounded(request.arguments.jsonText))),
            (key: "risk", value: .string(request.skill.risk.rawValue)),
        ])
        if let plan = request.skill.kind.compositePlan {
            object["plan"] = .array(plan.lines.map { .string($0) })
        }
        return object
    }

    private static func bounded(_ text: String) -> String {
        text.utf8.count <= maximumText ? text : String(decoding: text.utf8.prefix(maximumText), as: UTF8.self) + "…"
    }

    private static func stamped(_ value: JSONValue) -> JSONValue {
        guard case .object(var object) = value else { return value }
        // Milliseconds to the microsecond: the page measures delays of a few milliseconds against it.
        object["t"] = .double((Date().timeIntervalSince1970 * 1_000_000).rounded() / 1000)
        return .object(object)
    }
}
