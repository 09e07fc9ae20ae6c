import Agent
import Foundation
import SessionUI
import SkillHost
import SkillJSON
import Support

/// The calls views (MCP Apps) make, run in the conversation whose card shows them.
extension WebSession {
    /// How long a view's call waits for other work of its conversation (a turn, another call) to end.
    static let viewCallWait = Duration.seconds(120)
    /// The largest result a view is sent as structured content (beyond it, the text alone).
    static let structuredLimit = 1 << 20

    /// Runs `skill` with `arguments` for a view of `plugin` shown by card `card` in conversation `key`, through the
    /// pipeline a model's call goes through (`ConversationOwner.viewCall`: confirmations asked in the page, hooks,
    /// budgets, its card, its record), once other work of it has ended; the call's end as MCP's `CallToolResult`.
    /// `mayAsk` false: a call that needs the person's yes is refused without asking (they said no to this view);
    /// `declined`: the person said no to this one.
    func viewCall(
        _ skill: String, arguments: JSONValue, plugin: String, card: String, mayAsk: Bool = true, in key: String
    ) async -> Result<(result: JSONValue, declined: Bool), WebRefusal> {
        let id = "view-\(HTTPGuard.randomHex(8))"
        let room: WebRoom
        let stream: AsyncStream<ConversationEvent>
        switch await take(
            key, skill: skill,
            { owner throws(ConversationOwner.Busy) in
                try owner.viewCall(skill, arguments: arguments, id: id, plugin: plugin, mayAsk: mayAsk)
            })
        {
        case .success(let taken): (room, stream) = taken
        case .failure(let refusal): return .failure(refusal)
        }
        // Work of the conversation, as a turn's: the tabs say so, and Stop stops it. The page that asked going away
        // (its view closed) stops it too — nothing else can run in the conversation meanwhile.
        room.publish(WebEvent.running(true))
        var ending: ToolCallEvent.Phase?
        await withTaskCancellationHandler {
            _ = await show(stream, in: room, by: card) { event in
                if case .agent(.toolCall(let call)) = event, call.id == id {
                    switch call.phase {
                    case .finished, .failed: ending = call.phase
                    default: break
                    }
                }
            }
        } onCancel: {
            room.owner.stop()
        }
        end(in: room)
        switch ending {
        case .finished(let result, _)?:
            return .success((Self.toolResult(result, external: skills.skill(skill)?.kind == .external), false))
        case .failed(let failure, _)?:
            return .success(
                (
                    ["content": [["type": "text", "text": .string(failure.message)]], "isError": true],
                    mayAsk && WebEvent.isDeclined(failure.message, skill: skill)
                ))
        default:
            return .success(
                (["content": [["type": "text", "text": "the call was cancelled"]], "isError": true], false))
        }
    }

    /// Starts `work` in conversation `key` once other work of it has ended (waiting at most `viewCallWait`): the
    /// room, taken for it, and the work's stream; or why not (the conversation is gone, the wait ran out, the
    /// request went away).
    private func take(
        _ key: String, skill: String,
        _ work: (ConversationOwner) throws(ConversationOwner.Busy) -> AsyncStream<ConversationEvent>
    ) async -> Result<(WebRoom, AsyncStream<ConversationEvent>), WebRefusal> {
        let deadline = ContinuousClock.now + Self.viewCallWait
        while true {
            if Task.isCancelled {
                return .failure(WebRefusal(status: 409, sentence: "the view went away before its call of \(skill) ran"))
            }
            let room: WebRoom
            do throws(WebRefusal) { room = try self.room(key) } catch { return .failure(error) }
            if let owner = room.startShowing(forView: true) {
                do throws(ConversationOwner.Busy) {
                    return .success((room, try work(owner)))
                } catch {
                    room.stopShowing()
                    // Closed meanwhile: opened again from the history on the next round. Busy without being shown
                    // (its work's end not yet shown): a moment, not a spin.
                    if error != .retired { try? await Task.sleep(for: .milliseconds(50)) }
                }
            }
            guard ContinuousClock.now < deadline else {
                return .failure(
                    WebRefusal(
                        status: 409,
                        sentence: "the view's call of \(skill) waited two minutes for the conversation's work to end; "
                            + "try again once it has"))
            }
            // A message of the person's goes first (the room is free, and kept for it): a moment, not a spin.
            if !room.isShowing { try? await Task.sleep(for: .milliseconds(20)) }
            await room.waitUntilFree(limit: deadline - .now)
        }
    }

    /// As `send`, but when a view's call holds the conversation the message waits for it (at most 30 s), and no
    /// other view's call starts before it: a view that polls never makes the person's message fail.
    package func sendAfterViews(_ text: String, in room: WebRoom? = nil) async -> SendResult {
        let room = room ?? latest
        let deadline = ContinuousClock.now + .seconds(30)
        var waiting = false
        defer { if waiting { room.personWaits(false) } }
        while true {
            let result = send(text, in: room)
            guard case .busy = result, room.showsViewWork, ContinuousClock.now < deadline else { return result }
            if !waiting {
                room.personWaits(true)
                waiting = true
            }
            await room.waitUntilFree(limit: deadline - .now)
        }
    }

    /// What a card of `call` carries for views: a call made by a view names the card of that view (`by`); a call
    /// of a skill with a view names it (`view`, when it starts) and gives its result as the view takes it
    /// (`toolResult`, when it ends).
    /// A skill folder's `skill_run` calls (`arguments`) show the folder's view.
    func viewFields(_ call: ToolCallEvent, by card: String?, arguments: JSONValue?) -> JSONObject {
        if let card { return JSONObject([(key: "by", value: .string(card))]) }
        guard let skill = skills.skill(call.skill),
            let view = skill.view ?? folderView(of: skill, arguments: arguments)
        else { return JSONObject() }
        switch call.phase {
        case .started: return JSONObject([(key: "view", value: .string(view.uri))])
        case .finished(let result, _):
            return JSONObject([(key: "toolResult", value: Self.toolResult(result, external: skill.kind == .external))])
        default: return JSONObject()
        }
    }

    /// The view of the skill folder a `skill_run` call runs a script of, when it declares one.
    func folderView(of skill: SkillInfo, arguments: JSONValue?) -> SkillView? {
        guard skill.id == "skill_run", skill.plugin == "skills", skill.kind == .external,
            let name = arguments?["name"]?.stringValue
        else {
            return nil
        }
        return folderView.withLock { $0 }(name)
    }

    /// A skill's result as MCP's `CallToolResult`: its text, and the value itself as structured content (an object
    /// as it is, anything else as `{"result": …}`) unless it is larger than `structuredLimit`.
    /// An MCP server's skill with a view (`external`) gives the server's result whole, as it came.
    static func toolResult(_ result: JSONValue, external: Bool) -> JSONValue {
        let text = result.displayText
        if external, result["content"]?.arrayValue != nil, text.utf8.count <= structuredLimit { return result }
        let shown =
            text.utf8.count <= structuredLimit
            ? text : String(decoding: text.utf8.prefix(structuredLimit), as: UTF8.self)
        var members = JSONObject([(key: "content", value: [["type": "text", "text": .string(shown)]])])
        if text.utf8.count <= structuredLimit {
            if case .object = result {
                members["structuredContent"] = result
            } else {
                members["structuredContent"] = ["result": result]
            }
        }
        return .object(members)
    }
}
