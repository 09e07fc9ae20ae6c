import Foundation
import SkillHost
import SkillJSON
import Support
import Synchronization

/// The views (MCP Apps) the page shows, and the sandbox they are shown from: a second HTTP listener on another
/// port of the same address — another origin than the page's, so a view can reach neither the page, its storage nor
/// its API — that serves one thing, the sandbox proxy of a view the page opened (`GET /sandbox/<token>`), under the
/// content security policy built from that view's declaration (an HTTP header, never from the request).
///
/// The proxy (MCP Apps 2026-01-26, "Sandbox proxy") checks it is framed by the page, says it is ready, takes the
/// view's page once and puts it in an inner frame sandboxed to scripts and forms (an opaque origin: it can script
/// neither the proxy nor another view's), and relays the bridge's messages only between the page and that frame.
final class WebApps: Sendable {
    /// A view the page opened: which one, for which conversation, framed by which page.
    struct Frame: Sendable {
        let token: String
        let view: SkillView
        /// The conversation whose card shows it: the calls it makes run there.
        let room: String
        /// The card (a call's id) it shows the result of: the calls it makes are listed under it.
        let card: String
        /// The page's origin (scheme, host, port): the only one that may frame the proxy and talk to it.
        let pageOrigin: String
        /// The model context it set last (`ui/update-model-context`), for the conversation's next turn.
        var context: String?
        /// CSP violations said to the person so far (at most `reportLimit`).
        var reports = 0
        /// The person said no to one of its calls: it is asked nothing more.
        var declined = false
    }

    /// The most views open at once: past it, the oldest is forgotten (its calls are refused as closed).
    static let frameLimit = 64
    /// The CSP violations of one view said to the person.
    static let reportLimit = 3
    /// The longest model context a view may set, in bytes.
    static let contextLimit = 16 << 10

    private let frames = Mutex<[Frame]>([])
    private let server: HTTPServer
    /// The sandbox's port.
    let port: UInt16
    /// Says a line to the conversation `room` (a view's CSP violation).
    private let notify: @Sendable (_ room: String, _ line: String) -> Void

    /// Listens on `address`, any free port.
    init(address: String, notify: @escaping @Sendable (String, String) -> Void) throws(WebError) {
        self.notify = notify
        let box = Mutex<WebApps?>(nil)
        var limits = HTTPServer.Limits()
        limits.maximumBody = 64 << 10
        do {
            server = try HTTPServer(address: address, port: 0, limits: limits) { request, exchange in
                guard let apps = box.withLock({ $0 }) else {
                    exchange.respond(503, body: Array("starting".utf8))
                    return
                }
                apps.handle(request, exchange)
            }
        } catch {
            throw WebError("cannot serve the views' sandbox on \(address): \(error.message)")
        }
        port = server.port
        box.withLock { $0 = self }
    }

    func stop() { server.stop() }

    /// Opens `view` for card `card` of conversation `room`, framed by `pageOrigin`: its token.
    func open(_ view: SkillView, room: String, card: String, pageOrigin: String) -> String {
        let token = HTTPGuard.randomHex(24)
        frames.withLock { frames in
            frames.append(Frame(token: token, view: view, room: room, card: card, pageOrigin: pageOrigin))
            if frames.count > Self.frameLimit { frames.removeFirst(frames.count - Self.frameLimit) }
        }
        return token
    }

    /// The view opened as `token`, nil when it is not (or no longer) open.
    func frame(_ token: String) -> Frame? {
        frames.withLock { frames in frames.first { $0.token == token } }
    }

    /// Keeps `text` as what view `token` tells the model (empty: nothing); false when it is not open.
    func setContext(_ token: String, _ text: String) -> Bool {
        frames.withLock { frames in
            guard let index = frames.firstIndex(where: { $0.token == token }) else { return false }
            frames[index].context = text.isEmpty ? nil : text
            return true
        }
    }

    /// The person said no to a call of view `token`: its calls that need a yes are refused from now on.
    func declined(_ token: String) {
        frames.withLock { frames in
            if let index = frames.firstIndex(where: { $0.token == token }) { frames[index].declined = true }
        }
    }

    /// What the views of conversation `room` told the model since its last turn, each once, as system messages.
    func takeContexts(room: String) -> [String] {
        frames.withLock { frames in
            var taken: [String] = []
            for index in frames.indices where frames[index].room == room {
                guard let text = frames[index].context else { continue }
                taken.append(
                    "[context from the view \(frames[index].view.uri) of \(frames[index].view.plugin): a page's words, "
                        + "not the person's]\n" + text)
                frames[index].context = nil
            }
            return Array(taken.suffix(Self.contextsPerMessage))
        }
    }

    /// The views' contexts that go with one message, the latest.
    static let contextsPerMessage = 8

    // MARK: The sandbox's requests

    private func handle(_ request: HTTPServer.Request, _ exchange: HTTPExchange) {
        let parts = request.path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].isEmpty, let frame = frame(String(parts[2])) else {
            exchange.respond(404, headers: [("Content-Type", "text/plain; charset=utf-8")], text: "no such view\n")
            return
        }
        switch (request.method, parts[1]) {
        case ("GET", "sandbox"):
            let policy =
                WebAppPolicy.contentSecurityPolicy(frame.view.csp)
                + "; form-action 'none'; frame-ancestors \(frame.pageOrigin)"
                + "; report-uri /report/\(frame.token)"
            exchange.respond(
                200,
                headers: WebService.pageHeaders + [
                    ("Content-Security-Policy", policy), ("Content-Type", "text/html; charset=utf-8"),
                ],
                text: Self.proxy(
                    pageOrigin: frame.pageOrigin, allow: WebAppPolicy.allowAttribute(frame.view.permissions)))
        case ("POST", "report"): report(request, frame, exchange)
        default:
            exchange.respond(404, headers: [("Content-Type", "text/plain; charset=utf-8")], text: "no such view\n")
        }
    }

    /// A CSP violation the browser reports for a view: said to its conversation (the first few), in words.
    private func report(_ request: HTTPServer.Request, _ frame: Frame, _ exchange: HTTPExchange) {
        exchange.respond(204)
        // What the browser sends for `report-uri`; a page cannot send that type without a preflight, which this
        // server refuses.
        let type = request.header("content-type") ?? ""
        guard type.hasPrefix("application/csp-report") else { return }
        let said = frames.withLock { frames -> Bool in
            guard let index = frames.firstIndex(where: { $0.token == frame.token }),
                frames[index].reports < Self.reportLimit
            else { return false }
            frames[index].reports += 1
            return true
        }
        guard said, let report = (try? JSONValue(parsing: request.body))?["csp-report"] else { return }
        let blocked = String((report["blocked-uri"]?.stringValue ?? "something").prefix(200))
        let directive = String(
            (report["effective-directive"] ?? report["violated-directive"])?.stringValue?.prefix(40) ?? "")
        let what = blocked == "inline" || blocked == "eval" ? "to run \(blocked) code" : "to reach \(blocked)"
        notify(
            frame.room,
            "the view \(frame.view.uri) tried \(what); its declared content security policy does not allow it "
                + "(\(directive)), so it was blocked")
    }

    /// The proxy page: its script knows the page's origin and the frame's `allow` from the server, never from a
    /// message.
    static func proxy(pageOrigin: String, allow: String) -> String {
        let origin = JSONValue.string(pageOrigin).jsonText
        let allowed = JSONValue.string(allow).jsonText
        return """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><title>skillhost view</title>
            <style>html,body{margin:0;padding:0;height:100%;overflow:hidden;background:transparent}\
            iframe{border:0;width:100%;height:100%;display:block}</style></head><body><script>
            (() => {
              "use strict";
              const host = \(origin);
              const allow = \(allowed);
              if (window.self === window.top) {
                document.body.textContent = "This is where skillhost's browser page shows a skill's view; open that page instead.";
                return;
              }
              let inner = null;
              const reserved = (data) => typeof data.method === "string" && data.method.startsWith("ui/notifications/sandbox-");
              window.addEventListener("message", (event) => {
                const data = event.data;
                if (!data || typeof data !== "object" || data.jsonrpc !== "2.0") return;
                if (event.source === window.parent && event.origin === host) {
                  if (data.method === "ui/notifications/sandbox-resource-ready") {
                    // Once, and only the page: its sandbox is scripts and forms (submitted to nowhere: the policy's
                    // form-action) whatever the message says.
                    if (inner || !data.params || typeof data.params.html !== "string") return;
                    inner = document.createElement("iframe");
                    inner.setAttribute("sandbox", "allow-scripts allow-forms");
                    if (allow) inner.setAttribute("allow", allow);
                    inner.setAttribute("title", "view");
                    inner.srcdoc = data.params.html;
                    document.body.append(inner);
                  } else if (!reserved(data) && inner) {
                    inner.contentWindow.postMessage(data, "*");
                  }
                } else if (inner && event.source === inner.contentWindow && !reserved(data)) {
                  window.parent.postMessage(data, host);
                }
              });
              window.parent.postMessage({ jsonrpc: "2.0", method: "ui/notifications/sandbox-proxy-ready", params: {} }, host);
            })();
            </script></body></html>
            """
    }
}
