import Foundation
import TestSupport
import Testing

/// `skillhost mcp` serves the plugins' views as MCP Apps (2026-01-26): a tool names its view in `_meta.ui` (and the
/// flat key older hosts read) with who may call it; the view is a `ui://` resource with its declared CSP and
/// permissions.
struct MCPAppsServerTests {
    let home = Paths.temporaryDirectory("mcp-apps-home")

    var environment: [String: String] {
        var environment = cliEnvironment(home: home)
        for key in ["SKILLHOST_PLUGINS", "OPENAI_BASE_URL"] { environment[key] = nil }
        return environment
    }

    private func json(_ text: String) -> Any? { try? JSONSerialization.jsonObject(with: Data(text.utf8)) }

    @Test func viewsAreResourcesAndToolsNameThem() throws {
        let folder = Paths.temporaryDirectory("mcp-apps-plugins")
        _ = try Fixture.compileFile("views.c", into: folder)
        let server = try MCPProcess(arguments: ["--plugins", folder], environment: environment)
        defer { server.close() }
        _ = server.request(
            1, "initialize",
            #"{"protocolVersion":"2025-11-25","capabilities":{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}}}"#
        )
        let tools = try #require(
            (server.request(2, "tools/list")?["result"] as? [String: Any])?["tools"] as? [[String: Any]])
        func meta(_ name: String) -> NSDictionary? {
            tools.first { $0["name"] as? String == name }?["_meta"] as? NSDictionary
        }
        #expect(
            meta("notes_list")
                == (json(
                    #"{"ui":{"resourceUri":"ui://notes/list","visibility":["model","app"]},"ui/resourceUri":"ui://notes/list"}"#
                )
                    as? NSDictionary))
        #expect(
            meta("board_show")
                == (json(
                    #"{"ui":{"resourceUri":"ui://board/board","visibility":["model","app"]},"ui/resourceUri":"ui://board/board"}"#
                )
                    as? NSDictionary))
        #expect(meta("board_refresh") == (json(#"{"ui":{"visibility":["app"]}}"#) as? NSDictionary))
        #expect(meta("board_model") == (json(#"{"ui":{"visibility":["model"]}}"#) as? NSDictionary))
        #expect(meta("calculator") == nil, "a skill with no view and both callers carries nothing")

        let resources = try #require(
            (server.request(3, "resources/list")?["result"] as? [String: Any])?["resources"] as? [[String: Any]])
        let views = resources.filter { ($0["uri"] as? String)?.hasPrefix("ui://") == true }
        #expect(views.map { $0["uri"] as? String } == ["ui://board/board", "ui://notes/list"])
        #expect(views.allSatisfy { $0["mimeType"] as? String == "text/html;profile=mcp-app" })

        let read = server.request(4, "resources/read", #"{"uri":"ui://board/board"}"#)
        let contents = try #require((read?["result"] as? [String: Any])?["contents"] as? [[String: Any]])
        #expect(contents.count == 1)
        #expect(contents.first?["mimeType"] as? String == "text/html;profile=mcp-app")
        #expect(contents.first?["text"] as? String == "<!doctype html><title>Board</title><ul id=items></ul>")
        #expect(
            contents.first?["_meta"] as? NSDictionary
                == (json(
                    #"{"ui":{"csp":{"connectDomains":["https://api.example.com"],"resourceDomains":["https://*.example.com"]},"permissions":{"clipboardWrite":{}},"prefersBorder":true}}"#
                ) as? NSDictionary))
        let notes = server.request(5, "resources/read", #"{"uri":"ui://notes/list"}"#)
        let page = ((notes?["result"] as? [String: Any])?["contents"] as? [[String: Any]])?.first?["text"] as? String
        #expect(page?.hasPrefix("<!doctype html>") == true)
        #expect(page?.contains(#"request("ui/initialize""#) == true, "the notes view speaks the bridge")
        let missing = server.request(6, "resources/read", #"{"uri":"ui://board/nothing"}"#)
        #expect(((missing?["error"] as? [String: Any])?["code"] as? Int) == -32602)
    }

    /// A client that announces no MCP Apps is never listed a skill only views may call (its model would be offered
    /// it), and cannot call it — over stdio and in the stateless generation alike.
    /// A skill folder's view (`metadata: {skillhost-view: FILE}`) is a resource too, `ui://skills/NAME`.
    @Test func aSkillFoldersViewIsAResource() throws {
        let home = Paths.temporaryDirectory("mcp-apps-folder-home")
        let folder = home + "/data/skillhost/skills/tally"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try "---\nname: tally\ndescription: Counts words.\nmetadata:\n  skillhost-view: view.html\n---\nCount.\n".write(
            toFile: folder + "/SKILL.md", atomically: true, encoding: .utf8)
        try "<!doctype html><title>Tally</title>".write(
            toFile: folder + "/view.html", atomically: true, encoding: .utf8)
        var environment = cliEnvironment(home: home)
        for key in ["SKILLHOST_PLUGINS", "OPENAI_BASE_URL"] { environment[key] = nil }
        let server = try MCPProcess(arguments: [], environment: environment)
        defer { server.close() }
        _ = server.request(1, "initialize", #"{"protocolVersion":"2025-11-25","capabilities":{}}"#)
        let listed = try #require(
            (server.request(2, "resources/list")?["result"] as? [String: Any])?["resources"] as? [[String: Any]])
        #expect(listed.contains { $0["uri"] as? String == "ui://skills/tally" }, "\(listed)")
        let read = server.request(3, "resources/read", #"{"uri":"ui://skills/tally"}"#)
        let content = ((read?["result"] as? [String: Any])?["contents"] as? [[String: Any]])?.first
        #expect(content?["text"] as? String == "<!doctype html><title>Tally</title>")
        #expect(content?["mimeType"] as? String == "text/html;profile=mcp-app")
    }

    @Test func aClientThatRendersNoAppsIsNotOfferedViewOnlySkills() throws {
        let folder = Paths.temporaryDirectory("mcp-apps-plain")
        _ = try Fixture.compileFile("views.c", into: folder)
        let server = try MCPProcess(arguments: ["--plugins", folder], environment: environment)
        defer { server.close() }
        _ = server.request(1, "initialize", #"{"protocolVersion":"2025-11-25","capabilities":{}}"#)
        let names = { (message: [String: Any]?) in
            ((message?["result"] as? [String: Any])?["tools"] as? [[String: Any]])?.compactMap { $0["name"] as? String }
                ?? []
        }
        let listed = names(server.request(2, "tools/list"))
        #expect(listed.contains("board_show") && listed.contains("board_model"))
        #expect(!listed.contains("board_refresh"))
        let call = server.request(3, "tools/call", #"{"name":"board_refresh","arguments":{}}"#)
        #expect(
            (call?["error"] as? [String: Any])?["message"] as? String
                == "Invalid params: board_refresh is for plugin board's views only, and this client renders no MCP Apps"
        )
        // The stateless generation: per request.
        let plain =
            #""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#
        let apps =
            #""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}}}"#
        #expect(!names(server.request(4, "tools/list", "{\(plain)}")).contains("board_refresh"))
        #expect(names(server.request(5, "tools/list", "{\(apps)}")).contains("board_refresh"))
    }
}
