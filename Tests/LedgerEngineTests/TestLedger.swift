import Foundation
import GRDB
import LedgerTestSupport
import LedgerTesting

@testable import LedgerEngine
@testable import SimulatedStore

/// A ledger file as an older build wrote it: only `migrations` applied (the caller adds rows,
/// closes it, and opens it with `Ledger.open` to migrate it).
func olderLedger(at path: String, migrations: [Migration]) throws -> DatabaseQueue {
    let old = try DatabaseQueue(path: path)
    try old.writeWithoutTransaction { db in
        try db.execute(sql: "PRAGMA journal_mode = WAL")
        try db.execute(sql: "PRAGMA application_id = \(LedgerFile.applicationID)")
    }
    var migrator = DatabaseMigrator()
    for migration in migrations {
        migrator.registerMigration(migration.identifier) { db in try db.execute(sql: migration.sql) }
    }
    try migrator.migrate(old)
    return old
}
