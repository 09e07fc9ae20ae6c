import Agent
import SkillHost
import SkillJSON
import Support
import Testing

@testable import Web

/// What the page is sent, and what a model's answer may become in it.
struct WebUnitTests {
    @Test func aHostileAnswerIsInertHTML() {
        let html = WebMarkdown.html(
            """
            Hello **there**.

            <script>alert(1)</script>

            <img src=x onerror="alert(2)">

            [click](javascript:alert(3)) and [fine](https://example.org)
            """)
        #expect(html.contains("<strong>there</strong>"))
        #expect(!html.contains("<script"), "\(html)")
        #expect(!html.contains("onerror"), "\(html)")
        #expect(!html.contains("javascript:"), "\(html)")
        // Issue #66: a link without its target still looked like one and reloaded the page; it is its text now.
        #expect(html.contains(#"click and <a href="https://example.org">fine</a>"#), "the unsafe link is text: \(html)")
        #expect(!html.contains(#"<a href="""#), "\(html)")
        #expect(html.contains(#"<a href="https://example.org">fine</a>"#))
    }

    /// A link with no target, or one with a title, is its text too; links nested in one (an autolink) are looked
    /// at on their own; links elsewhere in the answer are kept.
    @Test func aLinkThatLostItsTargetIsText() {
        let html = WebMarkdown.html(
            "[a](vbscript:x \"t\") then [b]() then [c](https://example.org \"ok\")\n\n[d\nacross](javascript:y)\n\n"
                + "[<javascript:e>](javascript:f) and [<http://x.example> tail](javascript:g) and "
                + "[img](data:image/png;base64,AA) and [doc](DATA:text/html,x)")
        #expect(!html.contains(#"<a href="""#), "\(html)")
        #expect(html.contains("<p>a then b then <a href=\"https://example.org\" title=\"ok\">c</a></p>"), "\(html)")
        #expect(html.contains("<p>d\nacross</p>"), "\(html)")
        #expect(
            html.contains("<p>javascript:e and <a href=\"http://x.example\">http://x.example</a> tail and "), "\(html)")
        #expect(html.contains(#"<a href="data:image/png;base64,AA">img</a> and doc</p>"#), "\(html)")
    }

    /// The offline router's plain answers keep their lines and are escaped scalar by scalar: a prepended mark
    /// (U+0600) before `<` makes one character of the two, and the `<` must not pass as markup.
    @Test func aPlainAnswerIsTextWhateverItHolds() {
        let html = WebMarkdown.plain(
            "Done.\u{600}<a href=https://evil.example/>\u{301}sign in again\u{600}</a>\u{301}\r\n2*3*4 & 'x'\nend")
        #expect(!html.contains("<a"), "\(html)")
        #expect(html.contains("&lt;a href=https://evil.example/"), "\(html)")
        #expect(html.hasSuffix("<br>\n2*3*4 &amp; &#39;x&#39;<br>\nend</p>\n"), "one break for CRLF: \(html)")
    }

    @Test func thePageHoldsItsScriptAndStylesWhole() {
        // Neither may end its element early, and the page stays well under its weight limit of 100 KB.
        let html = WebAssets.document.html
        #expect(html.components(separatedBy: "</script>").count == 2)
        #expect(html.components(separatedBy: "</style>").count == 2)
        #expect(html.utf8.count < 100_000, "\(html.utf8.count) bytes")
    }

    @Test func tablesAndCodeAreLaidOut() {
        let html = WebMarkdown.html("| a | b |\n|---|---|\n| 1 | 2 |\n\n```\nx < y\n```\n")
        #expect(html.contains("<table>"))
        #expect(html.contains("<td>1</td>"))
        #expect(html.contains("<code>x &lt; y\n</code>"))
    }

    @Test func cardsCarryTheirPhaseAsData() throws {
        let started = WebEvent.encode(
            .toolCall(ToolCallEvent(id: "c1", skill: "add", phase: .started(arguments: .value(["a": 1])))))
        #expect(started["type"] == "card")
        #expect(started["phase"] == "running")
        #expect(started["arguments"] == #"{"a":1}"#)
        #expect(started["t"]?.doubleValue ?? 0 > 1_700_000_000_000, "the server's clock, in ms since 1970")
        let failed = WebEvent.encode(
            .toolCall(
                ToolCallEvent(
                    id: "c1", skill: "add",
                    phase: .failed(SkillFailure(code: .timeout, message: "add timed out"), duration: .milliseconds(5)))
            ))
        #expect(failed["phase"] == "failed")
        #expect(failed["code"] == "timeout")
        #expect(failed["ms"] == 5)
        let cancelled = WebEvent.encode(
            .toolCall(ToolCallEvent(id: "c1", skill: "add", phase: .failed(.cancelledByTheUser, duration: .zero))))
        #expect(cancelled["phase"] == "cancelled", "the page checks the phase, never the wording")
    }

    @Test func theOriginMustBeThisServer() {
        let rules = HTTPGuard(
            isLoopback: true, port: 8780, allowedHosts: [], allowedOrigins: [], originPort: 8780)
        #expect(rules.originAllowed("http://127.0.0.1:8780"))
        #expect(rules.originAllowed("http://localhost:8780"))
        #expect(!rules.originAllowed("http://localhost:3000"), "another local site is another application")
        #expect(!rules.originAllowed("https://evil.example"))
        #expect(!rules.originAllowed("null"))
        #expect(rules.hostAllowed("127.0.0.1:8780"))
        #expect(!rules.hostAllowed("evil.example:8780"), "DNS rebinding")
    }
}

/// A view's frame may do what its resource declares and nothing more (MCP Apps 2026-01-26).
struct WebAppPolicyTests {
    @Test func nothingDeclaredIsTheRestrictiveDefault() {
        #expect(
            WebAppPolicy.contentSecurityPolicy(nil)
                == "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
                + "img-src 'self' data:; media-src 'self' data:; connect-src 'none'; frame-src 'none'; "
                + "object-src 'none'; base-uri 'self'")
        #expect(WebAppPolicy.allowAttribute(nil) == "")
    }

    @Test func declaredDomainsGoWhereTheyBelong() throws {
        let csp = try JSONValue(
            parsing: #"{"connectDomains":["https://api.example.com"],"resourceDomains":["https://*.cdn.example"]}"#)
        #expect(
            WebAppPolicy.contentSecurityPolicy(csp)
                == "default-src 'none'; script-src 'self' 'unsafe-inline' https://*.cdn.example; "
                + "style-src 'self' 'unsafe-inline' https://*.cdn.example; connect-src 'self' https://api.example.com; "
                + "img-src 'self' data: https://*.cdn.example; font-src 'self' https://*.cdn.example; "
                + "media-src 'self' data: https://*.cdn.example; frame-src 'none'; object-src 'none'; base-uri 'self'")
        #expect(
            WebAppPolicy.allowAttribute(try JSONValue(parsing: #"{"microphone":{},"clipboardWrite":{},"usb":{}}"#))
                == "microphone; clipboard-write")
    }

    /// What a hostile server declares cannot widen the policy: keywords, wildcards, injected directives are dropped.
    @Test func whatIsNotAnOriginNeverReachesThePolicy() throws {
        let csp = try JSONValue(
            parsing: #"""
                {"connectDomains":["*","'unsafe-eval'","https://a.example; script-src *","data:","https://a.example 'self'",
                "javascript://x","HTTPS://UPPER.example","https://ok.example:8443"],
                "frameDomains":["https://evil.example,https://x"],"baseUriDomains":["'none'"]}
                """#)
        let policy = WebAppPolicy.contentSecurityPolicy(csp)
        #expect(policy.contains("connect-src 'self' https://ok.example:8443;"), "\(policy)")
        #expect(policy.contains("frame-src 'none'") && policy.contains("base-uri 'self'"), "\(policy)")
        #expect(!policy.contains("unsafe-eval") && !policy.contains("evil") && !policy.contains("*;"), "\(policy)")
        // The view's own blobs (what bundled apps load their code from) among its resources, and only there.
        let blobs = WebAppPolicy.contentSecurityPolicy(
            try JSONValue(parsing: #"{"resourceDomains":["blob:","https:"],"connectDomains":["blob:"]}"#))
        #expect(blobs.contains("script-src 'self' 'unsafe-inline' blob:;") && blobs.contains("connect-src 'self';"))
        #expect(!blobs.contains("https:"), "\(blobs)")
    }
}
