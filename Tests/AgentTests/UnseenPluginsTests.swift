import Foundation
import SkillHost
import SkillJSON
import TestSupport
import Testing

@testable import Agent

/// The bundled plugins and ten third-party-style plugins the router was not written for
/// (Tests/SkillHostTests/Fixtures/unseen), as the model sees them; the load errors, if any.
let unseenTools: (tools: [ToolDefinition], problems: [String]) = {
    guard let registry = try? makeRegistry() else { return ([], ["no registry"]) }
    registry.loadFolder(Paths.products) { $0.hasPrefix("libskill-") }
    let folder = Paths.temporaryDirectory("unseen")
    var problems: [String] = []
    for name in UnseenCorpus.plugins {
        do {
            if case .failure(let error) = registry.load(file: try Fixture.compileFile("unseen/\(name).c", into: folder))
            {
                problems.append("\(name): \(error)")
            }
        } catch {
            problems.append("\(name): \(error)")
        }
    }
    return (registry.skills.map(ToolDefinition.init), problems)
}()

/// Issue #64: any installed skill is reached through what its definition says, with no list written for it —
/// measured on plugins whose requests were written before the router was changed for them, by someone who had
/// not read the router; and on held-out requests for the forms the issue named, written the same way.
struct UnseenPluginsTests {
    @Test func tenPluginsTheRouterWasNotWrittenFor() async throws {
        #expect(unseenTools.problems.isEmpty, "\(unseenTools.problems)")
        let score = try await RouterScore.of(UnseenCorpus.cases, tools: unseenTools.tools)
        print("offline router, ten unseen plugins: \(score.report)")
        for miss in score.misses { print("  miss: \(miss)") }
        #expect(score.requests >= 80)
        #expect(score.wrongWrites.isEmpty, "\(score.wrongWrites)")
        // 19/65 when the requests were written (52344a3), 40/65 since: a floor against going back.
        #expect(score.rightShare >= 0.55)
        #expect(score.honestShare == 1)
    }

    @Test func heldOutRequestsForTheNewForms() async throws {
        let score = try await RouterScore.of(UnseenCorpus.heldOutForms, tools: routerTools)
        print("offline router, held-out forms: \(score.report)")
        for miss in score.misses { print("  miss: \(miss)") }
        #expect(score.requests >= 30)
        #expect(score.wrongWrites.isEmpty, "\(score.wrongWrites)")
        // 16/26 when written, 24/26 since.
        #expect(score.rightShare >= 0.85)
    }
}

/// What a reviewer tried as a stranger after the router learned to shorten found text and to read booleans
/// (stop 71): a qualifier is never dropped from a change, and a boolean of a change is set only when the request
/// says it plainly — otherwise the router asks.
struct StrangersChangesTests {
    let router = OfflineRouter(now: { routerNow })
    let fileDelete = ToolDefinition(
        name: "file_delete", description: "Deletes a file by its id; permanent skips the bin.",
        parameters: [
            "type": "object",
            "properties": [
                "id": ["type": "integer", "minimum": 1], "permanent": ["type": "boolean", "default": false],
            ],
            "required": ["id"],
        ], title: "Delete a file", risk: .destructive)

    @Test func aQualifiedChangeKeepsItsQualifier() {
        for (request, shortened) in [
            ("remove eggs from the list, all but 2", "eggs"),
            ("remove eggs from my shopping list if we still have some at home", "eggs"),
            ("remove milk from the list tomorrow", "milk"),
        ] {
            let routed = router.route(request, tools: unseenTools.tools)
            #expect(routed?.arguments["item"] != .string(shortened), "\(request) → \(String(describing: routed))")
        }
        #expect(router.route("add eggs to my shopping list", tools: unseenTools.tools)?.arguments["item"] == "eggs")
    }

    @Test func aChangesBooleanIsSetOnlyWhenSaidPlainly() {
        func permanent(_ request: String) -> JSONValue? {
            guard let routed = router.route(request, tools: [fileDelete]) else { return nil }
            return routed.arguments["permanent"] ?? .null
        }
        #expect(permanent("delete file 3, and don't make it permanent") == false)
        #expect(permanent("delete file 3 without it being permanent") == false)
        #expect(permanent("delete file 3 permanently") == true)
        #expect(permanent("delete file 3") == .null, "not said: the skill's default")
        #expect(permanent("delete file 3 (is that permanent?)") == nil, "a question: asked, not run")
        #expect(router.route("clear the shopping list except what i bought", tools: unseenTools.tools) == nil)
        #expect(
            router.route("remove everything i already bought from the shopping list", tools: unseenTools.tools)?
                .arguments == ["only_bought": true])
    }

    @Test func numbersAndShapesAStrangerTypes() {
        #expect(Arithmetic.expression(in: "what is 25% off 15k") == "15000-15000*25/100")
        #expect(Arithmetic.expression(in: "add 8% sales tax to 45 2 times") == "45+45*8/100")
        #expect(TokenShape.hexColour.values(in: "I painted the facade last decade").isEmpty)
        #expect(TokenShape.hexColour.values(in: "is 00ff7f or #abc darker") == ["00ff7f", "#abc"])
        // Beyond what a double holds exactly: left to the schema, never a crash.
        let huge = router.route("is 99999999999999999999 prime", tools: routerTools)
        #expect(huge?.arguments["n"] == .double(1e20))
    }
}
