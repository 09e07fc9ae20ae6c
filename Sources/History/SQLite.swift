import CSQLite
import Foundation

/// Why the history database cannot be used: the file and SQLite's words.
package struct StoreError: Error, CustomStringConvertible, Sendable {
    package let message: String
    /// The database file is damaged (and is left untouched).
    package var isDamaged = false
    package var description: String { message }

    package init(message: String, isDamaged: Bool = false) {
        self.message = message
        self.isDamaged = isDamaged
    }
}

/// A value bound to or read from a statement.
enum SQLValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)

    var text: String? {
        if case .text(let value) = self { return value }
        return nil
    }

    var integer: Int64? {
        if case .integer(let value) = self { return value }
        return nil
    }

    var real: Double? {
        switch self {
        case .real(let value): return value
        case .integer(let value): return Double(value)
        default: return nil
        }
    }
}

/// A thin, serialised SQLite connection.
///
/// - Important: `@unchecked Sendable` is safe because the connection pointer is only used inside `lock`, so no two
///   threads ever use it at once, and it is closed in `deinit` when nothing else can reach it.
final class SQLiteConnection: @unchecked Sendable {
    private let handle: OpaquePointer
    private let lock = NSLock()
    let path: String

    init(path: String) throws(StoreError) {
        var pointer: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX
        guard sqlite3_open_v2(path, &pointer, flags, nil) == SQLITE_OK, let pointer else {
            let reason = pointer.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            if let pointer { sqlite3_close(pointer) }
            throw StoreError(message: "cannot open \(path): \(reason)")
        }
        handle = pointer
        self.path = path
        // Another process's write transaction is waited for briefly; a write that still cannot go through fails,
        // and the shell keeps it in memory and says so (see HistoryJournal) rather than freezing.
        sqlite3_busy_timeout(handle, 250)
    }

    deinit { sqlite3_close(handle) }

    /// Runs statements that return nothing (several separated by `;` allowed when there are no parameters).
    func execute(_ sql: String, _ parameters: [SQLValue] = []) throws(StoreError) {
        if parameters.isEmpty {
            lock.lock()
            defer { lock.unlock() }
            var error: UnsafeMutablePointer<CChar>?
            guard sqlite3_exec(handle, sql, nil, nil, &error) == SQLITE_OK else {
                let message = error.map { String(cString: $0) } ?? "unknown error"
                sqlite3_free(error)
                throw StoreError(message: "\(path): \(message)")
            }
            return
        }
        _ = try query(sql, parameters)
    }

    /// Runs `sql` (statements without parameters) as one transaction: all of it, or — rolled back before another
    /// thread can write — none of it.
    func transaction(_ sql: String) throws(StoreError) {
        lock.lock()
        defer { lock.unlock() }
        var error: UnsafeMutablePointer<CChar>?
        guard sqlite3_exec(handle, "BEGIN IMMEDIATE; " + sql + "; COMMIT;", nil, nil, &error) == SQLITE_OK else {
            let message = error.map { String(cString: $0) } ?? "unknown error"
            sqlite3_free(error)
            if sqlite3_get_autocommit(handle) == 0 { sqlite3_exec(handle, "ROLLBACK", nil, nil, nil) }
            throw StoreError(message: "\(path): \(message)")
        }
    }

    /// Runs one statement and returns its rows.
    func query(_ sql: String, _ parameters: [SQLValue] = []) throws(StoreError) -> [[SQLValue]] {
        lock.lock()
        defer { lock.unlock() }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            throw StoreError(message: "\(path): \(String(cString: sqlite3_errmsg(handle)))")
        }
        defer { sqlite3_finalize(statement) }
        for (index, value) in parameters.enumerated() {
            let position = Int32(index + 1)
            switch value {
            case .null: sqlite3_bind_null(statement, position)
            case .integer(let number): sqlite3_bind_int64(statement, position, number)
            case .real(let number): sqlite3_bind_double(statement, position, number)
            case .text(let text): sqlite3_bind_text(statement, position, text, -1, skillhost_sqlite_transient())
            }
        }
        var rows: [[SQLValue]] = []
        while true {
            let status = sqlite3_step(statement)
            if status == SQLITE_DONE { break }
            guard status == SQLITE_ROW else {
                throw StoreError(message: "\(path): \(String(cString: sqlite3_errmsg(handle)))")
            }
            var row: [SQLValue] = []
            for column in 0..<sqlite3_column_count(statement) {
                switch sqlite3_column_type(statement, column) {
                case SQLITE_INTEGER: row.append(.integer(sqlite3_column_int64(statement, column)))
                case SQLITE_FLOAT: row.append(.real(sqlite3_column_double(statement, column)))
                case SQLITE_NULL: row.append(.null)
                default:
                    row.append(sqlite3_column_text(statement, column).map { .text(String(cString: $0)) } ?? .null)
                }
            }
            rows.append(row)
        }
        return rows
    }
}
