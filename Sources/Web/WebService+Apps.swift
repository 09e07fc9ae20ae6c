import Foundation
import SkillHost
import SkillJSON
import Support

/// The page's requests for views (MCP Apps): opening one for a card, the calls it makes, what it tells the model.
extension WebService {
    func app(_ request: HTTPServer.Request, _ body: JSONValue, _ room: WebRoom, _ exchange: HTTPExchange) {
        switch request.path {
        case "/api/app": openApp(request, body, room, exchange)
        case "/api/view-call":
            guard let token = body["token"]?.stringValue, let name = body["name"]?.stringValue else {
                refuse(exchange, 400, "a view's call needs \"token\" (the view's) and \"name\" (the skill's)")
                return
            }
            let arguments = body["arguments"] ?? .object(JSONObject())
            guard case .object = arguments else {
                refuse(exchange, 400, "a view's call of \(name) needs \"arguments\" as one JSON object")
                return
            }
            guard let frame = apps.frame(token), frame.room == room.key else {
                refuse(exchange, 410, Self.closed)
                return
            }
            // A skill folder's view reaches its own folder's scripts and files, no other folder's.
            if let folder = frame.view.folder {
                guard ["skill_run", "skill_read"].contains(name), arguments["name"]?.stringValue == folder else {
                    json(
                        exchange, 200,
                        [
                            "content": [
                                [
                                    "type": "text",
                                    "text": .string(
                                        "a view of skill folder \(folder) called \(name): it may call only skill_run and "
                                            + "skill_read with \"name\": \"\(folder)\""),
                                ]
                            ],
                            "isError": true,
                        ])
                    return
                }
            }
            let session = session
            let apps = apps
            let task = Task {
                // Once the person said no to a view, it asks no more: its calls that need a yes are refused (a view
                // asking again and again would hold the page under its question).
                switch await session.viewCall(
                    name, arguments: arguments, plugin: frame.view.plugin, card: frame.card, mayAsk: !frame.declined,
                    in: frame.room)
                {
                case .success(let (result, declined)):
                    if declined { apps.declined(token) }
                    self.json(exchange, 200, result)
                case .failure(let refusal): self.refuse(exchange, refusal.status, refusal.sentence)
                }
            }
            // The page gave up on it (its view closed, the tab went away): the call is stopped, or never starts.
            exchange.onAbort { task.cancel() }
        default:
            guard let token = body["token"]?.stringValue, let text = body["text"]?.stringValue else {
                refuse(exchange, 400, "a view's context needs \"token\" and \"text\" (empty: none)")
                return
            }
            guard text.utf8.count <= WebApps.contextLimit else {
                refuse(
                    exchange, 413,
                    "a view's context for the model is at most \(WebApps.contextLimit / 1024) KB; this one is "
                        + "\(text.utf8.count / 1024) KB")
                return
            }
            guard let frame = apps.frame(token), frame.room == room.key, apps.setContext(token, text) else {
                refuse(exchange, 410, Self.closed)
                return
            }
            json(exchange, 200, [:])
        }
    }

    /// Where skill folders' views are (`ui://skills/NAME`).
    static let folderViews = "ui://skills/"

    static let closed =
        "this view was closed (too many were open, or the host restarted); run its skill again to show it anew"

    /// Opens the view `uri` for a card: its sandbox's address, its page and what it may do.
    private func openApp(_ request: HTTPServer.Request, _ body: JSONValue, _ room: WebRoom, _ exchange: HTTPExchange) {
        guard let uri = body["uri"]?.stringValue, let card = body["card"]?.stringValue, card.utf8.count <= 200,
            let skillID = body["skill"]?.stringValue
        else {
            refuse(
                exchange, 400,
                "opening a view needs \"uri\" (ui://…), \"card\" (the call's id) and \"skill\" (the card's skill)")
            return
        }
        // The view of the card's own skill — never another source's that uses the same address.
        guard let view = cardView(skillID, uri) else {
            refuse(
                exchange, 404, "no view \(uri) is served here now for \(skillID) (its plugin was removed or replaced)")
            return
        }
        guard let origin = pageOrigin(request), let name = Self.hostName(origin) else {
            refuse(
                exchange, 400,
                "views are shown only on a page opened by a plain host name or address (as skillhost web printed it); "
                    + "open that address")
            return
        }
        let token = apps.open(view, room: room.key, card: card, pageOrigin: origin)
        var granted = JSONObject()
        if let permissions = view.permissions?.objectValue {
            for (key, value) in permissions.members where value.objectValue != nil { granted[key] = [:] }
        }
        json(
            exchange, 200,
            [
                "token": .string(token), "sandbox": .string("http://\(name):\(apps.port)/sandbox/\(token)"),
                "uri": .string(uri), "title": .string(view.title), "plugin": .string(view.plugin),
                "html": .string(view.html), "csp": view.csp ?? [:], "permissions": .object(granted),
                "allow": .string(WebAppPolicy.allowAttribute(view.permissions)),
                "prefersBorder": .bool(view.prefersBorder),
            ])
    }

    /// The view `uri` of skill `id` as a card shows it: the skill's own, or — for the skill folders' `skill_run` —
    /// the folder's it names; nil when neither is `uri`.
    private func cardView(_ id: String, _ uri: String) -> SkillView? {
        guard let skill = registry.skill(id) else { return nil }
        if let view = skill.view { return view.uri == uri ? view : nil }
        guard uri.hasPrefix(Self.folderViews),
            let view = session.folderView(
                of: skill, arguments: ["name": .string(String(uri.dropFirst(Self.folderViews.count)))])
        else { return nil }
        return view.uri == uri ? view : nil
    }

    /// The page's origin as the request shows it (its `Origin`, else `http://` and its `Host`), when it is one a
    /// policy can name: a scheme, a host name or address, a port — nothing else.
    func pageOrigin(_ request: HTTPServer.Request) -> String? {
        let origin = request.header("origin") ?? request.header("host").map { "http://" + $0 }
        guard let origin, origin.utf8.count <= 300, origin.hasPrefix("http://") || origin.hasPrefix("https://") else {
            return nil
        }
        let rest = origin.drop { $0 != "/" }.dropFirst(2)
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:[]")
        guard !rest.isEmpty, rest.allSatisfy(allowed.contains) else { return nil }
        return origin
    }

    /// The host of `origin` without its port (an IPv6 address in brackets).
    static func hostName(_ origin: String) -> String? {
        guard let start = origin.range(of: "://")?.upperBound else { return nil }
        let authority = origin[start...]
        if authority.hasPrefix("["), let close = authority.firstIndex(of: "]") {
            return String(authority[...close])
        }
        return String(authority.prefix { $0 != ":" })
    }
}
