import Foundation
import SkillHost
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
