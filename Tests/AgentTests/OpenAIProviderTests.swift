import Foundation
import SkillHost
import Support
import Synchronization
import TestSupport
import Testing

@testable import Agent
@testable import SkillJSON

/// The OpenAI-compatible provider against a real HTTP server on loopback replaying recorded SSE shapes.
@Suite(.serialized)
struct OpenAIProviderTests {
    static let request = ModelRequest(
        messages: [Message(role: .system, content: "sys"), Message(role: .user, content: "what is (23+7)*2?")],
        tools: [
            ToolDefinition(
                name: "calculator", description: "Evaluates arithmetic.",
                parameters: ["type": "object", "properties": ["expression": ["type": "string"]]])
        ])

    /// The waits between attempts, recorded instead of slept.
    final class Waits: Sendable {
        let recorded = Mutex<[Duration]>([])
    }

    func provider(_ server: LoopbackServer, key: String? = "sk-test-secret", waits: Waits = Waits()) -> OpenAIProvider {
        var configuration = OpenAIConfiguration(baseURL: server.baseURL, apiKey: key, model: "test-model")
        configuration.retryDelay = .milliseconds(10)
        configuration.requestTimeout = 30
        configuration.sleep = { wait in waits.recorded.withLock { $0.append(wait) } }
        return OpenAIProvider(configuration: configuration)
    }

    func collect(_ provider: OpenAIProvider) async -> (chunks: [ModelChunk], error: String?) {
        var chunks: [ModelChunk] = []
        do {
            for try await chunk in provider.stream(Self.request) { chunks.append(chunk) }
            return (chunks, nil)
        } catch {
            return (chunks, "\(error)")
        }
    }

    @Test func streamsTextWithCRLFCommentsAndUsage() async throws {
        let server = try LoopbackServer([
            LoopbackServer.Reply(pieces: [
                (": keep-alive\r\n\r\n", .zero),
                (
                    "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"The answer\"},\"finish_reason\":null}]}\r\n\r\n",
                    .zero
                ),
                (
                    "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\" is \"},\"finish_reason\":null}]}\r\n\r\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"con",
                    .milliseconds(20)
                ),
                ("tent\":\"60.\"},\"finish_reason\":\"stop\"}]}\r\n\r\n", .milliseconds(20)),
                (
                    "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":5,\"total_tokens\":17}}\r\n\r\ndata: [DONE]\r\n\r\n",
                    .zero
                ),
            ])
        ])
        defer { server.stop() }
        let (chunks, error) = await collect(provider(server))
        #expect(error == nil)
        #expect(
            chunks == [
                .text("The answer"), .text(" is "), .text("60."), .usage(Usage(promptTokens: 12, completionTokens: 5)),
            ])
        let sent = try #require(server.requests.first)
        #expect(sent.head.hasPrefix("POST /v1/chat/completions HTTP/1.1"))
        #expect(sent.header("Authorization") == "Bearer sk-test-secret")
        let body = try JSONValue(parsing: sent.body)
        #expect(body["model"] == "test-model")
        #expect(body["stream"] == true)
        #expect(body["stream_options"] == ["include_usage": true])
        #expect(body["tools"]?.arrayValue?.first?["function"]?["name"] == "calculator")
        #expect(body["messages"]?.arrayValue?.count == 2)
    }

    @Test func assemblesFragmentedAndParallelToolCalls() async throws {
        let server = try LoopbackServer([
            .events(
                [
                    #"{"choices":[{"index":0,"delta":{"role":"assistant","content":null},"finish_reason":null}]}"#,
                    #"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"calculator","arguments":""}}]},"finish_reason":null}]}"#,
                    #"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"expr"}}]},"finish_reason":null}]}"#,
                    #"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"ession\": \"(23+7)*2\"}"}}]},"finish_reason":null}]}"#,
                    #"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"clock_now","arguments":""}}]},"finish_reason":null}]}"#,
                    #"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{\"time_zone\":\"Asia/Tokyo\"}"}}]},"finish_reason":null}]}"#,
                    #"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
                    #"{"choices":[],"usage":{"prompt_tokens":149,"completion_tokens":60,"total_tokens":209}}"#,
                    "[DONE]",
                ], delay: .milliseconds(5))
        ])
        defer { server.stop() }
        let (chunks, error) = await collect(provider(server))
        #expect(error == nil)
        #expect(
            chunks == [
                .usage(Usage(promptTokens: 149, completionTokens: 60)),
                .toolCall(ToolCall(id: "call_a", name: "calculator", arguments: #"{"expression": "(23+7)*2"}"#)),
                .toolCall(ToolCall(id: "call_b", name: "clock_now", arguments: #"{"time_zone":"Asia/Tokyo"}"#)),
            ])
    }

    @Test func acceptsOllamaLlamaCppAndVLLMDeviations() async throws {
        let server = try LoopbackServer([
            // Ollama: every call at index 0, each whole, a new id meaning a new call.
            .events([
                #"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"o1","function":{"name":"calculator","arguments":"{\"expression\":\"1+1\"}"}}]}}]}"#,
                #"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"o2","function":{"name":"calculator","arguments":"{\"expression\":\"2+2\"}"}}]}}]}"#,
                #"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#, "[DONE]",
            ]),
            // llama.cpp: arguments as an object.
            .events([
                #"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"l1","type":"function","function":{"name":"calculator","arguments":{"expression":"3*3"}}}]},"finish_reason":"tool_calls"}]}"#,
                "[DONE]",
            ]),
            // vLLM: no id.
            .events([
                #"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"type":"function","function":{"name":"calculator","arguments":"{\"expression\":\"4\"}"}}]},"finish_reason":"tool_calls"}]}"#,
                "[DONE]",
            ]),
        ])
        defer { server.stop() }
        let ollama = await collect(provider(server))
        #expect(
            ollama.chunks == [
                .toolCall(ToolCall(id: "o1", name: "calculator", arguments: #"{"expression":"1+1"}"#)),
                .toolCall(ToolCall(id: "o2", name: "calculator", arguments: #"{"expression":"2+2"}"#)),
            ])
        let llama = await collect(provider(server))
        #expect(
            llama.chunks == [.toolCall(ToolCall(id: "l1", name: "calculator", arguments: #"{"expression":"3*3"}"#))])
        let vllm = await collect(provider(server))
        guard case .toolCall(let call)? = vllm.chunks.first else {
            Issue.record("no tool call")
            return
        }
        #expect(call.id.hasPrefix("call_") && call.id.count > 5)
        #expect(call.arguments == #"{"expression":"4"}"#)
    }

    @Test func retriesA429HonouringRetryAfter() async throws {
        let server = try LoopbackServer([
            .status(429, #"{"error":{"message":"slow down"}}"#, headers: [("Retry-After", "7")]),
            .status(429, #"{"error":{"message":"slow down"}}"#, headers: [("Retry-After", "3600")]),
            .events([#"{"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}"#, "[DONE]"]),
        ])
        defer { server.stop() }
        let waits = Waits()
        let (chunks, error) = await collect(provider(server, waits: waits))
        #expect(error == nil)
        #expect(chunks == [.text("ok")])
        #expect(server.requests.count == 3)
        #expect(waits.recorded.withLock { $0 } == [.seconds(7), .seconds(20)], "Retry-After, capped at 20 s")
    }

    /// A 401 body that repeats the key: the message quotes the server, without the key or anything key-shaped.
    @Test func serverMessagesNeverCarryTheKey() async throws {
        let server = try LoopbackServer([
            .status(
                401,
                #"{"error":{"message":"Incorrect API key provided: sk-test-secret. Also seen: Bearer abcdefgh12345678 and sk-proj-ABCDEFGH1234"}}"#
            )
        ])
        defer { server.stop() }
        let (_, error) = await collect(provider(server))
        #expect(
            error
                == "the model server answered 401 Unauthorized: Incorrect API key provided: [redacted]. Also seen: "
                + "[redacted] and [redacted] — check OPENAI_API_KEY")
        #expect(Redaction.redact("key=mysecretvalue!", secrets: ["mysecretvalue"]) == "key=[redacted]!")
        #expect(Redaction.redact("Authorization: BEARER abcdefgh12345", secrets: []) == "Authorization: [redacted]")
        #expect(Redaction.redact("é ghp_abcdefgh12345 sk", secrets: []) == "é [redacted] sk", "after multibyte text")
        #expect(Redaction.redact("no keys here: sk, bear, gh", secrets: []) == "no keys here: sk, bear, gh")
    }

    /// A redirect to another origin is not followed with the key: that server receives nothing at all.
    @Test func redirectsToAnotherOriginAreNotFollowed() async throws {
        let elsewhere = try LoopbackServer([.events(["[DONE]"])])
        defer { elsewhere.stop() }
        let target = elsewhere.baseURL.absoluteString + "/chat/completions"
        let server = try LoopbackServer([.status(307, "", headers: [("Location", target)])])
        defer { server.stop() }
        let (_, error) = await collect(provider(server))
        #expect(
            error
                == "the model server at 127.0.0.1:\(server.port) redirected to \(target), another origin; skillhost does "
                + "not follow it with your API key — set OPENAI_BASE_URL to the address you trust")
        // Only this test's client asks for /chat/completions or sends a key; another test's client may reach a
        // recycled port (a full run once saw an MCP session's DELETE there), which is not what this is about.
        let seen = elsewhere.requests.filter {
            $0.head.contains("/chat/completions") || $0.head.lowercased().contains("authorization")
        }
        #expect(seen.isEmpty, "the other origin never saw the request (nor the key): \(seen)")
    }

    @Test func aServersRetryAfterIsBounded() {
        #expect(OpenAIProvider.retryAfter("2") == .seconds(2))
        #expect(OpenAIProvider.retryAfter("1e400") == nil, "not finite")
        #expect(OpenAIProvider.retryAfter("1e19") == .seconds(86_400))
        #expect(OpenAIProvider.retryAfter("-1") == nil)
    }

    @Test func givesUpAfterThree500sWithAClearMessage() async throws {
        let failure = LoopbackServer.Reply.status(
            500, #"{"error":{"message":"upstream exploded","type":"server_error"}}"#)
        let server = try LoopbackServer([failure, failure, failure])
        defer { server.stop() }
        let waits = Waits()
        let (_, error) = await collect(provider(server, waits: waits))
        #expect(waits.recorded.withLock { $0 } == [.milliseconds(10), .milliseconds(20)], "the wait doubles")
        #expect(
            error == "the model server answered 500 Internal Server Error: upstream exploded (gave up after 3 attempts)"
        )
        #expect(server.requests.count == 3)
    }

    @Test func explainsAuthenticationFailuresWithoutTheKey() async throws {
        let server = try LoopbackServer([
            .status(401, #"{"error":{"message":"Incorrect API key provided: sk-test-secret"}}"#)
        ])
        defer { server.stop() }
        let (_, error) = await collect(provider(server))
        let message = try #require(error)
        #expect(message.hasPrefix("the model server answered 401 Unauthorized: Incorrect API key provided"))
        #expect(message.hasSuffix("— check OPENAI_API_KEY"))
        #expect(server.requests.count == 1, "authentication failures are not retried")
    }

    @Test func reportsAStreamCutMidway() async throws {
        let server = try LoopbackServer([
            .events([#"{"choices":[{"index":0,"delta":{"content":"Par"},"finish_reason":null}]}"#])
        ])
        defer { server.stop() }
        let (chunks, error) = await collect(provider(server))
        #expect(chunks == [.text("Par")])
        #expect(error == "the model's response was cut off: the connection closed before the stream finished")
    }

    static let wholeToolCall =
        #"{"choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"calculator","arguments":"{\"expression\":\"6*7\"}"}}]},"finish_reason":"tool_calls"}]}"#

    @Test func aServerThatCannotStreamToolsGetsTheRequestWithoutStreamingForTheSession() async throws {
        // llama-cpp-python's chatml-function-calling: 200, then the stream ends before any event.
        let server = try LoopbackServer([
            LoopbackServer.Reply(pieces: []),
            LoopbackServer.Reply.status(200, Self.wholeToolCall),
            LoopbackServer.Reply.status(200, Self.wholeToolCall),
        ])
        defer { server.stop() }
        let logged = Mutex<[String]>([])
        var configuration = OpenAIConfiguration(baseURL: server.baseURL, apiKey: nil, model: "m")
        configuration.sleep = { _ in }
        configuration.log = { record in logged.withLock { $0.append("\(record.level) \(record.message)") } }
        let provider = OpenAIProvider(configuration: configuration)
        let expected: [ModelChunk] = [
            .toolCall(ToolCall(id: "call_1", name: "calculator", arguments: #"{"expression":"6*7"}"#))
        ]
        for _ in 1...2 {
            var chunks: [ModelChunk] = []
            for try await chunk in provider.stream(Self.request) { chunks.append(chunk) }
            #expect(chunks == expected)
        }
        let bodies = try server.requests.map { try JSONValue(parsing: $0.body) }
        #expect(bodies.map { $0["stream"] } == [true, false, false], "the second turn does not try streaming again")
        #expect(bodies[1]["stream_options"] == nil)
        #expect(bodies[0]["messages"] == bodies[1]["messages"] && bodies[0]["tools"] == bodies[1]["tools"])
        #expect(
            logged.withLock { $0 } == [
                "debug the model server at 127.0.0.1:\(server.port) cannot stream requests with tools (the stream "
                    + "ended before any event); sending them without streaming for the rest of the session"
            ])
    }

    @Test(arguments: [
        LoopbackServer.Reply.events([#"{"error":{"message":"Automatic streaming tool choice is not supported"}}"#]),
        LoopbackServer.Reply.status(400, #"{"error":{"message":"Streaming is not supported with tools"}}"#),
        LoopbackServer.Reply.status(500, #"{"error":"stream=true unsupported for function calling"}"#),
    ])
    func serversSayingStreamingIsUnsupportedGetItWithoutStreaming(first: LoopbackServer.Reply) async throws {
        let server = try LoopbackServer([first, LoopbackServer.Reply.status(200, Self.wholeToolCall)])
        defer { server.stop() }
        let (chunks, error) = await collect(provider(server))
        #expect(error == nil)
        #expect(chunks.count == 1)
        #expect(server.requests.count == 2)
    }

    @Test func aStreamCutAfterItsFirstEventIsStillAnError() async throws {
        let server = try LoopbackServer([
            .events([#"{"choices":[{"index":0,"delta":{"content":"The answ"},"finish_reason":null}]}"#])
        ])
        defer { server.stop() }
        let (_, error) = await collect(provider(server))
        #expect(error?.contains("cut off") == true)
        #expect(server.requests.count == 1)
    }

    @Test func reportsAnUnreachableServer() async throws {
        let server = try LoopbackServer([])
        server.stop()  // nothing listens on the port any more
        let (_, error) = await collect(provider(server))
        #expect(
            error
                == "cannot reach the model server at 127.0.0.1:\(server.port): connection refused (gave up after 3 attempts)"
        )
    }

    @Test func aSilentServerTimesOut() async throws {
        var silent = LoopbackServer.Reply()
        silent.silent = true
        let server = try LoopbackServer([silent])
        defer { server.stop() }
        var configuration = OpenAIConfiguration(baseURL: server.baseURL, apiKey: nil, model: "m")
        configuration.requestTimeout = 1
        let start = ContinuousClock.now
        var failure: String?
        do { for try await _ in OpenAIProvider(configuration: configuration).stream(Self.request) {} } catch {
            failure = "\(error)"
        }
        #expect(failure == "the model server at 127.0.0.1:\(server.port) did not answer within 1 s")
        #expect(ContinuousClock.now - start < .seconds(30), "a generous cap: the server never answers at all")
    }

    @Test func cancellationClosesTheConnection() async throws {
        var slow = LoopbackServer.Reply.events(
            (0..<50).map { _ in #"{"choices":[{"index":0,"delta":{"content":"word "},"finish_reason":null}]}"# },
            delay: .milliseconds(200))
        slow.holdOpen = true
        let server = try LoopbackServer([slow])
        defer { server.stop() }
        let provider = provider(server)
        let count = Mutex(0)
        let task = Task {
            do { for try await _ in provider.stream(Self.request) { count.withLock { $0 += 1 } } } catch {}
        }
        #expect(await eventually { count.withLock { $0 } > 0 })
        task.cancel()
        await task.value
        #expect(count.withLock { $0 } < 50, "the consumer stopped before the stream's end (10 s after its start)")
        #expect(await eventually { server.clientClosedConnections == 1 }, "the server saw the connection close")
    }
}

struct SSEParserTests {
    @Test func handlesFragmentsLineEndingsCommentsAndMultilineData() {
        var parser = SSEParser()
        var events: [String] = []
        let stream =
            "data: one\n\n: comment\r\ndata: two\r\ndata: lines\r\n\r\nevent: x\rdata: three\r\rdata: {\"a\":1}\n\ndata: [DONE]\n\n"
        for byte in Array(stream.utf8) { events += parser.feed([byte]) }  // worst case: one byte at a time
        events += parser.finish()
        #expect(events == ["one", "two\nlines", "three", #"{"a":1}"#, "[DONE]"])
        var whole = SSEParser()
        #expect(whole.feed(Array(stream.utf8)) + whole.finish() == events)
    }

    @Test func flushesALastEventWithoutBlankLine() {
        var parser = SSEParser()
        #expect(parser.feed(Array("data: tail".utf8)).isEmpty)
        #expect(parser.finish() == ["tail"])
    }
}

/// The whole loop over real HTTP: the model's invalid arguments go back as a tool result, it corrects them.
struct AgentOverHTTPTests {
    @Test func invalidArgumentsThenACorrectedCall() async throws {
        func call(_ id: String, _ arguments: String) -> String {
            let escaped = JSONValue.string(arguments).jsonText
            return
                #"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"\#(id)","type":"function","function":{"name":"calculator","arguments":\#(escaped)}}]},"finish_reason":"tool_calls"}]}"#
        }
        let server = try LoopbackServer([
            .events([call("c1", "{expression: (23+7)*2}"), "[DONE]"]),
            .events([call("c2", #"{"expression": "(23+7)*2"}"#), "[DONE]"]),
            .events([#"{"choices":[{"index":0,"delta":{"content":"It is 60."},"finish_reason":"stop"}]}"#, "[DONE]"]),
        ])
        defer { server.stop() }
        var configuration = OpenAIConfiguration(baseURL: server.baseURL, apiKey: nil, model: "m")
        configuration.retryDelay = .milliseconds(10)
        let session = AgentSession(
            skills: try agentRegistry(), provider: OpenAIProvider(configuration: configuration))
        let events = await collect(session.send("what is (23+7)*2"))
        #expect(events.last == .finished(.answered))
        #expect(server.requests.count == 3)
        #expect(server.requests[0].header("Authorization") == nil, "no key, no header")
        let second = try JSONValue(parsing: server.requests[1].body)
        let toolMessage = try #require(second["messages"]?.arrayValue?.last)
        #expect(toolMessage["role"] == "tool")
        #expect(toolMessage["tool_call_id"] == "c1")
        #expect(toolMessage["content"]?.stringValue?.hasPrefix("error: arguments are not valid JSON") == true)
        let assistant = try #require(second["messages"]?.arrayValue?.dropLast().last)
        #expect(assistant["tool_calls"]?.arrayValue?.first?["function"]?["arguments"] == "{expression: (23+7)*2}")
        // A string, never null: llama-cpp-python's server rejects `"content": null` (500, a validation error).
        #expect(assistant["content"] == "")
        let third = try JSONValue(parsing: server.requests[2].body)
        #expect(third["messages"]?.arrayValue?.last?["content"] == "60")
        #expect(session.conversation.messages.last?.content == "It is 60.")
    }
}

/// State snapshots (issue #17): each model request carries the offered plugins' state as one system message,
/// taken again after a mutating call, and the model server receives it in the request body.
struct StateSnapshotTests {
    @Test func theNotesStateReachesTheModelAndIsRefreshedAfterAChange() async throws {
        func call(_ id: String, _ name: String, _ arguments: String) -> String {
            let escaped = JSONValue.string(arguments).jsonText
            return
                #"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"\#(id)","type":"function","function":{"name":"\#(name)","arguments":\#(escaped)}}]},"finish_reason":"tool_calls"}]}"#
        }
        let server = try LoopbackServer([
            .events([call("c1", "notes_add", #"{"title":"milk"}"#), "[DONE]"]),
            .events([#"{"choices":[{"index":0,"delta":{"content":"Added."},"finish_reason":"stop"}]}"#, "[DONE]"]),
        ])
        defer { server.stop() }
        let configuration = OpenAIConfiguration(baseURL: server.baseURL, apiKey: nil, model: "m")
        let session = AgentSession(
            skills: try agentRegistry(policy: Policy(rules: [PolicyRule("notes_add", .allow)])),
            provider: OpenAIProvider(configuration: configuration))
        let events = await collect(session.send("add a note titled milk"))
        #expect(events.last == .finished(.answered))
        func state(_ index: Int) throws -> String? {
            let body = try JSONValue(parsing: server.requests[index].body)
            return body["messages"]?.arrayValue?.dropFirst().first.flatMap { message in
                message["role"] == "system" ? message["content"]?.stringValue : nil
            }
        }
        #expect(
            try state(0)
                == "The current state of the plugins behind the tools (JSON, trimmed to fit):\nnotes: {\"notes\":0,\"recent\":[]}"
        )
        #expect(
            try state(1)
                == "The current state of the plugins behind the tools (JSON, trimmed to fit):\nnotes: {\"notes\":1,\"recent\":[{\"id\":1,\"title\":\"milk\"}]}",
            "taken again after the mutating call")
        #expect(session.lastStateMessage == (try state(1)))
        #expect(
            !session.conversation.messages.contains { $0.content.hasPrefix("The current state") },
            "the state belongs to the request, not to the history")
    }

    /// Over budget: each plugin gets its share, a list loses its last (oldest) entries first, and a snapshot that
    /// cannot fit at all is named instead of cut mid-way.
    @Test func snapshotsAreTrimmedPerPluginKeepingTheNewest() {
        let notes: JSONValue = [
            "notes": 30,
            "recent": .array((1...30).reversed().map { ["id": .int(Int64($0)), "title": .string("note \($0)")] }),
        ]
        let message = StateSnapshots.message(
            [("notes", notes), ("huge", ["blob": .string(String(repeating: "x", count: 5000))])], budget: 400)
        let lines = message?.split(separator: "\n").map(String.init) ?? []
        #expect(lines.count == 3)
        #expect(
            lines[1].hasPrefix(#"notes: {"notes":30,"recent":[{"id":30,"title":"note 30"},{"id":29,"title":"note 29"}"#)
        )
        #expect(lines[1].utf8.count <= 200)
        #expect(lines[2] == "(too large to include: huge)")
        #expect(StateSnapshots.message([PluginState](), budget: 400) == nil)
    }
}
