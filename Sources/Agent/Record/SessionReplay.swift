import Foundation
import SkillHost
import SkillJSON
import Synchronization

/// A `.skillrec` read back: its header (model, system prompt, limits, the conversation before it), what the person
/// did in order (turns, continuations, rewinds), the model's responses, the calls, the confirmations, the tools.
package struct SessionRecord: Sendable {
    /// What the person did, in order.
    package enum Action: Sendable, Equatable {
        case turn(String)
        /// A stopped turn let go on; `waived` the budget's key when one was waived.
        case continued(waived: String?, forSession: Bool)
        /// Back to before the person's message `number`.
        case rewind(Int)
    }

    package struct Call: Sendable {
        package let skill: String
        package let arguments: JSONValue
        package let outcome: JSONValue
    }

    package let model: String
    package let system: String?
    package let limits: JSONValue?
    /// The conversation before recording started (empty when it started with the session).
    package let conversation: [Message]
    package let actions: [Action]
    /// Each request as recorded: where its conversation departs from the previous request's, and the messages
    /// from there on (deltas: a long record never holds a copy of the conversation per request).
    package let requests: [(from: Int, messages: [JSONValue])]
    package let responses: [(chunks: [ModelChunk], error: String?)]
    package let calls: [Call]
    package let confirmations: [String: ConfirmationAnswer]
    /// The tools offered, the last definition of each, sorted by id.
    package let tools: [SkillInfo]
    /// How each action's turn ended.
    package let finishes: [String]

    /// Reads `text`; a sentence naming the line when it is not a record this skillhost can replay.
    package init(_ text: String, path: String) throws(ModelError) {
        var lines = text.split(separator: "\n").makeIterator()
        guard let first = lines.next(), let header = try? JSONValue(parsing: String(first)),
            let version = header["skillrec"], version.doubleValue != nil
        else { throw ModelError("\(path) is not a skillhost record (its first line is not a skillrec header)") }
        guard version.integer(in: 0...1_000_000) == SessionRecorder.version else {
            let shown = String(version.jsonText.prefix(40))
            throw ModelError("\(path) is a record of version \(shown); this skillhost replays version 1")
        }
        model = header["model"]?.stringValue ?? ""
        system = header["system"]?.stringValue
        limits = header["limits"]
        conversation = (header["conversation"]?.arrayValue ?? []).compactMap(RecordFormat.message)
        var actions: [Action] = []
        var requests: [(from: Int, messages: [JSONValue])] = []
        var responses: [(chunks: [ModelChunk], error: String?)] = []
        var calls: [Call] = []
        var confirmations: [String: ConfirmationAnswer] = [:]
        var tools: [String: SkillInfo] = [:]
        var finishes: [String] = []
        var number = 1
        while let line = lines.next() {
            number += 1
            guard let entry = try? JSONValue(parsing: String(line)), let type = entry["type"]?.stringValue else {
                throw ModelError("\(path), line \(number): not a record entry (a JSON object with a \"type\")")
            }
            switch type {
            case "turn": actions.append(.turn(entry["prompt"]?.stringValue ?? ""))
            case "continue":
                actions.append(
                    .continued(waived: entry["waived"]?.stringValue, forSession: entry["for_session"] == true))
            // A stranger's numbers, range-checked before they become integers (1e300 trapped); 0 matches no message.
            case "rewind": actions.append(.rewind(entry["to"]?.integer(in: 0...1_000_000) ?? 0))
            case "tools":
                for skill in (entry["tools"]?.arrayValue ?? []).compactMap(RecordFormat.skill) {
                    tools[skill.id] = skill
                }
            case "request":
                requests.append(
                    (entry["from"]?.integer(in: 0...Int(Int32.max)) ?? 0, entry["messages"]?.arrayValue ?? []))
            case "response":
                responses.append(
                    ((entry["chunks"]?.arrayValue ?? []).compactMap(RecordFormat.chunk), entry["error"]?.stringValue))
            case "call":
                calls.append(
                    Call(
                        skill: entry["skill"]?.stringValue ?? "", arguments: entry["arguments"] ?? .null,
                        outcome: entry["outcome"] ?? .null))
            case "confirmation":
                if let id = entry["id"]?.stringValue,
                    let answer = entry["answer"]?.stringValue.flatMap(ConfirmationAnswer.init(word:))
                {
                    confirmations[id] = answer
                }
            case "finished": finishes.append(entry["reason"]?.stringValue ?? "")
            default: break
            }
        }
        (self.actions, self.requests, self.responses, self.calls) = (actions, requests, responses, calls)
        self.confirmations = confirmations
        self.tools = tools.values.sorted { $0.id < $1.id }
        self.finishes = finishes
    }

    /// The configuration a replay runs with: `base` with the recorded system prompt and limits.
    package func configuration(base: AgentConfiguration) -> AgentConfiguration {
        var configuration = RecordFormat.configuration(limits, base: base)
        if let system { configuration.systemPrompt = system }
        return configuration
    }
}

/// Where a replay first went another way than the record, and every difference seen.
package final class ReplayLog: Sendable {
    private let differences = Mutex<[String]>([])

    package init() {}

    package var all: [String] { differences.withLock { $0 } }
    package var first: String? { all.first }

    package func note(_ difference: String) { differences.withLock { $0.append(difference) } }
}

/// Answers from the record, in order: request N gets response N; a request that differs from the recorded one is
/// noted (and answered from the record all the same, so the replay shows how far it goes).
package final class ReplayProvider: ModelProvider {
    let record: SessionRecord
    let log: ReplayLog
    private let counter = ReplayCounter()
    /// The run's previous request's conversation (starting as the recorder's did: the header's).
    private let sent: Mutex<[JSONValue]>

    package init(_ record: SessionRecord, log: ReplayLog) {
        self.record = record
        self.log = log
        sent = Mutex(RecordFormat.conversation(record.conversation).map(RecordFormat.message))
    }

    package var displayName: String { "replay of \(record.model)" }

    package func stream(_ request: ModelRequest) -> AsyncThrowingStream<ModelChunk, any Error> {
        let step = counter.next()
        return AsyncThrowingStream { continuation in
            guard step < record.responses.count else {
                log.note(
                    "step \(step + 1): the run asked the model again; the record has \(record.responses.count) responses"
                )
                continuation.finish(throwing: ModelError("the record has no response for step \(step + 1)"))
                return
            }
            // Compared as the recorder wrote it: the messages added since the run's previous request.
            let current = RecordFormat.conversation(request.messages).map(RecordFormat.message)
            let from = sent.withLock { previous in
                defer { previous = current }
                return RecordFormat.from(previous, to: current)
            }
            if step < record.requests.count,
                from != record.requests[step].from || Array(current.dropFirst(from)) != record.requests[step].messages
            {
                log.note("step \(step + 1): the request to the model differs from the recorded one")
            }
            let response = record.responses[step]
            for chunk in response.chunks { continuation.yield(chunk) }
            if let error = response.error {
                continuation.finish(throwing: ModelError(error))
            } else {
                continuation.finish()
            }
        }
    }
}

/// The skills of a replay. Recorded (`live` false): no plugin runs, nothing changes — each call is matched, in
/// order, against the recorded ones (skill and arguments) and answered with the recorded outcome. Live: the real
/// skills run, and each outcome is compared with the recorded one. The registry supplies what the skills are.
package struct ReplaySkills: AgentSkills {
    let registry: any AgentSkills
    let record: SessionRecord
    let log: ReplayLog
    let live: Bool
    private let counter = ReplayCounter()

    package init(registry: any AgentSkills, record: SessionRecord, log: ReplayLog, live: Bool) {
        self.registry = registry
        self.record = record
        self.log = log
        self.live = live
    }

    /// Live: the real plugins. Recorded: the tools the record offered (this machine's plugins play no part).
    package var skills: [SkillInfo] { live ? registry.skills : record.tools }
    package func skill(_ id: String) -> SkillInfo? {
        live ? registry.skill(id) : record.tools.first { $0.id == id }
    }
    package func snapshots(of plugins: [String]) async -> [PluginState] {
        live ? await registry.snapshots(of: plugins) : []
    }

    package func prepareCall(_ invocation: SkillInvocation) async -> Result<any ReadySkillCall, CallRefusal> {
        let index = counter.next()
        let recorded = index < record.calls.count ? record.calls[index] : nil
        if live {
            switch await registry.prepareCall(invocation) {
            case .failure(let refusal): return .failure(refusal)
            case .success(let ready):
                return .success(
                    ComparedCall(ready: ready, recorded: recorded, index: index, skill: invocation.skill, log: log))
            }
        }
        var arguments = (try? JSONValue(parsing: invocation.arguments.jsonText)) ?? .null
        // As the pipeline would have made them (coerced, defaults filled): what the record holds.
        if let schema = skill(invocation.skill).flatMap({ try? JSONSchema($0.inputSchema) }),
            case .valid(let normalized) = schema.validate(arguments)
        {
            arguments = normalized
        }
        guard let recorded else {
            log.note(
                "call \(index + 1): the run called \(invocation.skill); the record has \(record.calls.count) calls")
            return .failure(CallRefusal(SkillFailure(code: .failed, message: "not in the record")))
        }
        if recorded.skill != invocation.skill || recorded.arguments != arguments {
            log.note(
                "call \(index + 1): the run called \(invocation.skill)(\(arguments.jsonText)); the record has "
                    + "\(recorded.skill)(\(recorded.arguments.jsonText))")
        }
        return .success(RecordedCall(arguments: arguments, outcome: Self.outcome(recorded.outcome)))
    }

    /// A recorded outcome envelope as an outcome.
    static func outcome(_ envelope: JSONValue) -> SkillOutcome {
        if envelope["status"] == "ok" { return SkillOutcome(.success(envelope["result"] ?? .null)) }
        let code = envelope["code"]?.stringValue.flatMap(FailureCode.init(rawValue:)) ?? .failed
        return SkillOutcome(.failure(SkillFailure(code: code, message: envelope["error"]?.stringValue ?? "")))
    }
}

/// Numbers requests or calls in the order they come: 0, 1, 2…
final class ReplayCounter: Sendable {
    private let value = Mutex(0)

    func next() -> Int {
        value.withLock { value in
            defer { value += 1 }
            return value
        }
    }
}

/// A call answered from the record.
struct RecordedCall: ReadySkillCall {
    let arguments: JSONValue
    let outcome: SkillOutcome

    func run() async -> SkillOutcome { outcome }
}

/// A call run live, its outcome compared with the recorded one.
struct ComparedCall: ReadySkillCall {
    let ready: any ReadySkillCall
    let recorded: SessionRecord.Call?
    let index: Int
    let skill: String
    let log: ReplayLog

    var arguments: JSONValue { ready.arguments }

    func run() async -> SkillOutcome {
        let outcome = await ready.run()
        let live = SessionRecorder.recorded(outcome)
        guard let recorded else {
            log.note("call \(index + 1): \(skill) ran live; the record has no such call")
            return outcome
        }
        if live != recorded.outcome {
            log.note(
                "call \(index + 1): \(skill) answered \(live.jsonText) live; the record has \(recorded.outcome.jsonText)"
            )
        }
        return outcome
    }
}
