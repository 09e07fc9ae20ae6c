import JSONRPC
import SkillJSON

/// One message to the server, read once — whichever transport carried it.
enum MCPIncoming: Sendable {
    case request(MCPRequest)
    case notification(method: String, params: JSONValue)
    /// A client's answer to a request: nothing here awaits one.
    case response
    /// Not a JSON-RPC request; `id` is its id as far as it could be read.
    case invalid(id: JSONRPCID)

    /// Reads `message`; `raw` is its text, so an id keeps the digits the client wrote.
    init(_ message: JSONValue, raw: ArraySlice<UInt8>) {
        let id = message["id"].map { value -> JSONRPCID in
            switch value {
            case .int, .double: return JSONRPCID(rawText: RawJSON.member("id", in: raw) ?? value.jsonText)
            default: return JSONRPCID(rawText: value.jsonText)
            }
        }
        guard case .object = message, case .string(let method)? = message["method"] else {
            if message["id"] != nil, message["result"] != nil || message["error"] != nil {
                self = .response
            } else {
                self = .invalid(id: id ?? .null)
            }
            return
        }
        let params = message["params"] ?? .object(JSONObject())
        guard let id, let value = message["id"] else {
            self = .notification(method: method, params: params)
            return
        }
        self = .request(MCPRequest(id: id, key: MCPRequest.key(value), method: method, params: params))
    }
}

/// A request as the server handles it: its id, method and parameters, and the protocol revision a stateless
/// request names in `_meta` (nil for the handshake generation).
struct MCPRequest: Sendable {
    /// As the client wrote it (numbers keep their text: no rounding, no `1e400` → null).
    let id: JSONRPCID
    /// How it is told apart from other requests in flight (and how `notifications/cancelled` names it): by value,
    /// so `1` and `1.0` are the same request.
    let key: String
    let method: String
    let params: JSONValue

    init(id: JSONRPCID, key: String, method: String, params: JSONValue) {
        self.id = id
        self.key = key
        self.method = method
        self.params = params
    }

    var meta: JSONValue? { params["_meta"] }
    /// The revision a 2026-07-28 request names in `_meta`.
    var version: String? { meta?[MCPProtocol.Meta.protocolVersion]?.stringValue }
    var stateless: Bool { version != nil }
    /// The method's entry in the server's table, nil for a method it does not serve.
    var entry: MCPMethod? { MCPMethod.table[method] }

    static func key(_ id: JSONValue) -> String { id.jsonText }

    /// What is wrong with the request before any method sees it: a revision this server does not speak, or a
    /// stateless request without its client's capabilities.
    var problem: MCPError? {
        guard let version else { return nil }
        guard MCPProtocol.allVersions.contains(version) else {
            return MCPError(
                .unsupportedProtocolVersion, "Unsupported protocol version \(version)",
                data: [
                    "supported": .array(MCPProtocol.allVersions.map { .string($0) }), "requested": .string(version),
                ])
        }
        guard meta?[MCPProtocol.Meta.clientCapabilities]?.objectValue != nil else {
            return MCPError(
                .invalidParams,
                "Invalid params: a \(version) request needs _meta[\"\(MCPProtocol.Meta.clientCapabilities)\"] (an "
                    + "object; {} when the client declares none)", status: 400)
        }
        return nil
    }
}

/// A JSON-RPC error the server answers with, and the HTTP status it goes with when that is not the code's.
struct MCPError: Error, Sendable {
    let code: JSONRPCErrorCode
    let message: String
    var data: JSONValue?
    var status: Int?

    init(_ code: JSONRPCErrorCode, _ message: String, data: JSONValue? = nil, status: Int? = nil) {
        self.code = code
        self.message = message
        self.data = data
        self.status = status
    }
}
