import Agent
import Foundation
import SkillHost
import SkillJSON

/// A past session, for `skillhost sessions` and `/sessions`.
package struct SessionSummary: Sendable, Equatable {
    package let id: String
    package let started: Date
    package let model: String
    /// The conversation's messages (the person's, the model's and the calls' results; not the system prompt):
    /// 0 for a shell opened and closed without a word.
    package let messageCount: Int
    /// The first user message, shortened.
    package let title: String
    /// The person's messages: the conversation's turns as a person counts them.
    package var turns = 0
}

/// One recorded skill call (for `/trace` and for resuming a turn that was killed mid-way).
package struct ToolCallRecord: Sendable, Equatable {
    package let callID: String
    package let skill: String
    package let arguments: String
    package let result: String?
    package let error: String?
    package let durationMilliseconds: Double

    package init(
        callID: String, skill: String, arguments: String, result: String?, error: String?,
        durationMilliseconds: Double
    ) {
        self.callID = callID
        self.skill = skill
        self.arguments = arguments
        self.result = result
        self.error = error
        self.durationMilliseconds = durationMilliseconds
    }
}

/// The persistent history: `$XDG_DATA_HOME/skillhost/history.db`, SQLite in WAL mode. Every message, tool call,
/// draft of a streaming answer and token count is committed as it is produced, so `kill -9` loses nothing that
/// was shown. The schema is versioned (`PRAGMA user_version`) and migrated forward on open.
package final class HistoryStore: Sendable {
    let connection: SQLiteConnection

    /// Schema migrations, in order; `user_version` is the number applied.
    static let migrations: [String] = [
        """
        CREATE TABLE sessions (id TEXT PRIMARY KEY, started REAL NOT NULL, model TEXT NOT NULL);
        CREATE TABLE messages (session TEXT NOT NULL REFERENCES sessions(id), sequence INTEGER NOT NULL,
            role TEXT NOT NULL, content TEXT NOT NULL, tool_calls TEXT, tool_call_id TEXT,
            is_error INTEGER NOT NULL DEFAULT 0, created REAL NOT NULL, PRIMARY KEY (session, sequence));
        CREATE TABLE tool_calls (session TEXT NOT NULL, call_id TEXT NOT NULL, skill TEXT NOT NULL,
            arguments TEXT NOT NULL, result TEXT, error TEXT, duration_ms REAL NOT NULL, created REAL NOT NULL,
            PRIMARY KEY (session, call_id));
        CREATE TABLE usage (session TEXT NOT NULL, prompt_tokens INTEGER NOT NULL,
            completion_tokens INTEGER NOT NULL, created REAL NOT NULL);
        CREATE TABLE drafts (session TEXT PRIMARY KEY, text TEXT NOT NULL);
        """,
        """
        CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        """,
        """
        CREATE TABLE changes (session TEXT NOT NULL, after INTEGER NOT NULL, skill TEXT NOT NULL, call TEXT NOT NULL,
            undo TEXT, created REAL NOT NULL);
        """,
        """
        CREATE TABLE session_use (session TEXT PRIMARY KEY, tool_calls INTEGER NOT NULL);
        """,
        // A name the person gave a conversation, and when they deleted it (gone for good a moment later).
        """
        ALTER TABLE sessions ADD COLUMN title TEXT;
        ALTER TABLE sessions ADD COLUMN deleted REAL;
        """,
    ]

    /// What opening had to tighten (files other users could read), one sentence each; the shell shows them.
    package let permissionNotices: [String]

    /// Opens (creating the file and folder if needed) and migrates the database.
    package init(path: String) throws(StoreError) {
        // The history is the user's alone: folder 0700, files 0600 (SQLite gives its -wal and -shm files the
        // database's permissions), whatever the umask; older, wider ones are tightened with a notice.
        var notices: [String?] = []
        do {
            notices.append(try PrivateFiles.directory((path as NSString).deletingLastPathComponent))
        } catch {
            throw StoreError(message: "cannot create the folder for \(path): \(error.localizedDescription)")
        }
        notices.append(PrivateFiles.file(path, create: true))
        for suffix in ["-wal", "-shm"] { notices.append(PrivateFiles.file(path + suffix, create: false)) }
        permissionNotices = notices.compactMap { $0 }
        connection = try SQLiteConnection(path: path)
        // A damaged file is not written into (that could lose what it still holds): say how to recover instead.
        // A healthy file that cannot be used — a read-only folder or file, a lock — is said to be what it is.
        var check: [String]
        do { check = try connection.query("PRAGMA quick_check").map { $0.first?.text ?? "" } } catch {
            // SQLite's own word for a damaged file; anything else is something other than damage.
            let damage = ["malformed", "not a database", "corrupt"].contains { error.message.contains($0) }
            guard damage else { throw Self.unusable(path, error) }
            check = [error.message]
        }
        guard check == ["ok"] else {
            throw StoreError(
                message: "\(path) is damaged (quick_check: \(check.prefix(3).joined(separator: "; "))); it was left "
                    + "as it is and nothing is saved to it. Recover what it holds with: sqlite3 \(path) .recover | "
                    + "sqlite3 \(path).recovered — then move it away (mv \(path) \(path).damaged) to start a new one",
                isDamaged: true)
        }
        try connection.execute("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;")
        let version = Int(try connection.query("PRAGMA user_version").first?.first?.integer ?? 0)
        guard version <= Self.migrations.count else {
            throw StoreError(
                message: "\(path) was written by a newer skillhost (schema \(version), this one knows "
                    + "\(Self.migrations.count)); update skillhost or move the file away")
        }
        for (index, migration) in Self.migrations.enumerated() where index >= version {
            try connection.execute("BEGIN; \(migration) PRAGMA user_version = \(index + 1); COMMIT;")
        }
    }

    /// Why a file that could not even be checked cannot be used: the folder or the file is read-only, another
    /// program holds it locked, or SQLite's own words — never advice to move a healthy history away.
    static func unusable(_ path: String, _ error: StoreError) -> StoreError {
        let folder = (path as NSString).deletingLastPathComponent
        for (place, what) in [(folder, "its folder \(folder)"), (path, "the file")] where access(place, W_OK) != 0 {
            let reason =
                errno == EROFS
                ? "is on a read-only file system" : "cannot be written (\(String(cString: strerror(errno))))"
            return StoreError(
                message: "the history \(path) cannot be used: \(what) \(reason); the file itself was not changed. Make "
                    + "it writable, or set XDG_DATA_HOME to a writable folder")
        }
        if error.message.contains("locked") || error.message.contains("busy") {
            return StoreError(
                message: "the history \(path) is locked by another program (\(error.message)); close it and start "
                    + "again — the file was not changed")
        }
        return StoreError(message: "the history \(path) cannot be read: \(error.message); the file was not changed")
    }

    /// The schema version in the file.
    package var schemaVersion: Int { Int((try? connection.query("PRAGMA user_version").first?.first?.integer) ?? 0) }

    static func now() -> SQLValue { .real(Date().timeIntervalSince1970) }

    /// A new session id (8 hex digits).
    package static func newSessionID() -> String {
        String(UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(8)).lowercased()
    }

    /// Starts a session and returns its id.
    package func createSession(model: String) throws(StoreError) -> String {
        let id = Self.newSessionID()
        try createSession(id: id, model: model)
        return id
    }

    /// Records a session that starts now (again without harm: the first record stays).
    package func createSession(id: String, model: String) throws(StoreError) {
        try connection.execute(
            "INSERT OR IGNORE INTO sessions (id, started, model) VALUES (?, ?, ?)",
            [.text(id), Self.now(), .text(model)])
    }

    /// The database file.
    package var path: String { connection.path }

    /// Stores a message (idempotent per sequence number) and clears the draft when it is the assistant's.
    package func append(_ message: Message, session: String) throws(StoreError) {
        let calls: SQLValue =
            message.toolCalls.isEmpty
            ? .null
            : .text(
                JSONValue.array(
                    message.toolCalls.map {
                        ["id": .string($0.id), "name": .string($0.name), "arguments": .string($0.arguments)]
                    }
                ).jsonText)
        try connection.execute(
            """
            INSERT OR REPLACE INTO messages (session, sequence, role, content, tool_calls, tool_call_id, is_error, created)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .text(session), .integer(Int64(message.sequence)), .text(message.role.rawValue), .text(message.content),
                calls, message.toolCallID.map { .text($0) } ?? .null, .integer(message.isError ? 1 : 0), Self.now(),
            ])
        if message.role == .assistant {
            try connection.execute("DELETE FROM drafts WHERE session = ?", [.text(session)])
        }
    }

    /// The answer text streamed so far in the current step (replaced on each save).
    package func saveDraft(_ text: String, session: String) throws(StoreError) {
        try connection.execute(
            "INSERT OR REPLACE INTO drafts (session, text) VALUES (?, ?)", [.text(session), .text(text)])
    }

    package func draft(session: String) throws(StoreError) -> String? {
        try connection.query("SELECT text FROM drafts WHERE session = ?", [.text(session)]).first?.first?.text
    }

    package func recordToolCall(_ record: ToolCallRecord, session: String) throws(StoreError) {
        try connection.execute(
            """
            INSERT OR REPLACE INTO tool_calls (session, call_id, skill, arguments, result, error, duration_ms, created)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .text(session), .text(record.callID), .text(record.skill), .text(record.arguments),
                record.result.map { .text($0) } ?? .null, record.error.map { .text($0) } ?? .null,
                .real(record.durationMilliseconds), Self.now(),
            ])
    }

    package func recordUsage(_ usage: Usage, session: String) throws(StoreError) {
        try connection.execute(
            "INSERT INTO usage (session, prompt_tokens, completion_tokens, created) VALUES (?, ?, ?, ?)",
            [.text(session), .integer(Int64(usage.promptTokens)), .integer(Int64(usage.completionTokens)), Self.now()])
    }

    /// Counts `calls` more skill calls of the session (a composite's steps counted), for its budgets: added, so
    /// two processes that resumed the same session both count.
    package func recordCallsUsed(_ calls: Int, session: String) throws(StoreError) {
        try connection.execute(
            "INSERT INTO session_use (session, tool_calls) VALUES (?, ?) ON CONFLICT(session) DO UPDATE SET "
                + "tool_calls = min(tool_calls + excluded.tool_calls, 1000000000000)",
            [.text(session), .integer(Int64(calls))])
    }

    /// What the session has used so far, for its budgets when it is resumed: its tokens, and its skill calls (the
    /// count kept, or at least the calls recorded — a history written before the count was kept).
    package func use(session: String) throws(StoreError) -> (toolCalls: Int, promptTokens: Int, completionTokens: Int) {
        let kept =
            try connection.query(
                "SELECT tool_calls FROM session_use WHERE session = ?", [.text(session)]
            ).first?[0].integer ?? 0
        let recorded =
            try connection.query(
                "SELECT COUNT(*) FROM tool_calls WHERE session = ?", [.text(session)]
            ).first?[0].integer ?? 0
        let tokens = try connection.query(
            // TOTAL, not SUM: a sum past 2^63 (an edited file) is a number here, not an error.
            "SELECT MIN(TOTAL(prompt_tokens), 1e15), MIN(TOTAL(completion_tokens), 1e15) FROM usage WHERE session = ?",
            [.text(session)]
        ).first
        // Range-checked: the file may have been edited (a count of 2^63 trapped the addition that followed).
        func bounded(_ value: Int64) -> Int { Int(min(max(value, 0), 1_000_000_000_000_000)) }
        func total(_ value: SQLValue?) -> Int64 { Int64(max(0, min(value?.real ?? Double(value?.integer ?? 0), 1e15))) }
        return (bounded(max(kept, recorded)), bounded(total(tokens?[0])), bounded(total(tokens?[1])))
    }

    /// Forgets the session's messages from `sequence` on (`/rewind`), with the draft of an unfinished answer.
    package func truncate(session: String, from sequence: Int) throws(StoreError) {
        try connection.execute(
            "DELETE FROM messages WHERE session = ? AND sequence >= ?", [.text(session), .integer(Int64(sequence))])
        try connection.execute("DELETE FROM drafts WHERE session = ?", [.text(session)])
        try connection.execute(
            "DELETE FROM changes WHERE session = ? AND after >= ?", [.text(session), .integer(Int64(sequence))])
    }

    /// Stores a change a call made (with its undo), for rewinding a resumed session.
    package func recordChange(_ change: ChangeRecord, session: String) throws(StoreError) {
        try connection.execute(
            "INSERT INTO changes (session, after, skill, call, undo, created) VALUES (?, ?, ?, ?, ?, ?)",
            [
                .text(session), .integer(Int64(change.after)), .text(change.skill), .text(change.call),
                change.undo.map { .text($0.json.jsonText) } ?? .null, Self.now(),
            ])
    }

    /// Forgets a change that was undone (the newest record of it), so a later rewind does not undo it again.
    package func forgetChange(_ change: ChangeRecord, session: String) throws(StoreError) {
        try connection.execute(
            "DELETE FROM changes WHERE rowid = (SELECT rowid FROM changes WHERE session = ? AND after = ? AND call = ? "
                + "ORDER BY rowid DESC LIMIT 1)", [.text(session), .integer(Int64(change.after)), .text(change.call)])
    }

    /// The session's changes, oldest first. An undo the file holds but this skillhost cannot read counts as none
    /// (the rewind then says it cannot be undone).
    package func changes(session: String) throws(StoreError) -> [ChangeRecord] {
        try connection.query(
            "SELECT after, skill, call, undo FROM changes WHERE session = ? ORDER BY rowid", [.text(session)]
        ).map { row in
            ChangeRecord(
                after: Int(row[0].integer ?? 0), skill: row[1].text ?? "", call: row[2].text ?? "",
                undo: row[3].text.flatMap { try? JSONValue(parsing: $0) }.flatMap { UndoAction(json: $0) })
        }
    }

    /// All sessions, newest first.
    package func sessions() throws(StoreError) -> [SessionSummary] {
        try connection.query(
            """
            SELECT s.id, s.started, s.model,
                   (SELECT COUNT(*) FROM messages m WHERE m.session = s.id AND m.role != 'system'),
                   COALESCE(s.title, (SELECT content FROM messages m WHERE m.session = s.id AND m.role = 'user'
                                      ORDER BY sequence LIMIT 1)),
                   (SELECT COUNT(*) FROM messages m WHERE m.session = s.id AND m.role = 'user')
            FROM sessions s WHERE s.deleted IS NULL ORDER BY s.started DESC
            """
        ).map { row in
            var summary = SessionSummary(
                id: row[0].text ?? "", started: Date(timeIntervalSince1970: row[1].real ?? 0), model: row[2].text ?? "",
                messageCount: Int(row[3].integer ?? 0), title: String((row[4].text ?? "").prefix(60)))
            summary.turns = Int(row[5].integer ?? 0)
            return summary
        }
    }

    /// Whether a session with this id exists (and was not deleted).
    package func hasSession(_ id: String) throws(StoreError) -> Bool {
        try !connection.query("SELECT 1 FROM sessions WHERE id = ? AND deleted IS NULL", [.text(id)]).isEmpty
    }

    /// The session's messages in order.
    package func messages(session: String) throws(StoreError) -> [Message] {
        try connection.query(
            "SELECT sequence, role, content, tool_calls, tool_call_id, is_error FROM messages WHERE session = ? ORDER BY sequence",
            [.text(session)]
        ).map { row in
            var calls: [ToolCall] = []
            if let text = row[3].text, case .array(let items)? = try? JSONValue(parsing: text) {
                calls = items.map {
                    ToolCall(
                        id: $0["id"]?.stringValue ?? "", name: $0["name"]?.stringValue ?? "",
                        arguments: $0["arguments"]?.stringValue ?? "")
                }
            }
            return Message(
                sequence: Int(row[0].integer ?? 0), role: Role(rawValue: row[1].text ?? "") ?? .user,
                content: row[2].text ?? "", toolCalls: calls, toolCallID: row[4].text, isError: row[5].integer == 1)
        }
    }

    /// The session's recorded tool calls, oldest first.
    package func toolCalls(session: String) throws(StoreError) -> [ToolCallRecord] {
        try connection.query(
            "SELECT call_id, skill, arguments, result, error, duration_ms FROM tool_calls WHERE session = ? ORDER BY created",
            [.text(session)]
        ).map {
            ToolCallRecord(
                callID: $0[0].text ?? "", skill: $0[1].text ?? "", arguments: $0[2].text ?? "", result: $0[3].text,
                error: $0[4].text, durationMilliseconds: $0[5].real ?? 0)
        }
    }

    /// A remembered setting (e.g. the skills disabled with `/disable`).
    package func setting(_ key: String) throws(StoreError) -> String? {
        try connection.query("SELECT value FROM settings WHERE key = ?", [.text(key)]).first?.first?.text
    }

    package func setSetting(_ key: String, _ value: String) throws(StoreError) {
        try connection.execute(
            "INSERT OR REPLACE INTO settings (key, value) VALUES (?, ?)", [.text(key), .text(value)])
    }

    /// The conversation to continue session `id` with (`conversation(session:)`), what a killed turn left behind
    /// now stored as part of it. Nil when there is no such session.
    package func resume(session id: String) throws(StoreError) -> Conversation? {
        guard try hasSession(id) else { return nil }
        let restored = try conversation(session: id)
        let stored = try messages(session: id).count
        for message in restored.messages.dropFirst(stored) { try append(message, session: id) }
        return restored
    }

    /// The conversation to continue a session with: its messages, plus what a killed turn left behind — the
    /// streamed text as an interrupted answer and results of calls that finished — so the context is complete.
    package func conversation(session: String) throws(StoreError) -> Conversation {
        var conversation = Conversation()
        for message in try messages(session: session) { conversation.append(message) }
        let records = try toolCalls(session: session)
        for call in conversation.unansweredToolCalls {
            let record = records.first { $0.callID == call.id }
            let content =
                record.map { $0.result ?? "error: \($0.error ?? "unknown")" } ?? "error: interrupted before it ran"
            conversation.append(
                Message(role: .tool, content: content, toolCallID: call.id, isError: record?.result == nil))
        }
        if let draft = try draft(session: session), !draft.isEmpty {
            conversation.append(Message(role: .assistant, content: draft + "\n[interrupted]"))
        }
        return conversation
    }
}
