import JSONRPC
import SkillJSON

/// A method the server answers, with everything the transports need to know about it. Adding a method is one
/// entry in `table`.
struct MCPMethod: Sendable {
    /// Which protocol generations have the method.
    enum Generations: Sendable {
        case both
        /// The `initialize` handshake revisions only (2024-11-05 … 2025-11-25).
        case handshake
        /// The stateless revision only (2026-07-28).
        case stateless
    }

    /// Where a request is answered: what the handler needs besides the request.
    struct Context {
        let exchange: MCPExchange
        /// Sends the result (2026-07-28: marked complete, with who answered and, when cacheable, a cache hint).
        let finish: @Sendable (JSONValue) -> Void
        /// Run calls on the pool rather than the thread that read the request.
        let onPool: Bool
    }

    /// What Streamable HTTP does around the method besides answering it.
    enum HTTPRole: Sendable {
        case plain
        /// `tools/call`: cancelled when its connection closes, tracked by its session, streamed with progress.
        case call
        /// `subscriptions/listen`: a stream of its own that stays open.
        case listen
        /// `initialize`: opens a session.
        case opensSession
    }

    let generations: Generations
    /// Served on stdio only (over HTTP the transport answers it itself, or it has no meaning there).
    var stdioOnly = false
    /// 2026-07-28: the result carries a cache hint (zero: hot reload can change it at any moment).
    var cacheable = false
    /// Streamable HTTP, 2026-07-28: the parameter the `Mcp-Name` header mirrors.
    var mirroredName: String?
    /// The result is marked complete and names who answered in every generation (discovery).
    var alwaysDescribed = false
    var http: HTTPRole = .plain
    /// Answers the request; `beforeCall` runs just before a call starts (the stdio reader hands reading over).
    let handle: @Sendable (MCPServer, MCPRequest, Context, _ beforeCall: () -> Void) -> Void

    /// Whether a request of this generation, on this transport, may use the method.
    func serves(_ request: MCPRequest, stdio: Bool) -> Bool {
        if stdioOnly, !stdio { return false }
        switch generations {
        case .both: return true
        case .handshake: return !request.stateless
        case .stateless: return request.stateless
        }
    }

    /// What Streamable HTTP does around `method` (a method the server does not answer is plain: it gets its error).
    static func httpRole(of method: String) -> HTTPRole { table[method]?.http ?? .plain }

    /// Every method the server answers.
    static let table: [String: MCPMethod] = [
        "initialize": MCPMethod(generations: .handshake, http: .opensSession) { server, request, context, _ in
            server.initialize(request, context)
        },
        "server/discover": MCPMethod(generations: .both, cacheable: true, alwaysDescribed: true) { _, _, context, _ in
            context.finish(MCPServer.discovery)
        },
        "ping": MCPMethod(generations: .handshake) { _, _, context, _ in context.finish(.object(JSONObject())) },
        "tools/list": MCPMethod(generations: .both, cacheable: true) { server, request, context, _ in
            // An unapproved definition (changed since first seen, not trusted) reaches no model, here as in `ask`;
            // nor does a disabled skill, or a composite that calls one; nor, for a client that renders no apps, a
            // skill only views may call.
            let offered = server.offeredTools(request, context.exchange)
            context.finish(["tools": .array(offered.map { server.tool($0) })])
        },
        "tools/call": MCPMethod(generations: .both, mirroredName: "name", http: .call) {
            server, request, context, beforeCall in
            server.call(request, context, beforeCall: beforeCall)
        },
        "resources/list": MCPMethod(generations: .both, cacheable: true) { server, _, context, _ in
            context.finish(server.resourceList())
        },
        "resources/read": MCPMethod(generations: .both, cacheable: true, mirroredName: "uri") {
            server, request, context, _ in
            server.readResource(
                id: request.id, params: request.params, finish: context.finish, exchange: context.exchange)
        },
        "resources/subscribe": MCPMethod(generations: .handshake) { server, request, context, _ in
            server.subscribe(id: request.id, params: request.params, on: true, exchange: context.exchange)
        },
        "resources/unsubscribe": MCPMethod(generations: .handshake) { server, request, context, _ in
            server.subscribe(id: request.id, params: request.params, on: false, exchange: context.exchange)
        },
        "skills/list": MCPMethod(generations: .both, cacheable: true) { server, _, context, _ in
            context.finish(server.skillsList())
        },
        "skills/get": MCPMethod(generations: .both, cacheable: true, mirroredName: "uri") {
            server, request, context, _ in server.skillsGet(request, context)
        },
        "resources/templates/list": MCPMethod(generations: .both, cacheable: true) { _, _, context, _ in
            context.finish(["resourceTemplates": []])
        },
        "subscriptions/listen": MCPMethod(generations: .stateless, stdioOnly: true, http: .listen) {
            server, request, _, _ in
            server.listenOnStdio(request)
        },
    ]
}
