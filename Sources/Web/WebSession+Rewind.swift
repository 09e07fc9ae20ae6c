import Agent
import Foundation
import History
import SessionUI
import SkillJSON

extension WebSession {
    /// What going back to before the person's message `number` does (`/rewind N` in the shell): the plan in words,
    /// and a token naming this very plan — `rewind(_:token:)` carries it out only while the plan is still this one.
    package func rewindPlan(_ number: Int) throws(WebRefusal) -> JSONValue {
        let owner = self.owner
        guard let plan = owner.rewindPlan(to: number) else { throw Self.noMessage(number, owner) }
        return [
            "message": .int(Int64(number)), "plan": .string(plan.description),
            "token": .string(Self.token(plan, of: owner)),
        ]
    }

    /// Goes back to before message `number`, as the plan `token` named said: its changes undone newest first (the
    /// tabs asked where the policy asks), then the conversation forgotten from that message on and shown anew in every
    /// tab. Refused while a turn runs, and when the conversation changed since the plan was shown.
    package func rewind(_ number: Int, token: String) throws(WebRefusal) {
        // Not under the session's lock (as `send`): a swap cannot cross it, the owner being retired first.
        guard let owner = startShowing() else {
            throw WebRefusal(status: 409, sentence: ConversationOwner.Busy.running.description)
        }
        let started = { () -> Result<(owner: ConversationOwner, stream: AsyncStream<ConversationEvent>), WebRefusal> in
            guard let plan = owner.rewindPlan(to: number) else { return .failure(Self.noMessage(number, owner)) }
            // The plan carried out is the plan that was shown, or none.
            guard Self.token(plan, of: owner) == token else {
                return .failure(WebRefusal(status: 409, sentence: ConversationOwner.Busy.changed.description))
            }
            do throws(ConversationOwner.Busy) { return .success((owner, try owner.rewind(plan))) } catch {
                return .failure(WebRefusal(status: 409, sentence: error.description))
            }
        }()
        switch started {
        case .failure(let refusal):
            stopShowing()
            throw refusal
        case .success(let started):
            publish(WebEvent.running(true))
            follow(started.stream, of: started.owner)
        }
    }

    /// Every tab shows `owner`'s conversation anew as it now is (after a rewind), unless it is no longer shown.
    func reshow(_ owner: ConversationOwner) {
        let calls = owner.id.flatMap { id in try? journal?.store.toolCalls(session: id) } ?? []
        let lines = WebHistory.events(owner.agent.conversation.messages, calls: calls, words: cardWords).map(Self.line)
        state.withLock { state in
            guard state.owner === owner else { return }
            Self.show(lines, &state)
        }
    }

    /// Replaces what every tab shows (and what a new one is sent) by `lines`, under the lock as `watch` does: every
    /// tab sees the conversation whole, then what follows.
    static func show(_ lines: [String], _ state: inout State) {
        state.replay = lines
        state.replayBytes = lines.reduce(0) { $0 + $1.utf8.count }
        while state.replayBytes > replayLimit, !state.replay.isEmpty {
            state.replayBytes -= state.replay.removeFirst().utf8.count
        }
        for line in [line(WebEvent.reset())] + state.replay { deliver(line, &state) }
    }

    private static func noMessage(_ number: Int, _ owner: ConversationOwner) -> WebRefusal {
        let count = owner.agent.userMessages.count
        return WebRefusal(
            status: 404,
            sentence: count == 0
                ? "there is nothing to rewind: no message yet"
                : "there is no message \(number) of yours; choose one from 1 to \(count)")
    }

    /// Names a plan: the conversation, the message it goes back to and every change it undoes or cannot (in this
    /// process only: the conversation is its owner, which another conversation shown never is).
    private static func token(_ plan: RewindPlan, of owner: ConversationOwner) -> String {
        var hasher = Hasher()
        hasher.combine(ObjectIdentifier(owner))
        hasher.combine(owner.id)
        hasher.combine(plan.number)
        hasher.combine(plan.target.sequence)
        hasher.combine(plan.description)
        for change in plan.undoable + plan.stuck { hasher.combine(change.after) }
        return String(UInt(bitPattern: hasher.finalize()), radix: 16)
    }
}
