import Agent
import Foundation
import History
import SessionUI
import SkillHost
import SkillJSON
import Synchronization

/// The conversation served to browser tabs: the agent session, the turn that runs (one at a time, whichever tab
/// started it), the confirmation it waits for, and every tab watching, each sent every event as it happens. A tab
/// that opens late is first sent what happened so far (the last `replayLimit` bytes of it), so several tabs show
/// the same conversation live; any of them may drive it. Conversations are kept in the shell's history (new ones,
/// and any opened again: `WebSession+Conversations`).
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

    struct State {
        var agent: AgentSession?
        /// The conversation as the history keeps it (nil without a history).
        var history: StoredConversation?
        var conversation: String? { history?.id }
        /// Whether the history holds the conversation yet (written with its first message).
        var stored = false
        var running = false
        /// The last turn's trace (`/trace`), as it is recorded.
        var trace = TraceRecorder()
        var confirmation: (request: ConfirmationRequest, answer: CheckedContinuation<ConfirmationAnswer, Never>)?
        /// The running turn was stopped: a question it asks from now on is answered no without being asked.
        var stopped = false
        var watchers: [Int: Delivery] = [:]
        var nextWatcher = 1
        /// What a new tab is sent first: the events so far, as stream lines, oldest first.
        var replay: [String] = []
        var replayBytes = 0
    }

    /// The most of the past a new tab is sent (older events are dropped from the replay first).
    static let replayLimit = 8 << 20

    let state = Mutex(State())

    /// The view every tab renders (registered in the registry by whoever made it).
    package let view: WebView
    let skills: any AgentSkills
    let provider: any ModelProvider
    let configuration: AgentConfiguration
    /// Where conversations are kept; nil without a history (none could be opened).
    let journal: HistoryJournal?

    /// A session over `skills`, kept in `history` when there is one; `view`'s skills are never asked about (they
    /// change only the window). A write to the history that fails is said to every tab and retried.
    package init(
        skills: any AgentSkills, provider: any ModelProvider, configuration: AgentConfiguration, view: WebView,
        history: HistoryStore?
    ) {
        self.view = view
        self.skills = skills
        self.provider = provider
        var configuration = configuration
        configuration.preapproved.formUnion(WebView.skillIDs.map { WebView.source + "/" + $0 })
        self.configuration = configuration
        let notices = NoticeRelay()
        journal = history.map { store in HistoryJournal(store: store) { notices.send($0) } }
        notices.connect { [weak self] notice in self?.publish(WebEvent.notice(notice)) }
        let history = journal.map { StoredConversation(journal: $0) }
        let agent = makeAgent(history, disabled: configuration.disabledSkills).agent
        state.withLock {
            $0.agent = agent
            $0.history = history
        }
        view.showing(conversation: history?.id)
        view.follow { [weak self] view in self?.broadcast(Self.line(WebEvent.view(view))) }
    }

    /// An agent session for `history`'s conversation (its messages so far, or a new one), written to the history
    /// as it goes; and what the tabs are to be told once it is shown (its earlier changes cannot be read).
    func makeAgent(_ history: StoredConversation?, disabled: Set<String>) -> (agent: AgentSession, problem: String?) {
        var configuration = configuration
        configuration.sessionID = history?.id
        configuration.disabledSkills = disabled
        let agent = AgentSession(
            skills: skills, provider: provider, configuration: configuration,
            confirm: { [weak self] request in await self?.ask(request) ?? .deny },
            conversation: history?.conversation(systemPrompt: configuration.systemPrompt)
                ?? Conversation(system: configuration.systemPrompt),
            onMessage: history?.onMessage, onChange: history?.onChange)
        return (agent, history?.attach(agent))
    }

    /// Adds a watching tab: it is sent the replay, then every event. Returns its number for `unwatch`.
    package func watch(_ deliver: @escaping Delivery) -> Int {
        state.withLock { state in
            // Under the lock, so no event slips between the replay and the live ones.
            _ = deliver(Self.line(WebEvent.reset()))
            for line in state.replay { _ = deliver(line) }
            _ = deliver(Self.line(WebEvent.running(state.running)))
            _ = deliver(Self.line(WebEvent.view(view.json)))
            _ = deliver(Self.line(WebEvent.undoable(state.agent?.canUndo ?? false)))
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
        let trace = TraceRecorder()
        let turn = state.withLock { state -> (agent: AgentSession, history: StoredConversation?, first: Bool)? in
            guard !state.running, let agent = state.agent else { return nil }
            state.running = true
            state.stopped = false
            state.trace = trace
            defer { state.stored = true }
            return (agent, state.history, !state.stored)
        }
        guard let turn else {
            return .busy("a turn is running; wait for its answer or stop it first")
        }
        // The history holds a conversation from its first message on (one opened and left empty is not kept).
        if turn.first { turn.history?.begin(turn.agent, model: provider.displayName) }
        publish(WebEvent.user(text))
        publish(WebEvent.running(true))
        if turn.first { broadcast(Self.line(WebEvent.conversation(turn.history?.id))) }
        // The turn starts here, not in the task, so that a stop that follows at once finds it.
        let events = turn.agent.send(text)
        Task { [self] in
            var recorder = TurnRecorder(turn.history)
            for await event in events {
                recorder.record(event)
                trace.record(event, conversation: turn.agent.conversation, state: turn.agent.lastStateMessage)
                // A question goes to the tabs from the confirmation hook (`ask`), once it can be answered.
                if case .confirmationNeeded = event { continue }
                publish(WebEvent.encode(event, plan: plan(of: event)))
            }
            if !recorder.answer.isEmpty {
                publish(WebEvent.answer(recorder.answer, markdown: provider.answersInMarkdown))
            }
            recorder.finish()
            state.withLock { $0.running = false }
            publish(WebEvent.running(false))
            publish(WebEvent.undoable(turn.agent.canUndo))
        }
        return .started
    }

    /// What `/trace` shows of the last turn: each step's request and the calls with their timings.
    package var traceReport: String { state.withLock { $0.trace }.trace.report() }

    /// The steps of a composite call that starts with `event`, for its card.
    private func plan(of event: AgentEvent) -> [String]? {
        guard case .toolCall(let call) = event, case .started = call.phase,
            let plan = skills.skill(call.skill)?.kind.compositePlan
        else { return nil }
        return plan.lines
    }

    /// Skills the model never sees in this session (the skills panel's switches).
    package var disabledSkills: Set<String> { state.withLock { $0.agent }?.disabledSkills ?? [] }

    /// Lets the model see `skill` again, or hides it, from the next model request on; every tab is told.
    package func setEnabled(_ skill: String, _ enabled: Bool) {
        guard let agent = state.withLock({ $0.agent }) else { return }
        agent.setDisabled(skill, !enabled)
        publish(WebEvent.skills())
    }

    /// Tells every tab that the registry changed, with the shell's line for it (and for each definition that
    /// changed since it was first seen, what changed).
    package func registryChanged(_ change: RegistryChange, definitions: [String] = []) {
        publish(WebEvent.skills(change.line))
        for line in definitions { publish(WebEvent.notice(line)) }
    }

    /// A skill folder the person chose in the panel: its instructions go into the conversation (as `/use` does in
    /// the shell), said in every tab.
    package func use(_ name: String, instructions: String) {
        state.withLock { $0.agent }?.addContext("[the person activated skill \(name)]\n" + instructions)
        publish(WebEvent.notice("activated skill \(name): its instructions are part of the conversation now"))
    }

    /// Tells every tab what a watcher saw change (the skill folders), one notice per line.
    package func post(_ lines: [String]) {
        publish(WebEvent.skills())
        for line in lines { publish(WebEvent.notice(line)) }
    }

    /// Stops the running turn: its calls are cancelled, a confirmation it waits for is answered no, and the tabs
    /// see the cancelled cards and the turn's end as the stream reports them.
    package func stop() {
        let (agent, pending) = state.withLock { state in
            defer {
                state.confirmation = nil
                // A question the turn has not asked yet is answered no as well.
                if state.running { state.stopped = true }
            }
            return (state.running ? state.agent : nil, state.confirmation)
        }
        pending?.answer.resume(returning: .deny)
        if let pending { publish(WebEvent.confirmed(pending.request.callID)) }
        agent?.stopTurn()
    }

    /// A tab's answer to the confirmation `id`. False when nothing asks it (answered already, or withdrawn).
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

    /// The one way a question reaches the tabs (a turn's call, an undo's): the wait for the answer is registered
    /// first and the question sent after, so no answer can come before something waits for it (the race of
    /// issue #30 lived between an event and this hook, which the page had to reconcile).
    func ask(_ request: ConfirmationRequest) async -> ConfirmationAnswer {
        await withCheckedContinuation { continuation in
            let (stopped, earlier) = state.withLock {
                state -> (Bool, (request: ConfirmationRequest, answer: CheckedContinuation<ConfirmationAnswer, Never>)?)
                in
                if state.stopped { return (true, nil) }
                defer { state.confirmation = (request, continuation) }
                return (false, state.confirmation)
            }
            if let earlier {
                earlier.answer.resume(returning: .deny)
                publish(WebEvent.confirmed(earlier.request.callID))
            }
            if stopped {
                continuation.resume(returning: .deny)
                return
            }
            publish(WebEvent.encode(.confirmationNeeded(request)))
        }
    }

    /// Sends `event` to every tab and keeps it for those that come later.
    func publish(_ event: JSONValue) {
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
    func broadcast(_ line: String) { state.withLock { Self.deliver(line, &$0) } }

    static func deliver(_ line: String, _ state: inout State) {
        for (id, deliver) in state.watchers where !deliver(line) { state.watchers.removeValue(forKey: id) }
    }

    /// One server-sent event.
    static func line(_ event: JSONValue) -> String { "data: " + event.jsonText + "\n\n" }
}

/// What the history keeps of a turn as it streams: the calls and usage (`HistoryJournal.record`), and the answer
/// written so far as a draft at most every `draftInterval`, so a killed host loses little of it.
struct TurnRecorder {
    static let draftInterval = Duration.milliseconds(250)

    let history: StoredConversation?
    /// The current step's answer text so far.
    private(set) var answer = ""
    private var arguments: [String: String] = [:]
    private var lastDraft = ContinuousClock.now

    init(_ history: StoredConversation?) { self.history = history }

    mutating func record(_ event: AgentEvent) {
        switch event {
        case .thinking: answer = ""
        case .textDelta(let delta): answer += delta
        default: break
        }
        guard let history else { return }
        history.record(event, arguments: &arguments)
        if case .textDelta = event, ContinuousClock.now - lastDraft >= Self.draftInterval {
            lastDraft = .now
            history.draft(answer)
        }
    }

    /// The turn's messages are all recorded: no draft is left to come back as an unfinished answer.
    func finish() { history?.turnEnded() }
}

/// Passes the history's notices on to whoever is connected once it exists (the session, after its init).
private final class NoticeRelay: Sendable {
    private let target = Mutex<(@Sendable (String) -> Void)?>(nil)

    func connect(_ send: @escaping @Sendable (String) -> Void) { target.withLock { $0 = send } }
    func send(_ notice: String) { target.withLock { $0 }?(notice) }
}
