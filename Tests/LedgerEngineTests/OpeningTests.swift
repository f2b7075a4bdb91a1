import Foundation
import GRDB
import LedgerTestSupport
import LedgerTesting
import Testing

@testable import LedgerEngine
@testable import SimulatedStore

@Suite struct OpeningTests {
    @Test func embeddedMigrationsMatchTheMigrationsFolder() throws {
        let folder = Repository.root + "/migrations"
        let files = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".sql") }.sorted()
        #expect(files.map { String($0.dropLast(4)) } == Migration.embedded.map(\.identifier))
        for (file, migration) in zip(files, Migration.embedded) {
            let sql = try String(contentsOfFile: folder + "/" + file, encoding: .utf8)
            #expect(
                sql.trimmingCharacters(in: .newlines) == migration.sql.trimmingCharacters(in: .newlines),
                "\(file) differs from its embedded copy: run tools/embed-migrations")
        }
    }

    @Test func aNewLedgerHasEveryMigrationOnceAndIsOwnerOnly() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/new.sqlite"
            let ledger = try Ledger.open(at: path, mode: .createIfMissing)
            #expect(try ledger.appliedMigrations() == Ledger.knownMigrations)
            for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: path + suffix) {
                let attributes = try FileManager.default.attributesOfItem(atPath: path + suffix)
                #expect((attributes[.posixPermissions] as? Int) == 0o600, "\(suffix) is not owner-only")
            }
            try ledger.close()
            // Reopening applies nothing again.
            let reopened = try Ledger.open(at: path)
            #expect(try reopened.appliedMigrations() == Ledger.knownMigrations)
            try reopened.close()
            // No temporary file is left behind.
            #expect(
                try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.contains("creating") }
                    .isEmpty)
        }
    }

    @Test func aMissingLedgerIsNotCreatedByDefault() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/missing.sqlite"
            #expect(throws: LedgerError.missingLedger(path: path)) { try Ledger.open(at: path) }
            #expect(!FileManager.default.fileExists(atPath: path))
        }
    }

    @Test func aZeroLengthFileIsRefusedAndLeftEmpty() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/empty.sqlite"
            #expect(FileManager.default.createFile(atPath: path, contents: Data()))
            #expect(throws: LedgerError.emptyFile(path: path)) { try Ledger.open(at: path, mode: .createIfMissing) }
            #expect(fileBytes(path) == Data())
        }
    }

    @Test func randomBytesAreRefusedUntouched() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/junk.sqlite"
            let junk = Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
            try junk.write(to: URL(fileURLWithPath: path))
            #expect(throws: LedgerError.notADatabase(path: path, reason: "no SQLite header")) {
                try Ledger.open(at: path, mode: .createIfMissing)
            }
            #expect(fileBytes(path) == junk)
            #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
        }
    }

    @Test func anotherApplicationsDatabaseIsRefusedUntouched() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/other.sqlite"
            let other = try DatabaseQueue(path: path)
            try other.write { db in
                try db.execute(
                    sql:
                        "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes (body) VALUES ('keep me')"
                )
            }
            try other.close()
            let before = fileBytes(path)
            #expect(throws: LedgerError.notALedger(path: path, applicationID: 0)) { try Ledger.open(at: path) }
            #expect(fileBytes(path) == before)
        }
    }

    @Test func aTruncatedLedgerIsRefusedUntouched() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/ledger.sqlite"
            try Ledger.open(at: path, mode: .createIfMissing).close()
            let whole = try #require(fileBytes(path))
            let truncated = whole.prefix(whole.count / 2 + 100)
            try truncated.write(to: URL(fileURLWithPath: path))
            #expect {
                try Ledger.open(at: path)
            } throws: { error in
                guard let error = error as? LedgerError, error.code == .corrupted else { return false }
                return error.path == path && error.reason.hasPrefix("truncated")
            }
            #expect(fileBytes(path) == truncated)
        }
    }

    @Test func aLedgerFromANewerVersionIsRefusedUntouched() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/ledger.sqlite"
            let ledger = try Ledger.open(at: path, mode: .createIfMissing)
            try ledger.write { db in
                try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('9999_from_the_future')")
            }
            try ledger.close()
            let before = fileBytes(path)
            #expect(throws: LedgerError.newerSchema(path: path, unknownMigrations: ["9999_from_the_future"])) {
                try Ledger.open(at: path)
            }
            #expect(fileBytes(path) == before)
        }
    }

    /// A read-write open reads the schema through the connection that will write: refusing a
    /// newer ledger whose commits are still in its WAL must not checkpoint them into the file
    /// when that connection closes.
    @Test func aNewerLedgerWithCommitsInItsWALIsRefusedWithoutACheckpoint() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/ledger.sqlite"
            try Ledger.open(at: path, mode: .createIfMissing).close()
            // A read-only connection stays open while the writer closes, so the commit stays in
            // the WAL (the last connection to close checkpoints; a read-only one cannot).
            var readOnly = Configuration()
            readOnly.readonly = true
            let holder = try DatabaseQueue(path: path, configuration: readOnly)
            _ = try holder.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM grdb_migrations") }
            let writer = try DatabaseQueue(path: path)
            try writer.write { db in
                try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('9999_from_the_future')")
            }
            try writer.close()
            try holder.close()
            let (database, wal) = (fileBytes(path), fileBytes(path + "-wal"))
            #expect(wal?.isEmpty == false)
            #expect(throws: LedgerError.newerSchema(path: path, unknownMigrations: ["9999_from_the_future"])) {
                try Ledger.open(at: path)
            }
            #expect(fileBytes(path) == database)
            #expect(fileBytes(path + "-wal") == wal)
        }
    }

    @Test(arguments: Durability.allCases)
    func durabilityIsAppliedAndChecked(_ durability: Durability) async throws {
        try await withLedger(durability: durability) { (ledger, _) throws in
            let values = try ledger.writer!.writeWithoutTransaction { db in
                (
                    try Int.fetchOne(db, sql: "PRAGMA synchronous"),
                    try String.fetchOne(db, sql: "PRAGMA journal_mode"),
                    try Bool.fetchOne(db, sql: "PRAGMA foreign_keys")
                )
            }
            #expect(values.0 == durability.synchronousValue)
            #expect(values.1 == "wal")
            #expect(values.2 == true)
            // Reads go through the same connection, with the same settings.
            let reader = try ledger.reader.read { db in
                (try Int.fetchOne(db, sql: "PRAGMA synchronous"), try Bool.fetchOne(db, sql: "PRAGMA foreign_keys"))
            }
            #expect(reader.0 == durability.synchronousValue && reader.1 == true)
        }
    }

    /// Write transactions start IMMEDIATE, holding the write lock from their first
    /// statement, so a read inside one can never be overtaken by another process's commit.
    @Test func writeTransactionsHoldTheWriteLockFromTheStart() async throws {
        try await withLedger { (ledger, _) throws in
            var other = Configuration()
            other.busyMode = .immediateError
            let second = try DatabaseQueue(path: ledger.path, configuration: other)
            try ledger.write { _ -> Void in
                #expect(throws: DatabaseError.self, "another connection cannot start writing") {
                    try second.inDatabase { db in try db.execute(sql: "BEGIN IMMEDIATE; ROLLBACK") }
                }
            }
            try second.inDatabase { db in try db.execute(sql: "BEGIN IMMEDIATE; ROLLBACK") }
            try second.close()
        }
    }

    @Test func aConnectionWithoutItsSettingsIsRefused() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/ledger.sqlite"
            try Ledger.open(at: path, mode: .createIfMissing).close()
            // A database in rollback-journal mode is not what the ledger relies on.
            let other = try DatabaseQueue(path: path)
            try other.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA journal_mode = DELETE") }
            try other.close()
            #expect {
                try Ledger.open(at: path)
            } throws: { error in
                guard let error = error as? LedgerError, error.code == .unusable else { return false }
                return error.reason.contains("journal_mode is delete, not wal")
            }
        }
    }

    @Test func aDirectoryInsteadOfAFileIsUnusable() async throws {
        try await withTemporaryDirectory { directory in
            #expect(throws: LedgerError.unusable(path: directory, reason: "not a regular file")) {
                try Ledger.open(at: directory)
            }
        }
    }
}

@Suite struct MigrationTests {
    /// A ledger written by a build that knew only the first migration: opening it applies the
    /// later ones, each once, in order, and keeps every transaction and its history (0002
    /// rebuilds the event log).
    @Test func anOlderLedgerIsMigratedKeepingItsHistory() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/old.sqlite"
            let old = try olderLedger(at: path, migrations: Array(Migration.embedded.prefix(1)))
            try old.write { db in
                try db.execute(
                    sql: """
                        INSERT INTO products (id, type, reference_name, price, family_shareable) VALUES ('p', 'consumable', 'p', '1', 0);
                        INSERT INTO transactions (id, original_id, product_id, product_type, state, quantity, purchase_date,
                            original_purchase_date, reason, storefront, environment, planned_state, created_at, updated_at)
                        VALUES (1, 1, 'p', 'consumable', 'purchasing', 1, 0, 0, 'purchase', 'USA', 'xcode', 'purchased', 0, 0);
                        INSERT INTO transaction_events (transaction_id, kind, to_state, at) VALUES (1, 'created', 'purchasing', 0);
                        UPDATE ledger_counters SET value = 1;
                        """)
            }
            try old.close()

            let ledger = try Ledger.open(at: path)
            #expect(try ledger.appliedMigrations() == Ledger.knownMigrations)
            #expect(try ledger.events(of: 1).map(\.kind) == [.created])
            let completed = try ledger.recoverAtLaunch().completed
            #expect(completed.map(\.state) == [.purchased])
            #expect(try ledger.events(of: 1).map(\.kind) == [.created, .stateChanged])
            #expect(try ledger.verify() == [])
            try ledger.close()
            // Reopening applies nothing again.
            let reopened = try Ledger.open(at: path)
            #expect(try reopened.appliedMigrations() == Ledger.knownMigrations)
            try reopened.close()
        }
    }
}
