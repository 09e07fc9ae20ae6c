import Foundation
import SkillJSON

/// Turns the `data` of streamed chat-completion events into `ModelChunk`s, assembling fragmented tool calls and
/// accepting the known server deviations: every call at `index` 0 with new ids (Ollama), arguments as a JSON
/// object (llama.cpp), missing ids (vLLM).
package struct ChatStreamDecoder: Sendable {
    private struct PartialCall {
        var index: Int
        var id: String?
        var name: String
        var arguments: String
    }

    private var calls: [PartialCall] = []
    /// `[DONE]` or a `finish_reason` was seen: the response is complete.
    package private(set) var isComplete = false

    package init() {}

    /// Decodes one event; text and usage come out at once, tool calls at the end (`finish()`).
    package mutating func decode(_ data: String) throws(ModelError) -> [ModelChunk] {
        if data == "[DONE]" {
            isComplete = true
            return []
        }
        guard let event = try? JSONValue(parsing: data) else {
            throw ModelError("the model server sent an event that is not JSON: \(data.prefix(120))")
        }
        if let error = event["error"] {
            throw ModelError("the model server reported an error mid-stream: \(Self.errorMessage(error))")
        }
        var chunks: [ModelChunk] = []
        if let usage = event["usage"], usage.objectValue != nil {
            chunks.append(
                .usage(
                    Usage(
                        promptTokens: usage["prompt_tokens"]?.count(upTo: Usage.maximum) ?? 0,
                        completionTokens: usage["completion_tokens"]?.count(upTo: Usage.maximum) ?? 0)))
        }
        guard let choice = event["choices"]?.arrayValue?.first else { return chunks }
        let delta = choice["delta"] ?? choice["message"] ?? .null
        if case .string(let text)? = delta["content"], !text.isEmpty { chunks.append(.text(text)) }
        for fragment in delta["tool_calls"]?.arrayValue ?? [] { add(fragment) }
        if let reason = choice["finish_reason"], reason != .null { isComplete = true }
        return chunks
    }

    private mutating func add(_ fragment: JSONValue) {
        // The server's number, range-checked (an index of 1e300 trapped); one out of range is a call of its own.
        let index = fragment["index"]?.integer(in: 0...Int(Int32.max)) ?? calls.count
        let id = fragment["id"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
        let function = fragment["function"] ?? .null
        let name = function["name"]?.stringValue ?? ""
        var arguments = ""
        switch function["arguments"] {
        case .string(let text)?: arguments = text
        case .object(let object)?: arguments = JSONValue.object(object).jsonText
        default: break
        }
        if let position = calls.lastIndex(where: { $0.index == index }),
            id == nil || calls[position].id == nil || calls[position].id == id
        {
            if calls[position].id == nil { calls[position].id = id }
            if calls[position].name.isEmpty { calls[position].name = name }
            calls[position].arguments += arguments
        } else {
            calls.append(PartialCall(index: index, id: id, name: name, arguments: arguments))
        }
    }

    /// The assembled tool calls, in the order they started; missing ids are generated.
    package func finish() -> [ModelChunk] {
        calls.map { call in
            .toolCall(
                ToolCall(
                    id: call.id ?? "call_\(UUID().uuidString.prefix(8).lowercased())", name: call.name,
                    arguments: call.arguments))
        }
    }

    /// `{"error":{"message":…}}` or `{"error":"…"}` → the message.
    static func errorMessage(_ error: JSONValue) -> String {
        if let message = error["message"]?.stringValue { return message }
        if let text = error.stringValue { return text }
        return error.jsonText
    }
}
