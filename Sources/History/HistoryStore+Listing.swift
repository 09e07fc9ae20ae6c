import Foundation

/// A conversation as the browser's list shows it.
package struct ConversationListing: Sendable, Equatable {
    package let id: String
    /// The name the person gave it, else its first message (shortened).
    package let title: String
    /// Whether the person named it.
    package let named: Bool
    package let started: Date
    /// When its last message was written.
    package let updated: Date
    /// The person's messages.
    package let turns: Int
    /// For a search: the first message that matched, around the match.
    package let match: String?
}

extension HistoryStore {
    /// The longest name a conversation takes, in characters.
    package static let titleLimit = 120
    /// The longest search, in characters.
    package static let searchLimit = 200

    /// The conversations with something said, most recently active first, at most `limit`; with `search`, only
    /// those whose name or messages (the person's and the answers) contain it, ignoring ASCII case.
    package func listing(search: String? = nil, limit: Int = 200) throws(StoreError) -> [ConversationListing] {
        // Cut by Unicode scalars: a "character" may be a base with any number of marks on it.
        let search = search.map { Self.scalars($0, Self.searchLimit) }
        let pattern = search.map { "%" + Self.likeEscaped($0) + "%" }
        let matching = "m.session = s.id AND m.role IN ('user', 'assistant') AND m.content LIKE ?1 ESCAPE '\\'"
        let rows = try connection.query(
            """
            SELECT s.id, s.started, s.title,
                   (SELECT content FROM messages m WHERE m.session = s.id AND m.role = 'user' ORDER BY sequence LIMIT 1),
                   (SELECT COUNT(*) FROM messages m WHERE m.session = s.id AND m.role = 'user') AS turns,
                   COALESCE((SELECT MAX(created) FROM messages m WHERE m.session = s.id), s.started) AS updated,
                   \(pattern == nil ? "NULL" : "(SELECT content FROM messages m WHERE \(matching) ORDER BY sequence LIMIT 1)")
            FROM sessions s
            WHERE s.deleted IS NULL AND turns > 0
              \(pattern == nil ? "" : "AND (s.title LIKE ?1 ESCAPE '\\' OR EXISTS (SELECT 1 FROM messages m WHERE \(matching)))")
            ORDER BY updated DESC LIMIT \(max(1, min(limit, 1000)))
            """, pattern.map { [.text($0)] } ?? [])
        return rows.map { row in
            let named = row[2].text.map { !$0.isEmpty } ?? false
            let first = row[3].text ?? ""
            return ConversationListing(
                id: row[0].text ?? "", title: Self.shortened(named ? row[2].text ?? "" : first, 60), named: named,
                started: Date(timeIntervalSince1970: row[1].real ?? 0),
                updated: Date(timeIntervalSince1970: row[5].real ?? row[1].real ?? 0), turns: Int(row[4].integer ?? 0),
                match: search.flatMap { search in row[6].text.map { Self.excerpt($0, around: search) } })
        }
    }

    /// Names conversation `id` (an empty name gives it back its first message as its name). Returns false when
    /// there is no such conversation.
    package func rename(session id: String, to title: String) throws(StoreError) -> Bool {
        guard try hasSession(id) else { return false }
        let name = Self.cleanTitle(title)
        try connection.execute(
            "UPDATE sessions SET title = ? WHERE id = ?", [name.isEmpty ? .null : .text(name), .text(id)])
        return true
    }

    /// A name as kept: one line, no control characters, at most `titleLimit` Unicode scalars.
    package static func cleanTitle(_ title: String) -> String {
        let line = String(
            String.UnicodeScalarView(
                title.unicodeScalars.prefix(titleLimit * 4).map {
                    CharacterSet.controlCharacters.contains($0) ? " " : $0
                }))
        return scalars(line.trimmingCharacters(in: .whitespaces), titleLimit)
    }

    /// `text` cut to at most `limit` Unicode scalars (a character may hold any number of them).
    static func scalars(_ text: String, _ limit: Int) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.prefix(limit)))
    }

    /// Deletes conversation `id` for the moment: it leaves every list and cannot be opened; `restore` brings it
    /// back until `purgeDeleted` removes it for good. Returns false when there is no such conversation.
    package func markDeleted(session id: String) throws(StoreError) -> Bool {
        guard try hasSession(id) else { return false }
        try connection.execute("UPDATE sessions SET deleted = ? WHERE id = ?", [Self.now(), .text(id)])
        return true
    }

    /// What `restore` found.
    package enum Restoring: Sendable, Equatable {
        case restored
        /// It is there and was not deleted.
        case notDeleted
        /// There is no such conversation (any more).
        case gone
    }

    /// Takes back `markDeleted`.
    package func restore(session id: String) throws(StoreError) -> Restoring {
        let rows = try connection.query("SELECT deleted IS NOT NULL FROM sessions WHERE id = ?", [.text(id)])
        guard let deleted = rows.first?.first?.integer else { return .gone }
        guard deleted != 0 else { return .notDeleted }
        try connection.execute("UPDATE sessions SET deleted = NULL WHERE id = ?", [.text(id)])
        return .restored
    }

    /// Removes for good, from every table and in one transaction, the conversations deleted (`markDeleted`) before
    /// `cutoff` (all of them without one), or `only` those of them (ids of letters, digits, '-' and '_'; others are
    /// ignored).
    package func purgeDeleted(before cutoff: Date? = nil, only ids: [String]? = nil) throws(StoreError) {
        // Numbers this code formats and ids of known characters: no other text goes into the statement.
        let safe = ids?.filter { id in
            !id.isEmpty && id.utf8.count <= 64
                && id.utf8.allSatisfy {
                    $0 == 45 || $0 == 95 || (48...57).contains($0) || (65...90).contains($0) || (97...122).contains($0)
                }
        }
        if let safe, safe.isEmpty { return }
        let doomed =
            "SELECT id FROM sessions WHERE deleted IS NOT NULL"
            + (cutoff.map { " AND deleted < \($0.timeIntervalSince1970)" } ?? "")
            + (safe.map { " AND id IN (" + $0.map { "'\($0)'" }.joined(separator: ", ") + ")" } ?? "")
        let statements =
            ["messages", "tool_calls", "usage", "drafts", "changes", "session_use"].map {
                "DELETE FROM \($0) WHERE session IN (\(doomed))"
            } + ["DELETE FROM sessions WHERE id IN (\(doomed))"]
        try connection.transaction(statements.joined(separator: "; "))
    }

    /// `text` for a LIKE pattern: its wildcards and the escape character taken literally.
    static func likeEscaped(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%")
            .replacingOccurrences(of: "_", with: "\\_")
    }

    /// One line of at most `limit` Unicode scalars.
    static func shortened(_ text: String, _ limit: Int) -> String {
        let line = String(
            String.UnicodeScalarView(
                text.unicodeScalars.prefix(limit + 1).map { CharacterSet.newlines.contains($0) ? " " : $0 }))
        return line.unicodeScalars.count > limit ? scalars(line, limit - 1) + "…" : line
    }

    /// Some 80 Unicode scalars of `text` around the first place it contains `search` (ASCII letter case aside, as
    /// the search itself), on one line.
    static func excerpt(_ text: String, around search: String) -> String {
        func folded(_ scalar: Unicode.Scalar) -> UInt32 {
            (65...90).contains(scalar.value) ? scalar.value + 32 : scalar.value
        }
        let scalars = Array(text.unicodeScalars.prefix(20_000))
        let values = scalars.map(folded)
        let wanted = search.unicodeScalars.map(folded)
        let start =
            wanted.isEmpty || wanted.count > values.count
            ? nil : (0...(values.count - wanted.count)).first { values[$0..<($0 + wanted.count)].elementsEqual(wanted) }
        guard let start else { return shortened(text, 80) }
        let from = max(0, start - 30)
        let to = min(scalars.count, max(start + wanted.count, from + 80))
        let piece = scalars[from..<to].map { CharacterSet.newlines.contains($0) ? " " : $0 }
        return (from > 0 ? "…" : "") + String(String.UnicodeScalarView(piece)) + (to < scalars.count ? "…" : "")
    }
}
