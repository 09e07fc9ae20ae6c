import Foundation
import SkillHost
import SkillJSON
import Support
import Synchronization

/// A session's record (`.skillrec`): JSON Lines, a version header first, then in the order they happened: each
/// message of the person's (and each turn they let go on), every model request (the conversation's new messages and,
/// when they change, the tools offered) and response, every skill call with its arguments and outcome, every
/// confirmation answered, every rewind. Known secrets (the API key, header values) are replaced before anything is
/// written. Lines are written by a queue of their own, off the turn's path, in order; `close()` waits for them.
///
/// ```
/// {"skillrec":1,"host":"0.1.0","model":"offline router","system":"You are…","limits":{"steps":8,…}}
/// {"type":"turn","prompt":"what is 2+2"}
/// {"type":"tools","tools":[{"name":"calculator","description":"…","parameters":{…},"risk":"read-only"},…]}
/// {"type":"request","step":1,"from":1,"messages":[{"role":"user","content":"what is 2+2"}]}
/// {"type":"response","step":1,"chunks":[{"tool_call":{"id":"c1","name":"calculator","arguments":"…"}}]}
/// {"type":"call","id":"c1","skill":"calculator","arguments":{"expression":"2+2"},"outcome":{"status":"ok",…}}
/// {"type":"finished","reason":"answered"}
/// ```
package final class SessionRecorder: Sendable {
    package static let version = 1

    struct State {
        var step = 0
        var arguments: [String: JSONValue] = [:]
        var failed: String?
        /// The conversation the last request carried (what the next one's new messages follow) and its tools.
        var sent: [Message] = []
        var tools: [ToolDefinition] = []
        var turns = 0
    }

    private let descriptor: Int32
    private let secrets: [String?]
    private let state: Mutex<State>
    private let queue = DispatchQueue(label: "skillhost.record")
    /// Lines waiting for the queue, and whether a drain is scheduled.
    private let pending = Mutex<(lines: [@Sendable () -> JSONValue], scheduled: Bool)>(([], false))
    package let path: String

    /// Creates the file (the person's alone: 0600) and writes the header: the model, the system prompt, the limits
    /// that decide where turns stop, and — when recording starts mid-session — the conversation so far. Throws a
    /// sentence.
    package init(
        path: String, model: String, configuration: AgentConfiguration, conversation: [Message] = [],
        secrets: [String?]
    ) throws(ModelError) {
        self.path = path
        self.secrets = secrets
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw ModelError("cannot write the record \(path): \(String(cString: strerror(errno)))")
        }
        // An existing file keeps its mode on O_CREAT: the record is the person's alone either way.
        fchmod(descriptor, 0o600)
        self.descriptor = descriptor
        state = Mutex(State(sent: RecordFormat.conversation(conversation)))
        var header = JSONObject([
            (key: "skillrec", value: .int(Int64(Self.version))),
            (key: "host", value: .string(SkillRegistry.hostVersion)),
            (key: "model", value: .string(model)), (key: "system", value: .string(configuration.systemPrompt)),
            (key: "limits", value: RecordFormat.limits(configuration)),
        ])
        if conversation.count > 1 { header["conversation"] = .array(conversation.map(RecordFormat.message)) }
        write(.object(header))
    }

    /// The person's message that starts a turn.
    package func turn(_ prompt: String) {
        state.withLock { $0.turns += 1 }
        write(["type": "turn", "prompt": .string(prompt)])
    }

    /// The person let a stopped turn go on (the step limit, or a budget they waived — `waived` its key, for the
    /// rest of the session when `forSession`).
    package func continued(waived: String? = nil, forSession: Bool = false) {
        var object = JSONObject([(key: "type", value: "continue")])
        if let waived {
            object["waived"] = .string(waived)
            object["for_session"] = .bool(forSession)
        }
        write(.object(object))
    }

    /// The person went back to before their message `number`.
    package func rewound(to number: Int) { write(["type": "rewind", "to": .int(Int64(number))]) }

    /// How the person (or a permission hook) answered the confirmation of call `id`.
    package func confirmation(_ request: ConfirmationRequest, _ answer: ConfirmationAnswer) {
        write([
            "type": "confirmation", "id": .string(request.callID), "skill": .string(request.skill.id),
            "answer": .string(answer.word),
        ])
    }

    /// Turns recorded so far.
    package var turns: Int { state.withLock { $0.turns } }

    /// A model request of the next step: the messages added since the last request (all of them, `from` 0, when
    /// the conversation was cut back since), and the tools when they differ from the last request's.
    func request(_ request: ModelRequest) -> Int {
        let conversation = RecordFormat.conversation(request.messages)
        let (step, from, tools) = state.withLock { state -> (Int, Int, [ToolDefinition]?) in
            state.step += 1
            let from = RecordFormat.from(state.sent, to: conversation)
            state.sent = conversation
            let changed = request.tools != state.tools
            if changed { state.tools = request.tools }
            return (state.step, from, changed ? request.tools : nil)
        }
        // Encoded on the record's queue: the turn only hands the values over.
        if let tools { enqueue { ["type": "tools", "tools": .array(tools.map(RecordFormat.tool))] } }
        enqueue {
            [
                "type": "request", "step": .int(Int64(step)), "from": .int(Int64(from)),
                "messages": .array(conversation.dropFirst(from).map(RecordFormat.message)),
            ]
        }
        return step
    }

    /// The model's whole response to request `step` (or why it failed).
    func response(step: Int, chunks: [ModelChunk], error: String?) {
        enqueue {
            var object = JSONObject([
                (key: "type", value: "response"), (key: "step", value: .int(Int64(step))),
                (key: "chunks", value: .array(chunks.map(RecordFormat.chunk))),
            ])
            if let error { object["error"] = .string(error) }
            return .object(object)
        }
    }

    /// Records what the turn's events say of skill calls, and its end.
    package func record(_ event: AgentEvent) {
        switch event {
        case .toolCall(let call):
            switch call.phase {
            case .started(let arguments):
                let value: JSONValue
                switch arguments {
                case .value(let given): value = given
                case .text(let text): value = (try? JSONValue(parsing: text)) ?? .string(text)
                }
                state.withLock { $0.arguments[call.id] = value }
            case .finished(let result, let duration):
                writeCall(call, SkillOutcome(.success(result), duration: duration))
            case .failed(let failure, let duration):
                writeCall(call, SkillOutcome(.failure(failure), duration: duration))
            case .progress: break
            }
        case .finished(let reason):
            write(["type": "finished", "reason": .string(reason.name)])
        default: break
        }
    }

    /// A failure to write, said once (the run goes on).
    package var failure: String? {
        flush()
        return state.withLock { $0.failed }
    }

    private func writeCall(_ call: ToolCallEvent, _ outcome: SkillOutcome) {
        let arguments = state.withLock { $0.arguments.removeValue(forKey: call.id) } ?? .object(JSONObject())
        write([
            "type": "call", "id": .string(call.id), "skill": .string(call.skill), "arguments": arguments,
            "outcome": Self.recorded(outcome),
        ])
    }

    /// An outcome as the record keeps it: its envelope without the duration (timing differs run to run; the
    /// record is about what happened) and without the undo (the turn's events do not carry it).
    static func recorded(_ outcome: SkillOutcome) -> JSONValue {
        guard case .object(var object) = outcome.envelope else { return outcome.envelope }
        object["duration_ms"] = nil
        object["undo"] = nil
        return .object(object)
    }

    private func write(_ value: JSONValue) { enqueue { value } }

    /// Queues a line, made and written on the record's queue. Lines queued while the queue is busy are written
    /// together, in order, with one system call.
    private func enqueue(_ line: @escaping @Sendable () -> JSONValue) {
        let schedule = pending.withLock { pending -> Bool in
            pending.lines.append(line)
            defer { pending.scheduled = true }
            return !pending.scheduled
        }
        if schedule { queue.async { self.drain() } }
    }

    /// Writes what waits, whole (a write the system cuts short is continued; a failure is kept for `failure`).
    private func drain() {
        let lines = pending.withLock { pending in
            defer { pending = ([], false) }
            return pending.lines
        }
        var bytes: [UInt8] = []
        for line in lines { bytes += Array((Redaction.redact(line().jsonText, secrets: secrets) + "\n").utf8) }
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { buffer -> Int in
                guard let base = buffer.baseAddress else { return 0 }
                return Foundation.write(descriptor, base + offset, bytes.count - offset)
            }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else {
                let reason = String(cString: strerror(errno))
                state.withLock { state in
                    if state.failed == nil { state.failed = "could not write to the record \(path): \(reason)" }
                }
                return
            }
            offset += written
        }
    }

    /// Waits for the lines queued so far to be written.
    package func flush() { queue.sync {} }

    /// Writes what is queued and closes the file.
    package func close() {
        queue.sync { _ = Foundation.close(descriptor) }
    }
}

/// Where a front end's record goes: the recorder, while one records (the shell's `/record` starts and stops it).
package final class RecordSlot: Sendable {
    private let current: Mutex<SessionRecorder?>

    package init(_ recorder: SessionRecorder? = nil) { current = Mutex(recorder) }

    package var recorder: SessionRecorder? {
        get { current.withLock { $0 } }
        set { current.withLock { $0 = newValue } }
    }
}
