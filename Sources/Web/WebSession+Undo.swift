import Agent
import Foundation
import SessionUI
import SkillHost
import SkillJSON

extension WebSession {
    /// Reverses the last change a mutating skill made, as the shell's `/undo` does (`ConversationOwner.undo`): each
    /// reversing call a card, the tabs asked where the policy asks, stopping at a failure or a no. Refused while a
    /// turn runs, or when there is nothing to undo.
    package func undo() throws(WebRefusal) {
        // Not under the session's lock (as `send`): a swap cannot cross it, the owner being retired first.
        guard let owner = startShowing() else {
            throw WebRefusal(status: 409, sentence: ConversationOwner.Busy.running.description)
        }
        let started = (owner: owner, stream: Result { () throws(ConversationOwner.Busy) in try owner.undo() })
        switch started.stream {
        case .failure(let busy):
            stopShowing()
            throw WebRefusal(status: 409, sentence: busy.description)
        case .success(nil):
            stopShowing()
            throw WebRefusal(status: 409, sentence: "nothing to undo: no mutating call registered a way back")
        case .success(let stream?):
            publish(WebEvent.running(true))
            follow(stream, of: started.owner)
        }
    }
}
