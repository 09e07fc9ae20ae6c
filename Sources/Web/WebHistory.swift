import Agent
import Foundation
import History
import SkillHost
import SkillJSON

/// A stored conversation as the page's events, so that opening it shows it as it was shown live: the person's
/// messages, each answer laid out, each call's card with its arguments, outcome and timing.
enum WebHistory {
    /// The events that draw `messages` (and the recorded calls among them), oldest first.
    /// - Parameter words: a finished call's result in words (skill, result, arguments), for its card's one line.
    static func events(
        _ messages: [Message], calls records: [ToolCallRecord],
        words: (String, JSONValue, JSONValue?) -> String? = { _, _, _ in nil }
    ) -> [JSONValue] {
        let outcomes = Dictionary(records.map { ($0.callID, $0) }, uniquingKeysWith: { first, _ in first })
        var events: [JSONValue] = []
        var asked = 0
        for message in messages {
            switch message.role {
            case .user:
                asked += 1
                events.append(WebEvent.user(message.content, number: asked))
            case .assistant:
                if !message.content.isEmpty {
                    // The offline router's answers are plain text; its label says which they are.
                    let plain = message.content.hasPrefix(OfflineRouter.label)
                    events.append(WebEvent.answer(message.content, markdown: !plain, fresh: true))
                }
                for call in message.toolCalls { events += cards(call, outcomes[call.id], words: words) }
            case .system where message.content.hasPrefix("[undo] "):
                events.append(WebEvent.notice(message.content))
            case .system, .tool: break
            }
        }
        return events
    }

    /// A call's card: started with its arguments, then how it ended (or that it never did).
    private static func cards(
        _ call: ToolCall, _ record: ToolCallRecord?, words: (String, JSONValue, JSONValue?) -> String?
    ) -> [JSONValue] {
        let arguments =
            (try? JSONValue(parsing: record?.arguments ?? call.arguments))
            .map(SkillInvocation.Arguments.value) ?? .text(record?.arguments ?? call.arguments)
        let duration = Duration.microseconds(Int64((record?.durationMilliseconds ?? 0) * 1000))
        let ending: ToolCallEvent.Phase
        var said: String?
        if let record, let result = record.result {
            let value = (try? JSONValue(parsing: result)) ?? .string(result)
            ending = .finished(result: value, duration: duration)
            if case .value(let given) = arguments { said = words(call.name, value, given) }
        } else {
            let message = record?.error ?? "interrupted before it ran"
            // A no is shown as one when the conversation is opened again, as it was live.
            let code: FailureCode = WebEvent.isDeclined(message, skill: call.name) ? .notPermitted : .failed
            ending = .failed(SkillFailure(code: code, message: message), duration: duration)
        }
        return [
            WebEvent.encode(
                .toolCall(ToolCallEvent(id: call.id, skill: call.name, phase: .started(arguments: arguments)))),
            WebEvent.encode(.toolCall(ToolCallEvent(id: call.id, skill: call.name, phase: ending)), words: said),
        ]
    }

    /// The conversations the list shows, most recently active first (the page groups them by day).
    static func list(_ conversations: [ConversationListing], current: String?) -> JSONValue {
        let formatter = ISO8601DateFormatter()
        return [
            "current": current.map { .string($0) } ?? .null,
            "conversations": .array(
                conversations.map {
                    [
                        "id": .string($0.id), "title": .string($0.title), "named": .bool($0.named),
                        "started": .string(formatter.string(from: $0.started)),
                        "updated": .string(formatter.string(from: $0.updated)), "turns": .int(Int64($0.turns)),
                        "match": $0.match.map { .string($0) } ?? .null,
                    ]
                }),
        ]
    }
}
