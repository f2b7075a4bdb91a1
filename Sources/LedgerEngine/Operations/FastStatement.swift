package import GRDB
import GRDBSQLite
import LedgerModel

/// One of the connection's cached statements, driven through SQLite's C API: parameters bound
/// by type, columns read by position, nothing in between. GRDB's general path (an array of
/// `DatabaseValue` arguments, a `Row` copied per fetch, columns looked up by name) cost more
/// than SQLite's own work on the ledger's hot and bulk paths (docs/PERFORMANCE.md), which run
/// a few statements over and over: a purchase, a launch's deliveries, a restore's copies.
///
/// Used only on a connection GRDB serializes (inside its `read` or `write`), for the ledger's
/// own transactions too (`Database.immediateTransaction`: GRDB asks SQLite whether one is
/// open), and reset after every use, error or not.
package struct FastStatement {
    private let statement: Statement
    private let handle: SQLiteStatement
    private let connection: SQLiteConnection?

    /// A statement whose SQL is built at run time, from GRDB's statement cache.
    package init(_ db: Database, _ sql: String) throws {
        self.init(db, statement: try db.cachedStatement(sql: sql))
    }

    /// One of the ledger's numbered statements (see `LedgerSQL`).
    package init(_ db: Database, _ sql: LedgerSQL) throws {
        self.init(db, statement: try PreparedStatements.statement(sql, in: db))
    }

    private init(_ db: Database, statement: Statement) {
        self.statement = statement
        handle = statement.sqliteStatement
        connection = db.sqliteConnection
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    // MARK: - Parameters (1-based, as SQLite counts them)

    package func bind(_ index: Int32, _ value: Int64) {
        sqlite3_bind_int64(handle, index, value)
    }

    package func bind(_ index: Int32, _ value: Int64?) {
        if let value { sqlite3_bind_int64(handle, index, value) } else { sqlite3_bind_null(handle, index) }
    }

    package func bind(_ index: Int32, _ value: Int) {
        sqlite3_bind_int64(handle, index, Int64(value))
    }

    package func bind(_ index: Int32, _ value: Bool) {
        sqlite3_bind_int64(handle, index, value ? 1 : 0)
    }

    package func bind(_ index: Int32, _ value: String?) {
        guard let value else {
            sqlite3_bind_null(handle, index)
            return
        }
        // With its length: a NUL inside the text is kept, as `Columns.string` reads it back
        // (a row's image encodes every byte).
        _ = value.withCString { sqlite3_bind_text(handle, index, $0, Int32(value.utf8.count), Self.transient) }
    }

    package func bind(_ index: Int32, _ value: [UInt8]) {
        _ = value.withUnsafeBytes { sqlite3_bind_blob(handle, index, $0.baseAddress, Int32($0.count), Self.transient) }
    }

    /// GRDB's `StatementArguments`, for the statements whose parameters are built at run time.
    package func bind(_ arguments: StatementArguments) throws {
        try statement.setArguments(arguments)
    }

    /// SQLite copies the bytes before the call returns.
    private static let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)

    // MARK: - Running

    /// Runs a statement that returns no rows.
    package func execute() throws {
        defer { sqlite3_reset(handle) }
        let code = sqlite3_step(handle)
        guard code == SQLITE_DONE || code == SQLITE_ROW else { throw failure(code) }
    }

    /// Calls `body` with each row, in order.
    package func forEachRow(_ body: (Columns) throws -> Void) throws {
        defer { sqlite3_reset(handle) }
        while true {
            let code = sqlite3_step(handle)
            if code == SQLITE_DONE { return }
            guard code == SQLITE_ROW else { throw failure(code) }
            try body(Columns(handle: handle))
        }
    }

    /// The first row, decoded; `nil` when there is none.
    package func first<T>(_ decode: (Columns) throws -> T) throws -> T? {
        defer { sqlite3_reset(handle) }
        let code = sqlite3_step(handle)
        if code == SQLITE_DONE { return nil }
        guard code == SQLITE_ROW else { throw failure(code) }
        return try decode(Columns(handle: handle))
    }

    /// Every row, decoded.
    package func all<T>(_ decode: (Columns) throws -> T) throws -> [T] {
        var values: [T] = []
        try forEachRow { values.append(try decode($0)) }
        return values
    }

    private func failure(_ code: Int32) -> DatabaseError {
        let extended = connection.map { sqlite3_extended_errcode($0) } ?? code
        let message = connection.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) }
        return DatabaseError(resultCode: ResultCode(rawValue: extended), message: message, sql: statement.sql)
    }

    /// The columns of the current row, by position (0-based, as SQLite counts them).
    package struct Columns {
        package let handle: SQLiteStatement

        package func isNull(_ index: Int32) -> Bool {
            sqlite3_column_type(handle, index) == SQLITE_NULL
        }

        package func int64(_ index: Int32) -> Int64 {
            sqlite3_column_int64(handle, index)
        }

        package func optionalInt64(_ index: Int32) -> Int64? {
            isNull(index) ? nil : sqlite3_column_int64(handle, index)
        }

        package func int(_ index: Int32) -> Int {
            Int(sqlite3_column_int64(handle, index))
        }

        package func optionalInt(_ index: Int32) -> Int? {
            isNull(index) ? nil : Int(sqlite3_column_int64(handle, index))
        }

        package func bool(_ index: Int32) -> Bool {
            sqlite3_column_int64(handle, index) != 0
        }

        package func string(_ index: Int32) -> String {
            guard let text = sqlite3_column_text(handle, index) else { return "" }
            let count = Int(sqlite3_column_bytes(handle, index))
            return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
        }

        package func optionalString(_ index: Int32) -> String? {
            isNull(index) ? nil : string(index)
        }

        package func blob(_ index: Int32) -> [UInt8] {
            let count = Int(sqlite3_column_bytes(handle, index))
            guard let bytes = sqlite3_column_blob(handle, index), count > 0 else { return [] }
            return [UInt8](UnsafeRawBufferPointer(start: bytes, count: count))
        }
    }
}
