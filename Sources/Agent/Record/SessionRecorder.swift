import Foundation
import SkillHost
import SkillJSON
import Support
import Synchronization

/// A session's record (`.skillrec`): JSON Lines, a version header first, then every model request and response
/// and every skill call with its arguments and outcome, in the order they happened. Known secrets (the API key,
/// header values) are replaced before anything is written.
///
/// ```
/// {"skillrec":1,"host":"0.1.0","prompt":"what is 2+2","model":"offline router"}
/// {"type":"request","step":1,"messages":[…],"tools":["calculator",…]}
/// {"type":"response","step":1,"chunks":[{"tool_call":{"id":"c1","name":"calculator","arguments":"…"}}]}
/// {"type":"call","id":"c1","skill":"calculator","arguments":{"expression":"2+2"},"outcome":{"status":"ok",…}}
/// {"type":"finished","reason":"answered"}
/// ```
package final class SessionRecorder: Sendable {
    package static let version = 1

    private let descriptor: Int32
    private let secrets: [String?]
    private let state = Mutex<(step: Int, arguments: [String: JSONValue], failed: String?)>((0, [:], nil))
    package let path: String

    /// Creates the file (the person's alone: 0600) and writes the header. Throws a sentence.
    package init(path: String, prompt: String, model: String, secrets: [String?]) throws(ModelError) {
        self.path = path
        self.secrets = secrets
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw ModelError("cannot write the record \(path): \(String(cString: strerror(errno)))")
        }
        // An existing file keeps its mode on O_CREAT: the record is the person's alone either way.
        fchmod(descriptor, 0o600)
        self.descriptor = descriptor
        write([
            "skillrec": .int(Int64(Self.version)), "host": .string(SkillRegistry.hostVersion),
            "prompt": .string(prompt),
            "model": .string(model),
        ])
    }

    /// A model request of the next step.
    func request(_ request: ModelRequest) -> Int {
        let step = state.withLock { state -> Int in
            state.step += 1
            return state.step
        }
        write([
            "type": "request", "step": .int(Int64(step)),
            "messages": .array(request.messages.map(OpenAIProvider.message)),
            "tools": .array(request.tools.map { .string($0.name) }),
        ])
        return step
    }

    /// The model's whole response to request `step` (or why it failed).
    func response(step: Int, chunks: [ModelChunk], error: String?) {
        var object = JSONObject([
            (key: "type", value: "response"), (key: "step", value: .int(Int64(step))),
            (key: "chunks", value: .array(chunks.map(Self.encode))),
        ])
        if let error { object["error"] = .string(error) }
        write(.object(object))
    }

    /// Records what the turn's events say of skill calls, and its end.
    package func record(_ event: AgentEvent) {
        switch event {
        case .toolCall(let call):
            switch call.phase {
            case .started(let arguments):
                state.withLock {
                    $0.arguments[call.id] = (try? JSONValue(parsing: arguments.jsonText)) ?? .string(arguments.jsonText)
                }
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
    package var failure: String? { state.withLock { $0.failed } }

    private func writeCall(_ call: ToolCallEvent, _ outcome: SkillOutcome) {
        let arguments = state.withLock { $0.arguments.removeValue(forKey: call.id) } ?? .object(JSONObject())
        write([
            "type": "call", "id": .string(call.id), "skill": .string(call.skill), "arguments": arguments,
            "outcome": Self.recorded(outcome),
        ])
    }

    /// An outcome as the record keeps it: its envelope without the duration (timing differs run to run; the
    /// record is about what happened).
    static func recorded(_ outcome: SkillOutcome) -> JSONValue {
        guard case .object(var object) = outcome.envelope else { return outcome.envelope }
        object["duration_ms"] = nil
        return .object(object)
    }

    static func encode(_ chunk: ModelChunk) -> JSONValue {
        switch chunk {
        case .text(let text): return ["text": .string(text)]
        case .toolCall(let call):
            return [
                "tool_call": ["id": .string(call.id), "name": .string(call.name), "arguments": .string(call.arguments)]
            ]
        case .usage(let usage):
            return [
                "usage": ["prompt": .int(Int64(usage.promptTokens)), "completion": .int(Int64(usage.completionTokens))]
            ]
        case .noSkillMatched: return ["no_match": true]
        }
    }

    static func decode(_ value: JSONValue) -> ModelChunk? {
        if let text = value["text"]?.stringValue { return .text(text) }
        if let call = value["tool_call"], let id = call["id"]?.stringValue, let name = call["name"]?.stringValue,
            let arguments = call["arguments"]?.stringValue
        {
            return .toolCall(ToolCall(id: id, name: name, arguments: arguments))
        }
        if let usage = value["usage"], let prompt = usage["prompt"]?.doubleValue,
            let completion = usage["completion"]?.doubleValue
        {
            return .usage(Usage(promptTokens: Int(prompt), completionTokens: Int(completion)))
        }
        if value["no_match"] == true { return .noSkillMatched }
        return nil
    }

    /// Appends one line, whole (a write the system cuts short is continued; a failure is kept for `failure`).
    private func write(_ value: JSONValue) {
        let line = Array((Redaction.redact(value.jsonText, secrets: secrets) + "\n").utf8)
        var offset = 0
        while offset < line.count {
            let written = line.withUnsafeBytes { bytes -> Int in
                guard let base = bytes.baseAddress else { return 0 }
                return Foundation.write(descriptor, base + offset, line.count - offset)
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

    package func close() { _ = Foundation.close(descriptor) }
}

/// A provider that records every request it is given and every response it streams, to a `SessionRecorder`.
package struct RecordingProvider: ModelProvider {
    let inner: any ModelProvider
    let recorder: SessionRecorder

    package init(_ inner: any ModelProvider, recorder: SessionRecorder) {
        self.inner = inner
        self.recorder = recorder
    }

    package var displayName: String { inner.displayName }

    package func stream(_ request: ModelRequest) -> AsyncThrowingStream<ModelChunk, any Error> {
        let step = recorder.request(request)
        let upstream = inner.stream(request)
        let recorder = self.recorder
        return AsyncThrowingStream { continuation in
            let task = Task {
                var chunks: [ModelChunk] = []
                do {
                    for try await chunk in upstream {
                        chunks.append(chunk)
                        continuation.yield(chunk)
                    }
                    recorder.response(step: step, chunks: chunks, error: nil)
                    continuation.finish()
                } catch {
                    recorder.response(step: step, chunks: chunks, error: "\(error)")
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}
