import Agent
import Foundation
import Observation
import SkillHost
import SkillJSON

/// The platform-neutral state of a conversation for any front end: the messages, the step being worked on, the
/// answer streaming in and the tool cards of the current turn. The terminal renders from it; a SwiftUI view can
/// bind to it (it is `@Observable` and lives on the main actor).
@MainActor
@Observable
package final class SessionViewModel {
    /// One skill call as a card.
    package struct ToolCard: Identifiable, Sendable, Equatable {
        package enum State: Sendable, Equatable {
            case running
            case succeeded(String)
            case failed(SkillFailure)
            /// Stopped by the user (Ctrl-C) before it finished.
            case cancelled
        }

        package let id: String
        package let skill: String
        /// `expression: "(23+7)*2"`
        package let arguments: String
        package var state: State = .running
        package var progress: String?
        package let started: ContinuousClock.Instant
        package var duration: Duration?

        package init(
            id: String, skill: String, arguments: String, state: State = .running, progress: String? = nil,
            started: ContinuousClock.Instant, duration: Duration? = nil
        ) {
            self.id = id
            self.skill = skill
            self.arguments = arguments
            self.state = state
            self.progress = progress
            self.started = started
            self.duration = duration
        }
    }

    package private(set) var messages: [Message] = []
    /// The model request being worked on (1-based), 0 between turns.
    package private(set) var step = 0
    /// Answer text of the current turn so far.
    package private(set) var answer = ""
    package private(set) var cards: [ToolCard] = []
    package private(set) var isRunning = false
    package private(set) var lastFinish: FinishReason?
    package private(set) var usage = Usage(promptTokens: 0, completionTokens: 0)

    package init() {}

    /// A new turn starts.
    package func begin() {
        step = 0
        answer = ""
        cards = []
        isRunning = true
        lastFinish = nil
    }

    /// Applies one event of the running turn.
    package func apply(_ event: AgentEvent) {
        switch event {
        case .thinking(let step): self.step = step
        case .textDelta(let text): answer += text
        case .toolCall(let call): apply(call)
        case .confirmationNeeded: break
        case .usage(let usage):
            self.usage.promptTokens += usage.promptTokens
            self.usage.completionTokens += usage.completionTokens
        case .finished(let reason):
            lastFinish = reason
            isRunning = false
            step = 0
            // A turn that ends while calls still run has stopped them.
            for index in cards.indices where cards[index].state == .running {
                cards[index].state = .cancelled
                cards[index].duration = .now - cards[index].started
            }
        }
    }

    /// The conversation after the turn (or after resuming).
    package func show(_ conversation: Conversation) { messages = conversation.messages }

    package func card(_ id: String) -> ToolCard? { cards.first { $0.id == id } }

    private func apply(_ call: ToolCallEvent) {
        switch call.phase {
        case .started(let arguments):
            cards.append(
                ToolCard(id: call.id, skill: call.skill, arguments: CardText.arguments(arguments), started: .now))
        case .progress(let progress):
            update(call.id) { card in
                var text = progress.message ?? ""
                if let total = progress.total {
                    text += (text.isEmpty ? "" : " ") + "\(Int(progress.done))/\(Int(total))"
                }
                card.progress = text
            }
        case .finished(let result, let duration):
            update(call.id) {
                $0.state = .succeeded(result.displayText)
                $0.duration = duration
            }
        case .failed(let failure, let duration):
            update(call.id) {
                $0.state = failure == .cancelledByTheUser ? .cancelled : .failed(failure)
                $0.duration = duration
            }
        }
    }

    private func update(_ id: String, _ change: (inout ToolCard) -> Void) {
        guard let index = cards.firstIndex(where: { $0.id == id }) else { return }
        change(&cards[index])
    }

    /// `{"expression":"(23+7)*2"}` → `expression: "(23+7)*2"`.
    package nonisolated static func arguments(_ text: String) -> String { CardText.arguments(text) }
}
