import Foundation
import GRDB
import LedgerModel

/// Applies the migrations a ledger lacks, all of them in one transaction: a failure at any
/// statement of any migration rolls every one back, so the file is as it was (no migration
/// left committed in `-wal`). An existing ledger's upgrade also checks the result's invariants
/// (`Ledger.invariantProblems`, what `verify()` checks after SQLite's integrity check) before it
/// commits: a ledger whose triggers were dropped or whose rows were edited is not upgraded over
/// the evidence. Foreign keys are off while the migrations run (a migration may rebuild a table
/// others reference) and checked before the commit.
enum SchemaUpgrade {
    /// Upgrades `db`'s ledger to this build's schema; returns how many migrations it applied.
    /// `vouching`: the events after the last signed head the caller vouches for, which the
    /// migration that introduced event MACs may then sign over (`Ledger.upgrade(at:vouchingForEvents:)`).
    /// - Throws: `LedgerError.upgradeFailed` (built by `path`), nothing changed.
    /// `through`: the last migration to apply (tests make older ledgers with it); all by default.
    static func apply(
        _ db: Database, path: String, checkingInvariants: Bool, vouching: ClosedRange<Int64>? = nil,
        through last: String? = nil
    ) throws -> Int {
        func pending() throws -> [Migration] {
            let applied = try appliedIdentifiers(db)
            return Migration.embedded.filter { !applied.contains($0.identifier) && $0.identifier <= last ?? "~" }
        }
        guard try !pending().isEmpty else { return 0 }
        try db.execute(sql: "PRAGMA foreign_keys = OFF")
        defer { try? db.execute(sql: "PRAGMA foreign_keys = ON") }
        var count = 0
        try db.inTransaction(.immediate) {
            // Read again under the write lock: another process may have upgraded it meanwhile.
            let pending = try pending()
            guard !pending.isEmpty else { return .commit }
            count = pending.count
            try db.execute(sql: "CREATE TABLE IF NOT EXISTS grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY)")
            for migration in pending {
                try run(migration, db, path: path, vouching: vouching)
                try db.execute(
                    sql: "INSERT INTO grdb_migrations (identifier) VALUES (?)", arguments: [migration.identifier])
            }
            if let violation = try Row.fetchOne(db, sql: "PRAGMA foreign_key_check") {
                throw LedgerError.upgradeFailed(
                    path: path,
                    reason: "a row of \(violation[0] as String? ?? "a table") names a row of "
                        + "\(violation[2] as String? ?? "another table") that is not there")
            }
            if checkingInvariants {
                let problems = try Ledger.invariantProblems(db)
                if let first = problems.first {
                    let more = problems.count > 1 ? " (and \(problems.count - 1) more)" : ""
                    throw LedgerError.upgradeFailed(
                        path: path, reason: "the upgraded ledger would not hold its invariants: \(first)\(more)")
                }
            }
            return .commit
        }
        return count
    }

    /// The migrations applied to `db`'s ledger (recorded in `grdb_migrations`, as GRDB's
    /// migrator, which made the ledgers of earlier versions, records them).
    static func appliedIdentifiers(_ db: Database) throws -> Set<String> {
        guard try db.tableExists("grdb_migrations") else { return [] }
        return try String.fetchSet(db, sql: "SELECT identifier FROM grdb_migrations")
    }

    /// One migration, statement by statement, so that a failure names its statement; then what
    /// the migration does beyond its SQL.
    private static func run(
        _ migration: Migration, _ db: Database, path: String, vouching: ClosedRange<Int64>?
    ) throws {
        let statements = try db.allStatements(sql: migration.sql)
        // Counted before it is compiled: SQLite refuses some statements (a table that exists)
        // when it compiles them.
        var number = 0
        do {
            while true {
                number += 1
                guard let statement = try statements.next() else { break }
                try statement.execute()
            }
        } catch let error as DatabaseError {
            throw LedgerError.upgradeFailed(
                path: path,
                reason: "migration \(migration.identifier) failed at its statement \(number)"
                    + (error.sql.map { " (\(oneLine($0)))" } ?? "")
                    + ": \(error.message ?? "SQLite error \(error.resultCode)")")
        }
        do {
            try afterSQL(migration, db, path: path, vouching: vouching)
        } catch let error as LedgerError {
            throw error
        } catch {
            throw LedgerError.upgradeFailed(
                path: path, reason: "migration \(migration.identifier) failed after its statements: \(error)")
        }
    }

    /// What a migration does beyond its SQL.
    private static func afterSQL(
        _ migration: Migration, _ db: Database, path: String, vouching: ClosedRange<Int64>?
    ) throws {
        switch migration.identifier {
        case "0009_signing_identity":
            // The table of the signing identity comes with the identity, in one transaction:
            // a ledger at schema 9 always has one.
            try SigningIdentity.create(db, at: Date())
        case "0010_hash_chain":
            // The history written before the chain is chained (and its head signed) with the
            // new table.
            try HashChain.adopt(db)
            try HeadSigner(interval: .zero, clock: .system, identities: IdentityCache()).sign(db, checkingTail: false)
        case "0011_event_authentication":
            // Events from now on carry MACs; the head is signed over those that do not, which it
            // covered already. Events after it were appended without a MAC, by the ledger (a
            // process killed before it signed) or by someone without the key: nothing tells
            // which, so they are signed over only when the caller vouches for exactly them.
            let signed = try checkedHead(db, path: path)
            let end = try HashChain.end(db).seq
            // The first event after the head (numbers of deleted events are not reused).
            let first =
                try Int64.fetchOne(
                    db, sql: "SELECT min(seq) FROM transaction_events WHERE seq > ?", arguments: [signed])
                ?? end
            if end > signed, vouching != first...end {
                let events = first == end ? "event \(end)" : "events \(first) to \(end)"
                throw LedgerError.upgradeFailed(
                    path: path,
                    reason: "\(events) follow the last signed head, and nothing vouches for them (the ledger's "
                        + "own, left by a process killed before it signed, or appended without its key): "
                        + "upgrade vouching for exactly them if they are the ledger's own",
                    unvouchedEvents: first...end)
            }
            try HeadSigner(interval: .zero, clock: .system, identities: IdentityCache()).sign(db, checkingTail: false)
        case "0022_authenticated_records":
            // The rows already there are the ledger's, as migration 10 trusted its history.
            try AuthenticatedRecords(db: db, key: try IdentityCache().eventKey(db)).adopt(
                AuthenticatedRecords.Table.sinceSchema22)
        case "0024_renewal_changes":
            // A new table, empty: its seal.
            try AuthenticatedRecords(db: db, key: try IdentityCache().eventKey(db)).adopt([.renewalChanges])
        case "0025_customers":
            // The price increases' MACs cover their customer from now on.
            try AuthenticatedRecords(db: db, key: try IdentityCache().eventKey(db)).restamp(
                .priceIncreases, from: .priceIncreasesBeforeCustomers)
        case "0026_apps":
            // The notifications' MACs cover their app from now on.
            try AuthenticatedRecords(db: db, key: try IdentityCache().eventKey(db)).restamp(
                .notifications, from: .notificationsBeforeApps)
        case "0028_empty_application_username":
            // The table's definition was rewritten in place: SQLite's procedure then raises the
            // schema version, so that every connection reads it again.
            let rewritten = try String.fetchOne(
                db, sql: "SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = 'transactions'")
            guard let rewritten, !rewritten.contains("application_username <> ''") else {
                throw LedgerError.upgradeFailed(
                    path: path, reason: "the transactions table's definition is not the one schema 27 made")
            }
            let version = try Int.fetchOne(db, sql: "PRAGMA schema_version") ?? 0
            try db.execute(sql: "PRAGMA schema_version = \(version + 1)")
        default:
            break
        }
    }

    /// The sequence the stored head signs (0 without one), once the head is shown to be the
    /// ledger's: its event is there with the link it signed, and the signature is the ledger's.
    /// Migration 11 signs a new head, which would erase this evidence of a history rewritten or
    /// cut before it (links carry no key before schema 11).
    private static func checkedHead(_ db: Database, path: String) throws -> Int64 {
        guard let head = try ChainHead.load(db) else { return 0 }
        let link = try Data.fetchOne(
            db, sql: "SELECT hash FROM transaction_events WHERE seq = ?", arguments: [head.sequence]
        ).map { [UInt8]($0) }
        guard link == head.hash, head.isSigned(by: try IdentityCache().identity(db).certificates) else {
            throw LedgerError.upgradeFailed(
                path: path,
                reason: "the signed head (event \(head.sequence)) does not match the history: events at or before it "
                    + "were changed, or cut off, since it was signed (verify with the previous release reports it)")
        }
        return head.sequence
    }

    /// A statement on one line, without the comments before it, at most 80 characters,
    /// control characters escaped (SQLite's text of a statement it could not compile runs to
    /// the end of the migration).
    private static func oneLine(_ sql: String) -> String {
        let code = sql.split(separator: "\n").drop { line in
            let trimmed = line.drop { $0.isWhitespace }
            return trimmed.isEmpty || trimmed.hasPrefix("--")
        }
        let words = code.joined(separator: " ").split(whereSeparator: \.isWhitespace).joined(separator: " ")
        let shown = words.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "?" : String($0) }.joined()
        return shown.count > 80 ? String(shown.prefix(80)) + "..." : shown
    }
}
