import SkillJSON

/// Streamed replies of an OpenAI-compatible chat completions server, for `LoopbackServer`.
extension LoopbackServer.Reply {
    /// An answer streamed as these pieces of text (each one a chunk, JSON-escaped), then `stop`.
    package static func chatText(_ pieces: [String], delay: Duration = .zero) -> LoopbackServer.Reply {
        var payloads = pieces.map { piece in
            #"{"choices":[{"index":0,"delta":{"content":\#(JSONValue.string(piece).jsonText)},"finish_reason":null}]}"#
        }
        payloads += [#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#, "[DONE]"]
        return .events(payloads, delay: delay)
    }

    /// The model asks for these calls (one chunk each), then `tool_calls`.
    package static func chatToolCalls(_ calls: [(id: String, name: String, arguments: String)]) -> LoopbackServer.Reply
    {
        let fragments = calls.enumerated().map { index, call in
            let arguments = JSONValue.string(call.arguments).jsonText
            return
                #"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":\#(index),"id":"\#(call.id)","type":"function","function":{"name":"\#(call.name)","arguments":\#(arguments)}}]},"finish_reason":null}]}"#
        }
        return .events(fragments + [#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#, "[DONE]"])
    }
}
