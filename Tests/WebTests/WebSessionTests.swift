import Agent
import Foundation
import SessionUI
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

    private static func session(_ name: String, deletionDelay: Duration = .seconds(8)) throws -> WebSession {
        WebSession(
            skills: try agentRegistry(), provider: OfflineRouter(), configuration: AgentConfiguration(),
            view: WebView(), history: try HistoryStore(path: Paths.temporaryDirectory(name) + "/history.db"),
            deletionDelay: deletionDelay)
    }

    /// Waits until `room`'s work was shown to the end.
    private static func settled(_ room: WebRoom) async -> Bool {
        await eventually { room.isIdle }
    }

    /// Each conversation is one room with one owner, however many tabs open it; past the limit the least used
    /// idle one is closed, and a tab that names it again gets it back from the history, whole.
    @Test func aConversationHasOneOwnerAndClosedOnesComeBack() async throws {
        let session = try Self.session("web-rooms")
        let first = session.latest
        #expect(session.send("what is 6*7", in: first) == .started)
        #expect(await Self.settled(first))
        let key = try #require(first.owner.id)
        #expect(try session.room(key) === first)
        for index in 0..<WebSession.roomLimit {
            let other = session.startConversation()
            #expect(session.send("what is \(index)+1", in: other) == .started)
            #expect(await Self.settled(other))
        }
        let open = session.state.withLock { $0.rooms }
        #expect(open.count == WebSession.roomLimit)
        #expect(open[key] == nil, "the least used was closed")
        let back = try session.room(key)
        #expect(back !== first)
        #expect(back.owner.agent.userMessages.map(\.content) == ["what is 6*7"])
        #expect(try session.room(key) === back, "the one just opened again stays open")
        // One nothing was said in goes before one that would have to come back from the history.
        let empty = session.startConversation()
        let newer = session.startConversation()
        let now = session.state.withLock { $0.rooms }
        #expect(now[empty.key] == nil && now[newer.key] === newer && now[key] === back)
        #expect(throws: ConversationOwner.Busy.self, "the closed one's owner starts nothing more") {
            _ = try first.owner.send("what is 1+1")
        }
        // A name no conversation has, or that no conversation could have, is one sentence.
        for name in ["nope", "../../etc", String(repeating: "a", count: 65), "a b"] {
            #expect(throws: WebRefusal.self) { try session.room(name) }
        }
        do {
            _ = try session.room("../x")
        } catch {
            #expect(error.sentence == "no conversation has that name; the list shows those there are")
        }
    }

    /// A conversation whose turn waits for a question cannot be deleted; once idle, it can, and its tabs are told.
    @Test func aRunningConversationIsNotDeleted() async throws {
        let session = try Self.session("web-delete-running", deletionDelay: .milliseconds(100))
        let lines = Mutex<[String]>([])
        _ = session.watch { line in
            lines.withLock { $0.append(line) }
            return true
        }
        let room = session.latest
        #expect(session.send("delete note 5", in: room) == .started)
        #expect(await eventually { lines.withLock { $0.contains { $0.contains(#""type":"confirm""#) } } })
        let id = try #require(room.owner.id)
        do {
            try session.delete(id)
            Issue.record("deleted while its turn ran")
        } catch {
            #expect(
                error
                    == WebRefusal(
                        status: 409, sentence: "a turn is running in it; wait for its answer or stop it first"))
        }
        session.stop(in: room)
        #expect(await Self.settled(room))
        try session.delete(id)
        #expect(lines.withLock { $0.contains { $0.contains(#""type":"deleted""#) } })
        #expect(session.latest !== room, "a request naming no conversation gets a new one")
        let store = try #require(session.journal?.store)
        #expect(
            await eventually {
                let rows = try? store.connection.query("SELECT COUNT(*) FROM sessions WHERE id = ?", [.text(id)])
                return rows?.first?.first?.integer == 0
            }, "gone for good after the moment")
    }

    /// A view that polls never makes the person's message fail: a message that finds a view's call running waits
    /// for it, and no other view's call starts before the message.
    @Test func aMessageWaitsForAViewsCallAndGoesFirst() async throws {
        let session = try Self.session("web-session-view-first")
        let room = session.latest
        #expect(room.startShowing(forView: true) != nil, "a view's call holds the conversation")
        let sent = Task { await session.sendAfterViews("what is 6*7", in: room) }
        #expect(await eventually { room.state.withLock { $0.personWaiting == 1 } }, "the message waits")
        room.stopShowing()
        #expect(await sent.value == .started)
        #expect(await Self.settled(room))
        // Meanwhile no view's call went first: the conversation was kept for the message.
        #expect(room.state.withLock { $0.personWaiting } == 0)
        // Work that is no view's call is not waited for: the person is told at once.
        #expect(room.startShowing() != nil)
        #expect(
            await session.sendAfterViews("what is 2+2", in: room) == .busy(ConversationOwner.Busy.running.description))
        room.stopShowing()
    }

    @Test func aViewsCallDoesNotStartBeforeAWaitingMessage() throws {
        let session = try Self.session("web-session-view-waits")
        let room = session.latest
        room.personWaits(true)
        #expect(room.startShowing(forView: true) == nil)
        room.personWaits(false)
        #expect(room.startShowing(forView: true) != nil)
        room.stopShowing()
    }
}
