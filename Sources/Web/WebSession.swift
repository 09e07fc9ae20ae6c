import Agent
import Foundation
import SkillHost
import SkillJSON
import Synchronization

/// One conversation served to browser tabs: the agent session, the turn that runs (one at a time, whichever tab
/// started it), the confirmation it waits for, and every tab watching, each sent every event as it happens. A tab
/// that opens late is first sent what happened so far (the last `replayLimit` bytes of it), so several tabs show
/// the same conversation live; any of them may drive it.
package final class WebSession: Sendable {
    /// How a watching tab is written to: false once it is gone.
    package typealias Delivery = @Sendable (String) -> Bool

    /// What a request to start a turn got.
    package enum SendResult: Equatable, Sendable {
        case started
        /// A turn runs already; the sentence says what to do.
        case busy(String)
        case empty
    }

    private struct State {
        var agent: AgentSession?
        var running = false
        var confirmation: (request: ConfirmationRequest, answer: CheckedContinuation<ConfirmationAnswer, Never>)?
        var watchers: [Int: Delivery] = [:]
        var nextWatcher = 1
        /// What a new tab is sent first: the events so far, as stream lines, oldest first.
        var replay: [String] = []
        var replayBytes = 0
    }

    /// The most of the past a new tab is sent (older events are dropped from the replay first).
    static let replayLimit = 8 << 20

    private let state = Mutex(State())

    /// The view every tab renders (registered in the registry by whoever made it).
    package let view: WebView

    /// A session over `skills`; `view`'s skills are never asked about (they change only the window).
    package init(
        skills: any AgentSkills, provider: any ModelProvider, configuration: AgentConfiguration, view: WebView
    ) {
        self.view = view
        var configuration = configuration
        configuration.preapproved.formUnion(WebView.skillIDs)
        let agent = AgentSession(
            skills: skills, provider: provider, configuration: configuration,
            confirm: { [weak self] request in await self?.ask(request) ?? .deny })
        state.withLock { $0.agent = agent }
        view.follow { [weak self] view in self?.broadcast(Self.line(WebEvent.view(view))) }
    }

    /// Adds a watching tab: it is sent the replay, then every event. Returns its number for `unwatch`.
    package func watch(_ deliver: @escaping Delivery) -> Int {
        state.withLock { state in
            // Under the lock, so no event slips between the replay and the live ones.
            _ = deliver(Self.line(WebEvent.reset()))
            for line in state.replay { _ = deliver(line) }
            _ = deliver(Self.line(WebEvent.running(state.running)))
            _ = deliver(Self.line(WebEvent.view(view.json)))
            defer { state.nextWatcher += 1 }
            state.watchers[state.nextWatcher] = deliver
            return state.nextWatcher
        }
    }

    package func unwatch(_ id: Int) { _ = state.withLock { $0.watchers.removeValue(forKey: id) } }

    /// Tabs watching now.
    package var watchers: Int { state.withLock { $0.watchers.count } }

    /// Starts a turn with the person's `text`, unless one runs.
    package func send(_ text: String) -> SendResult {
        let text = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else { return .empty }
        let agent = state.withLock { state -> AgentSession? in
            guard !state.running else { return nil }
            state.running = true
            return state.agent
        }
        guard let agent else {
            return .busy("a turn is running; wait for its answer or stop it first")
        }
        publish(WebEvent.user(text))
        publish(WebEvent.running(true))
        // The turn starts here, not in the task, so that a stop that follows at once finds it.
        let events = agent.send(text)
        Task { [self] in
            var answer = ""
            for await event in events {
                switch event {
                case .thinking: answer = ""
                case .textDelta(let delta): answer += delta
                default: break
                }
                publish(WebEvent.encode(event))
            }
            if !answer.isEmpty { publish(WebEvent.answer(markdown: answer)) }
            state.withLock { $0.running = false }
            publish(WebEvent.running(false))
        }
        return .started
    }

    /// Skills the model never sees in this session (the skills panel's switches).
    package var disabledSkills: Set<String> { state.withLock { $0.agent }?.disabledSkills ?? [] }

    /// Lets the model see `skill` again, or hides it, from the next model request on; every tab is told.
    package func setEnabled(_ skill: String, _ enabled: Bool) {
        guard let agent = state.withLock({ $0.agent }) else { return }
        agent.setDisabled(skill, !enabled)
        publish(WebEvent.skills())
    }

    /// Tells every tab that the registry changed, with the shell's line for it.
    package func registryChanged(_ change: RegistryChange) { publish(WebEvent.skills(change.line)) }

    /// Stops the running turn: its calls are cancelled, a confirmation it waits for is answered no, and the tabs
    /// see the cancelled cards and the turn's end as the stream reports them.
    package func stop() {
        let (agent, pending) = state.withLock { state in
            defer { state.confirmation = nil }
            return (state.running ? state.agent : nil, state.confirmation)
        }
        pending?.answer.resume(returning: .deny)
        if let pending { publish(WebEvent.confirmed(pending.request.callID)) }
        agent?.stopTurn()
    }

    /// A tab's answer to the confirmation `id`. False when nothing waits for it (answered already, or withdrawn).
    package func confirm(_ id: String, _ answer: ConfirmationAnswer) -> Bool {
        let pending = state.withLock { state -> CheckedContinuation<ConfirmationAnswer, Never>? in
            guard let confirmation = state.confirmation, confirmation.request.callID == id else { return nil }
            state.confirmation = nil
            return confirmation.answer
        }
        guard let pending else { return false }
        pending.resume(returning: answer)
        publish(WebEvent.confirmed(id))
        return true
    }

    /// The agent's confirmation hook: waits for a tab's answer (the event that asks went out on the stream).
    private func ask(_ request: ConfirmationRequest) async -> ConfirmationAnswer {
        await withCheckedContinuation { continuation in
            let earlier = state.withLock { state in
                defer { state.confirmation = (request, continuation) }
                return state.confirmation
            }
            earlier?.answer.resume(returning: .deny)
        }
    }

    /// Sends `event` to every tab and keeps it for those that come later.
    private func publish(_ event: JSONValue) {
        let line = Self.line(event)
        state.withLock { state in
            state.replay.append(line)
            state.replayBytes += line.utf8.count
            while state.replayBytes > Self.replayLimit, !state.replay.isEmpty {
                state.replayBytes -= state.replay.removeFirst().utf8.count
            }
            Self.deliver(line, &state)
        }
    }

    /// Sends a stream line to every tab now, keeping nothing (state a new tab is sent as it is, not as it was).
    private func broadcast(_ line: String) { state.withLock { Self.deliver(line, &$0) } }

    private static func deliver(_ line: String, _ state: inout State) {
        for (id, deliver) in state.watchers where !deliver(line) { state.watchers.removeValue(forKey: id) }
    }

    /// One server-sent event.
    static func line(_ event: JSONValue) -> String { "data: " + event.jsonText + "\n\n" }
}
