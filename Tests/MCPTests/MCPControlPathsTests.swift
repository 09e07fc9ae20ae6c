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

    /// A rule that says ask about `notes_delete` of note 1, a composite `del_one` that deletes the note it is given,
    /// and note 1 to keep.
    func deleteOneInsideAComposite() throws {
        try configure(
            #"{"policy": [{"skill": "*", "then": "allow"}, {"skill": "notes_delete", "arguments": "#
                + #"{"properties": {"id": {"const": 1}}, "required": ["id"]}, "then": "ask"}]}"#)
        let composite =
            #"{"id": "del_one", "description": "Deletes a note.", "input_schema": {"type": "object", "#
            + #""properties": {"id": {"type": "integer"}}}, "steps": [{"call": "notes_delete", "with": "#
            + #"{"id": "${input.id}"}}]}"#
        try composite.write(
            toFile: home + "/data/skillhost/plugins/del_one.skill.json", atomically: true, encoding: .utf8)
        let add = try runProcess(
            Paths.skillhost, ["call", "notes_add", #"{"title":"keep me"}"#], environment: cliEnvironment(home: home))
        #expect(add.status == 0, "\(add.stderr)")
    }

    /// `del_one`'s step was refused as set to ask, and note 1 is still there.
    func expectTheStepRefused(_ refused: String?) throws {
        #expect(
            refused
                == "del_one stopped at step 1 of 1 (notes_delete): not run: notes_delete is set to ask; allow it for MCP "
                + #"clients with a policy rule in config.json ("policy": {"notes_delete": "allow"})"#,
            "\(refused ?? "nil")")
        let notes = try runProcess(Paths.skillhost, ["call", "notes_list"], environment: cliEnvironment(home: home))
        #expect(notes.stdout.contains("keep me"), "\(notes.stdout)")
    }

    /// A composite's confirmation (or a rule naming it) covers its plan, not what a rule about a step's arguments
    /// says: that still asks, so an MCP client (no one to ask) is refused — the step ran as confirmed.
    @Test func aRuleAboutAStepsArgumentsHoldsInsideAComposite() throws {
        try deleteOneInsideAComposite()
        let server = try MCPProcess(environment: cliEnvironment(home: home))
        defer { server.close() }
        _ = server.request(1, "initialize", #"{"protocolVersion":"2025-11-25","capabilities":{}}"#)
        let refused = text(server.request(2, "tools/call", #"{"name":"del_one","arguments":{"id":1}}"#))
        try expectTheStepRefused(refused)
    }

    /// The same for a client that can ask its user (issue #65: decided once, in the registry): one round trip names
    /// one call, so a step's question cannot be put to the user — refused as before, not "you said no".
    @Test func aRuleAboutAStepsArgumentsHoldsForAClientThatCanAsk() throws {
        try deleteOneInsideAComposite()
        let server = try MCPProcess(environment: cliEnvironment(home: home))
        defer { server.close() }
        let meta =
            #""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}"#
        let refused = text(server.request(1, "tools/call", #"{"name":"del_one","arguments":{"id":1},\#(meta)}"#))
        try expectTheStepRefused(refused)
    }

    /// A failed composite undoes its own changes with the consent its caller gave: `--yes` covers a rule that says
    /// ask about the reversing call (it was refused as if no one could answer).
    @Test func aFailedCompositesUndoingRunsWithItsCallersYes() throws {
        try configure(#"{"policy": {"notes_*": "ask"}}"#)
        let composite =
            #"{"id": "add_then_fail", "description": "Adds a note, then fails.", "#
            + #""input_schema": {"type": "object"}, "steps": [{"call": "notes_add", "with": {"title": "draft"}}, {"call": "notes_update", "with": "#
            + #"{"id": 9999, "title": "x"}}]}"#
        try composite.write(
            toFile: home + "/data/skillhost/plugins/add_then_fail.skill.json", atomically: true, encoding: .utf8)
        let run = try runProcess(
            Paths.skillhost, ["call", "add_then_fail", "{}", "--yes"], environment: cliEnvironment(home: home))
        #expect(run.stderr.contains("the change (notes_add) made before it was undone"), "\(run.stderr)")
        let notes = try runProcess(
            Paths.skillhost, ["call", "notes_list", "{}", "--yes"], environment: cliEnvironment(home: home))
        #expect(notes.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "[]", "\(notes.stdout)")
    }
}

/// The catalogue of skills stays within its budget however many skills there are (a server serving 5,000 made one
/// model request 4 MB: every name in the catalogue and in each tool's schema).
struct SkillCatalogueBudgetTests {
    @Test func manySkillsKeepTheCatalogueAndSchemasWithinBounds() throws {
        let home = Paths.temporaryDirectory("catalogue-budget-home")
        for index in 0..<600 {
            let folder = home + "/data/skillhost/skills/skill-number-\(index)"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try
                "---\nname: skill-number-\(index)\ndescription: Does task number \(index) with care and precision.\n---\nSteps.\n"
                .write(toFile: folder + "/SKILL.md", atomically: true, encoding: .utf8)
        }
        let server = try MCPProcess(environment: cliEnvironment(home: home))
        defer { server.close() }
        _ = server.request(1, "initialize", #"{"protocolVersion":"2025-11-25","capabilities":{}}"#)
        let tools = (server.request(2, "tools/list")?["result"] as? [String: Any])?["tools"] as? [[String: Any]] ?? []
        let activate = try #require(tools.first { $0["name"] as? String == "skill_activate" })
        let description = activate["description"] as? String ?? ""
        #expect(description.count <= 8000, "\(description.count) characters")
        #expect(description.contains("more skills not listed here (skill_activate takes any skill's name)"))
        let schema = try JSONSerialization.data(withJSONObject: activate["inputSchema"] ?? [:])
        #expect(schema.count < 1000, "the schema names no skill: \(schema.count) bytes")
        let last = server.request(
            3, "tools/call", #"{"name":"skill_activate","arguments":{"name":"skill-number-599"}}"#)
        let text = ((last?["result"] as? [String: Any])?["content"] as? [[String: Any]])?.first?["text"] as? String
        #expect(text?.contains("Steps.") == true, "\(String(describing: last))")
    }
}
