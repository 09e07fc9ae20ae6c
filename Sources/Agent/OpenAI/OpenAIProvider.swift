import Foundation
import SkillHost
import SkillJSON
import Support
import Synchronization

/// Where and how to reach an OpenAI-compatible chat-completions server.
package struct OpenAIConfiguration: Sendable {
    /// E.g. `https://api.openai.com/v1` or `http://localhost:11434/v1`; `/chat/completions` is appended.
    package var baseURL: URL
    /// Sent as `Authorization: Bearer …` when set. Never logged or shown.
    package var apiKey: String?
    package var model: String
    /// Seconds without any data before a request fails.
    package var requestTimeout: TimeInterval = 120
    /// Attempts for connection failures, 429 and 5xx (so 3 means two retries).
    package var maximumAttempts = 3
    /// First retry delay; doubles each time. A `Retry-After` header takes precedence.
    package var retryDelay: Duration = .milliseconds(500)
    /// Upper bound of any retry delay, including `Retry-After`.
    package var maximumRetryDelay: Duration = .seconds(20)
    /// Waits between attempts; tests substitute one that records the waits instead of sleeping.
    package var sleep: @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
    /// Where the provider reports what the user may want to know when debugging (the host's log).
    package var log: @Sendable (LogRecord) -> Void = { _ in }

    package init(baseURL: URL, apiKey: String?, model: String) {
        self.baseURL = baseURL
        self.apiKey = apiKey
        self.model = model
    }
}

/// A model behind an OpenAI-compatible `/chat/completions` endpoint (OpenAI, Ollama, llama.cpp, vLLM, LM Studio…),
/// streamed over Server-Sent Events.
///
/// Some servers cannot stream a response to a request that carries tools (llama-cpp-python's
/// `chatml-function-calling` aborts the stream with "Automatic streaming tool choice is not supported"; others
/// answer 4xx/5xx saying streaming is unsupported). The provider then repeats the same request without streaming
/// and keeps doing so for requests with tools for as long as it lives (the session), saying so once in the log at
/// debug level.
package final class OpenAIProvider: ModelProvider {
    package let configuration: OpenAIConfiguration
    /// Set once a server showed it cannot stream requests with tools.
    private let streamsTools = Atomic<Bool>(true)

    package init(configuration: OpenAIConfiguration) { self.configuration = configuration }

    /// "model at URL", the URL without its credentials (user information, key-like query parameters): it is
    /// written to records, the history and the screen.
    package var displayName: String {
        "\(configuration.model) at \(Redaction.url(configuration.baseURL.absoluteString))"
    }

    package func stream(_ request: ModelRequest) -> AsyncThrowingStream<ModelChunk, any Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    try await self.run(request) { continuation.yield($0) }
                    continuation.finish()
                } catch let error as ModelError {
                    // Server words reach the screen, the history and --json output: never with a credential.
                    continuation.finish(
                        throwing: ModelError(Redaction.redact(error.message, secrets: [self.configuration.apiKey])))
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    private enum Attempt {
        case done
        case retry(after: Duration?, reason: String)
        /// The server cannot stream this request (it carries tools): send it again without streaming.
        case streamingUnsupported(String)
    }

    private func run(_ request: ModelRequest, yield: (ModelChunk) -> Void) async throws {
        var streaming = request.tools.isEmpty || streamsTools.load(ordering: .relaxed)
        var urlRequest = try makeRequest(request, streaming: streaming)
        var delay = configuration.retryDelay
        var attempt = 0
        while attempt < max(1, configuration.maximumAttempts) {
            attempt += 1
            switch try await attemptOnce(urlRequest, streamingTools: streaming && !request.tools.isEmpty, yield: yield)
            {
            case .done: return
            case .streamingUnsupported(let why):
                // Not an attempt used up: the same request, once more, in the form this server understands.
                streaming = false
                attempt -= 1
                urlRequest = try makeRequest(request, streaming: false)
                if streamsTools.exchange(false, ordering: .relaxed) {
                    configuration.log(
                        LogRecord(
                            level: .debug, source: "host",
                            message:
                                "the model server at \(host) cannot stream requests with tools (\(why)); sending them "
                                + "without streaming for the rest of the session"))
                }
            case .retry(let after, let reason):
                guard attempt < configuration.maximumAttempts else {
                    throw ModelError("\(reason) (gave up after \(attempt) attempts)")
                }
                let wait = min(after ?? delay, configuration.maximumRetryDelay)
                delay = delay * 2
                try await configuration.sleep(wait)
            }
        }
    }

    /// Whether a server's words say it cannot stream ("Automatic streaming tool choice is not supported",
    /// "streaming is unsupported", "stream=true is not supported with tools").
    static func refusesStreaming(_ message: String) -> Bool {
        let lowered = message.lowercased()
        return lowered.contains("stream") && (lowered.contains("not supported") || lowered.contains("unsupported"))
    }

    /// The most of one response that is read.
    static let maximumResponse = 64 << 20

    private func attemptOnce(
        _ urlRequest: HTTPRequest, streamingTools: Bool, yield: (ModelChunk) -> Void
    ) async throws -> Attempt {
        // A model's answer is kilobytes; a server that sends more than this is refused, not read to the end.
        var iterator = HTTPStream.start(
            urlRequest, timeout: configuration.requestTimeout, maximumBytes: Self.maximumResponse
        ).makeAsyncIterator()
        let status: Int
        let headers: [String: String]
        do {
            guard case .head(let s, let h)? = try await iterator.next() else {
                return .retry(after: nil, reason: "the model server at \(host) closed the connection without answering")
            }
            (status, headers) = (s, h)
        } catch let tooLarge as HTTPResponseTooLarge {
            throw ModelError("the model server at \(host) \(tooLarge); skillhost stopped reading")
        } catch {
            try Task.checkCancellation()
            if let transport = error as? HTTPTransportError, transport.kind == .timedOut {
                throw ModelError(
                    "the model server at \(host) did not answer within \(Int(configuration.requestTimeout)) s")
            }
            return .retry(after: nil, reason: "cannot reach the model server at \(host): \(error)")
        }

        if (300..<400).contains(status) {
            // HTTPStream follows redirects within the model server's origin; one to another origin is delivered
            // as it is, so the key is never sent there.
            let target = headers["location"].map { " to \($0)" } ?? ""
            throw ModelError(
                "the model server at \(host) redirected\(target), another origin; skillhost does not follow it with "
                    + "your API key — set OPENAI_BASE_URL to the address you trust")
        }
        guard (200..<300).contains(status) else {
            var body = Data()
            while body.count < 65_536, case .body(let data)? = try? await iterator.next() { body.append(data) }
            let message = Self.serverMessage(body)
            let answered =
                "the model server answered \(status) \(Self.reason(status))\(message.isEmpty ? "" : ": \(message)")"
            if streamingTools, Self.refusesStreaming(message) { return .streamingUnsupported(message) }
            if status == 429 || status >= 500 {
                return .retry(after: Self.retryAfter(headers["retry-after"]), reason: answered)
            }
            switch status {
            case 401, 403: throw ModelError("\(answered) — check OPENAI_API_KEY")
            case 404: throw ModelError("\(answered) — check SKILLHOST_MODEL and OPENAI_BASE_URL")
            default: throw ModelError(answered)
            }
        }

        var parser = SSEParser()
        var decoder = ChatStreamDecoder()
        let isEventStream = headers["content-type"]?.contains("text/event-stream") ?? true
        var whole = Data()
        var events = 0
        do {
            while let event = try await iterator.next() {
                guard case .body(let data) = event else { continue }
                if !isEventStream {
                    whole.append(data)
                    continue
                }
                let payloads = data.withUnsafeBytes { parser.feed($0) }
                events += payloads.count
                for payload in payloads { for chunk in try decoder.decode(payload) { yield(chunk) } }
                if decoder.isComplete, payloads.contains("[DONE]") { break }
            }
        } catch let error as ModelError {
            if streamingTools, events <= 1, Self.refusesStreaming(error.message) {
                return .streamingUnsupported(error.message)
            }
            throw error
        } catch let tooLarge as HTTPResponseTooLarge {
            throw ModelError("the model server at \(host) \(tooLarge); skillhost stopped reading")
        } catch {
            try Task.checkCancellation()
            // A stream that breaks before its first event, for a request with tools, is how some servers say
            // they cannot stream tools.
            if streamingTools, events == 0 { return .streamingUnsupported("the stream ended before any event") }
            throw ModelError("the connection to the model server broke mid-response: \(error)")
        }
        if isEventStream {
            let rest = parser.finish()
            events += rest.count
            do {
                for payload in rest { for chunk in try decoder.decode(payload) { yield(chunk) } }
            } catch {
                if streamingTools, events <= 1, Self.refusesStreaming(error.message) {
                    return .streamingUnsupported(error.message)
                }
                throw error
            }
        } else {
            // The server ignored "stream" (or was asked not to): a single JSON response.
            for chunk in try decoder.decode(String(decoding: whole, as: UTF8.self)) { yield(chunk) }
        }
        guard decoder.isComplete else {
            if streamingTools, events == 0 { return .streamingUnsupported("the stream ended before any event") }
            throw ModelError("the model's response was cut off: the connection closed before the stream finished")
        }
        for chunk in decoder.finish() { yield(chunk) }
        return .done
    }

    private var host: String {
        let url = configuration.baseURL
        return "\(url.host ?? url.absoluteString)\(url.port.map { ":\($0)" } ?? "")"
    }

    func makeRequest(_ request: ModelRequest, streaming: Bool = true) throws -> HTTPRequest {
        var urlRequest = HTTPRequest(
            url: configuration.baseURL.appendingPathComponent("chat/completions"), method: "POST",
            body: Data(Self.body(request, model: configuration.model, streaming: streaming).jsonText.utf8))
        urlRequest.setHeader("application/json", for: "Content-Type")
        urlRequest.setHeader(streaming ? "text/event-stream" : "application/json", for: "Accept")
        if let key = configuration.apiKey, !key.isEmpty {
            urlRequest.setHeader("Bearer \(key)", for: "Authorization")
        }
        return urlRequest
    }

    /// The JSON body of a chat-completions request (streamed unless `streaming` is false).
    static func body(_ request: ModelRequest, model: String, streaming: Bool = true) -> JSONValue {
        var body = JSONObject([
            (key: "model", value: .string(model)), (key: "stream", value: .bool(streaming)),
            (key: "messages", value: .array(request.messages.map(message))),
        ])
        if streaming { body["stream_options"] = ["include_usage": true] }
        if !request.tools.isEmpty {
            body["tools"] = .array(
                request.tools.map { tool in
                    [
                        "type": "function",
                        "function": [
                            "name": .string(tool.name), "description": .string(tool.description),
                            "parameters": ModelSchema.forModel(tool.parameters),
                        ],
                    ]
                })
            body["tool_choice"] = "auto"
        }
        return .object(body)
    }

    /// One message in the wire format of chat completions.
    package static func message(_ message: Message) -> JSONValue {
        var object = JSONObject([(key: "role", value: .string(message.role.rawValue))])
        switch message.role {
        case .assistant:
            // Always a string ("" beside tool calls): the API allows null there, but llama-cpp-python's server
            // rejects it with a validation error, and every server accepts "".
            object["content"] = .string(message.content)
            if !message.toolCalls.isEmpty {
                object["tool_calls"] = .array(
                    message.toolCalls.map { call in
                        [
                            "id": .string(call.id), "type": "function",
                            "function": ["name": .string(call.name), "arguments": .string(call.arguments)],
                        ]
                    })
            }
        case .tool:
            object["tool_call_id"] = .string(message.toolCallID ?? "")
            object["content"] = .string(message.content)
        case .system, .user:
            object["content"] = .string(message.content)
        }
        return .object(object)
    }

    /// The `error.message` of an error body, or its first 200 characters.
    static func serverMessage(_ body: Data) -> String {
        if let value = try? JSONValue(parsing: [UInt8](body)), let error = value["error"] {
            return ChatStreamDecoder.errorMessage(error)
        }
        return String(decoding: body.prefix(200), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `Retry-After` as seconds (an HTTP date is not worth parsing for a bounded wait).
    static func retryAfter(_ value: String?) -> Duration? {
        guard let value, let seconds = Double(value.trimmingCharacters(in: .whitespaces)), seconds >= 0,
            seconds.isFinite
        else { return nil }
        // A server's number, so bounded before it becomes an integer (the caller caps the wait further).
        return .milliseconds(Int64(min(seconds, 86_400) * 1000))
    }

    static func reason(_ status: Int) -> String {
        switch status {
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 408: return "Request Timeout"
        case 413: return "Payload Too Large"
        case 422: return "Unprocessable Entity"
        case 429: return "Too Many Requests"
        case 500: return "Internal Server Error"
        case 502: return "Bad Gateway"
        case 503: return "Service Unavailable"
        case 504: return "Gateway Timeout"
        default: return ""
        }
    }
}
