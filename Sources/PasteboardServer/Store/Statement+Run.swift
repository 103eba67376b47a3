import GRDB
import GRDBSQLite

/// A value bound to a statement parameter by ``Database/run(_:_:)``.
enum SQLValue {
    case integer(Int64)
    case text(String)
    case bytes([UInt8])
    case null

    static func integer(_ value: UInt64) -> SQLValue { .integer(Int64(bitPattern: value)) }
    static func integer(_ value: Int) -> SQLValue { .integer(Int64(value)) }
    static func integer(_ value: Bool) -> SQLValue { .integer(value ? 1 : 0) }
}

extension Database {
    /// Runs one of the store's own statements, prepared once and cached, with `values` bound
    /// straight through SQLite's C interface.
    ///
    /// The writes of every change go through here. GRDB's generic argument handling cost more
    /// than SQLite's work for these small rows; the SQL is the store's own and every value list
    /// matches its parameters, so the checks it makes are not needed.
    func run(_ sql: String, _ values: [SQLValue] = []) throws {
        let statement = try cachedStatement(sql: sql).sqliteStatement
        sqlite3_reset(statement)
        sqlite3_clear_bindings(statement)
        for (index, value) in zip(Int32(1)..., values) {
            let code: Int32 = switch value {
            case .integer(let number): sqlite3_bind_int64(statement, index, number)
            case .text(let text): sqlite3_bind_text(statement, index, text, -1, Self.transient)
            case .bytes(let bytes): bytes.withUnsafeBytes { sqlite3_bind_blob(statement, index, $0.baseAddress, Int32($0.count), Self.transient) }
            case .null: sqlite3_bind_null(statement, index)
            }
            guard code == SQLITE_OK else { throw error(code, sql) }
        }
        let code = sqlite3_step(statement)
        sqlite3_reset(statement)
        guard code == SQLITE_DONE else { throw error(code, sql) }
    }

    private func error(_ code: Int32, _ sql: String) -> DatabaseError {
        DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(sqliteConnection)), sql: sql)
    }

    /// `SQLITE_TRANSIENT`: SQLite copies the bytes before the call returns.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
}
