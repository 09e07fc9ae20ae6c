import Agent
import Foundation
import SkillHost
import SkillJSON
import Support
import Synchronization

/// Where and for whom `skillhost web` serves.
package struct WebConfiguration: Sendable {
    /// An IP literal: 127.0.0.1 (the default), ::1, 0.0.0.0 …
    package var address = "127.0.0.1"
    /// 0: any free port (the printed address says which).
    package var port: UInt16 = 8780
    /// The token the page's address carries; a random one when nil. Needed to serve beyond loopback.
    package var token: String?
    /// Host names besides the loopback ones the server answers to (behind a proxy).
    package var allowedHosts: [String] = []
    /// The Agent Skills folders for the skills panel: name, description, where from, front matter, files.
    package var skillFolders: @Sendable () -> [SkillFolderSummary] = { [] }
    /// A skill folder's instructions as activation gives them (for "use"), or why not.
    package var activateSkill: @Sendable (String) async -> Result<String, WebRefusal> = { name in
        .failure(WebRefusal(status: 404, sentence: "there is no skill \(name)"))
    }

    /// The view a skill folder declares (shown for its `skill_run` calls), by the folder's name; nil: none.
    package var folderView: @Sendable (String) -> SkillView? = { _ in nil }

    package init() {}

    /// Whether `address` reaches only this machine.
    package var isLoopback: Bool {
        address == "127.0.0.1" || address == "::1" || address.hasPrefix("127.") || address == "localhost"
    }
}

/// Why the browser front end could not start, as a sentence.
package struct WebError: Error, Sendable, CustomStringConvertible {
    package let message: String
    package init(_ message: String) { self.message = message }
    package var description: String { message }
}

/// The browser front end over HTTP: the page and its script and styles (compiled in, nothing fetched), and the API
/// the page drives the session with — an event stream (server-sent events) and a few JSON requests.
///
/// Security: the page's address carries a random token in its fragment (never sent to any server by the browser);
/// the page exchanges it once for an `HttpOnly`, `SameSite=Strict` cookie and a page key. Browsers send a cookie to
/// every port of the host, so the cookie alone grants nothing: every API request also needs the page key that came
/// with it (the `X-Skillhost-Page` header; the event stream's path), which the page keeps in its origin's storage —
/// a page or server on another port never sees it. (`Authorization: Bearer <token>` does instead, for scripts.) every request's Host must be a name of this server (DNS rebinding) and its
/// Origin, when sent, this very server (scheme, name and port); requests that change something must be JSON. The
/// page itself runs under a content security policy that allows only its own script and styles.
package final class WebService: Sendable {
    package let session: WebSession
    private let http: HTTPServer
    private let rules: HTTPGuard
    private let tokenDigest: [UInt8]
    /// The logins handed out, newest last: each cookie's digest with its page key's digest (at most
    /// `loginLimit`; the oldest is forgotten first).
    private let logins = Mutex<[(cookie: [UInt8], page: [UInt8])]>([])
    private static let loginLimit = 64
    let registry: SkillRegistry
    private let skillFolders: @Sendable () -> [SkillFolderSummary]
    private let activateSkill: @Sendable (String) async -> Result<String, WebRefusal>
    /// Passes the registry's changes on to the tabs until `stop()`.
    private let following: Task<Void, Never>
    /// The views the page shows, and their sandbox (another port: another origin).
    let apps: WebApps
    /// The port served (the system's choice when the configuration said 0).
    package let port: UInt16
    /// The address to open, token included.
    package let url: String

    package static let cookieName = "skillhost_web"

    /// Starts serving `registry`'s skills through `session`. Throws a sentence when the address cannot be listened
    /// on, or when it is not a loopback one and no token was given.
    package init(session: WebSession, registry: SkillRegistry, configuration: WebConfiguration) throws(WebError) {
        if !configuration.isLoopback, configuration.token == nil {
            throw WebError(
                "refusing to serve the browser front end on \(configuration.address) without a token of your own: set "
                    + "SKILLHOST_WEB_TOKEN, or serve on 127.0.0.1")
        }
        let token = configuration.token ?? HTTPGuard.randomHex(24)
        skillFolders = configuration.skillFolders
        activateSkill = configuration.activateSkill
        self.session = session
        self.registry = registry
        tokenDigest = HTTPGuard.sha256(token)
        let box = Mutex<WebService?>(nil)
        var limits = HTTPServer.Limits()
        limits.maximumBody = 1 << 20
        do {
            http = try HTTPServer(address: configuration.address, port: configuration.port, limits: limits) {
                request, exchange in
                guard let service = box.withLock({ $0 }) else {
                    exchange.respond(503, body: Array("starting".utf8))
                    return
                }
                service.handle(request, exchange)
            }
        } catch {
            throw WebError(
                "cannot serve the browser front end on \(configuration.address):\(configuration.port): \(error.message); "
                    + "choose another with --http ADDRESS:PORT")
        }
        port = http.port
        do throws(WebError) {
            apps = try WebApps(address: configuration.address) { [session] key, line in
                (try? session.room(key))?.publish(WebEvent.notice(line))
            }
        } catch {
            http.stop()
            throw error
        }
        rules = HTTPGuard(
            isLoopback: configuration.isLoopback, port: http.port, allowedHosts: configuration.allowedHosts,
            allowedOrigins: [], originPort: http.port)
        let host = configuration.address.contains(":") ? "[\(configuration.address)]" : configuration.address
        url = "http://\(host):\(http.port)/#token=\(token)"
        let changes = registry.changes()
        following = Task { [session, registry] in
            for await change in changes {
                session.registryChanged(change, definitions: registry.definitionChanges(change).flatMap(\.lines))
            }
        }
        session.folderView.withLock { $0 = configuration.folderView }
        box.withLock { $0 = self }
    }

    package func stop() {
        following.cancel()
        apps.stop()
        http.stop()
    }

    // MARK: Requests

    private func handle(_ request: HTTPServer.Request, _ exchange: HTTPExchange) {
        if rules.isLoopback, let host = request.header("host"), !rules.hostAllowed(host) {
            refuse(exchange, 421, "Host \(host) is not a name of this server; open the address skillhost web printed")
            return
        }
        if let origin = request.header("origin"), !rules.originAllowed(origin) {
            refuse(exchange, 403, "origin \(origin) may not use this server; open the address skillhost web printed")
            return
        }
        switch (request.method, request.path) {
        case ("GET", "/"), ("GET", "/index.html"):
            // The views' frames come from the sandbox's port of the name the page was opened by, and from nowhere
            // else.
            let name = pageOrigin(request).flatMap(Self.hostName) ?? "127.0.0.1"
            asset(
                exchange, WebAssets.document.html, type: "text/html; charset=utf-8",
                policy: WebAssets.document.policy + "; frame-src http://\(name):\(apps.port)")
        case ("POST", "/api/login"): login(request, exchange)
        case (_, let path) where path.hasPrefix("/api/"):
            guard authorized(request) else {
                refuse(exchange, 401, "not signed in: open the address skillhost web printed (it carries the token)")
                return
            }
            api(request, exchange)
        default: refuse(exchange, 404, "no such page")
        }
    }

    private func api(_ request: HTTPServer.Request, _ exchange: HTTPExchange) {
        if request.method == "POST", request.header("content-type")?.hasPrefix("application/json") != true {
            refuse(exchange, 415, "send JSON (Content-Type: application/json)")
            return
        }
        let body = (try? JSONValue(parsing: request.body)) ?? .object(JSONObject())
        // The conversation the tab shows (`X-Skillhost-Conversation`; the one used last when it names none),
        // opened from the history if it was closed meanwhile.
        let room = { () -> WebRoom? in
            do throws(WebRefusal) { return try self.session.room(request.header("x-skillhost-conversation")) } catch {
                // The page goes on in a new conversation when the one it shows is gone (not when it cannot be read).
                self.json(
                    exchange, error.status, ["error": .string(error.sentence)],
                    headers: error.status == 404 ? [("X-Skillhost-Conversation-Gone", "1")] : [])
                return nil
            }
        }
        switch (request.method, request.path) {
        case ("GET", "/api/events"): events(exchange)
        case ("GET", let path) where path.hasPrefix("/api/events/"): events(exchange)
        case ("GET", "/api/skills"):
            guard let room = room() else { return }
            json(exchange, 200, skillsPanel(room))
        case ("GET", "/api/welcome"):
            guard let room = room() else { return }
            json(
                exchange, 200,
                WebWelcome.json(
                    provider: session.provider(in: room), providers: session.providers, skills: registry.skills,
                    disabled: session.disabledSkills(in: room)))
        case ("POST", "/api/model"):
            guard let name = body["name"]?.stringValue else {
                refuse(exchange, 400, "a model choice needs \"name\": one of the names the page offers")
                return
            }
            guard let room = room() else { return }
            do throws(WebRefusal) {
                try session.choose(model: name, in: room)
                json(exchange, 200, ["model": .string(name)])
            } catch { refuse(exchange, error.status, error.sentence) }
        case ("POST", "/api/skill"):
            guard let id = body["id"]?.stringValue, case .bool(let enabled)? = body["enabled"] else {
                refuse(exchange, 400, "switching a skill needs \"id\" and \"enabled\": true or false")
                return
            }
            guard registry.skill(id) != nil else {
                refuse(exchange, 404, "no skill is called \(id); the skills panel lists those there are")
                return
            }
            guard let room = room() else { return }
            session.setEnabled(id, enabled, in: room)
            json(exchange, 200, ["enabled": .bool(enabled)])
        case ("POST", "/api/use"):
            let name = body["name"]?.stringValue ?? ""
            let activate = activateSkill
            let session = session
            guard let room = room() else { return }
            Task {
                switch await activate(name) {
                case .success(let text):
                    do throws(WebRefusal) {
                        try session.use(name, instructions: text, in: room.key)
                        self.json(exchange, 200, ["activated": .string(name)])
                    } catch { self.refuse(exchange, error.status, error.sentence) }
                case .failure(let refusal): self.refuse(exchange, refusal.status, refusal.sentence)
                }
            }
        case ("POST", "/api/app"), ("POST", "/api/view-call"), ("POST", "/api/view-context"):
            guard let room = room() else { return }
            app(request, body, room, exchange)
        case ("POST", "/api/send"):
            guard let room = room() else { return }
            // What its views set for the model since the last turn goes in before the message.
            if !room.owner.isBusy,
                body["text"]?.stringValue?.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty == false
            {
                for text in apps.takeContexts(room: room.key) { room.owner.agent.addContext(text) }
            }
            let session = session
            Task {
                switch await session.sendAfterViews(body["text"]?.stringValue ?? "", in: room) {
                case .started: self.json(exchange, 202, ["started": true])
                case .busy(let sentence): self.refuse(exchange, 409, sentence)
                case .empty: self.refuse(exchange, 400, "the message is empty: write something first")
                }
            }
        case ("POST", "/api/view"):
            guard case .object(let change) = body, change.members.count == 1,
                let (key, value) = change.members.first.map({ ($0.key, $0.value.stringValue ?? "") }),
                session.view.set(key, value)
            else {
                refuse(
                    exchange, 400,
                    "a view change is one of {\"theme\": \"light\"|\"dark\"|\"system\"}, {\"panel\": "
                        + "\"none\"|\"conversations\"|\"skills\"|\"state\"|\"trace\"}, {\"text_size\": \"small\"|\"normal\"|\"large\"}"
                )
                return
            }
            json(exchange, 200, session.view.json)
        case ("GET", "/api/state"): json(exchange, 200, pluginStates())
        case ("GET", "/api/trace"):
            guard let room = room() else { return }
            json(exchange, 200, ["report": .string(session.traceReport(in: room))])
        case ("GET", "/api/conversations"), ("POST", "/api/conversations"):
            // {"search": TEXT}: those that contain it.
            let search = body["search"]?.stringValue.map { $0.trimmingCharacters(in: .whitespaces) }
            do throws(WebRefusal) {
                json(exchange, 200, try session.conversations(search: search?.isEmpty == false ? search : nil))
            } catch { refuse(exchange, error.status, error.sentence) }
        case ("POST", "/api/new"):
            // The skills switched off in the tab's conversation stay off (when it is still there).
            let from = try? session.room(request.header("x-skillhost-conversation"))
            raw(exchange, session.startConversation(from: from).sync(view: session.view.json))
        case ("POST", "/api/open"):
            // {"id": ID}: that conversation; {}: the one used last (a tab that shows none yet).
            let id = body["id"]?.stringValue
            do throws(WebRefusal) {
                let opened = try session.room(id)
                if id != nil { session.used(opened) }
                raw(exchange, opened.sync(view: session.view.json))
            } catch { refuse(exchange, error.status, error.sentence) }
        case ("POST", "/api/rename"), ("POST", "/api/delete"), ("POST", "/api/restore"):
            guard let id = body["id"]?.stringValue else {
                refuse(exchange, 400, "this needs the conversation's \"id\" (the list gives them)")
                return
            }
            do throws(WebRefusal) {
                switch request.path {
                case "/api/rename":
                    guard let title = body["title"]?.stringValue else {
                        refuse(exchange, 400, "a new name needs \"title\" (empty: its first message again)")
                        return
                    }
                    try session.rename(id, to: title)
                case "/api/delete": try session.delete(id)
                default: try session.restore(id)
                }
                json(exchange, 200, ["id": .string(id)])
            } catch { refuse(exchange, error.status, error.sentence) }
        case ("POST", "/api/undo"):
            guard let room = room() else { return }
            do throws(WebRefusal) {
                try session.undo(in: room)
                json(exchange, 202, ["undoing": true])
            } catch { refuse(exchange, error.status, error.sentence) }
        case ("POST", "/api/rewind"), ("POST", "/api/resend"):
            // {"message": N}: the plan; {"message": N, "token": T}: carry out the plan T named (and for a resend,
            // send "text" — or the message as it was — after it).
            // Range-checked before it becomes an integer: a stranger's 1e300 is no message number.
            guard let number = body["message"]?.doubleValue, number >= 1, number <= 1_000_000,
                let message = Int(exactly: number)
            else {
                refuse(exchange, 400, "this needs \"message\": the number of your message to go back to before")
                return
            }
            guard let room = room() else { return }
            do throws(WebRefusal) {
                if let token = body["token"]?.stringValue {
                    if request.path == "/api/resend" {
                        try session.resend(message, token: token, text: body["text"]?.stringValue, in: room)
                    } else {
                        try session.rewind(message, token: token, in: room)
                    }
                    json(exchange, 202, ["rewinding": true])
                } else {
                    json(exchange, 200, try session.rewindPlan(message, in: room))
                }
            } catch { refuse(exchange, error.status, error.sentence) }
        case ("POST", "/api/stop"):
            guard let room = room() else { return }
            session.stop(in: room)
            json(exchange, 202, ["stopping": true])
        case ("POST", "/api/confirm"):
            guard let id = body["id"]?.stringValue,
                let answer = body["answer"]?.stringValue.flatMap(ConfirmationAnswer.init(word:))
            else {
                refuse(exchange, 400, "a confirmation needs \"id\" and \"answer\": \"yes\", \"no\" or \"always\"")
                return
            }
            guard let room = room() else { return }
            if session.confirm(id, answer, in: room) {
                json(exchange, 200, ["answered": true])
            } else {
                refuse(exchange, 409, "that question was answered already or withdrawn")
            }
        default: refuse(exchange, 404, "no such request: \(request.method) \(request.path)")
        }
    }

    /// The session's events as server-sent events until the tab goes away.
    private func events(_ exchange: HTTPExchange) {
        guard
            exchange.beginStream(
                200,
                headers: [
                    ("Content-Type", "text/event-stream"), ("Cache-Control", "no-store"), ("X-Accel-Buffering", "no"),
                ])
        else {
            exchange.end()
            return
        }
        // The stream ends once: when the tab goes away, or when it fell too far behind (a write fails).
        let ending = StreamEnding(exchange)
        let id = session.watch { line in
            if exchange.write(line) { return true }
            ending.end()
            return false
        }
        exchange.onAbort { [session] in
            session.unwatch(id)
            ending.end()
        }
    }

    /// Exchanges the page's token for a cookie.
    private func login(_ request: HTTPServer.Request, _ exchange: HTTPExchange) {
        guard let token = (try? JSONValue(parsing: request.body))?["token"]?.stringValue,
            HTTPGuard.match(token, among: [tokenDigest]) != nil
        else {
            refuse(exchange, 401, "the token is not this server's: open the address skillhost web printed")
            return
        }
        let cookie = HTTPGuard.randomHex(32)
        let page = HTTPGuard.randomHex(32)
        logins.withLock { logins in
            logins.append((HTTPGuard.sha256(cookie), HTTPGuard.sha256(page)))
            if logins.count > Self.loginLimit { logins.removeFirst(logins.count - Self.loginLimit) }
        }
        exchange.respond(
            200,
            headers: [
                ("Content-Type", "application/json"),
                ("Set-Cookie", "\(Self.cookieName)=\(cookie); HttpOnly; SameSite=Strict; Path=/"),
                ("Cache-Control", "no-store"),
            ], text: JSONValue.object(JSONObject([(key: "page", value: .string(page))])).jsonText)
    }

    /// The page key a request carries: its `X-Skillhost-Page` header, or the event stream's path
    /// (`/api/events/<key>`: an `EventSource` sends no headers of its own).
    private static func pageKey(_ request: HTTPServer.Request) -> String? {
        if let header = request.header("x-skillhost-page") { return header }
        let prefix = "/api/events/"
        guard request.path.hasPrefix(prefix) else { return nil }
        return String(request.path.dropFirst(prefix.count))
    }

    private func authorized(_ request: HTTPServer.Request) -> Bool {
        if let value = request.header("authorization"), value.count > 7, value.prefix(7).lowercased() == "bearer " {
            return HTTPGuard.match(String(value.dropFirst(7)), among: [tokenDigest]) != nil
        }
        // The cookie and the page key handed out with it, both: what a server on another port receives (the
        // cookie) grants nothing.
        guard let header = request.header("cookie"), let page = Self.pageKey(request) else { return false }
        let known = logins.withLock { $0 }
        for part in header.split(separator: ";") {
            let pair = part.trimmingCharacters(in: .whitespaces)
            guard pair.hasPrefix(Self.cookieName + "=") else { continue }
            let value = String(pair.dropFirst(Self.cookieName.count + 1))
            guard let digest = HTTPGuard.match(value, among: known.map(\.cookie)),
                let login = known.first(where: { $0.cookie == digest })
            else { continue }
            if HTTPGuard.match(page, among: [login.page]) != nil { return true }
        }
        return false
    }

    // MARK: Answers

    /// What every page answer carries besides its content security policy: it is never sniffed, never cached,
    /// and sends no referrer.
    static let pageHeaders: [(String, String)] = [
        ("X-Content-Type-Options", "nosniff"), ("Referrer-Policy", "no-referrer"), ("Cache-Control", "no-store"),
    ]

    private func asset(_ exchange: HTTPExchange, _ text: String, type: String, policy: String) {
        exchange.respond(
            200, headers: Self.pageHeaders + [("Content-Security-Policy", policy), ("Content-Type", type)],
            body: Array(text.utf8))
    }

    func json(
        _ exchange: HTTPExchange, _ status: Int, _ value: JSONValue, headers: [(String, String)] = []
    ) {
        exchange.respond(
            status, headers: [("Content-Type", "application/json"), ("Cache-Control", "no-store")] + headers,
            body: Array(value.jsonText.utf8))
    }

    /// A JSON text made elsewhere (a conversation as a tab catches up with it).
    private func raw(_ exchange: HTTPExchange, _ text: String) {
        exchange.respond(
            200, headers: [("Content-Type", "application/json"), ("Cache-Control", "no-store")],
            body: Array(text.utf8))
    }

    /// A refusal: its status and one sentence saying what to do.
    func refuse(_ exchange: HTTPExchange, _ status: Int, _ sentence: String) {
        json(exchange, status, ["error": .string(sentence)])
    }

    /// The state panel: each plugin's state snapshot as the model sees it (a failed one with its reason). Taken
    /// here, on the HTTP server's thread (never Swift's cooperative pool); a worker's is bounded by 5 s.
    private func pluginStates() -> JSONValue {
        let states = registry.plugins.compactMap { plugin -> JSONValue? in
            switch registry.stateOnCurrentThread(plugin: plugin.name) {
            case nil: return nil
            case .success(let state)?: return ["plugin": .string(plugin.name), "state": .string(state.text)]
            case .failure(let error)?: return ["plugin": .string(plugin.name), "error": .string("\(error)")]
            }
        }
        return ["plugins": .array(states)]
    }

    /// The skills panel: every skill with its plugin, risk, where it runs, who may call it and whether the model sees
    /// it in this conversation, then the files that could not be loaded with their reasons.
    private func skillsPanel(_ room: WebRoom) -> JSONValue {
        var runs: [String: String] = [:]
        for plugin in registry.plugins { runs[plugin.name] = plugin.placementText }
        let disabled = session.disabledSkills(in: room)
        let skills = registry.skills.map { skill -> JSONValue in
            [
                "id": .string(skill.id), "description": .string(skill.description), "plugin": .string(skill.plugin),
                "risk": .string(skill.risk.rawValue), "runs": .string(runs[skill.plugin] ?? ""),
                "enabled": .bool(!disabled.contains(skill.id)),
                // Who may call it (ABI 1.4): "model", "app" (its plugin's views), both.
                "callers": .array(skill.audience.visibility.map { .string($0) }),
            ]
        }
        let folders = skillFolders().map { folder -> JSONValue in
            [
                "name": .string(folder.name), "description": .string(folder.description), "from": .string(folder.from),
                "frontmatter": folder.frontMatter, "files": .array(folder.files.map { .string($0) }),
            ]
        }
        return [
            "skills": .array(skills), "folders": .array(folders),
            "failures": .array(registry.failures.map { .string($0.description) }),
        ]
    }
}

/// A skill folder as the skills panel shows it.
package struct SkillFolderSummary: Sendable {
    package let name: String
    package let description: String
    /// Where it comes from: user, project, configured, or `mcp:SERVER`.
    package let from: String
    package let frontMatter: JSONValue
    package let files: [String]

    package init(name: String, description: String, from: String, frontMatter: JSONValue, files: [String]) {
        self.name = name
        self.description = description
        self.from = from
        self.frontMatter = frontMatter
        self.files = files
    }
}

/// Ends a streamed answer exactly once, whoever notices first that it is over.
private final class StreamEnding: Sendable {
    private let exchange: HTTPExchange
    private let ended = Mutex(false)

    init(_ exchange: HTTPExchange) { self.exchange = exchange }

    func end() {
        let first = ended.withLock { ended in
            defer { ended = true }
            return !ended
        }
        if first { exchange.end() }
    }
}
