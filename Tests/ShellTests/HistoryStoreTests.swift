import Agent
import Foundation
import TestSupport
import Testing

@testable import Shell

/// The SQLite history: schema, migrations, messages as they are produced, and resuming a killed turn.
struct HistoryStoreTests {
    let path = Paths.temporaryDirectory("store") + "/history.db"

    @Test func storesMessagesInWALModeWithAVersionedSchema() throws {
        let store = try HistoryStore(path: path)
        #expect(store.schemaVersion == HistoryStore.migrations.count)
        #expect(try store.connection.query("PRAGMA journal_mode").first?.first?.text == "wal")
        let id = try store.createSession(model: "offline router")
        var conversation = Conversation(system: "sys")
        conversation.append(Message(role: .user, content: "what is 2+2"))
        conversation.append(
            Message(
                role: .assistant, content: "",
                toolCalls: [ToolCall(id: "c1", name: "calculator", arguments: #"{"expression":"2+2"}"#)]))
        conversation.append(Message(role: .tool, content: "4", toolCallID: "c1"))
        conversation.append(Message(role: .assistant, content: "4."))
        for message in conversation.messages { try store.append(message, session: id) }
        // A second connection (another process) sees everything.
        let reopened = try HistoryStore(path: path)
        #expect(try reopened.messages(session: id) == conversation.messages)
        #expect(try reopened.sessions().map(\.title) == ["what is 2+2"])
        #expect(try reopened.sessions().first?.messageCount == 5)
    }

    /// Other users cannot read the history, whatever the umask; an older, readable one is tightened with a notice.
    @Test func theHistoryIsPrivateToTheUser() throws {
        func mode(_ path: String) -> Int {
            ((try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions]) as? Int) ?? -1
        }
        let previous = umask(0o022)
        defer { umask(previous) }
        let folder = Paths.temporaryDirectory("private") + "/skillhost"
        let store = try HistoryStore(path: folder + "/history.db")
        _ = try store.createSession(model: "m")
        #expect(mode(folder) == 0o700)
        #expect(mode(folder + "/history.db") == 0o600)
        #expect(mode(folder + "/history.db-wal") == 0o600)
        #expect(store.permissionNotices.isEmpty)

        let old = Paths.temporaryDirectory("readable")
        #expect(chmod(old, 0o755) == 0)
        #expect(
            FileManager.default.createFile(
                atPath: old + "/history.db", contents: nil, attributes: [.posixPermissions: 0o644]))
        let tightened = try HistoryStore(path: old + "/history.db")
        #expect(
            tightened.permissionNotices == [
                "tightened the permissions of \(old) from 755 to 700: other users could read it",
                "tightened the permissions of \(old)/history.db from 644 to 600: other users could read it",
            ])
        #expect(mode(old) == 0o700 && mode(old + "/history.db") == 0o600)
    }

    @Test func refusesADatabaseFromANewerVersion() throws {
        _ = try HistoryStore(path: path)
        let connection = try SQLiteConnection(path: path)
        try connection.execute("PRAGMA user_version = 99")
        #expect(throws: StoreError.self) { try HistoryStore(path: path) }
        do { _ = try HistoryStore(path: path) } catch {
            #expect(
                error.description
                    == "\(path) was written by a newer skillhost (schema 99, this one knows 2); update skillhost or move the file away"
            )
        }
    }

    @Test func migratesAnOlderSchema() throws {
        let connection = try SQLiteConnection(path: path)
        try connection.execute("BEGIN; \(HistoryStore.migrations[0]) PRAGMA user_version = 1; COMMIT;")
        let store = try HistoryStore(path: path)
        #expect(store.schemaVersion == 2)
        try store.setSetting("disabled_skills", "[\"gcd\"]")
        #expect(try store.setting("disabled_skills") == "[\"gcd\"]")
    }

    @Test func resumingAKilledTurnKeepsWhatWasShown() throws {
        let store = try HistoryStore(path: path)
        let id = try store.createSession(model: "m")
        var conversation = Conversation(system: "sys")
        conversation.append(Message(role: .user, content: "two calls"))
        conversation.append(
            Message(
                role: .assistant, content: "",
                toolCalls: [
                    ToolCall(id: "a", name: "calculator", arguments: "{}"),
                    ToolCall(id: "b", name: "clock_now", arguments: "{}"),
                ]))
        for message in conversation.messages { try store.append(message, session: id) }
        // The first call finished and was shown; then the process was killed before results were appended.
        try store.recordToolCall(
            ToolCallRecord(
                callID: "a", skill: "calculator", arguments: "{}", result: "60", error: nil, durationMilliseconds: 0.4),
            session: id)
        try store.saveDraft("Partial ans", session: id)
        let restored = try store.conversation(session: id)
        #expect(
            restored.messages.map(\.content).suffix(3) == [
                "60", "error: interrupted before it ran", "Partial ans\n[interrupted]",
            ])
        #expect(restored.unansweredToolCalls.isEmpty)
    }
}
