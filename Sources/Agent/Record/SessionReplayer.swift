import SkillHost
import SkillJSON

/// Runs a recorded session again, offline: the person's actions from the record, in order (turns, continuations
/// with the budgets they waived, rewinds), the model's answers from the record, the skills from the record or live
/// (confirmations then answered as the record says). Every place the run goes another way is noted in `log`.
package struct SessionReplayer: Sendable {
    package let record: SessionRecord
    package let log = ReplayLog()
    let live: Bool
    let answersFromRecord: Bool
    let session: AgentSession

    /// With `live`, a confirmation the record answered yes is a stranger's yes (a record is a file anyone can write):
    /// it is refused and noted, unless `answersFromRecord` says to take the record's answers.
    package init(
        _ record: SessionRecord, registry: any AgentSkills, live: Bool, base: AgentConfiguration,
        answersFromRecord: Bool = false
    ) {
        self.record = record
        self.live = live
        let log = self.log
        let skills = ReplaySkills(registry: registry, record: record, log: log, live: live)
        var configuration = record.configuration(base: base)
        // Live, the file does not decide what the real plugins may cost: the person's budgets hold, and the record's
        // waivers are not taken (`run`), unless told to take the record's answers.
        if live && !answersFromRecord {
            configuration.budgets = base.budgets
            (configuration.budgets.turn.seconds, configuration.budgets.session.seconds) = (nil, nil)
        }
        self.answersFromRecord = answersFromRecord
        var conversation = Conversation(system: configuration.systemPrompt)
        if !record.conversation.isEmpty {
            conversation = Conversation()
            for message in record.conversation { conversation.append(message) }
        }
        let confirm: ConfirmationHook = { request in
            if let answer = record.confirmations[request.callID] {
                guard !answersFromRecord, answer != .deny else { return answer }
                log.note(
                    "call \(request.callID): \(request.skill.id) asked for a confirmation the record answered yes; a live "
                        + "replay does not take a yes from a file (--answers-from-record does)")
                return .deny
            }
            log.note("call \(request.callID): \(request.skill.id) asked for a confirmation; the record has no answer")
            return .deny
        }
        session = AgentSession(
            skills: skills, provider: ReplayProvider(record, log: log), configuration: configuration,
            confirm: live ? confirm : nil, conversation: conversation)
    }

    /// Plays every action, giving `event` each event; `undo` reverses a rewind's changes when skills run live.
    /// Returns the number of calls the run made.
    package func run(
        undo: (@Sendable (RewindPlan) async -> String?)? = nil, event: (AgentEvent) -> Void
    ) async -> Int {
        var calls = 0
        var turn = 0
        for action in record.actions {
            let stream: AsyncStream<AgentEvent>
            switch action {
            case .turn(let prompt): stream = session.send(prompt)
            case .continued(let waived, let forSession):
                if let waived {
                    if live && !answersFromRecord {
                        log.note(
                            "the record waives the \(waived) budget; a live replay keeps your budgets "
                                + "(--answers-from-record takes the record's)")
                    } else {
                        session.waive(key: waived, forSession: forSession)
                    }
                }
                stream = session.continueTurn()
            case .rewind(let number):
                guard let plan = RewindPlan(session, number: number) else {
                    log.note("the record goes back to message \(number); the run has no such message")
                    continue
                }
                if live, let undo, let failure = await undo(plan) { log.note("rewinding: \(failure)") }
                plan.apply(to: session)
                continue
            }
            var reason: FinishReason?
            for await next in stream {
                event(next)
                if case .toolCall(let call) = next, case .started = call.phase { calls += 1 }
                if case .finished(let finish) = next { reason = finish }
            }
            if let reason, turn < record.finishes.count, record.finishes[turn] != reason.name {
                log.note("turn \(turn + 1) ended \(reason.name); the record's ended \(record.finishes[turn])")
            }
            turn += 1
        }
        return calls
    }
}
