import SkillJSON

/// The id of a JSON-RPC request as it was written: a number keeps its text (no rounding, `1e400` stays itself), a
/// string keeps its quotes. Responses echo it byte for byte.
package struct JSONRPCID: Hashable, Sendable, CustomStringConvertible {
    /// The id's JSON text.
    package let text: String
    /// The id as a number, when it is an integer written plainly (read once: answers are matched by it).
    package let integer: Int64?

    package init(_ number: Int64) {
        text = String(number)
        integer = number
    }

    /// An id from its JSON text, as a raw scan of the message found it.
    package init(rawText: String) {
        text = rawText
        integer = Int64(rawText)
    }

    /// `null`: for errors about a message whose id could not be read.
    package static let null = JSONRPCID(rawText: "null")

    package var description: String { text }
}

/// A JSON-RPC error code: the five the specification reserves, and the implementation-defined ones skillhost uses
/// (-32000 to -32099). One name per number, so no code is a bare literal at a call site.
package struct JSONRPCErrorCode: RawRepresentable, Hashable, Sendable {
    package let rawValue: Int
    package init(rawValue: Int) { self.rawValue = rawValue }

    /// The line is not JSON.
    package static let parseError = JSONRPCErrorCode(rawValue: -32700)
    /// JSON, but not a valid request (no method, a bad id, an id already in flight, a batch where none belongs).
    package static let invalidRequest = JSONRPCErrorCode(rawValue: -32600)
    package static let methodNotFound = JSONRPCErrorCode(rawValue: -32601)
    package static let invalidParams = JSONRPCErrorCode(rawValue: -32602)
    package static let internalError = JSONRPCErrorCode(rawValue: -32603)
    /// Too many requests in flight; retry when one has finished.
    package static let serverBusy = JSONRPCErrorCode(rawValue: -32000)
    /// A worker could not load its plugin (the message lists the problems).
    package static let pluginNotLoaded = JSONRPCErrorCode(rawValue: -32001)
    /// MCP: the request names a protocol revision this server does not speak (`data.supported` lists those it
    /// does).
    package static let unsupportedProtocolVersion = JSONRPCErrorCode(rawValue: -32022)
    /// MCP over HTTP: a header that mirrors the body (`Mcp-Method`, `Mcp-Name`, `MCP-Protocol-Version`) is missing
    /// or does not match it.
    package static let headerMismatch = JSONRPCErrorCode(rawValue: -32020)
    /// MCP: handling the request needs a client capability the request did not declare.
    package static let missingClientCapability = JSONRPCErrorCode(rawValue: -32021)
}

/// The error member of a failed response.
package struct JSONRPCError: Error, Sendable, Equatable {
    package let code: JSONRPCErrorCode
    package let message: String
    package let data: JSONValue?

    package init(_ code: JSONRPCErrorCode, _ message: String, data: JSONValue? = nil) {
        self.code = code
        self.message = message
        self.data = data
    }

    var value: JSONValue {
        var error = JSONObject([
            (key: "code", value: .int(Int64(code.rawValue))), (key: "message", value: .string(message)),
        ])
        if let data { error["data"] = data }
        return .object(error)
    }
}

/// One JSON-RPC 2.0 message — what the worker protocol and MCP (both directions) exchange, one per line.
package enum JSONRPCMessage: Sendable {
    case request(id: JSONRPCID, method: String, params: JSONValue?)
    case notification(method: String, params: JSONValue?)
    case response(id: JSONRPCID, result: JSONValue)
    case failure(id: JSONRPCID, error: JSONRPCError)

    /// The message as a JSON value (its line, read back: an id keeps the number it was written as).
    package var value: JSONValue { (try? JSONValue(parsing: line)) ?? .null }

    /// The start of a response's line up to its result, `{"jsonrpc":"2.0","id":ID,"result":`, for a writer that
    /// writes the result and the closing brace after it into the same buffer (the envelope is written here only).
    package static func responseHead(id: String) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        out += #"{"jsonrpc":"2.0","id":"#.utf8
        out += id.utf8
        out += #","result":"#.utf8
        return out
    }

    /// The message as one line of JSON text (without the newline).
    package var line: String {
        switch self {
        case .request(let id, let method, let params):
            var body = #"{"jsonrpc":"2.0","id":\#(id.text),"method":\#(JSONValue.string(method).jsonText)"#
            if let params { body += #","params":\#(params.jsonText)"# }
            return body + "}"
        case .notification(let method, let params):
            var body = #"{"jsonrpc":"2.0","method":\#(JSONValue.string(method).jsonText)"#
            if let params { body += #","params":\#(params.jsonText)"# }
            return body + "}"
        case .response(let id, let result):
            var out = Self.responseHead(id: id.text)
            result.writeJSONText(into: &out)
            out.append(UInt8(ascii: "}"))
            return String(decoding: out, as: UTF8.self)
        case .failure(let id, let error):
            return #"{"jsonrpc":"2.0","id":\#(id.text),"error":\#(error.value.jsonText)}"#
        }
    }

    /// Reads a parsed message; nil when it is none of the four shapes. Ids are taken from the value (integers and
    /// strings); a reader that must echo ids byte for byte takes them from the raw text instead.
    package init?(_ value: JSONValue) {
        guard case .object(let object) = value else { return nil }
        let id: JSONRPCID?
        switch object["id"] {
        case nil: id = nil
        case .int(let number)?: id = JSONRPCID(number)
        case .string(let text)?: id = JSONRPCID(rawText: JSONValue.string(text).jsonText)
        case .null?: id = .null
        default: return nil
        }
        if case .string(let method)? = object["method"] {
            self =
                id.map { .request(id: $0, method: method, params: object["params"]) }
                ?? .notification(method: method, params: object["params"])
            return
        }
        guard let id else { return nil }
        if let result = object["result"] {
            self = .response(id: id, result: result)
        } else if let error = object["error"] {
            // A peer's error is read leniently (codes that are not integers, a missing message): it still ends
            // the request it answers, with what the peer said.
            var code = JSONRPCErrorCode.internalError
            if case .int(let number)? = error["code"] {
                code = JSONRPCErrorCode(rawValue: Int(truncatingIfNeeded: number))
            }
            self = .failure(
                id: id, error: JSONRPCError(code, error["message"]?.stringValue ?? error.jsonText, data: error["data"]))
        } else {
            return nil
        }
    }
}
