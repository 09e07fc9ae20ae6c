import Foundation
import SkillHost
import TestSupport
import Testing

@testable import SkillJSON

/// ABI v1.1 through the real binary, in a worker process (a third-party plugin's default) and in-process:
/// capabilities and read paths are read and shown, the output schema is checked against every result, skills see
/// the caller's context, and `log_with` names the plugin that speaks.
struct ABIv11Tests: DrivesSkillhost {
    let home = Paths.temporaryDirectory("abi11-home")
    var environment: [String: String] {
        cliEnvironment(home: home, ["TZ": "Europe/Zurich", "SKILLHOST_LOG": "info"])
    }

    @Test(arguments: [[], ["--isolate", "none"]])
    func everyFieldWorks(isolation: [String]) async throws {
        let folder = Paths.temporaryDirectory("abi11")
        _ = try Fixture.compileFile("v11.c", into: folder)
        let plugins = ["--plugins", folder, "--no-default-plugins"] + isolation

        let list = try await skillhostOffPool(["list", "--json"] + plugins)
        let document = try JSONValue(parsing: list.stdout)
        let plugin = try #require(document["plugins"]?.arrayValue?.first { $0["name"] == "v11" })
        #expect(plugin["capabilities"] == ["network", "read-files"])
        #expect(plugin["read_paths"] == ["~/models", "/opt/skill-data"])
        let count = try #require(document["skills"]?.arrayValue?.first { $0["id"] == "v11_count" })
        #expect(count["output_schema"]?["required"] == ["n"])

        let good = try await skillhostOffPool(["call", "v11_count", "{}"] + plugins)
        #expect(good.status == 0)
        #expect(good.stdout == #"{"n":3}"# + "\n")
        // v1.0's log (no context in its signature) names the plugin whose call is running on that thread.
        #expect(good.stderr.contains("[v11] counting"), "\(good.stderr)")
        let broken = try await skillhostOffPool(["call", "v11_count", #"{"broken":true}"#] + plugins)
        #expect(broken.status == 1)
        #expect(
            broken.stderr.contains(
                "error: v11_count returned a result that does not match its output schema: $.n: expected integer"),
            "\(broken.stderr)")

        let context = try await skillhostOffPool(["call", "v11_context", "{}"] + plugins)
        let seen = try JSONValue(parsing: context.stdout)
        #expect(seen["client"] == "call")
        #expect(seen["time_zone"] == "Europe/Zurich")
        #expect(
            seen["now"]?.stringValue?.hasSuffix("+01:00") == true
                || seen["now"]?.stringValue?.hasSuffix("+02:00") == true)
        #expect(seen["locale"]?.stringValue != nil && seen["language"]?.stringValue != nil)
        // log_with: the line names the plugin, not "plugin".
        #expect(context.stderr.contains("[v11] ready"), "\(context.stderr)")
    }

    /// A registry with a data folder of its own; `isolated`: every plugin in a worker process.
    static func registry(isolated: Bool) throws -> SkillRegistry {
        try makeRegistry("abi11-data") { if isolated { $0.isolation = everyPluginInAWorker() } }
    }

    /// `snapshot`: the plugin's state as an object, taken in-process and from a worker alike; none for a plugin
    /// without one.
    @Test(arguments: [false, true])
    func snapshotsAreTaken(isolated: Bool) async throws {
        let registry = try Self.registry(isolated: isolated)
        defer { registry.shutdown() }
        let folder = Paths.temporaryDirectory("abi11-snapshot")
        _ = try registry.load(file: try Fixture.compileFile("v11.c", into: folder)).get()
        _ = try registry.load(file: try Fixture.compileFile("typed.c", into: folder)).get()
        let taken = try await offPool { registry.snapshotOnCurrentThread(plugin: "v11") }
        #expect(taken == .success(["count": 3, "recent": ["milk"]]))
        #expect(try await offPool { registry.snapshotOnCurrentThread(plugin: "typed") } == nil)
        #expect(try await offPool { registry.snapshotOnCurrentThread(plugin: "absent") } == nil)
    }

    /// A plugin built against the frozen v1.1 header (ABI minor 1, before typed errors) keeps loading and answering
    /// in this host — in process and in a worker, snapshot included.
    @Test(arguments: [false, true])
    func aPluginBuiltAgainstTheFrozenV1_1HeaderLoads(isolated: Bool) async throws {
        let registry = try Self.registry(isolated: isolated)
        defer { registry.shutdown() }
        let source = try String(contentsOfFile: Paths.fixtures + "/v11.c", encoding: .utf8)
        let plugin = try Fixture.compile(
            source, name: "v11", into: Paths.temporaryDirectory("abi11-frozen"),
            flags: ["-shared", "-fPIC", "-I", Paths.fixtures + "/abi-v1.1"])
        _ = try registry.load(file: plugin).get()
        #expect(await registry.invoke("v11_count", arguments: "{}").result == ["n": 3])
        let taken = try await offPool { registry.snapshotOnCurrentThread(plugin: "v11") }
        #expect(taken == .success(["count": 3, "recent": ["milk"]]))
    }

    /// A plugin built against the frozen v1.2 header (ABI minor 2, descriptors without `answer`) keeps loading and
    /// answering, its typed errors included — in process and in a worker.
    @Test(arguments: [false, true])
    func aPluginBuiltAgainstTheFrozenV1_2HeaderLoads(isolated: Bool) async throws {
        let registry = try Self.registry(isolated: isolated)
        defer { registry.shutdown() }
        let source = try String(contentsOfFile: Paths.fixtures + "/typed_errors.c", encoding: .utf8)
        let plugin = try Fixture.compile(
            source, name: "typed_errors", into: Paths.temporaryDirectory("abi12-frozen"),
            flags: ["-shared", "-fPIC", "-I", Paths.fixtures + "/abi-v1.2"])
        _ = try registry.load(file: plugin).get()
        #expect(registry.skills.first { $0.id == "days_between" }?.answer == nil)
        let days = await registry.invoke("days_between", arguments: #"{"date1":"2026-01-01","date2":"2026-12-25"}"#)
        #expect(days.result == .int(358), "\(days)")
        let bad = await registry.invoke("days_between", arguments: #"{"date1":"soon","date2":"2026-12-25"}"#)
        #expect(bad.status == .invalidArgs, "\(bad)")
    }

    /// A plugin built against the frozen v1.3 header (descriptors without `view` and `audience`, a plugin record
    /// without views) keeps loading: no view, and both models and views may call its skills — in process and in a
    /// worker.
    @Test(arguments: [false, true])
    func aPluginBuiltAgainstTheFrozenV1_3HeaderLoads(isolated: Bool) async throws {
        let registry = try Self.registry(isolated: isolated)
        defer { registry.shutdown() }
        let source = try String(contentsOfFile: Paths.fixtures + "/typed_errors.c", encoding: .utf8)
        let plugin = try Fixture.compile(
            source, name: "typed_errors", into: Paths.temporaryDirectory("abi13-frozen"),
            flags: ["-shared", "-fPIC", "-I", Paths.fixtures + "/abi-v1.3"])
        _ = try registry.load(file: plugin).get()
        let skill = try #require(registry.skills.first { $0.id == "days_between" })
        #expect(skill.view == nil)
        #expect(skill.audience == [.model, .view])
        let days = await registry.invoke("days_between", arguments: #"{"date1":"2026-01-01","date2":"2026-12-25"}"#)
        #expect(days.result == .int(358), "\(days)")
    }

    /// The bundled notes plugin describes itself: how many notes and the most recently changed, newest first.
    @Test func theNotesPluginsSnapshot() async throws {
        let registry = try makeRegistry()
        defer { registry.shutdown() }
        _ = try registry.load(file: Paths.products + "/libskill-notes.so").get()
        #expect(
            try await offPool { registry.snapshotOnCurrentThread(plugin: "notes") }
                == .success(["notes": 0, "recent": []]))
        for title in ["milk", "eggs", "bread"] {
            _ = await registry.invoke(
                SkillInvocation(skill: "notes_add", argumentText: #"{"title":"\#(title)"}"#, confirmer: .confirmed))
        }
        #expect(
            try await offPool { registry.snapshotOnCurrentThread(plugin: "notes") }
                == .success([
                    "notes": 3,
                    "recent": [["id": 3, "title": "bread"], ["id": 2, "title": "eggs"], ["id": 1, "title": "milk"]],
                ]))
    }

    @Test func checkShowsWhatAPluginMayDo() async throws {
        let folder = Paths.temporaryDirectory("abi11-check")
        let file = try Fixture.compileFile("v11.c", into: folder)
        let check = try await skillhostOffPool(["check", file])
        #expect(check.stdout.contains("declares: compute, network, read-files; also read ~/models, /opt/skill-data\n"))
        #expect(check.stdout.contains("runs: process · confined: network, no programs, reads all your files, writes"))
        #expect(check.stdout.contains("output schema (every result is checked against it):"))
    }

    @Test func aRelativeReadPathIsRefusedWithASentence() async throws {
        let folder = Paths.temporaryDirectory("abi11-bad")
        let source = try String(contentsOfFile: Paths.fixtures + "/v11.c", encoding: .utf8)
            .replacingOccurrences(of: #""~/models", "/opt/skill-data""#, with: #""models""#)
        let file = try Fixture.compile(source, name: "badpaths", into: folder)
        let check = try await skillhostOffPool(["check", file])
        #expect(check.status == 1)
        #expect(
            check.stdout.contains(#"read_paths[0] "models" is not absolute; use /… or ~/… (the user's home)"#),
            "\(check.stdout)")
    }
}
