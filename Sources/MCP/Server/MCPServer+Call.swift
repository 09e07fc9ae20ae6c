import Foundation
import JSONRPC
import SkillHost
import SkillJSON
import Synchronization

extension MCPServer {
    /// `tools/call`: admits the call (the transport's admission: a limit per client; on stdio one id in flight at
    /// a time), asks the client's user through a confirmation round trip where the policy would ask and the client
    /// can (2026-07-28 with elicitation), runs it, and answers with a result — a tool's failure is a result with
    /// `isError`.
    func call(_ request: MCPRequest, _ context: MCPMethod.Context, beforeCall: () -> Void) {
        let (id, params, exchange, finish) = (request.id, request.params, context.exchange, context.finish)
        guard case .string(let name)? = params["name"] else {
            respond(id, code: .invalidParams, message: "Invalid params: tools/call needs a tool name", to: exchange)
            return
        }
        guard let skill = registry.skill(name) else {
            // The nearest name, as the command line suggests it (the message keeps its standard start).
            let refusal = registry.unknownSkill(name)
            let suggestion = refusal.suggestion
            respond(
                id, code: .invalidParams, message: refusal.sentence(for: .mcpClient),
                data: suggestion.map { ["suggestion": .string($0)] }, to: exchange)
            return
        }
        // A skill only views may call is for a client that renders apps (whose host keeps it from its model).
        guard skill.audience.contains(.model) || hostsApps(request, exchange) else {
            respond(
                id, code: .invalidParams,
                message: "Invalid params: \(name) is for plugin \(skill.plugin)'s views only, and this client renders "
                    + "no MCP Apps", to: exchange)
            return
        }
        let given = params["arguments"] ?? .object(JSONObject())
        guard given.objectValue != nil else {
            respond(id, code: .invalidParams, message: "Invalid params: arguments must be an object", to: exchange)
            return
        }
        // A client that can ask its user (2026-07-28 with elicitation) is asked, in the call's one decision, about
        // what nobody could let run — the arguments as they will run (coerced, defaults filled in): the same value
        // the registry then runs. Others: what the policy would ask about is refused, with the rule that allows it.
        let question = request.stateless && confirmations.canAsk(params) ? MCPQuestion() : nil
        let confirmer =
            question.map { question in
                Confirmer.caller(.mcpClient) { [confirmations] skill, arguments in
                    // One round trip names one call: a composite's step is covered by the yes to the composite, or
                    // refused as needing a confirmation (no state could name it).
                    guard skill.id == name else { return question.covered }
                    return question.put(
                        confirmations.answer(
                            to: skill, arguments: arguments, params: params, principal: exchange.principal))
                }
            } ?? Self.confirmer
        // stdio names calls by id (for notifications/cancelled); HTTP by their connection (the exchange's slot).
        let slot = exchange.call ?? CallSlot()
        let key = exchange.isStdio ? request.key : nil
        let admission = exchange.admission
        let client = exchange.principal
        switch admission.admit(slot, client: client, key: key) {
        case .admitted: break
        case .duplicate:
            respond(
                id, code: .invalidRequest,
                message: "Invalid request: id \(id.text) is already used by a request in flight; give every request "
                    + "its own id", to: exchange)
            return
        case .busy(let count):
            respond(id, code: .serverBusy, message: Self.busy(count), to: exchange)
            return
        }
        let spender = exchange.sessionStream.map { "session \($0)" } ?? client
        guard callBudget.spend(spender) else {
            admission.release(client: client, key: key)
            finish(Self.errorResult(callBudget.sentence))
            return
        }
        let token = params["_meta"]?[MCPProtocol.Meta.progressToken]
        let onProgress = token.map { Self.progressSender(token: $0, notify: exchange.notify) }
        // HTTP: a skill that has been quick runs on the event thread that read the request; others on the pool.
        let http = !exchange.isStdio
        let quick = http ? quickCalls.record(of: name) : nil
        let runHere = quick?.isQuick ?? !context.onPool
        beforeCall()
        // The registry applies the policy, in the call's one decision: nobody can confirm for an MCP client, unless
        // it can ask its user (the confirmer above).
        var invocation = SkillInvocation(skill: name, arguments: given, confirmer: confirmer, onProgress: onProgress)
        // The definition looked up above is the one decided and run (a reload in between is refused).
        invocation.definition = skill
        // A composite's steps are calls of the session's budget too (one composite added 25 notes on a budget of 5).
        if callBudget.limit != nil {
            let budget = callBudget
            invocation.stepAllowance = { budget.spend(spender) ? nil : budget.stepSentence }
        }
        registry.start(invocation, onCallingThread: runHere, onHandle: { slot.attach($0) }) { [weak self] outcome in
            // stdio: a cancelled request gets no response (the client stopped waiting for it).
            let stillWanted = admission.release(client: client, key: key) != nil || key == nil
            guard let self else { return }
            // A call that ended at its question did not run: it costs nothing, changed nothing, and says nothing of
            // how long the skill takes.
            if question?.ended == true {
                self.callBudget.refund(spender)
            } else {
                quick?.record(took: outcome.duration)
                // A call that may have changed something: the state resources watched are checked at once.
                if skill.risk != .readOnly { self.mutatingCallEnded(skill) }
            }
            guard stillWanted else { return }
            // The call ended at its question: the client asks its user, or is told why the answer cannot be used.
            switch question?.answer {
            case .ask(let inputRequired)?:
                finish(inputRequired)
                return
            case .declined(let sentence)?:
                finish(Self.errorResult(sentence))
                return
            case .invalid(let sentence)?:
                self.respond(id, code: .invalidParams, message: "Invalid params: \(sentence)", to: exchange)
                return
            case .confirmed?, nil: break
            }
            switch outcome.ending {
            case .success(let result):
                // Built with its members at once (fixed, distinct keys): three allocations, not seven.
                let text = JSONObject(uniqueMembers: [
                    (key: "type", value: "text"), (key: "text", value: .string(result.displayText)),
                ])
                var members: [(key: String, value: JSONValue)] = []
                members.reserveCapacity(3)
                members.append((key: "content", value: .array([.object(text)])))
                if let schema = skill.outputSchema {
                    members.append((key: "structuredContent", value: Self.structuredContent(result, schema: schema)))
                } else if case .object = result {
                    members.append((key: "structuredContent", value: result))
                }
                members.append((key: "isError", value: false))
                finish(.object(JSONObject(uniqueMembers: members)))
            case .failure(let failure):
                finish(Self.errorResult(failure.message))
            }
        }
    }

    /// Sends a call's progress as `notifications/progress` with the request's token.
    static func progressSender(token: JSONValue, notify: @escaping @Sendable (String) -> Void)
        -> @Sendable (SkillProgress) -> Void
    {
        { progress in
            var body = JSONObject([
                (key: "progressToken", value: token), (key: "progress", value: .double(progress.done)),
            ])
            if let total = progress.total { body["total"] = .double(total) }
            if let message = progress.message { body["message"] = .string(message) }
            notify(JSONRPCMessage.notification(method: "notifications/progress", params: .object(body)).line)
        }
    }

    static func busy(_ count: Int) -> String {
        "Server busy: \(count) call\(count == 1 ? " is" : "s are") already running for this client; retry when one has "
            + "finished"
    }

    /// Nobody answers for an MCP client that cannot ask its user: what the policy would ask about is refused,
    /// with the rule that allows it.
    static let confirmer = Confirmer.nobody(.mcpClient)
}

/// What the client's user was asked about in a call's one decision (`Confirmer.caller`): the first answer that did
/// not let the call run, for the server to send back; a yes lets the call — and whatever else it asks, such as a
/// composite's steps, which the yes covered — run.
final class MCPQuestion: Sendable {
    private let state = Mutex<MCPConfirmation.Answer?>(nil)

    /// Nil until an answer kept the call from running.
    var answer: MCPConfirmation.Answer? { state.withLock { $0 } }

    /// Yes when the user's yes to the call was given (it covers the call's steps); nil (nobody to ask) otherwise.
    var covered: ConfirmationAnswer? {
        state.withLock { state in
            if case .confirmed? = state { return .allowOnce }
            return nil
        }
    }

    /// Whether the call ended at its question (nothing ran): the answer the client gets instead of a result.
    var ended: Bool {
        state.withLock { state in
            if case .confirmed? = state { return false }
            return state != nil
        }
    }

    /// The pipeline's question, answered from the request: yes only with a valid state and the user's yes.
    func put(_ answer: MCPConfirmation.Answer) -> ConfirmationAnswer {
        state.withLock { state in
            if case .confirmed? = state { return .allowOnce }
            state = answer
            if case .confirmed = answer { return .allowOnce }
            return .deny
        }
    }
}

/// Where a cancellation that arrives before the call's handle exists waits for it.
final class CallSlot: Sendable {
    private let state = Mutex<(handle: CallHandle?, cancelled: Bool)>((nil, false))

    func attach(_ handle: CallHandle) {
        let cancelled = state.withLock { state in
            state.handle = handle
            return state.cancelled
        }
        if cancelled { handle.cancel() }
    }

    func cancel() {
        let handle = state.withLock { state in
            state.cancelled = true
            return state.handle
        }
        handle?.cancel()
    }
}
