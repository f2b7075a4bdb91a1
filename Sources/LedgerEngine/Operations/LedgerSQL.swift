package import GRDB
import GRDBSQLite
import LedgerModel
import Synchronization

/// A statement the ledger runs often, numbered once, so that a connection finds its prepared
/// copy by that number. GRDB's statement cache finds a statement by its SQL, which hashes the
/// whole text at every lookup: about 8 % of a purchase cycle's instructions went there
/// (docs/PERFORMANCE.md). Declare each one as a `static let`: every value made takes a new number.
package struct LedgerSQL: Sendable {
    package let text: String
    fileprivate let number: Int

    package init(_ text: String) {
        self.text = text
        number = Self.numbers.add(1, ordering: .relaxed).oldValue
    }

    private static let numbers = Atomic<Int>(0)
}

/// The numbered statements prepared on one connection (see `LedgerSQL`), owned by the ledger
/// that opened it and found from the connection through a table the ledger attaches them to.
///
/// The ledger detaches them before it closes its connection (SQLite's `close` refuses a
/// connection with statements still open), and when it is released without being closed
/// (SQLite then closes the connection once the last statement is finalized). A connection that
/// has none (a read-only one) gets the statement from GRDB's cache instead.
///
/// Sendable by hand: its statements are used only on the connection's queue, which GRDB serializes
/// (or by `deinit`, when nothing else can use the connection), and its table of connections is
/// behind a `Mutex`.
package final class PreparedStatements: @unchecked Sendable {
    // Used only on the connection's own queue, which GRDB serializes, or by the ledger's deinit
    // when nothing else can use the connection; the lock guards the table of connections.
    // Never accessed twice at once, so Swift's run-time exclusivity check (two of them per
    // lookup, most of a lookup's cost) is left out.
    @exclusivity(unchecked) private var statements: [Statement?] = []
    private var connection: UInt?

    /// The open connections and their statements. A list, not a dictionary: a process has a
    /// few ledgers open, and hashing the key at every lookup cost more than scanning them.
    private static let attached = Mutex<[(connection: UInt, owner: PreparedStatements)]>([])

    /// Makes `db`'s connection keep its numbered statements here.
    package func attach(to db: Database) {
        guard let sqliteConnection = db.sqliteConnection else { return }
        let key = UInt(bitPattern: sqliteConnection)
        connection = key
        Self.attached.withLock { $0.append((key, self)) }
    }

    /// Finalizes the statements and detaches them from their connection.
    package func detach() {
        statements = []
        guard let connection else { return }
        self.connection = nil
        Self.attached.withLock { $0.removeAll { $0.connection == connection } }
    }

    /// `sql`'s statement on `db`'s connection, prepared on first use.
    package static func statement(_ sql: LedgerSQL, in db: Database) throws -> Statement {
        guard let connection = db.sqliteConnection.map({ UInt(bitPattern: $0) }),
            let owner = attached.withLock({ $0.first { $0.connection == connection }?.owner })
        else { return try db.cachedStatement(sql: sql.text) }
        return try owner.statement(sql, in: db)
    }

    private func statement(_ sql: LedgerSQL, in db: Database) throws -> Statement {
        if sql.number < statements.count, let statement = statements[sql.number] { return statement }
        let statement = try db.makeStatement(sql: sql.text)
        if sql.number >= statements.count {
            statements.append(contentsOf: repeatElement(nil, count: sql.number + 1 - statements.count))
        }
        statements[sql.number] = statement
        return statement
    }
}
