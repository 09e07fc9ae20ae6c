import Agent
import Foundation
import History
import SessionUI
import SkillHost
import SkillJSON
import Synchronization

/// The conversations served to browser tabs. Each tab shows one conversation (`WebRoom`: its owner, the work that
/// runs, what it showed so far) and may drive it; tabs that show the same conversation follow it live together, and
/// a tab that comes to one late is first sent what happened so far (`WebRoom.sync`). A tab names its conversation
/// in every request (`X-Skillhost-Conversation`); a request that names none acts on the one used last. The
/// conversations are kept in the shell's history (new ones, and any opened again: `WebSession+Conversations`);
/// those no tab used for a while are closed, and opened again from the history when a tab comes back to them.
package final class WebSession: Sendable {
    /// How a watching stream is written to: false once it is gone.
    package typealias Delivery = WebTabs.Delivery

    /// What a request to start a turn got.
    package enum SendResult: Equatable, Sendable {
        case started
        /// A turn runs already; the sentence says what to do.
        case busy(String)
        case empty
    }

    struct State {
        /// The conversations open, by key.
        var rooms: [String: WebRoom]
        /// The one used last: what a request naming none, and a new tab, gets.
        var latest: WebRoom
        /// Who answers in the conversations started from now on (`choose(model:in:)`).
        var provider: any ModelProvider
        /// A count of uses, for closing the least used conversation first.
        var uses = 0
        /// The last number given to a conversation kept nowhere (without a history).
        var unnamed = 0
        /// The conversations deleted here and not brought back: never opened again, removed for good at the end.
        var deleted: Set<String> = []
    }

    /// How often a streaming answer is laid out anew (`WebEvent.partial`), at most.
    static let layoutInterval = Duration.milliseconds(150)
    /// The longest answer laid out while it streams (each layout renders it whole): longer, it is laid out once
    /// complete.
    static let layoutLimit = 128 << 10
    /// The most conversations open at once: past it, the least used idle one is closed (its tabs get it back from
    /// the history when they use it again).
    static let roomLimit = 16

    let state: Mutex<State>
    let tabs: WebTabs
    /// The view a skill folder declares, by its name (set by the service).
    let folderView = Mutex<@Sendable (String) -> SkillView?>({ _ in nil })

    /// The view every tab renders (registered in the registry by whoever made it).
    package let view: WebView
    let skills: any AgentSkills
    /// Who may answer, the configured one first: a model and the offline router, or the router alone.
    let providers: [any ModelProvider]
    let configuration: AgentConfiguration
    /// Where conversations are kept; nil without a history (none could be opened).
    let journal: HistoryJournal?
    /// How long a deleted conversation can be brought back before it is removed from the history for good.
    let deletionDelay: Duration

    /// A session over `skills`, kept in `history` when there is one; `view`'s skills are never asked about (they
    /// change only the window). A write to the history that fails is said to every tab and retried. Conversations
    /// deleted and not brought back before the last run ended are removed now.
    package init(
        skills: any AgentSkills, provider: any ModelProvider, configuration: AgentConfiguration, view: WebView,
        history: HistoryStore?, deletionDelay: Duration = .seconds(8)
    ) {
        self.view = view
        self.skills = skills
        self.deletionDelay = deletionDelay
        providers = provider is OfflineRouter ? [provider] : [provider, OfflineRouter()]
        var configuration = configuration
        configuration.preapproved.formUnion(WebView.skillIDs.map { WebView.source + "/" + $0 })
        self.configuration = configuration
        let notices = NoticeRelay()
        let journal = history.map { store in HistoryJournal(store: store) { notices.send($0) } }
        self.journal = journal
        // Those deleted longer ago than the moment to bring them back (by an earlier run: another running now may
        // still be offering its Undo).
        try? history?.purgeDeleted(before: Date().addingTimeInterval(-Self.seconds(deletionDelay)))
        let tabs = WebTabs()
        self.tabs = tabs
        let owner = Self.owner(
            journal.map { StoredConversation(journal: $0) }, skills: skills, provider: provider,
            configuration: configuration, disabled: configuration.disabledSkills)
        let first = WebRoom(key: owner.id ?? "m1", owner: owner, tabs: tabs)
        state = Mutex(State(rooms: [first.key: first], latest: first, provider: provider, unnamed: 1))
        notices.connect { [weak self] notice in
            // Not on the writer's thread: it may hold a lock a room's event needs.
            Task { self?.publishEverywhere(WebEvent.notice(notice)) }
        }
        view.showing(conversation: owner.id)
        view.follow { view in tabs.broadcast(WebEvent.view(view).jsonText) }
    }

    /// The owner of `history`'s conversation (its messages so far, or a new one), written to the history as it goes;
    /// its `problem` is what the tabs are to be told once it is shown (its earlier changes cannot be read).
    func owner(_ history: StoredConversation?, disabled: Set<String>) -> ConversationOwner {
        Self.owner(history, skills: skills, provider: provider, configuration: configuration, disabled: disabled)
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

    /// Who answers in the conversations started from now on.
    var provider: any ModelProvider { state.withLock { $0.provider } }

    /// The conversation used last.
    package var latest: WebRoom { state.withLock { $0.latest } }

    /// Who answers in `room`'s conversation (the one used last when nil).
    func provider(in room: WebRoom?) -> any ModelProvider { (room ?? latest).owner.agent.provider }

    /// The person picks who answers (`providers`, by name): from the next turn of `room`'s conversation on, and in
    /// the ones started after it; every tab is told. Refused while work of it is shown, or for a name not offered.
    package func choose(model name: String, in room: WebRoom? = nil) throws(WebRefusal) {
        guard let chosen = providers.first(where: { $0.displayName == name }) else {
            throw WebRefusal(
                status: 404,
                sentence: "no model \(name) is configured; "
                    + providers.map { "\"\($0.displayName)\"" }.joined(separator: " and ") + " can answer")
        }
        let room = room ?? latest
        guard let owner = room.startShowing() else {
            throw WebRefusal(status: 409, sentence: ConversationOwner.Busy.running.description)
        }
        defer { room.stopShowing() }
        do throws(ConversationOwner.Busy) { try owner.switchProvider(chosen) } catch {
            throw WebRefusal(status: 409, sentence: error.description)
        }
        state.withLock { $0.provider = chosen }
        room.publish(WebEvent.model(chosen.displayName))
        room.publish(WebEvent.undoable(owner.agent.canUndo))
    }

    /// Adds a watching stream: it is sent the conversation used last so far, then every event of every
    /// conversation. Returns its number for `unwatch`.
    package func watch(_ deliver: @escaping Delivery) -> Int { latest.attach(deliver, view: view.json) }

    package func unwatch(_ id: Int) { _ = tabs.state.withLock { $0.streams.removeValue(forKey: id) } }

    /// Streams watching now.
    package var watchers: Int { tabs.state.withLock { $0.streams.count } }

    /// Starts a turn in `room`'s conversation (the one used last when nil) with the person's `text`, unless work
    /// of it runs.
    package func send(_ text: String, in room: WebRoom? = nil) -> SendResult {
        let text = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else { return .empty }
        var room = room ?? latest
        // Not under the session's lock: the turn writes to the history at once, and a failed write is said to every
        // tab. Closing the conversation cannot cross the start: it retires the owner first, which refuses to start
        // anything once retired and to retire while it works.
        for attempt in 1...2 {
            guard room.startShowing() != nil else { return .busy(ConversationOwner.Busy.running.description) }
            switch start(text, in: room) {
            case .success(let stream):
                follow(stream, in: room)
                return .started
            case .failure(let busy):
                room.stopShowing()
                // Closed meanwhile (past the limit of conversations open): opened again from the history, once.
                guard busy == .retired, attempt == 1, let again = try? self.room(room.key), again !== room else {
                    return .busy(busy.description)
                }
                room = again
            }
        }
        return .busy(ConversationOwner.Busy.retired.description)
    }

    /// Starts a turn with `text` in `room`, taken for it already, and tells its tabs.
    func start(_ text: String, in room: WebRoom) -> Result<AsyncStream<ConversationEvent>, ConversationOwner.Busy> {
        let owner = room.owner
        let first = !owner.isBegun
        let stream: AsyncStream<ConversationEvent>
        do throws(ConversationOwner.Busy) { stream = try owner.send(text) } catch { return .failure(error) }
        used(room)
        // The message is the conversation's from `send` on: its number is what a rewind goes back to before.
        room.publish(WebEvent.user(text, number: owner.agent.userMessages.count))
        room.publish(WebEvent.running(true))
        if first { tabs.broadcast(WebEvent.conversation(owner.id).jsonText) }
        return .success(stream)
    }

    /// Sends what `stream` reports to `room`'s tabs as it happens, then the work's end.
    func follow(_ stream: AsyncStream<ConversationEvent>, in room: WebRoom) {
        Task { [self] in
            _ = await show(stream, in: room)
            end(in: room)
        }
    }

    /// The work's end: its tabs told, the room free again.
    func end(in room: WebRoom) {
        room.publish(WebEvent.running(false))
        room.publish(WebEvent.undoable(room.owner.agent.canUndo))
        room.stopShowing()
    }

    /// Shows what `stream` reports to `room`'s tabs as it happens; true when it was a rewind that went through.
    /// - Parameters:
    ///   - card: the card whose view made the calls of `stream` (they are listed under it and show no view).
    ///   - observe: sees each event first.
    func show(
        _ stream: AsyncStream<ConversationEvent>, in room: WebRoom, quietly: Bool = false, by card: String? = nil,
        observe: (ConversationEvent) -> Void = { _ in }
    ) async -> Bool {
        let owner = room.owner
        var answer = ""
        var rewound = false
        // Each running call's arguments, for its result's words.
        var arguments: [String: JSONValue] = [:]
        // A model's markdown answer is laid out as it streams, at most every `layoutInterval`.
        let layOut = owner.agent.provider.answersInMarkdown
        var laidOut = ContinuousClock.now
        var layoutWait = Self.layoutInterval
        for await event in stream {
            observe(event)
            switch event {
            case .agent(let event):
                if case .thinking = event { answer = "" }
                if case .textDelta(let delta) = event { answer += delta }
                var words: String?
                var extra = JSONObject()
                if case .toolCall(let call) = event {
                    var given = arguments[call.id]
                    if case .started(.value(let value)) = call.phase { given = value }
                    extra = viewFields(call, by: card, arguments: given)
                    switch call.phase {
                    case .started(.value(let given)): arguments[call.id] = given
                    case .finished(let result, _):
                        words = self.words(result, arguments: arguments.removeValue(forKey: call.id), of: call.skill)
                    default: break
                    }
                }
                room.publish(WebEvent.encode(event, plan: plan(of: event), words: words, extra: extra))
                // Each layout costs what the answer so far costs to render: the next waits four times as long
                // as this one took, and past `layoutLimit` the rest streams as text until the answer ends.
                if layOut, case .textDelta = event, answer.utf8.count <= Self.layoutLimit,
                    ContinuousClock.now - laidOut >= layoutWait
                {
                    let started = ContinuousClock.now
                    room.transient(WebEvent.partial(markdown: answer))
                    laidOut = .now
                    layoutWait = max(Self.layoutInterval, (laidOut - started) * 4)
                }
            case .asked(let request):
                // A view's call says whose it is: the person answers knowing a view asked, not the model.
                let by = card.map { JSONObject([(key: "by", value: .string($0))]) } ?? JSONObject()
                room.publish(WebEvent.encode(.confirmationNeeded(request), extra: by))
            case .settled(let id): room.publish(WebEvent.confirmed(id))
            case .undoing(let shown, _, _): room.publish(WebEvent.notice("↶ undoing \(shown)"))
            case .undid(.declined, _, _): room.publish(WebEvent.notice("↶ not undone: you said no"))
            case .rewound(let change): room.publish(WebEvent.notice("↶ undone: \(change.call)"))
            case .rewindEnded(let failure?):
                room.publish(WebEvent.notice("\(failure); the conversation was not rewound"))
            case .rewindEnded(nil):
                rewound = true
                reshow(room)
                if !quietly {
                    room.publish(WebEvent.notice("rewound: the conversation goes on from before that message"))
                }
            case .undid, .called: break
            }
        }
        if !answer.isEmpty { room.publish(WebEvent.answer(answer, markdown: owner.agent.provider.answersInMarkdown)) }
        return rewound
    }

    /// What `/trace` shows of `room`'s last turn: each step's request and the calls with their timings.
    package func traceReport(in room: WebRoom? = nil) -> String { (room ?? latest).owner.trace.report() }

    /// A result as a person reads it, for its card's one line (nil for a skill no longer there).
    func words(_ result: JSONValue, arguments: JSONValue?, of skill: String) -> String? {
        guard let info = skills.skill(skill) else { return nil }
        // An MCP server's result kept whole for its view: its text is what a person reads.
        if info.kind == .external, info.view != nil || info.audience == [.view],
            let content = result["content"]?.arrayValue
        {
            return content.compactMap { $0["text"]?.stringValue }.joined(separator: " ")
        }
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

    /// Skills the model never sees in `room`'s conversation (the skills panel's switches).
    package func disabledSkills(in room: WebRoom? = nil) -> Set<String> { (room ?? latest).owner.agent.disabledSkills }

    /// Lets the model see `skill` again, or hides it, from the next model request of `room`'s conversation on; its
    /// tabs are told.
    package func setEnabled(_ skill: String, _ enabled: Bool, in room: WebRoom? = nil) {
        let room = room ?? latest
        room.owner.agent.setDisabled(skill, !enabled)
        room.publish(WebEvent.skills())
    }

    /// Tells every tab that the registry changed, with the shell's line for it (and for each definition that
    /// changed since it was first seen, what changed).
    package func registryChanged(_ change: RegistryChange, definitions: [String] = []) {
        publishEverywhere(WebEvent.skills(change.line))
        for line in definitions { publishEverywhere(WebEvent.notice(line)) }
    }

    /// A skill folder the person chose in the panel: its instructions go into conversation `key`'s (as `/use` does
    /// in the shell), said in its tabs — looked up now, after the activation, which may have taken a while.
    package func use(_ name: String, instructions: String, in key: String?) throws(WebRefusal) {
        let room = try room(key)
        room.owner.agent.addContext("[the person activated skill \(name)]\n" + instructions)
        room.publish(WebEvent.notice("activated skill \(name): its instructions are part of the conversation now"))
    }

    /// Tells every tab what a watcher saw change (the skill folders), one notice per line.
    package func post(_ lines: [String]) {
        publishEverywhere(WebEvent.skills())
        for line in lines { publishEverywhere(WebEvent.notice(line)) }
    }

    /// Stops the work of `room`'s conversation: its calls are cancelled, a confirmation it waits for is answered
    /// no, and the tabs see the cancelled cards and the turn's end as the stream reports them.
    package func stop(in room: WebRoom? = nil) { (room ?? latest).owner.stop() }

    /// A tab's answer to the confirmation `id` of `room`'s conversation. False when nothing there asks it (answered
    /// already, or withdrawn).
    package func confirm(_ id: String, _ answer: ConfirmationAnswer, in room: WebRoom? = nil) -> Bool {
        (room ?? latest).owner.confirm(id: id, answer: answer)
    }

    /// Sends `event` to the tabs of every open conversation, each keeping it for later ones.
    func publishEverywhere(_ event: JSONValue) {
        for room in state.withLock({ Array($0.rooms.values) }) { room.publish(event) }
    }

    /// `room` was used now: it is the one a request naming none gets (and a new tab), and the last to be closed.
    func used(_ room: WebRoom) {
        let changed = state.withLock { state -> Bool in
            Self.touch(room, &state)
            defer { state.latest = room }
            return state.latest !== room
        }
        if changed { view.showing(conversation: room.owner.id) }
    }

    /// A tab asked something of `room` now: it is the last to be closed.
    func touch(_ room: WebRoom) { state.withLock { Self.touch(room, &$0) } }

    static func touch(_ room: WebRoom, _ state: inout State) {
        state.uses += 1
        room.state.withLock { $0.used = state.uses }
    }
}

/// Passes the history's notices on to whoever is connected once it exists (the session, after its init).
private final class NoticeRelay: Sendable {
    private let target = Mutex<(@Sendable (String) -> Void)?>(nil)

    func connect(_ send: @escaping @Sendable (String) -> Void) { target.withLock { $0 = send } }
    func send(_ notice: String) { target.withLock { $0 }?(notice) }
}
