import Agent
import Foundation
import SessionUI
import SkillHost
import SkillJSON

extension WebSession {
    /// Reverses the last change a mutating skill made in `room`'s conversation, as the shell's `/undo` does
    /// (`ConversationOwner.undo`): each reversing call a card, the tabs asked where the policy asks, stopping at a
    /// failure or a no. Refused while work of it runs, or when there is nothing to undo.
    package func undo(in room: WebRoom? = nil) throws(WebRefusal) {
        let room = room ?? latest
        // Not under the session's lock (as `send`): closing the conversation cannot cross it.
        guard let owner = room.startShowing() else {
            throw WebRefusal(status: 409, sentence: ConversationOwner.Busy.running.description)
        }
        switch Result(catching: { () throws(ConversationOwner.Busy) in try owner.undo() }) {
        case .failure(let busy):
            room.stopShowing()
            throw WebRefusal(status: 409, sentence: busy.description)
        case .success(nil):
            room.stopShowing()
            throw WebRefusal(status: 409, sentence: "nothing to undo: no mutating call registered a way back")
        case .success(let stream?):
            used(room)
            room.publish(WebEvent.running(true))
            follow(stream, in: room)
        }
    }
}
