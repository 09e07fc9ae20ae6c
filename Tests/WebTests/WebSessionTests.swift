import Agent
import Foundation
import Synchronization
import TestSupport
import Testing

@testable import History
@testable import Web

/// The browser's session over its conversation's owner.
struct WebSessionTests {
    /// The first message writes the conversation to the history; when that write fails (another process holds the
    /// database), the notice goes to every tab and the turn goes on — the session's lock is not held while the
    /// owner starts the turn, so the notice cannot wait for it.
    @Test func aHistoryWriteThatFailsAtTheFirstMessageIsSaid() async throws {
        let path = Paths.temporaryDirectory("web-session-locked") + "/history.db"
        let session = WebSession(
            skills: try makeRegistry(), provider: OfflineRouter(), configuration: AgentConfiguration(),
            view: WebView(), history: try HistoryStore(path: path))
        let lines = Mutex<[String]>([])
        _ = session.watch { line in
            lines.withLock { $0.append(line) }
            return true
        }
        let other = try SQLiteConnection(path: path)
        try other.execute("BEGIN IMMEDIATE")
        let sent = try await offPool { session.send("what is 6*7") }
        #expect(sent == .started)
        #expect(await eventually { lines.withLock { $0.contains { $0.contains("history: could not save to") } } })
        try other.execute("COMMIT")
        #expect(await eventually { lines.withLock { $0.contains { $0.contains(#""running":false"#) } } })
    }
}
