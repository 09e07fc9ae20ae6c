import Foundation
import SkillHost
import SkillJSON
import Synchronization

/// How the agent behaves.
package struct AgentConfiguration: Sendable {
    /// Model requests per turn before the turn stops (the shell offers to continue).
    package var stepLimit = 8
    /// With more enabled skills than this, only the most relevant are sent to the model.
    package var maximumTools = 24
    /// Skills the model never sees.
    package var disabledSkills: Set<String> = []
    /// The conversation's id as skills see it (`session` in their context); nil when it has none.
    package var sessionID: String?
    /// Bytes of plugin state snapshots each model request may carry (`snapshot_budget_bytes`); 0 sends none.
    package var snapshotBudget = 2000
    /// Skills this front end's person is never asked about (the browser's own view skills, which change nothing
    /// but the window), as `source/id` of a built-in source's skill: where the policy would ask, they run. A rule
    /// that denies them still does. An id alone is not enough — anyone can name a plugin skill or a composite
    /// `ui_set_theme`.
    package var preapproved: Set<String> = []
    /// Context for every model request, as a system message right after the system prompt (the skill folders'
    /// catalogue: each skill's name and description); read anew for each request, never stored in the
    /// conversation. Nil or an empty answer: none.
    package var context: (@Sendable () -> String?)?
    /// Tools always offered when there are more than `maximumTools` (the skill folders' `skill_activate`, whose
    /// description is the catalogue of skills).
    package var pinnedTools: Set<String> = []
    /// What a turn and the session may use before the turn stops (`finished(.budgetReached)`).
    package var budgets = Budgets()
    /// The system message that starts every conversation.
    package var systemPrompt =
        "You are the assistant of skillhost, a tool host on the user's machine. Use the provided tools whenever "
        + "they can answer or act; never guess what a tool can compute. Answer briefly from the tool results."

    package init() {}
}

/// Asks the user about a mutating or destructive call. Supplied by interactive front ends.
package typealias ConfirmationHook = @Sendable (ConfirmationRequest) async -> ConfirmationAnswer

/// A conversation with a model that calls skills: think → call skills → observe → answer.
///
/// One turn runs at a time. Each turn is an `AsyncStream` of `AgentEvent`s; cancelling the task that consumes it
/// (or abandoning the stream) stops the model request and the running skill calls promptly and leaves the
/// conversation consistent: every tool call gets a result, a cancelled one says so.
///
/// ```swift
/// let session = AgentSession(skills: registry, provider: OfflineRouter())
/// for await event in session.send("what is (23+7)*2") { print(event) }
/// ```
package final class AgentSession: Sendable {
    /// The skills offered to the model (the registry, or a stand-in).
    package let skills: any AgentSkills
    package let provider: any ModelProvider
    package let configuration: AgentConfiguration
    let confirm: ConfirmationHook?
    /// Called with every message as it is added (the shell persists them at once).
    let onMessage: (@Sendable (Message) -> Void)?
    /// Called with every change a call made (the shell persists them, for `/rewind` after `--resume`).
    let onChange: (@Sendable (ChangeRecord) -> Void)?
    /// Where the session is recorded while a recorder is in it (`ask --record`, `/record`): the person's turns,
    /// continuations, rewinds and confirmations, every model exchange and every call, as they happen.
    package let recording: RecordSlot?
    let state: Mutex<State>

    struct State {
        var conversation: Conversation
        /// Skills the user allowed for the rest of the session.
        var allowedForSession: Set<String> = []
        /// The BM25 index of the last skill set, rebuilt only when skills change.
        var selector: (key: [String], selector: SkillSelector)?
        /// Skills the model never sees (starts from the configuration; `/disable` changes it).
        var disabledSkills: Set<String>
        /// The reversing call the last mutating skill registered, and which skill registered it.
        var lastUndo: (skill: String, undo: UndoAction)?
        /// The state message the last model request carried (`/state`).
        var lastState: String?
        /// The task of the turn that runs, for `stopTurn()`.
        var turn: Task<Void, Never>?
        /// What the session and its current turn used, and the budgets waived until the next message, or for good.
        var sessionUse = BudgetUse()
        var turnUse = BudgetUse()
        var waivedForTurn: Set<String> = []
        /// Every change a call made in this session, oldest first (`/rewind`).
        var changes: [ChangeRecord] = []
        var waivedForSession: Set<String> = []
        /// The budget waived since the last turn began, for the record's continuation entry.
        var lastWaiver: (key: String, forSession: Bool)?
        /// Told how many skill calls more the session made, each time it makes some (the history adds them up).
        var callsObserver: (@Sendable (Int) -> Void)?
    }

    /// Counts on from what a resumed session used before, so its budgets hold across processes.
    package func restoreUse(toolCalls: Int, promptTokens: Int, completionTokens: Int) {
        state.withLock { state in
            state.sessionUse.toolCalls.saturatingAdd(toolCalls)
            state.sessionUse.promptTokens.saturatingAdd(promptTokens)
            state.sessionUse.completionTokens.saturatingAdd(completionTokens)
        }
    }

    /// Tells `observer` how many skill calls more the session made, each time it makes some.
    package func observeCalls(_ observer: @escaping @Sendable (Int) -> Void) {
        state.withLock { $0.callsObserver = observer }
    }

    /// Skills the model never sees.
    package var disabledSkills: Set<String> {
        get { state.withLock { $0.disabledSkills } }
        set { state.withLock { $0.disabledSkills = newValue } }
    }

    /// What the current (or last) turn and the whole session used (`/usage`).
    package var use: (turn: BudgetUse, session: BudgetUse) { state.withLock { ($0.turnUse, $0.sessionUse) } }

    /// Lets the turn go on past `reached` (then `continueTurn()`): for the rest of this turn, or — `forSession`
    /// — of the session.
    package func waive(_ reached: BudgetReached, forSession: Bool) { waive(key: reached.key, forSession: forSession) }

    /// Waives the budget `key` (`turn.tokens`, `session.tool_calls`…) as `waive(_:forSession:)` does.
    package func waive(key: String, forSession: Bool) {
        state.withLock { state in
            state.lastWaiver = (key, forSession)
            if forSession {
                state.waivedForSession.insert(key)
            } else {
                state.waivedForTurn.insert(key)
            }
        }
    }

    /// Skill calls the turn and the session may still make (not waived), nil when neither limits them: a response
    /// asking for more runs only that many, so a budget of 3 calls is 3 calls, not 3 responses.
    func toolCallsLeft() -> (left: Int, reached: BudgetReached)? {
        state.withLock { Self.toolCallsLeft(configuration.budgets, $0) }
    }

    /// Counts one skill call more (a composite's step) when the budgets leave one; otherwise says which is spent.
    func takeToolCall() -> String? {
        let spent: String? = state.withLock { state in
            if let (left, reached) = Self.toolCallsLeft(configuration.budgets, state), left < 1 {
                let scope = reached.scope == .session ? "session" : "turn"
                return "the \(scope)'s budget of \(BudgetReached.count(reached.limit)) skill calls is used up, a "
                    + "composite's steps counted"
            }
            state.turnUse.toolCalls += 1
            state.sessionUse.toolCalls += 1
            return nil
        }
        if spent == nil { callsCounted(1) }
        return spent
    }

    private func callsCounted(_ calls: Int) {
        state.withLock { $0.callsObserver }?(calls)
    }

    private static func toolCallsLeft(_ budgets: Budgets, _ state: State) -> (left: Int, reached: BudgetReached)? {
        let waived = state.waivedForTurn.union(state.waivedForSession)
        var tightest: (left: Int, reached: BudgetReached)?
        for (scope, limit, used) in [
            (BudgetReached.Scope.turn, budgets.turn.toolCalls, state.turnUse.toolCalls),
            (.session, budgets.session.toolCalls, state.sessionUse.toolCalls),
        ] {
            guard let limit else { continue }
            let reached = BudgetReached(scope: scope, kind: .toolCalls, used: Double(limit), limit: Double(limit))
            guard !waived.contains(reached.key) else { continue }
            let left = max(0, limit - used)
            if tightest == nil || left < tightest?.left ?? 0 { tightest = (left, reached) }
        }
        return tightest
    }

    func recordUse(tokens usage: Usage? = nil, calls: Int = 0) {
        state.withLock { state in
            for keyPath in [\State.turnUse, \State.sessionUse] {
                state[keyPath: keyPath].promptTokens.saturatingAdd(usage?.promptTokens ?? 0)
                state[keyPath: keyPath].completionTokens.saturatingAdd(usage?.completionTokens ?? 0)
                state[keyPath: keyPath].toolCalls += calls
            }
        }
        if calls > 0 { callsCounted(calls) }
    }

    /// The first budget used up and not waived, if any.
    func budgetReached() -> BudgetReached? {
        let (turn, session, waived) = state.withLock {
            ($0.turnUse, $0.sessionUse, $0.waivedForTurn.union($0.waivedForSession))
        }
        return BudgetReached.first(configuration.budgets, turn: turn, session: session, waived: waived)
    }

    /// Hides `skill` from the model or shows it again, in one step (two front ends may switch at once).
    package func setDisabled(_ skill: String, _ disabled: Bool) {
        state.withLock { state in
            if disabled { state.disabledSkills.insert(skill) } else { state.disabledSkills.remove(skill) }
        }
    }

    /// Takes the undo registered by the last mutating call (nil when there is none).
    package func takeUndo() -> (skill: String, undo: UndoAction)? {
        state.withLock { state in
            defer { state.lastUndo = nil }
            return state.lastUndo
        }
    }

    /// Whether the last mutating call registered an undo not taken yet.
    package var canUndo: Bool { state.withLock { $0.lastUndo != nil } }

    /// Takes over what `previous` — the same conversation with another model — knows of the person and the session:
    /// its changes (rewind) and the last way back (undo), the "always" answers, the budgets lifted for the session,
    /// and what it used.
    package func carryOn(from previous: AgentSession) {
        let carried = previous.state.withLock { ($0.changes, $0.lastUndo, $0.allowedForSession, $0.waivedForSession) }
        let used = previous.use.session
        state.withLock { state in
            state.changes = carried.0 + state.changes
            state.lastUndo = carried.1
            state.allowedForSession = carried.2
            state.waivedForSession = carried.3
        }
        restoreUse(toolCalls: used.toolCalls, promptTokens: used.promptTokens, completionTokens: used.completionTokens)
    }

    /// Puts back an undo taken but not carried out (its first reversing call was declined or refused), unless a
    /// newer change registered one since: a no to `/undo`'s question does not lose the way back.
    package func putBackUndo(_ undo: UndoAction, skill: String) {
        state.withLock { state in
            if state.lastUndo == nil { state.lastUndo = (skill, undo) }
        }
    }

    /// Remembers the undo of a mutating call made outside a turn (the shell's `/call`), for `takeUndo()`.
    package func recordUndo(_ undo: UndoAction, skill: String) { state.withLock { $0.lastUndo = (skill, undo) } }

    /// The selector for `skills`, built once per distinct skill set (ids and descriptions).
    func selector(for skills: [SkillInfo]) -> SkillSelector {
        let key = skills.map { $0.id + "\u{0}" + $0.description }
        if let cached = state.withLock({ $0.selector }), cached.key == key { return cached.selector }
        let selector = SkillSelector(skills)
        state.withLock { $0.selector = (key, selector) }
        return selector
    }

    package init(
        skills: any AgentSkills, provider: any ModelProvider, configuration: AgentConfiguration = AgentConfiguration(),
        confirm: ConfirmationHook? = nil, conversation: Conversation? = nil,
        onMessage: (@Sendable (Message) -> Void)? = nil, onChange: (@Sendable (ChangeRecord) -> Void)? = nil,
        recording: RecordSlot? = nil
    ) {
        self.recording = recording
        self.skills = skills
        self.provider = provider
        self.configuration = configuration
        self.confirm = confirm
        self.onMessage = onMessage
        self.onChange = onChange
        state = Mutex(
            State(
                conversation: conversation ?? Conversation(system: configuration.systemPrompt),
                disabledSkills: configuration.disabledSkills))
    }

    /// The conversation so far.
    package var conversation: Conversation { state.withLock { $0.conversation } }

    /// The plugin state the last model request carried, as the model saw it; nil before any or when none.
    package var lastStateMessage: String? { state.withLock { $0.lastState } }

    func setLastStateMessage(_ message: String?) { state.withLock { $0.lastState = message } }

    /// Adds the user's message and runs one turn.
    package func send(_ text: String) -> AsyncStream<AgentEvent> {
        state.withLock { state in
            state.turnUse = BudgetUse()
            state.waivedForTurn = []
            state.lastWaiver = nil
        }
        recording?.recorder?.turn(text)
        append(Message(role: .user, content: text))
        return runTurn()
    }

    /// Records in the conversation something the person did outside a turn (`/undo`): later turns' model sees it,
    /// and the history keeps it for `--resume`. A system message beginning with `[undo]`.
    package func recordUndone(_ text: String) { append(Message(role: .system, content: "[undo] " + text)) }

    /// Puts text the person chose into the conversation for the model's next turns (`/use NAME`: a skill
    /// folder's instructions), as a system message.
    package func addContext(_ text: String) { append(Message(role: .system, content: text)) }

    /// Runs another turn without a new user message (after the step limit stopped one).
    package func continueTurn() -> AsyncStream<AgentEvent> {
        let waiver = state.withLock { state in
            defer { state.lastWaiver = nil }
            return state.lastWaiver
        }
        recording?.recorder?.continued(waived: waiver?.key, forSession: waiver?.forSession ?? false)
        return runTurn()
    }

    @discardableResult
    func append(_ message: Message) -> Message {
        let stored = state.withLock { $0.conversation.append(message) }
        onMessage?(stored)
        return stored
    }

    /// Stops the turn that runs, as cancelling its consumer would, except that its stream goes on to the end: the
    /// calls it cancels are reported, and `.finished(.cancelled)` comes last. Nothing when no turn runs.
    package func stopTurn() { state.withLock { $0.turn }?.cancel() }

    /// Runs one call a view (an MCP App) of `plugin` asked for, as the call `id`: through the pipeline a model's
    /// call goes through, reported as its card's events and then `.finished(.answered)`; refused — a failed card —
    /// unless `skill` is of `plugin` and lets views call it. The conversation's messages are left as they are (the
    /// plugins' state tells the model what changed); the change is kept for undo and rewind.
    /// `mayAsk` false: a call that needs the person's yes is refused without asking (they said no to this view).
    package func callFromView(
        _ skill: String, arguments: JSONValue, id: String, plugin: String, mayAsk: Bool = true
    ) -> AsyncStream<AgentEvent> {
        let (stream, continuation) = AsyncStream<AgentEvent>.makeStream()
        let recorder = recording?.recorder
        let yield: @Sendable (AgentEvent) -> Void = { event in
            recorder?.record(event)
            continuation.yield(event)
        }
        let call = ToolCall(id: id, name: skill, arguments: arguments.jsonText)
        let task = Task {
            defer { self.state.withLock { $0.turn = nil } }
            await TurnRunner(session: self, emit: yield).runViewCall(call, plugin: plugin, mayAsk: mayAsk)
            yield(.finished(Task.isCancelled ? .cancelled : .answered))
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        state.withLock { $0.turn = task }
        return stream
    }

    private func runTurn() -> AsyncStream<AgentEvent> {
        let (stream, continuation) = AsyncStream<AgentEvent>.makeStream()
        let recorder = recording?.recorder
        let yield: @Sendable (AgentEvent) -> Void = { event in
            recorder?.record(event)
            continuation.yield(event)
        }
        let task = Task {
            defer { self.state.withLock { $0.turn = nil } }
            let asked = self.conversation.messages.last { $0.role == .user }?.content ?? ""
            self.skills.turnEvent(
                .turnStart, session: self.configuration.sessionID,
                detail: JSONObject([(key: "message", value: .string(asked))]))
            let reason = await TurnRunner(session: self, emit: yield).run()
            self.skills.turnEvent(
                .turnEnd, session: self.configuration.sessionID,
                detail: JSONObject([
                    (key: "reason", value: .string(reason.name)),
                    (key: "answer", value: .string(self.conversation.messages.last?.content ?? "")),
                ]))
            // An interrupted turn says so in the conversation (and so in the history), also when it was stopped
            // before the model wrote a word — during a call, or while waiting for the model.
            if reason == .cancelled, self.conversation.messages.last?.content.hasSuffix("[interrupted]") != true {
                self.append(Message(role: .assistant, content: "[interrupted]"))
            }
            yield(.finished(reason))
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        state.withLock { $0.turn = task }
        return stream
    }
}
