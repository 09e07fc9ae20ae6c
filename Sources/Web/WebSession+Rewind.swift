import Agent
import Foundation
import History
import SessionUI
import SkillJSON

extension WebSession {
    /// What going back to before the person's message `number` of `room`'s conversation does (`/rewind N` in the
    /// shell): the plan in words, how many changes it undoes and leaves (no way back), the message, and a token
    /// naming this very plan — `rewind` and `resend` carry it out only while the plan is still this one.
    package func rewindPlan(_ number: Int, in room: WebRoom? = nil) throws(WebRefusal) -> JSONValue {
        let owner = (room ?? latest).owner
        guard let plan = owner.rewindPlan(to: number) else { throw Self.noMessage(number, owner) }
        return [
            "message": .int(Int64(number)), "plan": .string(plan.description),
            "token": .string(Self.token(plan, of: owner)), "undoes": .int(Int64(plan.undoable.count)),
            "keeps": .int(Int64(plan.stuck.count)), "text": .string(plan.target.content),
        ]
    }

    /// Goes back to before message `number`, as the plan `token` named said: its changes undone newest first (the
    /// tabs asked where the policy asks), then the conversation forgotten from that message on and shown anew in its
    /// tabs. Refused while work of it runs, and when the conversation changed since the plan was shown.
    package func rewind(_ number: Int, token: String, in room: WebRoom? = nil) throws(WebRefusal) {
        let room = room ?? latest
        let stream = try startRewind(number, token: token, in: room)
        room.publish(WebEvent.running(true))
        follow(stream, in: room)
    }

    /// Edits and sends again the person's message `number` (the conversation's last, in practice): goes back to
    /// before it as `rewind` does, then sends `text` — or the message as it was, which has the answer written
    /// anew. Nothing is sent when the rewind does not go through (a change the person would not undo).
    package func resend(_ number: Int, token: String, text: String?, in room: WebRoom? = nil) throws(WebRefusal) {
        let room = room ?? latest
        let text = (text ?? room.owner.rewindPlan(to: number)?.target.content ?? "")
            .trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else {
            throw WebRefusal(status: 400, sentence: "the message is empty: write something first")
        }
        let stream = try startRewind(number, token: token, in: room)
        room.publish(WebEvent.running(true))
        Task { [self] in
            // One piece of work for the tabs: no other starts between the rewind and the message sent again.
            if await show(stream, in: room, quietly: true) {
                switch start(text, in: room) {
                case .success(let turn):
                    _ = await show(turn, in: room)
                case .failure(let busy):
                    room.publish(WebEvent.notice("\(busy); the message was not sent again"))
                }
            }
            end(in: room)
        }
    }

    /// Takes `room` and starts the rewind the plan `token` named; refused (the room given back) otherwise.
    private func startRewind(
        _ number: Int, token: String, in room: WebRoom
    ) throws(WebRefusal) -> AsyncStream<ConversationEvent> {
        // Not under the session's lock (as `send`): closing the conversation cannot cross it, the owner being
        // retired first.
        guard let owner = room.startShowing() else {
            throw WebRefusal(status: 409, sentence: ConversationOwner.Busy.running.description)
        }
        let started = { () -> Result<AsyncStream<ConversationEvent>, WebRefusal> in
            guard let plan = owner.rewindPlan(to: number) else { return .failure(Self.noMessage(number, owner)) }
            // The plan carried out is the plan that was shown, or none.
            guard Self.token(plan, of: owner) == token else {
                return .failure(WebRefusal(status: 409, sentence: ConversationOwner.Busy.changed.description))
            }
            do throws(ConversationOwner.Busy) { return .success(try owner.rewind(plan)) } catch {
                return .failure(WebRefusal(status: 409, sentence: error.description))
            }
        }()
        switch started {
        case .failure(let refusal):
            room.stopShowing()
            throw refusal
        case .success(let stream):
            used(room)
            return stream
        }
    }

    /// Every tab of `room` shows its conversation anew as it now is (after a rewind).
    func reshow(_ room: WebRoom) {
        let owner = room.owner
        let calls = owner.id.flatMap { id in try? journal?.store.toolCalls(session: id) } ?? []
        room.show(WebHistory.events(owner.agent.conversation.messages, calls: calls, words: cardWords))
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
    /// process only: the conversation is its owner, which another conversation's never is).
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
