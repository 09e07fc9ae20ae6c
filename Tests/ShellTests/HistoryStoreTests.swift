import Agent
import Foundation
import SkillHost
import Synchronization
import TestSupport
import Testing

@testable import History

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
        #expect(try reopened.sessions().first?.messageCount == 4, "the system prompt is not counted")
    }

    /// Each call is kept with the arguments it ran with (from its start event) and how it ended.
    @Test func aRewindForgetsTheMessagesFromOneOn() throws {
        let store = try HistoryStore(path: path)
        let id = try store.createSession(model: "offline router")
        var conversation = Conversation(system: "sys")
        for text in ["one", "two", "three"] { conversation.append(Message(role: .user, content: text)) }
        for message in conversation.messages { try store.append(message, session: id) }
        try store.saveDraft("half an answer", session: id)
        try store.truncate(session: id, from: 3)
        #expect(try store.messages(session: id).map(\.content) == ["sys", "one"])
        #expect(try store.conversation(session: id).messages.map(\.content) == ["sys", "one"], "no draft comes back")
    }

    @Test func callsAreKeptWithTheirArguments() throws {
        let store = try HistoryStore(path: path)
        let journal = HistoryJournal(store: store) { _ in }
        let id = try store.createSession(model: "m")
        var arguments: [String: String] = [:]
        let events: [ToolCallEvent] = [
            ToolCallEvent(id: "c1", skill: "calculator", phase: .started(arguments: .value(["expression": "2+2"]))),
            ToolCallEvent(id: "c2", skill: "nope", phase: .started(arguments: .text("{not json"))),
            ToolCallEvent(id: "c1", skill: "calculator", phase: .finished(result: 4, duration: .milliseconds(2))),
            ToolCallEvent(
                id: "c2", skill: "nope",
                phase: .failed(SkillFailure(code: .unknownSkill, message: "unknown skill"), duration: .zero)),
        ]
        for event in events { journal.record(.toolCall(event), session: id, arguments: &arguments) }
        let calls = try HistoryStore(path: path).toolCalls(session: id)
        #expect(calls.map(\.arguments) == [#"{"expression":"2+2"}"#, "{not json"])
        #expect(calls.map(\.result) == ["4", nil])
        #expect(calls.map(\.error) == [nil, "unknown skill"])
        #expect(arguments.isEmpty, "an ended call's arguments are not kept in memory")
    }

    /// A write that fails (another process holds a write transaction) is said at once, kept, and saved in order
    /// once the database can be written again; nothing is lost silently.
    @Test func failedWritesAreSaidKeptAndSavedLater() throws {
        let store = try HistoryStore(path: path)
        let notices = Mutex<[String]>([])
        let journal = HistoryJournal(store: store) { line in notices.withLock { $0.append(line) } }
        journal.write(.session(id: "s1", model: "m"))
        journal.write(.message(Message(sequence: 0, role: .user, content: "first"), session: "s1"))
        // Another process takes the write lock and keeps it.
        let other = try SQLiteConnection(path: path)
        try other.execute("BEGIN IMMEDIATE")
        journal.write(.message(Message(sequence: 1, role: .assistant, content: "second"), session: "s1"))
        journal.write(.draft("thi", session: "s1"))
        journal.write(.draft("third so far", session: "s1"))  // replaces the waiting draft
        #expect(journal.unsaved == 2)
        #expect(
            notices.withLock { $0 } == [
                "history: could not save to \(path) (\(path): database is locked); kept in memory and saved as soon as "
                    + "the database can be written again"
            ], "said once, not for every write")
        try other.execute("COMMIT")
        #expect(journal.retry())
        #expect(notices.withLock { $0.last } == "history: saved again (2 entries that had waited)")
        #expect(try store.messages(session: "s1").map(\.content) == ["first", "second"])
        #expect(try store.draft(session: "s1") == "third so far", "written in order: the newest draft only")
    }

    /// A damaged file is refused, kept as it is, and the message says how to recover.
    @Test func aDamagedHistoryIsRefusedAndKept() throws {
        do {
            let store = try HistoryStore(path: path)
            let id = try store.createSession(model: "m")
            for n in 0..<200 {
                try store.append(
                    Message(sequence: n, role: .user, content: String(repeating: "x", count: 500)), session: id)
            }
        }
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        for offset in 4096..<min(bytes.count, 12288) { bytes[offset] = 0xA5 }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        do {
            _ = try HistoryStore(path: path)
            Issue.record("a damaged history was opened")
        } catch {
            #expect(error.isDamaged)
            #expect(error.message.hasPrefix("\(path) is damaged (quick_check: "))
            #expect(
                error.message.hasSuffix(
                    "sqlite3 \(path).recovered — then move it away (mv \(path) \(path).damaged) to start a new one"))
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(bytes), "the file is kept as it was")
    }

    /// A healthy history in a folder that cannot be written (a read-only mount — a read-only bind mount when the
    /// tests run as root, which permission bits do not stop — else a folder without write permission) is said to be
    /// read-only, never "damaged", and no one is told to move it away.
    @Test func aReadOnlyHistoryIsSaidToBeReadOnly() throws {
        let folder = (path as NSString).deletingLastPathComponent
        do {
            let store = try HistoryStore(path: path)
            _ = try store.createSession(model: "m")
        }
        let writable = Paths.temporaryDirectory("history-rw")
        var mounted = false
        if geteuid() == 0 {
            // The same files seen through a read-only bind mount at the history's folder.
            for name in try FileManager.default.contentsOfDirectory(atPath: folder) {
                try FileManager.default.copyItem(atPath: folder + "/" + name, toPath: writable + "/" + name)
            }
            mounted =
                system("mount --bind '\(writable)' '\(folder)' && mount -o remount,ro,bind '\(folder)'") == 0
        }
        if !mounted {
            chmod(path, 0o400)
            chmod(folder, 0o500)
        }
        defer {
            if mounted { _ = system("umount '\(folder)'") } else { chmod(folder, 0o700) }
        }
        // As root without a mount there is nothing read-only to try.
        guard mounted || geteuid() != 0 else { return }
        do {
            _ = try HistoryStore(path: path)
            Issue.record("a read-only history was opened for writing")
        } catch {
            #expect(!error.isDamaged)
            #expect(error.message.hasPrefix("the history \(path) cannot be used: "), "\(error.message)")
            #expect(error.message.contains("read-only") || error.message.contains("Permission denied"))
            #expect(!error.message.contains("damaged") && !error.message.contains("move it away"), "\(error.message)")
        }
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
                    == "\(path) was written by a newer skillhost (schema 99, this one knows 5); update skillhost or move the file away"
            )
        }
    }

    @Test func migratesAnOlderSchema() throws {
        let connection = try SQLiteConnection(path: path)
        try connection.execute("BEGIN; \(HistoryStore.migrations[0]) PRAGMA user_version = 1; COMMIT;")
        let store = try HistoryStore(path: path)
        #expect(store.schemaVersion == 5)
        try store.setSetting("disabled_skills", "[\"gcd\"]")
        #expect(try store.setting("disabled_skills") == "[\"gcd\"]")
        let undo = UndoAction(json: ["skill": "notes_delete", "arguments": ["id": 1]])
        try store.recordChange(
            ChangeRecord(after: 1, skill: "notes_add", call: "notes_add({})", undo: undo), session: "s")
        try store.recordChange(ChangeRecord(after: 3, skill: "fs_write", call: "fs_write({})", undo: nil), session: "s")
        #expect(try store.changes(session: "s").map(\.undo) == [undo, nil])
        try store.truncate(session: "s", from: 2)
        #expect(try store.changes(session: "s").map(\.skill) == ["notes_add"], "a rewind forgets the later changes")
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

/// Opening a conversation and wiring it to the history, written once for the shell, the browser and `ask`
/// (issue #65: it was written three times).
struct StoredConversationTests {
    let path = Paths.temporaryDirectory("stored") + "/history.db"

    @Test func aNewConversationIsWrittenWhenBegunAndResumedWithItsMessages() throws {
        let store = try HistoryStore(path: path)
        let notices = Mutex<[String]>([])
        let journal = HistoryJournal(store: store) { line in notices.withLock { $0.append(line) } }
        let stored = StoredConversation(journal: journal)
        #expect(try store.sessions().isEmpty, "nothing is written before it is begun")
        let agent = AgentSession(
            skills: try makeRegistry(), provider: OfflineRouter(),
            conversation: stored.conversation(systemPrompt: "sys"), onMessage: stored.onMessage,
            onChange: stored.onChange)
        stored.attach(agent)
        stored.begin(agent, model: "offline router")
        #expect(try store.sessions().map(\.id) == [stored.id])
        #expect(try store.messages(session: stored.id).map(\.content) == ["sys"])

        let resumed = try StoredConversation(resuming: stored.id, journal: journal)
        #expect(resumed.resumed?.messages.map(\.content) == ["sys"])
        #expect(resumed.conversation(systemPrompt: "other").messages.first?.content == "sys")
        #expect(notices.withLock { $0 }.isEmpty)
    }

    @Test func aConversationThatIsNotThereIsRefusedInOneSentence() throws {
        let journal = HistoryJournal(store: try HistoryStore(path: path)) { _ in }
        #expect(
            throws: StoredConversation.Refusal(
                missing: true, description: "no session nope; skillhost sessions lists them")
        ) {
            try StoredConversation(resuming: "nope", journal: journal)
        }
    }
}
