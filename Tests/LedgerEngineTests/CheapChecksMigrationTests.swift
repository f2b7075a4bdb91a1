import Foundation
import GRDB
import LedgerTestSupport
import LedgerTesting
import Testing

@testable import LedgerEngine
@testable import SimulatedStore

/// Migration 0008 rebuilds `transactions` and `transaction_events` so that their checks build no
/// temporary b-tree per row: every row, the event counter, every index and trigger must survive.
@Suite struct CheapChecksMigrationTests {
    /// A schema-0007 ledger with transactions in every state, a refund, a restore, deliveries,
    /// an offer, and a deleted transaction (so that the event counter is past the last event).
    static let history = """
        INSERT INTO products (id, type, reference_name, price, family_shareable) VALUES
            ('p', 'nonConsumable', 'p', '1', 0), ('c', 'consumable', 'c', '1', 0);
        INSERT INTO transactions (id, original_id, product_id, product_type, state, quantity, purchase_date,
            original_purchase_date, reason, storefront, environment, created_at, updated_at, idempotency_key,
            planned_state, planned_error_code, planned_error_message, app_account_token, application_username)
        VALUES
            (1, 1, 'p', 'nonConsumable', 'purchasing', 1, 10, 10, 'purchase', 'USA', 'xcode', 10, 10, 'k1',
             'purchased', NULL, NULL, 'E621E1F8-C36C-495A-93FC-0C247A3E6E5F', 'someone'),
            (2, 2, 'c', 'consumable', 'purchasing', 3, 20, 20, 'purchase', 'FRA', 'xcode', 20, 20, NULL,
             'failed', 2, 'cancelled', NULL, NULL),
            (3, 3, 'c', 'consumable', 'purchasing', 1, 30, 30, 'purchase', 'USA', 'xcode', 30, 30, NULL,
             'deferred', NULL, NULL, NULL, NULL),
            (5, 5, 'c', 'consumable', 'purchasing', 1, 50, 50, 'purchase', 'USA', 'xcode', 50, 50, 'k5',
             'failed', 0, 'interrupted', NULL, NULL);
        INSERT INTO transactions (id, original_id, product_id, product_type, state, quantity, purchase_date,
            original_purchase_date, reason, storefront, environment, created_at, updated_at, restored_from,
            offer_type, offer_id, offer_payment_mode, offer_period, offer_nonce)
        VALUES (4, 1, 'p', 'nonConsumable', 'restored', 1, 40, 10, 'purchase', 'USA', 'xcode', 40, 40, 1,
                'promotional', 'offer', 'freeTrial', 'P1W', 'a7d5e0f2-58c1-4c39-9b0e-0d0f4c7b2a11');
        INSERT INTO transaction_events (transaction_id, kind, from_state, to_state, at, detail) VALUES
            (1, 'created', NULL, 'purchasing', 10, NULL), (2, 'created', NULL, 'purchasing', 20, NULL),
            (3, 'created', NULL, 'purchasing', 30, NULL), (5, 'created', NULL, 'purchasing', 50, NULL),
            (4, 'created', NULL, 'restored', 40, NULL);
        UPDATE transactions SET state = 'purchased', updated_at = 11 WHERE id = 1;
        UPDATE transactions SET state = 'failed', error_code = 2, error_message = 'cancelled', updated_at = 21 WHERE id = 2;
        UPDATE transactions SET state = 'deferred', updated_at = 31 WHERE id = 3;
        INSERT INTO transaction_events (transaction_id, kind, from_state, to_state, at) VALUES
            (1, 'stateChanged', 'purchasing', 'purchased', 11), (2, 'stateChanged', 'purchasing', 'failed', 21),
            (3, 'stateChanged', 'purchasing', 'deferred', 31);
        UPDATE transactions SET is_finished = 1, finished_at = 12, delivery_count = 2, last_delivered_at = 12 WHERE id = 1;
        UPDATE transactions SET is_finished = 1, finished_at = 22 WHERE id = 2;
        UPDATE transactions SET revocation_date = 41, revocation_reason = 1 WHERE id = 4;
        INSERT INTO transaction_events (transaction_id, kind, from_state, to_state, at, detail) VALUES
            (1, 'delivered', 'purchased', 'purchased', 12, NULL), (1, 'delivered', 'purchased', 'purchased', 12, NULL),
            (1, 'finished', 'purchased', 'purchased', 12, NULL), (2, 'finished', 'failed', 'failed', 22, NULL),
            (4, 'revoked', 'restored', 'restored', 41, 'refund');
        INSERT INTO transactions (id, original_id, product_id, product_type, state, quantity, purchase_date,
            original_purchase_date, reason, storefront, environment, created_at, updated_at)
        VALUES (6, 6, 'c', 'consumable', 'purchased', 1, 60, 60, 'purchase', 'USA', 'xcode', 60, 60);
        INSERT INTO transaction_events (transaction_id, kind, to_state, at) VALUES (6, 'created', 'purchased', 60);
        INSERT INTO transaction_deletions (transaction_id) VALUES (6);
        DELETE FROM transaction_events WHERE transaction_id = 6;
        DELETE FROM transactions WHERE id = 6;
        DELETE FROM transaction_deletions;
        UPDATE ledger_counters SET value = 6;
        """

    static func dump(_ db: Database, _ table: String, orderBy: String) throws -> [[DatabaseValue]] {
        try Row.fetchAll(db, sql: "SELECT * FROM \(table) ORDER BY \(orderBy)").map { Array($0.databaseValues) }
    }

    static func schemaObjects(_ db: Database) throws -> [String] {
        try String.fetchAll(
            db, sql: "SELECT type || ' ' || name || ' on ' || tbl_name FROM sqlite_master ORDER BY type, name")
    }

    @Test func aLedgerOfSchema0007KeepsEveryRowIndexAndTriggerThrough0008() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/old.sqlite"
            let old = try olderLedger(at: path, migrations: Migration.embedded.filter { $0.identifier < "0008" })
            try old.write { db in try db.execute(sql: Self.history) }
            let (transactionsBefore, eventsBefore, counterBefore) = try old.read { db in
                (
                    try Self.dump(db, "transactions", orderBy: "id"),
                    try Self.dump(db, "transaction_events", orderBy: "seq"),
                    try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = 'transaction_events'")
                )
            }
            try old.close()
            #expect(transactionsBefore.count == 5 && eventsBefore.count == 13 && counterBefore == 14)

            let ledger = try Ledger.open(at: path, configuration: LedgerConfiguration(clock: .fixed(testEpoch)))
            #expect(try ledger.appliedMigrations() == Ledger.knownMigrations)
            try ledger.close()
            let raw = try DatabaseQueue(path: path)
            let after = try raw.read { db in
                (
                    transactions: try Self.dump(db, "transactions", orderBy: "id"),
                    events: try Self.dump(db, "transaction_events", orderBy: "seq"),
                    counter: try Int64.fetchOne(
                        db, sql: "SELECT seq FROM sqlite_sequence WHERE name = 'transaction_events'"),
                    counterRows: try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_sequence"),
                    objects: try Self.schemaObjects(db),
                    integrity: try String.fetchAll(db, sql: "PRAGMA integrity_check"),
                    foreignKeys: try Row.fetchAll(db, sql: "PRAGMA foreign_key_check").count
                )
            }
            try raw.close()
            // Migrations 25 and 26 give every row its customer and app, the first: the last
            // two columns.
            #expect(after.transactions.map { Array($0.dropLast(2)) } == transactionsBefore)
            #expect(after.transactions.allSatisfy { Array($0.suffix(2)) == [1.databaseValue, 1.databaseValue] })
            // 0010 adds each event's row digest and link after its columns.
            #expect(after.events.map { Array($0.prefix(7)) } == eventsBefore)
            #expect(after.counter == 14)
            #expect(after.counterRows == 1)
            #expect(after.integrity == ["ok"])
            #expect(after.foreignKeys == 0)

            // The same tables, indexes and triggers as a ledger created by this build.
            let fresh = try Ledger.open(at: directory + "/fresh.sqlite", mode: .createIfMissing)
            let freshObjects = try fresh.read { db in try Self.schemaObjects(db) }
            try fresh.close()
            #expect(after.objects == freshObjects)

            // The next event continues the old counter: numbers of deleted events are not reused.
            let migrated = try Ledger.open(at: path, configuration: LedgerConfiguration(clock: .fixed(testEpoch)))
            defer { try? migrated.close() }
            _ = try migrated.finish([4])
            let last = try migrated.read { db in try Int64.fetchOne(db, sql: "SELECT max(seq) FROM transaction_events")
            }
            #expect(last == 15)
            // The hash chain adopted by 0010 still vouches for every row after the later
            // rebuilds (0018 and 0020 too): same columns, same values, same digests.
            #expect(try migrated.verify().isEmpty)
        }
    }

    /// What 0008 is for: no statement that writes a transaction or an event fills a temporary
    /// b-tree (`OpenEphemeral`, which `IN` with three values or more, or over a subquery, needs)
    /// in its own program, and no trigger uses `IN (SELECT`.
    @Test func writesBuildNoTemporaryTables() async throws {
        try await withLedger { ledger, _ in
            let statements = [
                """
                INSERT INTO transactions (id, original_id, product_id, product_type, state, quantity, purchase_date,
                    original_purchase_date, reason, storefront, environment, created_at, updated_at, planned_state,
                    offer_type, offer_payment_mode)
                VALUES (1, 1, 'consumable', 'consumable', 'purchasing', 1, 0, 0, 'purchase', 'USA', 'xcode', 0, 0,
                    'purchased', NULL, NULL)
                """,
                """
                INSERT INTO transaction_events (transaction_id, kind, from_state, to_state, at, row_digest, hash)
                VALUES (1, 'created', NULL, 'purchasing', 0, zeroblob(32), zeroblob(32))
                """,
                "UPDATE transactions SET state = 'purchased', error_code = NULL, updated_at = 1 WHERE id = 1",
                "UPDATE transactions SET is_finished = 1, finished_at = 1, updated_at = 1 WHERE id = 1",
                "UPDATE transactions SET delivery_count = delivery_count + 1, last_delivered_at = 1 WHERE id = 1",
            ]
            let (opcodes, triggers) = try ledger.read { db in
                (
                    try statements.map { sql in
                        try Row.fetchAll(db, sql: "EXPLAIN " + sql).map { $0["opcode"] as String }
                    },
                    try String.fetchAll(
                        db,
                        sql:
                            "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name IN ('transactions', 'transaction_events')"
                    )
                )
            }
            for (sql, program) in zip(statements, opcodes) {
                #expect(!program.isEmpty)
                #expect(!program.contains("OpenEphemeral"), Comment(rawValue: sql))
            }
            #expect(triggers.count == 15)
            for trigger in triggers {
                #expect(!trigger.uppercased().contains("IN (SELECT"), Comment(rawValue: trigger))
            }
        }
    }
}
