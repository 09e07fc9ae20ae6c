import Foundation
import SkillJSON
import Support
import TestSupport
import Testing

/// `skillhost web` as a person's browser meets it, over real HTTP against the real binary and the offline router:
/// the page, the token exchanged for a cookie, the guards, a turn streamed as server-sent events.
struct WebServiceTests {
    static func home(_ name: String) throws -> [String: String] {
        let home = Paths.temporaryDirectory(name)
        try FileManager.default.createDirectory(atPath: home + "/config/skillhost", withIntermediateDirectories: true)
        return cliEnvironment(home: home)
    }

    /// One plain request: status, headers (lower-case names) and body.
    static func fetch(
        _ url: String, method: String = "GET", headers: [(String, String)] = [], body: String? = nil
    ) async throws -> (status: Int, headers: [String: String], body: String) {
        var request = HTTPRequest(url: try #require(URL(string: url)), method: method, body: body.map { Data($0.utf8) })
        for (name, value) in headers { request.setHeader(value, for: name) }
        var status = 0
        var fields: [String: String] = [:]
        var bytes = Data()
        for try await event in HTTPStream.start(request, timeout: 30) {
            switch event {
            case .head(let code, let received): (status, fields) = (code, received)
            case .body(let data): bytes += data
            }
        }
        return (status, fields, String(decoding: bytes, as: UTF8.self))
    }

    static let json = [("Content-Type", "application/json")]

    @Test func thePageSignsInAndStreamsATurn() async throws {
        let environment = try Self.home("web-turn")
        // A skill folder, listed in the skills panel beside the plugins' skills.
        let folder = (environment["HOME"] ?? "") + "/data/skillhost/skills/greet"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try "---\nname: greet\ndescription: Greets people.\n---\n".write(
            toFile: folder + "/SKILL.md", atomically: true, encoding: .utf8)
        let server = try await HTTPServerProcess.startWeb(environment: environment)
        defer { server.terminate() }
        let base = "http://127.0.0.1:\(server.port)"
        let token = try #require(server.url.components(separatedBy: "#token=").last)

        let page = try await Self.fetch(base + "/")
        #expect(page.status == 200)
        // The script and styles are inside the page, and the policy lets exactly them run (by digest).
        let policy = page.headers["content-security-policy"] ?? ""
        #expect(page.body.contains(#"<script type="module">"#))
        #expect(policy.hasPrefix("default-src 'none'; script-src 'sha256-"), "\(policy)")
        #expect(!policy.contains("unsafe-inline") && !policy.contains("script-src 'self'"), "\(policy)")
        #expect(page.headers["x-content-type-options"] == "nosniff")

        let anonymous = try await Self.fetch(base + "/api/skills")
        #expect(anonymous.status == 401)
        #expect(
            anonymous.body
                == #"{"error":"not signed in: open the address skillhost web printed (it carries the token)"}"#)

        let wrong = try await Self.fetch(
            base + "/api/login", method: "POST", headers: Self.json, body: #"{"token":"guess"}"#)
        #expect(wrong.status == 401)
        #expect(wrong.headers["set-cookie"] == nil)

        let login = try await Self.fetch(
            base + "/api/login", method: "POST", headers: Self.json, body: #"{"token":"\#(token)"}"#)
        #expect(login.status == 200)
        let setCookie = try #require(login.headers["set-cookie"])
        #expect(setCookie.contains("HttpOnly") && setCookie.contains("SameSite=Strict"), "\(setCookie)")
        let cookie = try #require(setCookie.split(separator: ";").first.map(String.init))
        let key = try #require(try JSONValue(parsing: login.body)["page"]?.stringValue)
        let signedIn = [("Cookie", cookie), ("X-Skillhost-Page", key)]

        // Browsers send the cookie to every port of this host: with it alone (what a server on another port
        // receives) nothing is granted; nor with another login's key, or a key without the cookie.
        for headers in [
            [("Cookie", cookie)],
            [("Cookie", cookie), ("X-Skillhost-Page", (key.hasPrefix("0") ? "1" : "0") + key.dropFirst())],
            [("X-Skillhost-Page", key)],
        ] {
            for path in ["/api/skills", "/api/conversations", "/api/events", "/api/events/x"] {
                #expect(try await Self.fetch(base + path, headers: headers).status == 401, "\(path) \(headers)")
            }
            let send = try await Self.fetch(
                base + "/api/send", method: "POST", headers: headers + Self.json, body: #"{"text":"what is 6*7"}"#)
            #expect(send.status == 401)
        }

        let skills = try await Self.fetch(base + "/api/skills", headers: signedIn)
        #expect(skills.status == 200)
        let ids = try JSONValue(parsing: skills.body)["skills"]?.arrayValue?.compactMap { $0["id"]?.stringValue }
        #expect(ids?.contains("calculator") == true, "\(skills.body)")
        #expect(
            try JSONValue(parsing: skills.body)["folders"]
                == [
                    [
                        "name": "greet", "description": "Greets people.", "from": "user",
                        "frontmatter": ["name": "greet", "description": "Greets people."], "files": [],
                    ]
                ], "\(skills.body)")
        // "Use" puts a folder's instructions into the conversation; an unknown one is refused with the sentence.
        let used = try await Self.fetch(
            base + "/api/use", method: "POST", headers: signedIn + Self.json, body: #"{"name":"greet"}"#)
        #expect(used.status == 200 && used.body == #"{"activated":"greet"}"#, "\(used.body)")
        let unknown = try await Self.fetch(
            base + "/api/use", method: "POST", headers: signedIn + Self.json, body: #"{"name":"nope"}"#)
        #expect(unknown.status == 404)
        #expect(
            unknown.body
                == #"{"error":"there is no skill nope; /skills in the shell (or the browser's skills panel) lists them"}"#,
            "\(unknown.body)")

        // The event stream, read while the turn runs.
        var stream = HTTPRequest(url: try #require(URL(string: base + "/api/events/" + key)))
        stream.setHeader(cookie, for: "Cookie")
        let watcher = Task { () -> [JSONValue] in
            var parser = SSEParser()
            var events: [JSONValue] = []
            for try await event in HTTPStream.start(stream, timeout: 120) {
                guard case .body(let data) = event else { continue }
                for text in parser.feed([UInt8](data)) {
                    let value = try JSONValue(parsing: text)
                    events.append(value)
                    if value["type"] == "running", value["running"] == false,
                        events.contains(where: { $0["type"] == "finished" })
                    {
                        return events
                    }
                }
            }
            return events
        }
        try await Task.sleep(for: .milliseconds(200))
        let sent = try await Self.fetch(
            base + "/api/send", method: "POST", headers: signedIn + Self.json, body: #"{"text":"what is (23+7)*2"}"#)
        #expect(sent.status == 202, "\(sent.body)")
        let events = try await watcher.value
        let types = events.compactMap { $0["type"]?.stringValue }
        #expect(types.first == "reset")
        #expect(types.contains("user"))
        let phases = events.filter { $0["type"] == "card" }.compactMap { $0["phase"]?.stringValue }
        #expect(phases == ["running", "succeeded"], "\(events)")
        #expect(events.first { $0["phase"] == "succeeded" }?["result"] == "60")
        #expect(events.first { $0["type"] == "finished" }?["reason"] == "answered")
        #expect(events.contains { $0["type"] == "answer" && $0["html"]?.stringValue?.contains("60") == true })

        // A turn at a time.
        let empty = try await Self.fetch(
            base + "/api/send", method: "POST", headers: signedIn + Self.json, body: #"{"text":"   "}"#)
        #expect(empty.status == 400)
        #expect(empty.body == #"{"error":"the message is empty: write something first"}"#)
        await server.stop()
    }

    /// Issue #67: a view is opened for a card (a token naming it), its proxy served from the sandbox's port under the
    /// view's own policy, and its calls refused beyond its plugin's skills for views.
    @Test func aViewIsServedFromItsSandboxAndCallsOnlyItsOwnSkills() async throws {
        let environment = try Self.home("web-apps")
        let server = try await HTTPServerProcess.startWeb(environment: environment)
        defer { server.terminate() }
        let base = "http://127.0.0.1:\(server.port)"
        let token = try #require(server.url.components(separatedBy: "#token=").last)
        let auth = Self.json + [("Authorization", "Bearer \(token)")]

        let opened = try await Self.fetch(
            base + "/api/app", method: "POST", headers: auth,
            body: #"{"uri": "ui://notes/list", "card": "c1", "skill": "notes_list"}"#)
        #expect(opened.status == 200, "\(opened.body)")
        let app = try JSONValue(parsing: opened.body)
        let view = try #require(app["token"]?.stringValue)
        let sandbox = try #require(app["sandbox"]?.stringValue)
        let sandboxPort = try #require(URL(string: sandbox)?.port)
        #expect(sandboxPort != server.port && sandbox == "http://127.0.0.1:\(sandboxPort)/sandbox/\(view)")
        #expect(app["html"]?.stringValue?.contains("ui/initialize") == true)
        #expect(app["allow"] == "" && app["permissions"] == [:])

        // The page may frame the sandbox's port, and nothing else.
        let page = try await Self.fetch(base + "/")
        #expect(
            page.headers["content-security-policy"]?.hasSuffix("; frame-src http://127.0.0.1:\(sandboxPort)") == true)

        let proxy = try await Self.fetch(sandbox)
        #expect(proxy.status == 200)
        #expect(
            proxy.headers["content-security-policy"]
                == "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
                + "img-src 'self' data:; media-src 'self' data:; connect-src 'none'; frame-src 'none'; "
                + "object-src 'none'; base-uri 'self'; form-action 'none'; frame-ancestors http://127.0.0.1:\(server.port); "
                + "report-uri /report/\(view)")
        #expect(proxy.headers["cache-control"] == "no-store" && proxy.headers["referrer-policy"] == "no-referrer")
        #expect(proxy.body.contains(#"const host = "http://127.0.0.1:\#(server.port)";"#))
        // A violation the browser reports is said in the conversation; a page's forged one (no report type) is not.
        for type in ["text/plain", "application/csp-report"] {
            let report = try await Self.fetch(
                "http://127.0.0.1:\(sandboxPort)/report/\(view)", method: "POST", headers: [("Content-Type", type)],
                body:
                    #"{"csp-report":{"blocked-uri":"https://\#(type == "text/plain" ? "forged" : "real").example/x.js","effective-directive":"script-src-elem"}}"#
            )
            #expect(report.status == 204)
        }
        let shown = try await Self.fetch(base + "/api/open", method: "POST", headers: auth, body: "{}").body
        #expect(shown.contains("the view ui://notes/list tried to reach https://real.example/x.js"), "\(shown)")
        #expect(!shown.contains("forged"), "\(shown)")
        // Nothing else is served there: not another token, not the page, not its API.
        for path in ["/sandbox/0123", "/", "/api/skills", "/sandbox/\(view)/x"] {
            #expect(try await Self.fetch("http://127.0.0.1:\(sandboxPort)\(path)").status == 404, "\(path)")
        }

        // A card opens the view of its own skill, never one of the same address another skill names.
        let another = try await Self.fetch(
            base + "/api/app", method: "POST", headers: auth,
            body: #"{"uri": "ui://notes/list", "card": "c3", "skill": "calculator"}"#)
        #expect(another.status == 404, "\(another.body)")
        let unknown = try await Self.fetch(
            base + "/api/app", method: "POST", headers: auth,
            body: #"{"uri": "ui://notes/other", "card": "c2", "skill": "notes_list"}"#)
        #expect(unknown.status == 404)
        #expect(
            unknown.body
                == #"{"error":"no view ui://notes/other is served here now for notes_list (its plugin was removed or replaced)"}"#
        )

        func call(_ name: String, token: String = view) async throws -> (status: Int, body: JSONValue) {
            let answer = try await Self.fetch(
                base + "/api/view-call", method: "POST", headers: auth,
                body: #"{"token": "\#(token)", "name": "\#(name)", "arguments": {}}"#)
            return (answer.status, try JSONValue(parsing: answer.body))
        }
        let listed = try await call("notes_list")
        #expect(listed.status == 200 && listed.body["structuredContent"] == ["result": []], "\(listed)")
        #expect(listed.body["content"]?.arrayValue?.first?["type"] == "text")
        let other = try await call("calculator")
        #expect(other.body["isError"] == true)
        #expect(
            other.body["content"]?.arrayValue?.first?["text"]
                == "a view of notes called calculator, a skill of calculator: a view may call only its own plugin's skills"
        )
        let closed = try await call("notes_list", token: "feed")
        #expect(closed.status == 410)
        #expect(
            closed.body["error"]
                == "this view was closed (too many were open, or the host restarted); run its skill again to show it anew"
        )
    }

    @Test func foreignPagesAndNamesAreRefused() async throws {
        let server = try await HTTPServerProcess.startWeb(environment: try Self.home("web-guards"))
        defer { server.terminate() }
        let base = "http://127.0.0.1:\(server.port)"
        let token = try #require(server.url.components(separatedBy: "#token=").last)

        let foreign = try await Self.fetch(
            base + "/api/login", method: "POST", headers: Self.json + [("Origin", "https://evil.example")],
            body: #"{"token":"\#(token)"}"#)
        #expect(foreign.status == 403)
        #expect(
            foreign.body
                == #"{"error":"origin https://evil.example may not use this server; open the address skillhost web printed"}"#
        )
        let otherPort = try await Self.fetch(
            base + "/api/send", method: "POST", headers: Self.json + [("Origin", "http://localhost:1")],
            body: #"{"text":"hi"}"#)
        #expect(otherPort.status == 403)

        let rebound = try await Self.fetch(base + "/", headers: [("Host", "evil.example:\(server.port)")])
        #expect(rebound.status == 421)

        // With the token as a bearer (a script of the person's own), a form post is still not JSON.
        let form = try await Self.fetch(
            base + "/api/send", method: "POST",
            headers: [("Authorization", "Bearer \(token)"), ("Content-Type", "application/x-www-form-urlencoded")],
            body: "text=hi")
        #expect(form.status == 415)
        await server.stop()
    }

    @Test func theViewAndTheSkillSwitchesTakeOnlyWhatTheyKnow() async throws {
        let server = try await HTTPServerProcess.startWeb(environment: try Self.home("web-view"))
        defer { server.terminate() }
        let base = "http://127.0.0.1:\(server.port)"
        let token = try #require(server.url.components(separatedBy: "#token=").last)
        let headers = Self.json + [("Authorization", "Bearer \(token)")]

        let dark = try await Self.fetch(
            base + "/api/view", method: "POST", headers: headers, body: #"{"theme":"dark"}"#)
        #expect(dark.status == 200)
        let view = try JSONValue(parsing: dark.body)
        let conversation = try #require(view["conversation"]?.stringValue, "the conversation shown: \(dark.body)")
        #expect(dark.body == #"{"theme":"dark","panel":"none","text_size":"normal","conversation":"\#(conversation)"}"#)
        let wrong = try await Self.fetch(
            base + "/api/view", method: "POST", headers: headers, body: #"{"theme":"purple"}"#)
        #expect(wrong.status == 400)
        #expect(
            wrong.body
                == #"{"error":"a view change is one of {\"theme\": \"light\"|\"dark\"|\"system\"}, {\"panel\": \"none\"|\"conversations\"|\"skills\"|\"state\"|\"trace\"}, {\"text_size\": \"small\"|\"normal\"|\"large\"}"}"#
        )
        // The view is a plugin state like any other: the state panel (and the model) see it.
        let state = try await Self.fetch(base + "/api/state", headers: headers)
        #expect(
            state.body.contains(
                #"{"plugin":"ui","state":"{\"theme\":\"dark\",\"panel\":\"none\",\"text_size\":\"normal\",\"conversation\":\"\#(conversation)\"}"}"#
            ),
            "\(state.body)")

        let skills = try await Self.fetch(base + "/api/skills", headers: headers)
        let theme = try JSONValue(parsing: skills.body)["skills"]?.arrayValue?.first { $0["id"] == "ui_set_theme" }
        #expect(theme?["runs"] == "built in · changes only the front end's view")
        #expect(theme?["risk"] == "mutating")
        #expect(theme?["callers"] == ["model", "app"], "who may call it (ABI 1.4): both, for a skill of no view")
        let unknown = try await Self.fetch(
            base + "/api/skill", method: "POST", headers: headers, body: #"{"id":"nope","enabled":false}"#)
        #expect(unknown.status == 404)
        #expect(unknown.body == #"{"error":"no skill is called nope; the skills panel lists those there are"}"#)
        let off = try await Self.fetch(
            base + "/api/skill", method: "POST", headers: headers, body: #"{"id":"calculator","enabled":false}"#)
        #expect(off.status == 200)
        let after = try await Self.fetch(base + "/api/skills", headers: headers)
        let calculator = try JSONValue(parsing: after.body)["skills"]?.arrayValue?.first { $0["id"] == "calculator" }
        #expect(calculator?["enabled"] == false)
        await server.stop()
    }

    /// Issue #66: a tab names its conversation; each request acts on that one, a new one leaves the others be, and
    /// the list's requests take only what they know.
    @Test func eachRequestActsOnTheConversationItNames() async throws {
        let server = try await HTTPServerProcess.startWeb(environment: try Self.home("web-rooms"))
        defer { server.terminate() }
        let base = "http://127.0.0.1:\(server.port)"
        let token = try #require(server.url.components(separatedBy: "#token=").last)
        let headers = Self.json + [("Authorization", "Bearer \(token)")]
        func post(_ path: String, _ body: String, in conversation: String? = nil) async throws -> (Int, JSONValue) {
            let named = conversation.map { [("X-Skillhost-Conversation", $0)] } ?? []
            let answer = try await Self.fetch(base + path, method: "POST", headers: headers + named, body: body)
            return (answer.status, try JSONValue(parsing: answer.body))
        }
        func settled(_ id: String) async -> Bool {
            await eventually {
                (try? await post("/api/open", #"{"id":"\#(id)"}"#).1["events"]?.arrayValue?.last {
                    $0["type"] == "running"
                }?["running"]) == false
            }
        }
        let (_, first) = try await post("/api/open", "{}")
        let one = try #require(first["id"]?.stringValue)
        #expect(first["events"]?.arrayValue?.first?["type"] == "reset")
        #expect(try await post("/api/send", #"{"text":"what is 6*7"}"#, in: one).0 == 202)
        #expect(await settled(one))
        let (_, second) = try await post("/api/new", "{}", in: one)
        let two = try #require(second["id"]?.stringValue)
        #expect(two != one)
        #expect(try await post("/api/send", #"{"text":"what is 3*3"}"#, in: two).0 == 202)
        #expect(await settled(two))
        let users = { (caught: JSONValue) in
            caught["events"]?.arrayValue?.filter { $0["type"] == "user" }.compactMap { $0["text"]?.stringValue } ?? []
        }
        #expect(users(try await post("/api/open", #"{"id":"\#(one)"}"#).1) == ["what is 6*7"])
        #expect(users(try await post("/api/open", #"{"id":"\#(two)"}"#).1) == ["what is 3*3"])
        // Every event of a conversation names it and carries a number that only grows.
        let events = try #require(try await post("/api/open", #"{"id":"\#(two)"}"#).1["events"]?.arrayValue)
        let numbers = events.compactMap { $0["s"]?.doubleValue }
        #expect(!numbers.isEmpty && numbers == numbers.sorted())
        #expect(events.dropFirst().allSatisfy { $0["c"]?.stringValue == two || $0["type"] == "view" })

        let (renamed, _) = try await post("/api/rename", #"{"id":"\#(one)","title":"Arithmetic"}"#)
        #expect(renamed == 200)
        let listed = try JSONValue(parsing: try await Self.fetch(base + "/api/conversations", headers: headers).body)
        #expect(listed["conversations"]?.arrayValue?.map { $0["title"] } == ["what is 3*3", "Arithmetic"])
        let (found, search) = try await post("/api/conversations", #"{"search":"6*7"}"#)
        #expect(found == 200)
        #expect(search["conversations"]?.arrayValue?.map { $0["match"] } == ["what is 6*7"])
        // What names nothing, in one sentence each.
        #expect(
            try await post("/api/send", #"{"text":"hi"}"#, in: "../../etc")
                == (404, ["error": "no conversation has that name; the list shows those there are"]))
        #expect(
            try await post("/api/open", #"{"id":"0badc0de"}"#)
                == (404, ["error": "no conversation 0badc0de; the list shows those there are"]))
        #expect(
            try await post("/api/delete", #"{"id":"0badc0de"}"#)
                == (404, ["error": "no conversation 0badc0de; the list shows those there are"]))
        #expect(
            try await post("/api/rename", #"{"id":"\#(one)"}"#)
                == (400, ["error": "a new name needs \"title\" (empty: its first message again)"]))
        #expect(
            try await post("/api/delete", "{}")
                == (400, ["error": "this needs the conversation's \"id\" (the list gives them)"]))
        #expect(
            try await post("/api/restore", #"{"id":"\#(one)"}"#)
                == (409, ["error": .string("conversation \(one) is not deleted; the list shows it")]))
        #expect(try await post("/api/delete", #"{"id":"\#(two)"}"#).0 == 200)
        #expect(try await post("/api/restore", #"{"id":"\#(two)"}"#).0 == 200)
        await server.stop()
    }

    @Test func aNetworkFacingFrontEndNeedsItsOwnToken() async throws {
        let result = try await runProcessOffPool(
            Paths.skillhost, ["web", "--http", "0.0.0.0:0"], environment: try Self.home("web-network"))
        #expect(result.status == 1)
        #expect(
            result.stderr
                == "skillhost: refusing to serve the browser front end on 0.0.0.0 without a token of your own: set "
                + "SKILLHOST_WEB_TOKEN, or serve on 127.0.0.1\n")
    }
}
