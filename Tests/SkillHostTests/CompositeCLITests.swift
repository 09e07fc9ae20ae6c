import Foundation
import TestSupport
import Testing

@testable import SkillJSON

/// Composite skills through the real binary, over the bundled notes plugin: `call`, `list --json`, `check`, and
/// hot reload in a running `list --watch`.
struct CompositeCLITests: DrivesSkillhost {
    let home = Paths.temporaryDirectory("composite-home")
    var plugins: String { home + "/data/skillhost/plugins" }

    static let markDone = """
        {"id": "mark_done", "title": "Mark notes done", "description": "Marks every note matching a query done.",
         "input_schema": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
         "steps": [
           {"call": "notes_search", "with": {"query": "${input.query}"}, "as": "found"},
           {"for_each": "${found}", "call": "notes_update", "with": {"id": "${item.id}", "title": "[done] ${item.title}"}},
           {"result": {"updated": "${found.length}"}}]}
        """

    func install(_ name: String, _ json: String) throws {
        try FileManager.default.createDirectory(atPath: plugins, withIntermediateDirectories: true)
        try json.write(toFile: plugins + "/\(name).skill.json", atomically: true, encoding: .utf8)
    }

    /// A composite (which a model calls) cannot reach a skill only its plugin's views may call (ABI 1.4).
    @Test func aCompositeCannotCallASkillForViewsOnly() async throws {
        try FileManager.default.createDirectory(atPath: plugins, withIntermediateDirectories: true)
        _ = rename(
            try Fixture.compileFile("views.c", into: Paths.temporaryDirectory("composite-views")), plugins + "/views.so"
        )
        try install(
            "wrap_refresh",
            #"{"id": "wrap_refresh", "title": "Refresh", "description": "Refreshes the board.", "input_schema": {"type": "object"}, "steps": [{"call": "board_refresh"}]}"#
        )
        let refused = try await skillhostOffPool("call", "wrap_refresh", "{}")
        #expect(refused.status != 0)
        #expect(
            refused.stderr.contains(
                "wrap_refresh did not run: step 1 calls board_refresh, which is for plugin board's views only (remove the step from "
            ), "\(refused.stderr)")
    }

    @Test func aCompositeRunsOverTheBundledSkills() async throws {
        try install("mark_done", Self.markDone)
        for title in ["milk", "oat milk", "eggs"] {
            #expect(try await skillhostOffPool("call", "notes_add", "{\"title\": \"\(title)\"}").status == 0)
        }
        let call = try await skillhostOffPool("call", "mark_done", #"{"query": "milk"}"#, "--json")
        #expect(call.status == 0, "\(call.stderr)")
        let envelope = try JSONValue(parsing: call.stdout)
        #expect(envelope["result"] == ["updated": 2])
        #expect(envelope["undo"]?["skill"] == "notes_restore")
        #expect(envelope["undo"]?["then"]?.arrayValue?.count == 1)
        let titles = try JSONValue(parsing: try await skillhostOffPool("call", "notes_list").stdout).arrayValue?
            .compactMap {
                $0["title"]?.stringValue
            }
        #expect(titles == ["[done] milk", "[done] oat milk", "eggs"])

        let list = try JSONValue(parsing: try await skillhostOffPool("list", "--json").stdout)
        let skill = try #require(list["skills"]?.arrayValue?.first { $0["id"] == "mark_done" })
        #expect(skill["kind"] == "composite")
        #expect(skill["risk"] == "mutating")
        #expect(skill["calls"] == ["notes_search", "notes_update"])
        #expect(skill["steps"]?.arrayValue?.count == 3)
        let plugin = try #require(list["plugins"]?.arrayValue?.first { $0["name"] == "mark_done" })
        #expect(plugin["runs"]?["text"] == "composite · runs its steps' skills")
    }

    @Test func checkShowsThePlanAndWhatIsMissing() async throws {
        let folder = Paths.temporaryDirectory("composite-check")
        let file = folder + "/tidy.skill.json"
        try """
        {"id": "tidy", "description": "Deletes a note, then something not installed.",
         "input_schema": {"type": "object", "properties": {"id": {"type": "integer"}}},
         "steps": [{"call": "notes_delete", "with": {"id": "${input.id}"}}, {"call": "archive_all"}]}
        """.write(toFile: file, atomically: true, encoding: .utf8)
        let check = try await skillhostOffPool("check", file)
        #expect(check.status == 0, "\(check.stderr)")
        let lines = check.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(
            lines.prefix(7) == [
                "\(file): ok — composite skill tidy 1.0.0", "calls: notes_delete, archive_all", "",
                "tidy — tidy [destructive: the highest of its steps]", "  composite skill, 2 steps:",
                "    1. notes_delete(id: ${input.id})", "    2. archive_all()",
            ])
        #expect(
            check.stdout.hasSuffix(
                "\nwarning: step 2 calls archive_all, which is not registered now; the composite fails until it is\n"))

        try #"{"id": "tidy", "steps": [{"call": "notes_update", "with": {"id": "seven"}}]}"#.write(
            toFile: file, atomically: true, encoding: .utf8)
        let rejected = try await skillhostOffPool("check", file)
        #expect(rejected.status == 1)
        #expect(
            rejected.stdout == """
                \(file): rejected, 1 problem:
                  - has no "description"; say what the skill does, for the model

                """)
        try #"{"id": "tidy", "description": "x", "steps": [{"call": "notes_update", "with": {"id": "seven"}}]}"#.write(
            toFile: file, atomically: true, encoding: .utf8)
        let invalid = try await skillhostOffPool("check", file)
        #expect(invalid.status == 1)
        #expect(invalid.stdout.contains("  - step 1 (notes_update): its arguments are invalid: $.id: expected integer"))
        let json = try JSONValue(parsing: try await skillhostOffPool("check", file, "--json").stdout)
        #expect(json["ok"] == false)
        #expect(json["problems"]?.arrayValue?.count == 1)
        try #"{"id": "tidy", "description": "x", "steps": [{"call": "notes_list"}]}"#.write(
            toFile: file, atomically: true, encoding: .utf8)
        let good = try JSONValue(parsing: try await skillhostOffPool("check", file, "--json").stdout)
        #expect(good["ok"] == true)
        #expect(good["composite"] == "tidy")
        #expect(good["skills"]?.arrayValue?.first?["kind"] == "composite")
        #expect(good["warnings"] == [])
    }

    @Test func aRunningHostPicksUpCompositesAsTheyAreWritten() async throws {
        let folder = Paths.temporaryDirectory("composite-watch")
        let (process, lines) = try ListWatchTests.watch(folder)
        defer { process.terminate() }
        _ = await lines.next(until: { $0.hasPrefix("Watching") })
        let file = folder + "/twice.skill.json"
        try #"{"id": "twice", "description": "x", "steps": [{"call": "a"}, {"call": "b"}]}"#.write(
            toFile: file, atomically: true, encoding: .utf8)
        #expect(await lines.next() == "+ twice 1.0.0: 1 skill added (twice)")
        try #"{"id": "twice", "description": "x", "steps": [{"call": "a", "as": "input"}]}"#.write(
            toFile: file, atomically: true, encoding: .utf8)
        #expect(
            await lines.next()
                == "! twice.skill.json: step 1: \"as\" must be a name of a-z, 0-9 and _ other than input, item and "
                + "index, not \"input\"")
        try FileManager.default.removeItem(atPath: file)
        #expect(await lines.next() == "- twice 1.0.0: 1 skill removed (twice)")
    }
}
