import Agent
import Foundation
import History
import SkillHost
import SkillJSON
import Synchronization

/// What a conversation is made with: the skills, the model, the session's settings, whether a person answers its
/// questions, and the record slot it writes to.
package struct ConversationSetup: Sendable {
    package var skills: any AgentSkills
    package var provider: any ModelProvider
    package var configuration: AgentConfiguration
    /// Whether a person answers confirmations (the shell, the browser). Without one (`ask`), a call the policy
    /// asks about is refused: there is nobody to ask.
    package var person: Bool
    package var recording: RecordSlot?

    package init(
        skills: any AgentSkills, provider: any ModelProvider, configuration: AgentConfiguration, person: Bool,
        recording: RecordSlot? = nil
    ) {
        self.skills = skills
        self.provider = provider
        self.configuration = configuration
        self.person = person
        self.recording = recording
    }
}

/// One conversation, owned in one place for every front end (the shell, the browser, `ask`, and whichever comes
/// next): the agent session, its place in the history, the work that runs (a turn, an undo, a rewind, a direct call
/// — one at a time), the questions that work waits for, the last turn's trace and the draft of the answer. Its
/// verbs — `send`, `continueTurn`, `undo`, `rewind`, `call` — return one kind of stream, `ConversationEvent`, that the
/// front end renders; `confirm(id:answer:)` answers a question the stream asked and `stop()` stops the work. A front
/// end keeps only its own: a terminal and Ctrl-C, tabs to fan out to, exit codes.
///
/// Thread-safe: any thread may call any verb; the stream is in the order things happened.
package final class ConversationOwner: Sendable {
    /// Why a verb could not start: other work runs.
    package struct Busy: Error, Sendable, Equatable, CustomStringConvertible {
        package let description: String
        package static let running = Busy(description: "a turn is running; wait for its answer or stop it first")
        package static let changed = Busy(
            description: "the conversation changed since that plan was shown; choose Rewind again to see it")
        package static let retired = Busy(
            description: "this conversation is no longer the one shown; send it again in the one that is")
    }

    /// A question of the work that runs: shown once the stream has reached it.
    struct Question {
        let request: ConfirmationRequest
        let answer: CheckedContinuation<ConfirmationAnswer, Never>
        var shown: Bool
    }

    struct State {
        var agent: AgentSession
        /// Whether the history holds the conversation yet (written with its first message, or by `begin`).
        var begun: Bool
        var turn = TurnController()
        /// Open questions by call id.
        var questions: [String: Question] = [:]
        /// Questions the turn's stream passed before its confirmation hook asked them, by call id.
        var reached: [String: Int] = [:]
        /// The stream of the work that runs.
        var events: AsyncStream<ConversationEvent>.Continuation?
        /// The work that runs outside a turn (an undo, a rewind, a direct call), for `stop`.
        var operation: Task<Void, Never>?
        /// Counts the work started, so that an operation registers only as the work it belongs to.
        var work = 0
        /// The front end put this conversation away (`retire`): nothing starts any more.
        var retired = false
        var trace = TraceRecorder()
    }

    let state: Mutex<State>
    /// The conversation as the history keeps it; nil without a history.
    package let stored: StoredConversation?
    let skills: any AgentSkills
    let person: Bool
    let recording: RecordSlot?
    private let link: OwnerLink
    /// What the front end is to say once it shows the conversation: its earlier changes cannot be read (undo and
    /// rewind will not reach them). Nil when all is there.
    package let problem: String?

    /// A conversation: new (`StoredConversation(new:)`, nothing written until `begin` or the first message),
    /// resumed from the history (`StoredConversation(resuming:)`: its messages and changes, what it used), or kept
    /// nowhere (`stored` nil).
    package init(_ stored: StoredConversation?, setup: ConversationSetup) {
        self.stored = stored
        skills = setup.skills
        person = setup.person
        recording = setup.recording
        let link = OwnerLink()
        self.link = link
        let conversation =
            stored?.conversation(systemPrompt: setup.configuration.systemPrompt)
            ?? Conversation(system: setup.configuration.systemPrompt)
        var configuration = setup.configuration
        configuration.sessionID = stored?.id ?? configuration.sessionID
        let agent = Self.agent(
            setup.skills, setup.provider, configuration, conversation, stored: stored, person: setup.person,
            link: link, recording: setup.recording)
        problem = stored?.attach(agent)
        state = Mutex(State(agent: agent, begun: stored?.resumed != nil))
        link.connect(self)
    }

    private static func agent(
        _ skills: any AgentSkills, _ provider: any ModelProvider, _ configuration: AgentConfiguration,
        _ conversation: Conversation, stored: StoredConversation?, person: Bool, link: OwnerLink,
        recording: RecordSlot?
    ) -> AgentSession {
        let ask: ConfirmationHook = { request in await link.owner?.ask(request, announced: true) ?? .deny }
        return AgentSession(
            skills: skills, provider: provider, configuration: configuration, confirm: person ? ask : nil,
            conversation: conversation, onMessage: stored?.onMessage, onChange: stored?.onChange,
            recording: recording)
    }

    /// The conversation's id in the history; nil when it is kept nowhere.
    package var id: String? { stored?.id }
    /// The agent session (its conversation, settings, budgets, undo).
    package var agent: AgentSession { state.withLock { $0.agent } }
    /// Whether the history holds the conversation yet (or it is kept nowhere and has had a message).
    package var isBegun: Bool { state.withLock { $0.begun } }
    /// Whether work runs (a turn, an undo, a rewind, a direct call).
    package var isBusy: Bool { state.withLock { !$0.turn.isOver } }
    /// The last turn's trace (`/trace`).
    package var trace: TurnTrace { state.withLock { $0.trace }.trace }

    /// Puts the conversation away for good (the front end shows another): from now on every verb that starts work
    /// is refused. False, and nothing changes, while work runs — so a swap and a start cannot cross.
    package func retire() -> Bool {
        state.withLock { state in
            guard state.turn.isOver else { return false }
            state.retired = true
            return true
        }
    }

    /// Writes a new conversation to the history now (its row with the model's name, and the system prompt), rather
    /// than with its first message. Nothing when it is there already.
    package func begin() {
        let agent = state.withLock { state -> AgentSession? in
            defer { state.begun = true }
            return state.begun ? nil : state.agent
        }
        if let agent { stored?.begin(agent, model: agent.provider.displayName) }
    }

    /// Another model for the same conversation (`/model`, the browser's picker): the messages, the changes (undo and
    /// rewind reach them), the person's "always" answers and lifted budgets, and what was used go on.
    package func switchProvider(_ provider: any ModelProvider) throws(Busy) {
        try state.withLock { state throws(Busy) in
            guard state.turn.isOver else { throw .running }
            let previous = state.agent
            var configuration = previous.configuration
            configuration.disabledSkills = previous.disabledSkills
            let next = Self.agent(
                skills, provider, configuration, previous.conversation, stored: stored, person: person, link: link,
                recording: recording)
            next.carryOn(from: previous)
            if let stored { stored.journal.keepUse(of: next, session: stored.id, resumed: false) }
            state.agent = next
        }
    }

    // MARK: Turns

    /// Adds the person's `text` and runs a turn.
    package func send(_ text: String) throws(Busy) -> AsyncStream<ConversationEvent> {
        try turn { $0.send(text) }
    }

    /// Runs another turn without a new message (after the step limit or a budget stopped one).
    package func continueTurn() throws(Busy) -> AsyncStream<ConversationEvent> {
        try turn { $0.continueTurn() }
    }

    /// Runs one call a view (an MCP App) of `plugin` asked for, as the call `id`: as a turn's call runs — asked
    /// about in the front end (never in the view), hooks, budgets, its card, its record in the history, kept for undo
    /// — refused unless `skill` is of `plugin` and lets views call it. The turn's trace (`/trace`) is left as it was.
    /// `mayAsk` false: a call that needs the person's yes is refused without asking (they said no to this view).
    package func viewCall(
        _ skill: String, arguments: JSONValue, id: String, plugin: String, mayAsk: Bool = true
    ) throws(Busy) -> AsyncStream<ConversationEvent> {
        try turn(traced: false) {
            $0.callFromView(skill, arguments: arguments, id: id, plugin: plugin, mayAsk: mayAsk)
        }
    }

    private func turn(traced: Bool = true, _ start: (AgentSession) -> AsyncStream<AgentEvent>) throws(Busy)
        -> AsyncStream<ConversationEvent>
    {
        let (stream, continuation) = AsyncStream<ConversationEvent>.makeStream()
        let trace = TraceRecorder()
        let (agent, first) = try state.withLock { state throws(Busy) -> (AgentSession, Bool) in
            guard !state.retired else { throw .retired }
            guard state.turn.isOver else { throw .running }
            state.turn.start()
            state.work += 1
            state.events = continuation
            state.reached = [:]
            if traced { state.trace = trace }
            defer { state.begun = true }
            return (state.agent, !state.begun)
        }
        // The history holds a conversation from its first message on (one opened and left empty is not kept).
        if first { stored?.begin(agent, model: agent.provider.displayName) }
        // Started here, not in the task, so that a stop that follows at once finds the turn; one that came while it
        // was being started (the history written first) found none, and stops it now.
        let events = start(agent)
        if state.withLock({ $0.turn.state == .cancelling }) { agent.stopTurn() }
        Task { [self] in
            var recorder = TurnRecorder(stored)
            var reason = FinishReason.cancelled
            for await event in events {
                recorder.record(event)
                trace.record(event, conversation: agent.conversation, state: agent.lastStateMessage)
                switch event {
                case .confirmationNeeded(let request): reached(request)
                case .finished(let finish):
                    reason = finish
                    continuation.yield(.agent(event))
                default: continuation.yield(.agent(event))
                }
            }
            recorder.finish()
            end(reason, continuation)
        }
        return stream
    }

    /// Ends the work that runs: the owner is free again before the stream ends.
    func end(_ reason: FinishReason, _ continuation: AsyncStream<ConversationEvent>.Continuation) {
        let left = state.withLock { state -> [Question] in
            state.turn.finish(reason)
            for (id, question) in state.questions where question.shown { state.events?.yield(.settled(id)) }
            state.events = nil
            state.operation = nil
            state.reached = [:]
            defer { state.questions = [:] }
            return Array(state.questions.values)
        }
        for question in left { question.answer.resume(returning: .deny) }
        continuation.finish()
    }

    // MARK: Questions

    /// Answers the open question `id` (a call's id, as `asked` gave it). False when none is open by that id
    /// (answered already, in another tab; withdrawn; stopped).
    @discardableResult
    package func confirm(id: String, answer: ConfirmationAnswer) -> Bool {
        let question = state.withLock { state -> Question? in
            guard let question = state.questions[id], question.shown else { return nil }
            state.questions[id] = nil
            state.turn.endAsking()
            state.events?.yield(.settled(id))
            return question
        }
        guard let question else { return false }
        question.answer.resume(returning: answer)
        return true
    }

    /// Whether the question `id` is open and shown: a front end that queued it may still put it to the person.
    package func isOpen(_ id: String) -> Bool { state.withLock { $0.questions[id]?.shown == true } }

    /// Stops the work that runs: its open questions are answered no, a question it asks from now on as well, its
    /// calls are cancelled, and the stream reports how they ended and then ends. Nothing when nothing runs.
    package func stop() {
        let stopped = state.withLock {
            state -> (questions: [Question], agent: AgentSession, operation: Task<Void, Never>?)? in
            guard state.turn.interrupt() == .cancelTurn else { return nil }
            defer { state.questions = [:] }
            for (id, question) in state.questions where question.shown { state.events?.yield(.settled(id)) }
            return (Array(state.questions.values), state.agent, state.operation)
        }
        guard let stopped else { return }
        // Cancelled first, answered after: the work that resumes with the no finds itself cancelled (answered
        // first, a turn could carry on to its next step — the offline router answers at once — and end as answered).
        stopped.agent.stopTurn()
        stopped.operation?.cancel()
        for question in stopped.questions { question.answer.resume(returning: .deny) }
    }

    /// The one way a question is asked (a turn's call, an undo's, a rewind's, a direct call's): the wait is
    /// registered first and the question sent on the stream after — for a turn's call once the stream has passed
    /// its `confirmationNeeded` event (`announced`) — so no answer comes before something waits for it, nor a
    /// question before the events that led to it. A second question by the same id withdraws the first (answered
    /// no); a stopped turn's question is answered no without being asked.
    func ask(_ request: ConfirmationRequest, announced: Bool) async -> ConfirmationAnswer {
        await withCheckedContinuation { continuation in
            let id = request.callID
            let outcome = state.withLock { state -> (asked: Bool, withdrawn: Question?) in
                let withdrawn = state.questions.removeValue(forKey: id)
                if let withdrawn {
                    state.turn.endAsking()
                    if withdrawn.shown { state.events?.yield(.settled(id)) }
                }
                guard state.turn.beginAsking() else { return (false, withdrawn) }
                var shown = !announced
                if announced, let passed = state.reached[id], passed > 0 {
                    state.reached[id] = passed - 1
                    shown = true
                }
                state.questions[id] = Question(request: request, answer: continuation, shown: shown)
                if shown { state.events?.yield(.asked(request)) }
                return (true, withdrawn)
            }
            outcome.withdrawn?.answer.resume(returning: .deny)
            if !outcome.asked { continuation.resume(returning: .deny) }
        }
    }

    /// The turn's stream passed the question for `request`: it is shown now if its hook waits already.
    private func reached(_ request: ConfirmationRequest) {
        state.withLock { state in
            let id = request.callID
            if var question = state.questions[id], !question.shown {
                question.shown = true
                state.questions[id] = question
                state.events?.yield(.asked(question.request))
            } else {
                state.reached[id, default: 0] += 1
            }
        }
    }

    /// A person's confirmer for work outside a turn (`id`: the call's id on the stream; `undoing`: the skill whose
    /// change it reverses). Nobody to ask without a person.
    func confirmer(_ id: String, undoing: String? = nil) -> Confirmer {
        guard person else { return .nobodyToAsk }
        return .person { [weak self] skill, arguments in
            await self?.ask(
                ConfirmationRequest(callID: id, skill: skill, arguments: arguments, undoing: undoing),
                announced: false) ?? .deny
        }
    }
}

/// The owner, as the agent session's confirmation hook reaches it (the session is made before the owner is).
private final class OwnerLink: Sendable {
    private struct Weak: Sendable { weak var owner: ConversationOwner? }
    private let target = Mutex(Weak())

    var owner: ConversationOwner? { target.withLock { $0.owner } }
    func connect(_ owner: ConversationOwner) { target.withLock { $0.owner = owner } }
}
