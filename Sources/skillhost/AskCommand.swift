import Agent
import Dispatch
import Foundation
import History
import SessionUI
import Shell
import SkillHost
import SkillJSON
import Synchronization

/// `skillhost ask "…"`: one agent turn; the answer on stdout, tool activity on stderr (or every event as a JSON
/// line with `--json`). Non-interactive: destructive calls are denied unless a policy rule allows them.
enum AskCommand {
    static func run(
        registry: SkillRegistry, config: Config, _ options: AskOptions, store: HistoryStore? = nil,
        quiet: Bool = false, markdown: Bool = false, log: @escaping @Sendable (LogRecord) -> Void = { _ in }
    ) async throws(CLIError) -> Int32 {
        let json = options.json
        var text = options.prompt ?? ""
        if options.prompt == nil {
            do { text = try UTF8Input.standardInput() } catch { throw .usage(error) }
        }
        text = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else {
            throw .usage(UsageError("ask needs a question", hint: "skillhost ask \"what is (23+7)*2\", or pipe it in"))
        }
        let provider = try config.provider(log: log)
        let slot = RecordSlot()
        defer { slot.recorder?.close() }
        let resumed = try Resumed(options, store: store)
        var configuration = config.agentConfiguration(stepLimit: options.stepLimit)
        // The conversation's id as skills and hooks see it: the saved session's, or one for this ask alone.
        configuration.sessionID = resumed?.id ?? HistoryStore.newSessionID()
        let configured = options.record == nil ? try config.recordPath() : nil
        if let path = options.record ?? configured {
            do throws(ModelError) {
                slot.recorder = try SessionRecorder(
                    path: path, model: provider.displayName, configuration: configuration,
                    conversation: resumed?.conversation?.messages ?? [], secrets: [config.apiKey])
            } catch { throw .failure(error.message) }
        }
        let recorder = slot.recorder
        // Nobody answers questions here: a call the policy asks about is refused.
        let owner = ConversationOwner(
            resumed?.stored,
            setup: ConversationSetup(
                skills: registry, provider: provider, configuration: configuration, person: false, recording: slot))
        if let resumed {
            try resumed.started(owner, rewinding: options.rewind != nil)
            if let number = options.rewind { try await resumed.rewind(owner, to: number) }
        }
        defer { resumed?.finish() }
        // The piped shell lays a model's markdown answer out as plain text once it is complete.
        let layOut = markdown && !json && provider.answersInMarkdown

        // Ctrl-C stops the turn — also one pressed before it started, which the owner (idle then) would not see.
        signal(SIGINT, SIG_IGN)
        let interrupted = Interrupted()
        let interrupt = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        interrupt.setEventHandler {
            interrupted.flag.store(true, ordering: .sequentiallyConsistent)
            owner.stop()
        }
        interrupt.resume()
        let turn = Task { () -> FinishReason in
            var reason = FinishReason.cancelled
            var answeredText = false
            var held = ""
            guard !interrupted.flag.load(ordering: .sequentiallyConsistent), let stream = try? owner.send(text) else {
                return reason
            }
            if interrupted.flag.load(ordering: .sequentiallyConsistent) { owner.stop() }
            for await case .agent(let event) in stream {
                if json {
                    writeOut(eventJSON(event).jsonText + "\n")
                } else {
                    switch event {
                    case .textDelta(let delta):
                        answeredText = true
                        if layOut { held += delta } else { writeOut(InertText.make(delta)) }
                    case .toolCall(let call) where !quiet:
                        let skill = InertText.make(call.skill)
                        switch call.phase {
                        case .started(let arguments):
                            printError("⟳ \(skill)(\(CardText.shorten(CardText.arguments(arguments), 120)))")
                        case .finished(let result, let duration):
                            printError(
                                "✓ \(skill) → \(CardText.shorten(result.displayText, 120)) · \(duration.shortDescription)"
                            )
                        case .failed(let failure, let duration):
                            printError(
                                "✗ \(skill) → \(CardText.shorten(failure.message, 120)) · \(duration.shortDescription)")
                        case .progress: break
                        }
                    default: break
                    }
                }
                if case .finished(let finish) = event { reason = finish }
            }
            if layOut, !held.isEmpty {
                writeOut(TerminalMarkdown.render(held, width: 80, colors: false))
            } else if !json, answeredText {
                writeOut("\n")
            }
            return reason
        }
        let reason = await turn.value
        interrupt.cancel()
        if let failure = recorder?.failure { printError("skillhost: \(failure)") }
        // The answer already says what matched nothing or what was refused.
        switch reason {
        case .answered, .nothingMatched, .refused: break
        default: if !json { printError("skillhost: \(InertText.make(reason.explanation))") }
        }
        return exitCode(reason)
    }

    /// 0 answered, 1 model error, 5 cancelled, 6 step limit, 7 repeated call, 8 no skill matched, 9 a call was
    /// refused (policy, declined, or no one to confirm it), 10 a budget was used up.
    static func exitCode(_ reason: FinishReason) -> Int32 {
        switch reason {
        case .answered: return ExitCode.ok.rawValue
        case .modelError: return ExitCode.error.rawValue
        case .cancelled: return ExitCode.cancelled.rawValue
        case .stepLimitReached: return ExitCode.stepLimit.rawValue
        case .repeatedCall: return ExitCode.repeatedCall.rawValue
        case .nothingMatched: return ExitCode.nothingMatched.rawValue
        case .refused: return ExitCode.refused.rawValue
        case .budgetReached: return ExitCode.budget.rawValue
        }
    }

    static func eventJSON(_ event: AgentEvent) -> JSONValue {
        func milliseconds(_ duration: Duration) -> JSONValue {
            .double((duration.milliseconds * 1000).rounded() / 1000)
        }
        switch event {
        case .thinking(let step): return ["event": "thinking", "step": .int(Int64(step))]
        case .textDelta(let text): return ["event": "text", "text": .string(text)]
        case .toolCall(let call):
            let id = JSONValue.string(call.id)
            let skill = JSONValue.string(call.skill)
            switch call.phase {
            case .started(.value(let arguments)):
                return ["event": "tool_call_started", "id": id, "skill": skill, "arguments": arguments]
            case .started(.text(let text)):
                // As the model wrote them: not JSON, or for a skill that does not exist.
                return ["event": "tool_call_started", "id": id, "skill": skill, "arguments": .string(text)]
            case .progress(let progress):
                return [
                    "event": "tool_call_progress", "id": id, "done": .double(progress.done),
                    "total": progress.total.map { .double($0) } ?? .null,
                    "message": progress.message.map { .string($0) } ?? .null,
                ]
            case .finished(let result, let duration):
                return [
                    "event": "tool_call_finished", "id": id, "skill": skill, "result": result,
                    "duration_ms": milliseconds(duration),
                ]
            case .failed(let failure, let duration):
                return [
                    "event": "tool_call_failed", "id": id, "skill": skill, "error": .string(failure.message),
                    "code": .string(failure.code.rawValue), "duration_ms": milliseconds(duration),
                ]
            }
        case .confirmationNeeded(let request):
            return [
                "event": "confirmation_needed", "id": .string(request.callID), "skill": .string(request.skill.id),
                "arguments": request.arguments,
            ]
        case .usage(let usage):
            return [
                "event": "usage", "prompt_tokens": .int(Int64(usage.promptTokens)),
                "completion_tokens": .int(Int64(usage.completionTokens)),
            ]
        case .finished(let reason):
            var object = JSONObject([
                (key: "event", value: "finished"), (key: "reason", value: .string(reason.name)),
                (key: "message", value: .string(reason.explanation)),
            ])
            if case .budgetReached(let reached) = reason {
                object["budget"] = [
                    "scope": .string(reached.scope.rawValue), "kind": .string(reached.kind.rawValue),
                    "used": .double(reached.used), "limit": .double(reached.limit),
                ]
            }
            return .object(object)
        }
    }
}

/// Whether Ctrl-C was pressed, for the turn's task to read.
private final class Interrupted: Sendable {
    let flag = Atomic<Bool>(false)
}
