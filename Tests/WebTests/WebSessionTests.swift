import Agent
import Foundation
import SkillHost
import SkillJSON
import TestSupport
import Testing

@testable import Web

/// The web session's confirmations go out one way (issue #65): the question reaches the tabs only once the wait
/// for its answer is registered, so a tab can never answer before anything waits — the event and hook that the
/// page had to reconcile (and the race of issue #30 between them) are gone. An answer to a question not asked is
/// refused, and a stop answers no to a question asked after it.
struct WebSessionTests {
    static func request(_ id: String) -> ConfirmationRequest {
        let info = SkillInfo(
            id: "wipe", title: "Wipe", description: "Wipes.", plugin: "p", pluginVersion: "1", file: "f",
            risk: .destructive, flags: [], timeout: nil, inputSchema: ["type": "object"], schemaIsGenerated: false,
            kind: .json)
        return ConfirmationRequest(callID: id, skill: info, arguments: [:])
    }

    @Test func aQuestionGoesOutOnlyOnceItsAnswerIsAwaited() async throws {
        let session = WebSession(
            skills: try makeRegistry(), provider: OfflineRouter(), configuration: AgentConfiguration(),
            view: WebView(), history: nil)
        #expect(!session.confirm("c1", .allowOnce), "nothing asked yet: the answer is refused")
        // A tab answers the moment the question reaches it — the fastest a page can (on another thread: the
        // stream is delivered under the session's lock).
        _ = session.watch { line in
            if line.contains(#""type":"confirm""#), line.contains(#""id":"c1""#) {
                Task { #expect(session.confirm("c1", .allowOnce), "asked: something waits for it already") }
            }
            return true
        }
        #expect(await session.ask(Self.request("c1")) == .allowOnce)
        #expect(!session.confirm("c1", .deny), "answered once")
    }

    @Test func aStopAnswersNoToWhatTheTurnAsksAfterIt() async throws {
        let session = WebSession(
            skills: try makeRegistry(), provider: OfflineRouter(), configuration: AgentConfiguration(),
            view: WebView(), history: nil)
        // A turn runs (held here as running: a real one may end before the stop comes).
        session.state.withLock { $0.running = true }
        session.stop()
        #expect(await session.ask(Self.request("c2")) == .deny)
    }
}
