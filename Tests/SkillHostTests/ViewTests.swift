import Foundation
import SkillJSON
import TestSupport
import Testing

@testable import SkillHost

/// Views (ABI 1.4): a plugin declares MCP Apps, its skills name the one that shows their results and who may call
/// them; every rule broken is one sentence, in process and in a worker alike.
struct ViewTests {
    static func registry(isolated: Bool) throws -> SkillRegistry {
        try makeRegistry("views-data") { if isolated { $0.isolation = everyPluginInAWorker(native: true) } }
    }

    @Test(arguments: [false, true])
    func aPluginDeclaresItsViewsAndWhoMayCall(isolated: Bool) async throws {
        let registry = try Self.registry(isolated: isolated)
        defer { registry.shutdown() }
        let plugin = try Fixture.compileFile("views.c", into: Paths.temporaryDirectory("views"))
        _ = try registry.load(file: plugin).get()
        let show = try #require(registry.skill("board_show"))
        let view = try #require(show.view)
        #expect(view.uri == "ui://board/board")
        #expect(view.title == "Board")
        #expect(view.html == "<!doctype html><title>Board</title><ul id=items></ul>")
        #expect(
            view.resourceMeta
                == [
                    "csp": [
                        "connectDomains": ["https://api.example.com"], "resourceDomains": ["https://*.example.com"],
                    ],
                    "permissions": ["clipboardWrite": [:]], "prefersBorder": true,
                ])
        #expect(show.audience == [.model, .view])
        #expect(registry.skill("board_refresh")?.audience == .view)
        #expect(registry.skill("board_refresh")?.view == nil)
        #expect(registry.skill("board_model")?.audience == .model)
        // A plugin of an older header has no views, and every skill is for both.
        #expect(registry.skill("board_show")?.audience.visibility == ["model", "app"])
    }

    /// Each broken rule, as `skillhost check` says it (the plugin runs in a worker, as by default).
    @Test(arguments: [
        ("MISSING_VIEW", #"skill "board_show": names view "nowhere", which the plugin does not declare in views"#),
        (
            "BAD_AUDIENCE",
            #"skill "board_model": audience 0x4 contains unknown bits; use SKILL_AUDIENCE_MODEL and SKILL_AUDIENCE_VIEW (0: both)"#
        ),
        (
            "BAD_CSP",
            #"views[0]: view board's csp: connectDomains holds "https://api.example.com; script-src 'unsafe-inline'", not an origin such as https://api.example.com"#
        ),
        (
            "STAR_CSP",
            #"views[0]: view board's csp: resourceDomains holds "*", not an origin such as https://api.example.com"#
        ),
        (
            "ODD_CSP",
            "views[0]: view board's csp: scriptDomains is not one of connectDomains, resourceDomains, frameDomains, baseUriDomains"
        ),
        (
            "BAD_PERMISSIONS",
            "views[0]: view board's permissions: usb is not one of camera, microphone, geolocation, clipboardWrite"
        ),
        ("BAD_NAME", #"views[0]: the name "Board!" is not ^[a-z][a-z0-9_-]{0,63}$"#),
        (
            "BIG_PAGE",
            "views[0]: view board's page is longer than 512 KB; keep it small, its data comes through the bridge"
        ),
        (
            "BAD_UTF8",
            "views[0]: its text (name, title, page, csp or permissions) is not UTF-8; write the page in UTF-8"
        ),
        (
            "RESERVED_NAME",
            #"plugin name "skills" is skillhost's own (its skill folders' and its window's tools use it); choose another name"#
        ),
        (
            "ODD_SIZE",
            "views[0]: struct_size 60 is not the size of a view record (a multiple of 8, at most 1024); build with skill_sdk.h and SKILL_VIEW"
        ),
    ])
    func everyBrokenRuleIsOneSentence(flag: String, sentence: String) async throws {
        let folder = Paths.temporaryDirectory("views-\(flag)")
        let source = try String(contentsOfFile: Paths.fixtures + "/views.c", encoding: .utf8)
        let plugin = try Fixture.compile(
            source, name: "views", into: folder, flags: ["-shared", "-fPIC", "-D\(flag)", "-I", Paths.sdkInclude])
        let home = Paths.temporaryDirectory("views-home-\(flag)")
        // In a worker (the default) and in process: the same sentence.
        for isolation in [[], ["--isolate", "none"]] {
            let result = try await runProcessOffPool(
                Paths.skillhost, ["check", plugin] + isolation, environment: cliEnvironment(home: home))
            #expect(result.status != 0)
            #expect(result.stdout.contains("  - " + sentence + "\n"), "\(isolation): \(result.stdout)")
        }
    }

    /// Records a plugin spaced at an odd stride are read where they are, never trapping the host (a misaligned load
    /// stopped a debug build of it before): it answers, in process as in a worker.
    @Test func recordsAtOddAddressesAreReadWithoutTrapping() async throws {
        let plugin = try Fixture.compileFile("odd_stride.c", into: Paths.temporaryDirectory("odd-stride"))
        let home = Paths.temporaryDirectory("odd-stride-home")
        for isolation in [["--isolate", "all"], ["--isolate", "none"]] {
            let result = try await runProcessOffPool(
                Paths.skillhost, ["check", plugin] + isolation, environment: cliEnvironment(home: home))
            #expect(result.status == 0 || result.status == 1, "\(isolation): \(result.status) \(result.stderr)")
            #expect(result.stdout.hasPrefix(plugin + ": "), "\(isolation): \(result.stdout)")
        }
    }
}
