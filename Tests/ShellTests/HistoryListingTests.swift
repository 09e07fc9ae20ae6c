import Agent
import Foundation
import TestSupport
import Testing

@testable import History

/// The browser's list of conversations: most recently active first, searched, renamed, deleted for a moment and
/// then for good.
struct HistoryListingTests {
    let path = Paths.temporaryDirectory("listing") + "/history.db"

    /// A conversation with `said` as the person's messages (each answered), its messages written at `at`.
    private func conversation(_ store: HistoryStore, _ said: [String], at: Double) throws -> String {
        let id = try store.createSession(model: "offline router")
        var conversation = Conversation(system: "sys")
        for text in said {
            conversation.append(Message(role: .user, content: text))
            conversation.append(Message(role: .assistant, content: "answer to " + text))
        }
        for message in conversation.messages { try store.append(message, session: id) }
        try store.connection.execute("UPDATE messages SET created = ? WHERE session = ?", [.real(at), .text(id)])
        return id
    }

    @Test func listsByLastActivityAndFindsWhatWasSaid() throws {
        let store = try HistoryStore(path: path)
        let old = try conversation(store, ["what is 6*7", "and 100% of_it?"], at: 1000)
        let new = try conversation(store, ["time in Tokyo"], at: 2000)
        _ = try store.createSession(model: "offline router")  // nothing said: not listed
        #expect(try store.listing().map(\.id) == [new, old])
        #expect(try store.listing().map(\.turns) == [1, 2])
        #expect(try store.listing().first?.updated == Date(timeIntervalSince1970: 2000))
        // Case aside; answers too; LIKE's wildcards are taken literally.
        #expect(try store.listing(search: "TOKYO").map(\.id) == [new])
        #expect(try store.listing(search: "answer to what").map(\.id) == [old])
        #expect(try store.listing(search: "100%").map(\.match) == ["and 100% of_it?"])
        #expect(try store.listing(search: "0%_").isEmpty)
        #expect(try store.listing(search: "%").map(\.id) == [old])
        #expect(try store.listing(search: "f_i").map(\.id) == [old])
        #expect(try store.listing(search: "x_y").isEmpty)
    }

    @Test func aNameReplacesTheFirstMessageUntilItIsEmptied() throws {
        let store = try HistoryStore(path: path)
        let id = try conversation(store, ["what is 6*7"], at: 1000)
        #expect(try store.rename(session: id, to: "  Arithmetic\n\u{7}homework  "))
        #expect(try store.listing().first?.title == "Arithmetic  homework")
        #expect(try store.listing().first?.named == true)
        #expect(try store.listing(search: "homework").map(\.id) == [id], "a name is searched too")
        #expect(try store.sessions().first?.title == "Arithmetic  homework", "the shell's list shows it too")
        #expect(try store.rename(session: id, to: String(repeating: "x", count: 500)))
        #expect(try store.listing().first?.title.count == 60, "shown shortened")
        #expect(try store.rename(session: id, to: ""))
        #expect(try store.listing().first?.title == "what is 6*7")
        #expect(try store.rename(session: "nope", to: "x") == false)
        // A "character" may carry any number of marks: the name is cut by Unicode scalars.
        #expect(try store.rename(session: id, to: "A" + String(repeating: "\u{301}", count: 400_000)))
        #expect(try store.listing().first?.title.unicodeScalars.count == 60)
        #expect(try store.listing(search: String(repeating: "\u{301}", count: 100_000)).isEmpty)
    }

    @Test func aMatchIsShownWhereItIsInALongMessage() throws {
        let store = try HistoryStore(path: path)
        let long =
            String(repeating: "lorem ipsum ", count: 50) + "the PLUMBER comes at nine\n"
            + String(repeating: "x", count: 500)
        let id = try conversation(store, [long], at: 1000)
        let match = try #require(try store.listing(search: "plumber").first?.match)
        #expect(match.hasPrefix("…") && match.hasSuffix("…"), "\(match)")
        #expect(match.contains("the PLUMBER comes at nine x"), "\(match)")
        #expect(match.unicodeScalars.count <= 82, "\(match)")
        #expect(try store.listing(search: "plumber").map(\.id) == [id])
    }

    @Test func aDeletionCanBeTakenBackUntilItIsPurged() throws {
        let store = try HistoryStore(path: path)
        let kept = try conversation(store, ["keep me"], at: 1000)
        let gone = try conversation(store, ["delete me"], at: 2000)
        try store.recordToolCall(
            ToolCallRecord(callID: "c", skill: "s", arguments: "{}", result: "1", error: nil, durationMilliseconds: 1),
            session: gone)
        #expect(try store.markDeleted(session: gone))
        #expect(try store.listing().map(\.id) == [kept])
        #expect(try store.sessions().map(\.id) == [kept], "gone from the shell's list too")
        #expect(try store.resume(session: gone) == nil, "and cannot be resumed")
        #expect(try store.restore(session: gone) == .restored)
        #expect(try store.restore(session: gone) == .notDeleted)
        #expect(try store.listing().map(\.id) == [gone, kept])
        #expect(try store.markDeleted(session: gone))
        // Deleted later than the cutoff: not yet.
        try store.purgeDeleted(before: Date(timeIntervalSince1970: 0))
        try store.purgeDeleted(only: [kept, "x' OR 1=1 --"])
        #expect(try store.restore(session: gone) == .restored)
        #expect(try store.markDeleted(session: gone))
        try store.purgeDeleted()
        #expect(try store.restore(session: gone) == .gone)
        for table in ["sessions", "messages", "tool_calls", "drafts", "changes", "usage", "session_use"] {
            let column = table == "sessions" ? "id" : "session"
            let rows = try store.connection.query("SELECT COUNT(*) FROM \(table) WHERE \(column) = ?", [.text(gone)])
            #expect(rows.first?.first?.integer == 0, "\(table)")
        }
        #expect(try store.messages(session: kept).count == 3)
    }
}
