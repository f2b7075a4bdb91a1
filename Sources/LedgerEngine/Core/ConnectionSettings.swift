import GRDB

/// Every connection the ledger opens checks that SQLite gave it what the ledger relies on,
/// rather than assuming it: WAL, the configured `synchronous`, foreign keys. (The busy handler is
/// `LockWait`'s, which `PRAGMA busy_timeout` cannot show.)
enum ConnectionSettings {
    struct Mismatch: Error, CustomStringConvertible {
        let description: String
    }

    static func check(_ db: Database, durability: Durability) throws {
        let journalMode = try String.fetchOne(db, sql: "PRAGMA journal_mode") ?? ""
        let synchronous = try Int.fetchOne(db, sql: "PRAGMA synchronous") ?? -1
        let foreignKeys = try Bool.fetchOne(db, sql: "PRAGMA foreign_keys") ?? false
        var wrong: [String] = []
        if journalMode.lowercased() != "wal" { wrong.append("journal_mode is \(journalMode), not wal") }
        if synchronous != durability.synchronousValue {
            wrong.append("synchronous is \(synchronous), not \(durability.synchronousValue)")
        }
        if !foreignKeys { wrong.append("foreign keys are off") }
        guard wrong.isEmpty else {
            throw Mismatch(description: "connection settings not applied: " + wrong.joined(separator: ", "))
        }
    }
}
