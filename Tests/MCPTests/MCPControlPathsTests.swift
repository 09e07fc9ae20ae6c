import Foundation
import TestSupport
import Testing

/// A composite's steps are decided as the calls they are, over MCP as everywhere: a disabled skill is neither listed
/// nor called, nor reached through a composite; a session's budget of calls counts each step.
struct MCPControlPathsTests {
    let home = Paths.temporaryDirectory("mcp-control-home")

    func configure(_ json: String) throws {
        let config = home + "/config/skillhost"
        try FileManager.default.createDirectory(atPath: config, withIntermediateDirectories: true)
        try json.write(toFile: config + "/config.json", atomically: true, encoding: .utf8)
        let plugins = home + "/data/skillhost/plugins"
        try Fixture.writeAddPair(into: plugins)
        try """
        {"id": "retitle", "description": "Renames note 1.", "input_schema": {"type": "object"},
         "steps": [{"call": "notes_update", "with": {"id": 1, "title": "renamed"}}]}
        """.write(toFile: plugins + "/retitle.skill.json", atomically: true, encoding: .utf8)
    }

    func text(_ response: [String: Any]?) -> String? {
        (((response?["result"] as? [String: Any])?["content"] as? [[String: Any]])?.first)?["text"] as? String
    }

    @Test func aDisabledSkillIsNeitherListedNorCalledNorReachedThroughAComposite() throws {
        try configure(#"{"disabled_skills": ["notes_update"]}"#)
        let server = try MCPProcess(environment: cliEnvironment(home: home))
        defer { server.close() }
        _ = server.request(1, "initialize", #"{"protocolVersion":"2025-11-25","capabilities":{}}"#)
        let tools =
            ((server.request(2, "tools/list")?["result"] as? [String: Any])?["tools"] as? [[String: Any]])?
            .compactMap { $0["name"] as? String } ?? []
        #expect(tools.contains("notes_add") && tools.contains("add_pair"), "\(tools)")
        #expect(!tools.contains("notes_update") && !tools.contains("retitle"), "\(tools)")
        #expect(
            text(server.request(3, "tools/call", #"{"name":"notes_update","arguments":{"id":1,"title":"x"}}"#))
                == #"not run: notes_update is disabled by "disabled_skills" in config.json (take it out of that "#
                + "list to let it run)")
        #expect(
            text(server.request(4, "tools/call", #"{"name":"retitle","arguments":{}}"#))
                == #"not run: retitle calls notes_update, which is disabled by "disabled_skills" in config.json "#
                + "(take it out of that list to let it run)")
        let direct = try runProcess(
            Paths.skillhost, ["call", "retitle", "{}", "--yes"], environment: cliEnvironment(home: home))
        #expect(direct.status != 0)
        #expect(direct.stderr.contains("retitle calls notes_update, which is disabled"), "\(direct.stderr)")
    }

    @Test func aSessionsBudgetOfCallsCountsACompositesSteps() throws {
        try configure(#"{"budgets": {"mcp_session": {"tool_calls": 2}}, "policy": {"add_pair": "allow"}}"#)
        let server = try MCPProcess(environment: cliEnvironment(home: home))
        defer { server.close() }
        _ = server.request(1, "initialize", #"{"protocolVersion":"2025-11-25","capabilities":{}}"#)
        let stopped = text(server.request(2, "tools/call", #"{"name":"add_pair","arguments":{"a":"milk","b":"eggs"}}"#))
        #expect(
            stopped
                == "add_pair stopped at step 2 of 2 (notes_add): not run: this MCP session has made its 2 tool calls, "
                + "a composite's steps counted (budgets.mcp_session.tool_calls in the server's config.json); "
                + "the change (notes_add) made before it was undone", "\(stopped ?? "nil")")
        let notes = try runProcess(Paths.skillhost, ["call", "notes_list"], environment: cliEnvironment(home: home))
        #expect(notes.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "[]", "\(notes.stdout)")
    }
}
