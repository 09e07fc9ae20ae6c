import Agent
import Foundation
import SkillHost
import SkillJSON
import TestSupport
import Testing

@testable import Web

/// The web session's confirmations: a tab may answer before the agent starts waiting for the answer (the question
/// reaches the page first); the answer is kept, never lost — and never given to a question that was not asked.
struct WebSessionTests {
    static func request(_ id: String) -> ConfirmationRequest {
        let info = SkillInfo(
            id: "wipe", title: "Wipe", description: "Wipes.", plugin: "p", pluginVersion: "1", file: "f",
            risk: .destructive, flags: [], timeout: nil, inputSchema: ["type": "object"], schemaIsGenerated: false,
            kind: .json)
        return ConfirmationRequest(callID: id, skill: info, arguments: [:])
    }

    @Test func anAnswerThatArrivesBeforeTheAgentWaitsIsKept() async throws {
        let session = WebSession(
            skills: try makeRegistry(), provider: OfflineRouter(), configuration: AgentConfiguration(),
            view: WebView(), history: nil)
        #expect(!session.confirm("c1", .allowOnce), "nothing asked yet: the answer is refused")
        session.sent(Self.request("c1"))
        #expect(session.confirm("c1", .allowOnce), "asked, not yet waited for: kept")
        #expect(await session.ask(Self.request("c1")) == .allowOnce)
        #expect(!session.confirm("c1", .deny), "answered once")
        // Stop answers no to a question the agent has not started waiting for.
        session.sent(Self.request("c2"))
        session.stop()
        #expect(await session.ask(Self.request("c2")) == .deny)
    }
}
