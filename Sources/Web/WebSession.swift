import Agent
import Foundation
import History
import SessionUI
import SkillHost
import SkillJSON
import Synchronization

/// The conversation served to browser tabs: its owner (`ConversationOwner`: the turn that runs, one at a time,
/// whichever tab started it, and the questions it waits for), and every tab watching, each sent every event as it
/// happens. A tab that opens late is first sent what happened so far (the last `replayLimit` bytes of it), so several
/// tabs show the same conversation live; any of them may drive it. Conversations are kept in the shell's history
/// (new ones, and any opened again: `WebSession+Conversations`).
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
        /// The conversation shown.
        var owner: ConversationOwner
        /// Who answers in it, and in the conversations started from now on (`choose(model:)`).
        var provider: any ModelProvider
        /// Whether work is being shown to the tabs: from its start until its last event (the answer, the turn's end)
        /// was sent — after its owner is free again. Nothing else starts, and no other conversation is shown, until
        /// then, so no tab sees an ended turn's last events land in the next one.
        var showing = false
        var watchers: [Int: Delivery] = [:]
        var nextWatcher = 1
        /// What a new tab is sent first: the events so far, as stream lines, oldest first.
        var replay: [String] = []
        var replayBytes = 0
    }

    /// How often a streaming answer is laid out anew (`WebEvent.partial`), at most.
    static let layoutInterval = Duration.milliseconds(150)
    /// The longest answer laid out while it streams (each layout renders it whole): longer, it is laid out once
    /// complete.
    static let layoutLimit = 128 << 10

    /// The most of the past a new tab is sent (older events are dropped from the replay first).
    static let replayLimit = 8 << 20

    let state: Mutex<State>

    /// The view every tab renders (registered in the registry by whoever made it).
    package let view: WebView
    let skills: any AgentSkills
    /// Who may answer, the configured one first: a model and the offline router, or the router alone.
    let providers: [any ModelProvider]
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
        providers = provider is OfflineRouter ? [provider] : [provider, OfflineRouter()]
        var configuration = configuration
        configuration.preapproved.formUnion(WebView.skillIDs.map { WebView.source + "/" + $0 })
        self.configuration = configuration
        let notices = NoticeRelay()
        let journal = history.map { store in HistoryJournal(store: store) { notices.send($0) } }
        self.journal = journal
        let owner = Self.owner(
            journal.map { StoredConversation(journal: $0) }, skills: skills, provider: provider,
            configuration: configuration, disabled: configuration.disabledSkills)
        state = Mutex(State(owner: owner, provider: provider))
        notices.connect { [weak self] notice in self?.publish(WebEvent.notice(notice)) }
        view.showing(conversation: owner.id)
        view.follow { [weak self] view in self?.broadcast(Self.line(WebEvent.view(view))) }
    }

    /// The owner of `history`'s conversation (its messages so far, or a new one), written to the history as it goes;
    /// its `problem` is what the tabs are to be told once it is shown (its earlier changes cannot be read).
    func owner(_ history: StoredConversation?, disabled: Set<String>) -> ConversationOwner {
        Self.owner(history, skills: skills, provider: provider, configuration: configuration, disabled: disabled)
    }

    /// Who answers now.
    var provider: any ModelProvider { state.withLock { $0.provider } }

    /// The person picks who answers (`providers`, by name): from the next turn of the conversation shown on, and in
    /// the ones started after it; every tab is told. Refused while work is shown, or for a name not offered.
    package func choose(model name: String) throws(WebRefusal) {
        guard let chosen = providers.first(where: { $0.displayName == name }) else {
            throw WebRefusal(
                status: 404,
                sentence: "no model \(name) is configured; "
                    + providers.map { "\"\($0.displayName)\"" }.joined(separator: " and ") + " can answer")
        }
        guard let owner = startShowing() else {
            throw WebRefusal(status: 409, sentence: ConversationOwner.Busy.running.description)
        }
        defer { stopShowing() }
        do throws(ConversationOwner.Busy) { try owner.switchProvider(chosen) } catch {
            throw WebRefusal(status: 409, sentence: error.description)
        }
        state.withLock { $0.provider = chosen }
        broadcast(Self.line(WebEvent.model(chosen.displayName)))
        broadcast(Self.line(WebEvent.undoable(owner.agent.canUndo)))
    }

    private static func owner(
        _ history: StoredConversation?, skills: any AgentSkills, provider: any ModelProvider,
        configuration: AgentConfiguration, disabled: Set<String>
    ) -> ConversationOwner {
        var configuration = configuration
        configuration.disabledSkills = disabled
        return ConversationOwner(
            history,
            setup: ConversationSetup(skills: skills, provider: provider, configuration: configuration, person: true))
    }

    /// The conversation shown now.
    var owner: ConversationOwner { state.withLock { $0.owner } }

    /// Adds a watching tab: it is sent the replay, then every event. Returns its number for `unwatch`.
    package func watch(_ deliver: @escaping Delivery) -> Int {
        state.withLock { state in
            // Under the lock, so no event slips between the replay and the live ones.
            _ = deliver(Self.line(WebEvent.reset()))
            for line in state.replay { _ = deliver(line) }
            _ = deliver(Self.line(WebEvent.running(state.showing)))
            _ = deliver(Self.line(WebEvent.view(view.json)))
            _ = deliver(Self.line(WebEvent.undoable(state.owner.agent.canUndo)))
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
        // Not under the session's lock: the turn writes to the history at once, and a failed write is said to every
        // tab. A swap of the conversation shown cannot cross the start: it retires the owner first, which refuses
        // to start anything once retired and to retire while it works.
        guard let owner = startShowing() else { return .busy(ConversationOwner.Busy.running.description) }
        let first = !owner.isBegun
        let stream: AsyncStream<ConversationEvent>
        do throws(ConversationOwner.Busy) { stream = try owner.send(text) } catch {
            stopShowing()
            return .busy(error.description)
        }
        // The message is the conversation's from `send` on: its number is what a rewind goes back to before.
        let started = (owner: owner, first: first, number: owner.agent.userMessages.count, stream: stream)
        publish(WebEvent.user(text, number: started.number))
        publish(WebEvent.running(true))
        if started.first { broadcast(Self.line(WebEvent.conversation(started.owner.id))) }
        follow(started.stream, of: started.owner)
        return .started
    }

    /// Sends what `stream` reports to every tab as it happens, then the turn's end.
    func follow(_ stream: AsyncStream<ConversationEvent>, of owner: ConversationOwner) {
        Task { [self] in
            var answer = ""
            // Each running call's arguments, for its result's words.
            var arguments: [String: JSONValue] = [:]
            // A model's markdown answer is laid out as it streams, at most every `layoutInterval`.
            let layOut = owner.agent.provider.answersInMarkdown
            var laidOut = ContinuousClock.now
            var layoutWait = Self.layoutInterval
            for await event in stream {
                switch event {
                case .agent(let event):
                    if case .thinking = event { answer = "" }
                    if case .textDelta(let delta) = event { answer += delta }
                    var words: String?
                    if case .toolCall(let call) = event {
                        switch call.phase {
                        case .started(.value(let given)): arguments[call.id] = given
                        case .finished(let result, _):
                            words = self.words(
                                result, arguments: arguments.removeValue(forKey: call.id), of: call.skill)
                        default: break
                        }
                    }
                    publish(WebEvent.encode(event, plan: plan(of: event), words: words))
                    // Each layout costs what the answer so far costs to render: the next waits four times as long
                    // as this one took, and past `layoutLimit` the rest streams as text until the answer ends.
                    if layOut, case .textDelta = event, answer.utf8.count <= Self.layoutLimit,
                        ContinuousClock.now - laidOut >= layoutWait
                    {
                        let started = ContinuousClock.now
                        broadcast(Self.line(WebEvent.partial(markdown: answer)))
                        laidOut = .now
                        layoutWait = max(Self.layoutInterval, (laidOut - started) * 4)
                    }
                case .asked(let request): publish(WebEvent.encode(.confirmationNeeded(request)))
                case .settled(let id): publish(WebEvent.confirmed(id))
                case .undoing(let shown, _, _): publish(WebEvent.notice("↶ undoing \(shown)"))
                case .undid(.declined, _, _): publish(WebEvent.notice("↶ not undone: you said no"))
                case .rewound(let change): publish(WebEvent.notice("↶ undone: \(change.call)"))
                case .rewindEnded(let failure?):
                    publish(WebEvent.notice("\(failure); the conversation was not rewound"))
                case .rewindEnded(nil):
                    reshow(owner)
                    publish(WebEvent.notice("rewound: the conversation goes on from before that message"))
                case .undid, .called: break
                }
            }
            if !answer.isEmpty { publish(WebEvent.answer(answer, markdown: owner.agent.provider.answersInMarkdown)) }
            publish(WebEvent.running(false))
            publish(WebEvent.undoable(owner.agent.canUndo))
            stopShowing()
        }
    }

    /// Takes the tabs for work of the conversation shown; nil while other work is shown.
    func startShowing() -> ConversationOwner? {
        state.withLock { state in
            guard !state.showing else { return nil }
            state.showing = true
            return state.owner
        }
    }

    /// The work's last event was sent (or it never started).
    func stopShowing() { state.withLock { $0.showing = false } }

    /// What `/trace` shows of the last turn: each step's request and the calls with their timings.
    package var traceReport: String { owner.trace.report() }

    /// A result as a person reads it, for its card's one line (nil for a skill no longer there).
    func words(_ result: JSONValue, arguments: JSONValue?, of skill: String) -> String? {
        guard let info = skills.skill(skill) else { return nil }
        return ResultWords.line(result, arguments: arguments ?? .object(JSONObject()), skill: info)
    }

    /// `words` as `WebHistory.events` takes it.
    var cardWords: (String, JSONValue, JSONValue?) -> String? {
        { [self] skill, result, arguments in words(result, arguments: arguments, of: skill) }
    }

    /// The steps of a composite call that starts with `event`, for its card.
    private func plan(of event: AgentEvent) -> [String]? {
        guard case .toolCall(let call) = event, case .started = call.phase,
            let plan = skills.skill(call.skill)?.kind.compositePlan
        else { return nil }
        return plan.lines
    }

    /// Skills the model never sees in this session (the skills panel's switches).
    package var disabledSkills: Set<String> { owner.agent.disabledSkills }

    /// Lets the model see `skill` again, or hides it, from the next model request on; every tab is told.
    package func setEnabled(_ skill: String, _ enabled: Bool) {
        owner.agent.setDisabled(skill, !enabled)
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
        owner.agent.addContext("[the person activated skill \(name)]\n" + instructions)
        publish(WebEvent.notice("activated skill \(name): its instructions are part of the conversation now"))
    }

    /// Tells every tab what a watcher saw change (the skill folders), one notice per line.
    package func post(_ lines: [String]) {
        publish(WebEvent.skills())
        for line in lines { publish(WebEvent.notice(line)) }
    }

    /// Stops the running turn: its calls are cancelled, a confirmation it waits for is answered no, and the tabs
    /// see the cancelled cards and the turn's end as the stream reports them.
    package func stop() { owner.stop() }

    /// A tab's answer to the confirmation `id`. False when nothing asks it (answered already, or withdrawn).
    package func confirm(_ id: String, _ answer: ConfirmationAnswer) -> Bool { owner.confirm(id: id, answer: answer) }

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

/// Passes the history's notices on to whoever is connected once it exists (the session, after its init).
private final class NoticeRelay: Sendable {
    private let target = Mutex<(@Sendable (String) -> Void)?>(nil)

    func connect(_ send: @escaping @Sendable (String) -> Void) { target.withLock { $0 = send } }
    func send(_ notice: String) { target.withLock { $0 }?(notice) }
}
