import Foundation
import GRDB
import LedgerModel
import LedgerTestSupport
import LedgerTesting
import Testing

@testable import LedgerEngine
@testable import SimulatedStore

/// Upgrading a ledger written by an older release: a read never writes; an upgrade is one
/// transaction, checked before it commits, and a failure says where in one line and changes
/// nothing; events no MAC vouched for are signed over only when the caller names them.
@Suite struct UpgradeTests {
    static let configuration = LedgerConfiguration(clock: .fixed(testEpoch))

    /// A ledger at the previous schema as the previous release left it, with a purchase: made
    /// by this build, then the last migration's columns and table removed, and its record.
    static func previousSchemaLedger(at path: String) throws {
        let ledger = try Ledger.open(at: path, mode: .createIfMissing, configuration: configuration)
        try ledger.saveProducts([Product(id: "level", type: .nonConsumable, price: 0.99)])
        let bought = try ledger.addPayment(NewPayment(productID: "level")).transaction
        _ = try ledger.applyPlannedOutcome(of: bought.id)
        try ledger.close()
        let raw = try DatabaseQueue(path: path)
        try raw.write { db in
            try db.execute(sql: PreviousSchema.undoLastMigration)
        }
        try raw.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        try raw.close()
    }

    /// `ledger` taken back to schema 22 (before migration 23 kept the renewal state per holding:
    /// one row per group, the newest holding's), then upgraded: the ledger of a user of that
    /// release who upgrades.
    static func takenBackBeforeHoldingsAndUpgraded(_ ledger: Ledger) throws -> Ledger {
        let path = ledger.path
        try ledger.close()
        let raw = try DatabaseQueue(path: path)
        try raw.write { db in
            try db.execute(sql: PreviousSchema.undoLastMigration)
            try db.execute(sql: PreviousSchema.undoMigration27)
            try db.execute(sql: PreviousSchema.undoMigration26)
            try db.execute(sql: PreviousSchema.undoMigration25)
            try db.execute(sql: PreviousSchema.undoMigration24)
            try db.execute(
                sql: """
                    CREATE TABLE subscription_renewal_22 (
                        group_id        TEXT PRIMARY KEY NOT NULL,
                        auto_renew      INTEGER NOT NULL DEFAULT 1 CHECK (auto_renew IN (0, 1)),
                        resumed_at      INTEGER NOT NULL DEFAULT 0,
                        next_product_id TEXT REFERENCES products(id),
                        period_anchor   INTEGER,
                        billing_issue_since INTEGER, grace_until INTEGER CHECK (grace_until >= billing_issue_since),
                        retry_until INTEGER CHECK (retry_until >= billing_issue_since), pending_offer_id TEXT,
                        pending_offer_type TEXT CHECK (pending_offer_type = 'promotional' OR pending_offer_type = 'code')
                    ) WITHOUT ROWID;
                    INSERT OR IGNORE INTO subscription_renewal_22
                    SELECT group_id, auto_renew, resumed_at, next_product_id, period_anchor, billing_issue_since,
                           grace_until, retry_until, pending_offer_id, pending_offer_type
                    FROM subscription_renewal ORDER BY shared_original_id DESC;
                    DROP TABLE subscription_renewal;
                    ALTER TABLE subscription_renewal_22 RENAME TO subscription_renewal;
                    DELETE FROM grdb_migrations WHERE identifier = '0023_family_shared_renewals';
                    """)
        }
        try raw.close()
        #expect(
            try Ledger.upgrade(at: path, configuration: configuration) == [
                "0023_family_shared_renewals", "0024_renewal_changes", "0025_customers", "0026_apps",
                "0027_bounded_store_work", PreviousSchema.lastMigration,
            ])
        return try Ledger.open(at: path, configuration: configuration)
    }

    /// A schema-7 history upgraded to schema 10, as the release of schema 10 left it: chained,
    /// its head signed, its events without MACs.
    static func schema10Ledger(at path: String) throws -> DatabaseQueue {
        let old = try olderLedger(at: path, migrations: Migration.embedded.filter { $0.identifier < "0008" })
        try old.write { db in try db.execute(sql: CheapChecksMigrationTests.history) }
        _ = try old.writeWithoutTransaction { db in
            try SchemaUpgrade.apply(db, path: path, checkingInvariants: false, through: "0010_hash_chain")
        }
        return old
    }

    static func applied(at path: String) throws -> Set<String> {
        let raw = try DatabaseQueue(path: path)
        defer { try? raw.close() }
        return try raw.read { db in try SchemaUpgrade.appliedIdentifiers(db) }
    }

    @Test func aReadOnlyOpenRefusesAnOlderLedgerAndWritesNothing() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/old.sqlite"
            try Self.previousSchemaLedger(at: path)
            let before = fileBytes(path)
            #expect {
                try Ledger.open(at: path, access: .readOnly)
            } throws: { error in
                (error as? LedgerError)?.code == .olderSchema
                    && "\(error)".contains(
                        "schema \(PreviousSchema.name) of this version's \(PreviousSchema.current)")
            }
            #expect(fileBytes(path) == before)
            #expect(!FileManager.default.fileExists(atPath: path + "-wal") || fileBytes(path + "-wal")?.isEmpty == true)
            let upgraded = try Ledger.upgrade(at: path, configuration: Self.configuration)
            #expect(upgraded == [PreviousSchema.lastMigration])
            #expect(try Ledger.upgrade(at: path, configuration: Self.configuration).isEmpty, "nothing left to do")
            let reader = try Ledger.open(at: path, access: .readOnly)
            #expect(try reader.verify().isEmpty)
            try reader.close()
        }
    }

    /// Migration 28 takes out schema 3's refusal of an empty `applicationUsername`, rewriting
    /// the table's definition in place: a ledger of before, upgraded, takes "" and is clean.
    @Test func aLedgerOfBeforeTakesAnEmptyUsernameOnceUpgraded() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/old.sqlite"
            try Self.previousSchemaLedger(at: path)
            func definition() throws -> String {
                let raw = try DatabaseQueue(path: path)
                defer { try? raw.close() }
                return try raw.read { db in
                    try String.fetchOne(db, sql: "SELECT sql FROM sqlite_schema WHERE name = 'transactions'") ?? ""
                }
            }
            #expect(try definition().contains("CHECK (application_username <> '' AND length("))
            #expect(try Ledger.upgrade(at: path, configuration: Self.configuration) == [PreviousSchema.lastMigration])
            #expect(try definition().contains("CHECK (length(CAST(application_username AS BLOB)) <= 1024)"))
            #expect(!(try definition().contains("application_username <> ''")))
            let ledger = try Ledger.open(at: path, configuration: Self.configuration)
            defer { try? ledger.close() }
            let bought = try ledger.addPayment(NewPayment(productID: "level", applicationUsername: "")).transaction
            #expect(try ledger.transaction(bought.id)?.applicationUsername == "")
            #expect(try ledger.verify().isEmpty, "the rewritten definition is this version's")
        }
    }

    /// Migration 26 makes a ledger of before a store of one app: its bundle identifier and the
    /// settings that are an app's own (environment, Apple ID, version, notification URL) become
    /// that app's; its transactions and notifications are the app's; verify is clean.
    @Test func aLedgerOfBeforeAppsIsAStoreOfOneAppWithItsSettings() async throws {
        try await withTemporaryDirectory { directory in
            let ledger = try SampleCatalog.ledger(in: directory, configuration: Self.configuration)
            try ledger.write { db in
                try ledger.saveSettings(
                    db,
                    [
                        "bundleID": "com.example.kept", "environment": "Sandbox", "appAppleID": "99",
                        "appVersion": "3.1", "notificationURL": "http://127.0.0.1:9/kept", "askToBuy": "false",
                    ])
            }
            let bought = try await ledger.addPayment(NewPayment(productID: SampleCatalog.nonConsumable)).transaction
            _ = try await ledger.applyPlannedOutcome(of: bought.id)
            let path = ledger.path
            try ledger.close()
            // As the previous release kept it: its notification stamped without an app, then the
            // migration taken away.
            let raw = try DatabaseQueue(path: path)
            try await raw.write { db in
                try AuthenticatedRecords(db: db, key: try IdentityCache().eventKey(db)).restamp(
                    .notificationsBeforeApps, from: .notifications)
                try db.execute(sql: PreviousSchema.undoLastMigration)
                try db.execute(sql: PreviousSchema.undoMigration27)
                try db.execute(sql: PreviousSchema.undoMigration26)
            }
            try raw.close()
            #expect(
                try Ledger.upgrade(at: path, configuration: Self.configuration) == [
                    "0026_apps", "0027_bounded_store_work", PreviousSchema.lastMigration,
                ])
            let upgraded = try Ledger.open(at: path, configuration: Self.configuration)
            defer { try? upgraded.close() }
            #expect(try upgraded.apps() == [App(bundleID: "com.example.kept", environment: .sandbox, appAppleID: 99)])
            let settings = try StoreSettings(ledger: upgraded)
            #expect(
                settings.appVersion == "3.1" && settings.notificationURL?.absoluteString == "http://127.0.0.1:9/kept")
            #expect(try upgraded.transactions().map(\.appID) == [1])
            #expect(try upgraded.notifications().map(\.appID) == [1])
            #expect(try upgraded.verify().isEmpty)
        }
    }

    /// Migration 25 keys a price increase by customer too, and its MAC covers the customer: the
    /// upgrade stamps again the rows that checked before, so the renewal still charges the
    /// agreed price and verify finds nothing; one forged before is refused, and nothing changes.
    @Test func aPriceIncreaseKeepsItsRecordAcrossTheCustomersUpgrade() async throws {
        for forged in [false, true] {
            try await withTemporaryDirectory { directory in
                let ledger = try SampleCatalog.ledger(in: directory, configuration: Self.configuration)
                _ = try await ledger.perform(.buyOutsideTheApp(NewPayment(productID: SampleCatalog.subscription)))
                _ = try await ledger.perform(
                    .requestPriceIncrease(productID: SampleCatalog.subscription, price: 14.99, needsConsent: false))
                let path = ledger.path
                try ledger.close()
                // As the previous release kept it: stamped without the customer, then the
                // column, key and migration taken away.
                let raw = try DatabaseQueue(path: path)
                try await raw.write { db in
                    try AuthenticatedRecords(db: db, key: try IdentityCache().eventKey(db)).restamp(
                        .priceIncreasesBeforeCustomers, from: .priceIncreases)
                    try db.execute(sql: PreviousSchema.undoLastMigration)
                    try db.execute(sql: PreviousSchema.undoMigration27)
                    try db.execute(sql: PreviousSchema.undoMigration26)
                    try db.execute(sql: PreviousSchema.undoMigration25)
                    if forged { try db.execute(sql: "UPDATE price_increases SET price = '0.01'") }
                }
                try raw.close()
                guard !forged else {
                    #expect {
                        try Ledger.upgrade(at: path, configuration: Self.configuration)
                    } throws: { error in
                        "\(error)".contains("the price_increases row 1 \"pro\" was changed without the ledger's key")
                    }
                    return
                }
                #expect(
                    try Ledger.upgrade(at: path, configuration: Self.configuration) == [
                        "0025_customers", "0026_apps", "0027_bounded_store_work", PreviousSchema.lastMigration,
                    ])
                let upgraded = try Ledger.open(at: path, configuration: Self.configuration)
                defer { try? upgraded.close() }
                #expect(try upgraded.verify().isEmpty)
                let increase = try #require(try upgraded.priceIncrease(forProduct: SampleCatalog.subscription))
                #expect(increase.price == 14.99 && increase.status == .agreed)
            }
        }
    }

    /// Before migration 23 a group had one renewal state, whoever held it. A group held only
    /// through Family Sharing keeps its state across the upgrade: it moves to the share's row,
    /// so auto-renew turned off on the shared subscription stays off.
    @Test func aSharedSubscriptionKeepsItsRenewalStateAcrossTheUpgrade() async throws {
        try await withTemporaryDirectory { directory in
            let ledger = try SampleCatalog.ledger(in: directory, configuration: Self.configuration)
            let shared = try await ledger.perform(
                .shareFamilyPurchase(NewPayment(productID: SampleCatalog.yearlySubscription))
            ).transactions[0]
            _ = try await ledger.perform(.setAutoRenew(productID: SampleCatalog.yearlySubscription, enabled: false))
            let upgraded = try Self.takenBackBeforeHoldingsAndUpgraded(ledger)
            let status = try #require(try upgraded.subscriptionStatus(forProduct: SampleCatalog.yearlySubscription))
            #expect(status.isFamilyShared && status.transaction.id == shared.id)
            #expect(!status.willAutoRenew)
            #expect(try upgraded.isAutoRenewEnabled(for: SampleCatalog.yearlySubscription) == false)
            #expect(try upgraded.verify().isEmpty)
            try upgraded.close()
        }
    }

    /// A ledger where the previous release took a family member's share as the customer's own
    /// change of product (a payment with no period, and the customer's subscription waiting to
    /// renew into the family's product) is repaired: the customer renews their own product.
    @Test func aShareTakenAsTheCustomersChangeOfProductIsUndoneByTheUpgrade() async throws {
        try await withTemporaryDirectory { directory in
            let ledger = try SampleCatalog.ledger(in: directory, configuration: Self.configuration)
            _ = try await ledger.perform(.buyOutsideTheApp(NewPayment(productID: SampleCatalog.subscription)))
            // What the previous release made of a share of pro.yearly: a crossgrade at the next
            // renewal, its payment owned FAMILY_SHARED (a chain of its own: the family member's).
            var shared = NewPayment(productID: SampleCatalog.yearlySubscription)
            shared.isSharedByFamily = true
            let share = try await ledger.perform(.buyOutsideTheApp(shared)).transactions[0]
            #expect(share.originalID == share.id)
            #expect(share.expirationDate == share.purchaseDate)
            #expect(
                try ledger.pendingProductChange(for: SampleCatalog.subscription) == SampleCatalog.yearlySubscription)
            try ledger.write { db in
                try ledger.records(db).write(.familyShares, key: Int64(share.originalID)) {
                    try db.execute(
                        sql: "INSERT INTO family_shares (original_transaction_id, shared_at) VALUES (?, ?)",
                        arguments: [Int64(share.originalID), share.purchaseDate.ledgerMilliseconds])
                }
            }
            let upgraded = try Self.takenBackBeforeHoldingsAndUpgraded(ledger)
            #expect(try upgraded.pendingProductChange(for: SampleCatalog.subscription) == nil)
            #expect(
                try upgraded.subscriptionStatus(forProduct: SampleCatalog.subscription)?.autoRenewProductID
                    == SampleCatalog.subscription)
            #expect(try upgraded.verify().isEmpty)
            try upgraded.close()
        }
    }

    /// Migrations 8 to 12 apply and 13 fails on a table in its way: all are rolled back, the
    /// error names the migration, its statement and SQLite's reason in one line.
    @Test func aFailedUpgradeChangesNothingAndSaysWhereInOneLine() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/old.sqlite"
            let old = try olderLedger(at: path, migrations: Migration.embedded.filter { $0.identifier < "0008" })
            try old.write { db in
                try db.execute(sql: CheapChecksMigrationTests.history)
                try db.execute(sql: "CREATE TABLE notifications (x)")
            }
            try old.close()
            let before = try Self.applied(at: path)
            #expect {
                try Ledger.open(at: path, configuration: Self.configuration)
            } throws: { error in
                let text = "\(error)"
                return (error as? LedgerError)?.code == .upgradeFailed
                    && text.contains(
                        "migration 0013_notifications failed at its statement 1 (CREATE TABLE notifications (")
                    && text.contains("table notifications already exists") && text.hasSuffix("nothing was changed")
                    && !text.contains("\n") && text.utf8.count < 400
            }
            #expect(try Self.applied(at: path) == before, "no migration committed")
        }
    }

    /// A ledger whose trigger was dropped behind its back is not upgraded over the evidence: the
    /// invariants of the result are checked before the commit.
    @Test func anUpgradeOfALedgerThatBreaksItsRulesIsRefused() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/old.sqlite"
            try Self.previousSchemaLedger(at: path)
            let raw = try DatabaseQueue(path: path)
            try raw.write { db in try db.execute(sql: "DROP TRIGGER transaction_events_append_only") }
            try raw.close()
            #expect {
                try Ledger.upgrade(at: path, configuration: Self.configuration)
            } throws: { error in
                (error as? LedgerError)?.code == .upgradeFailed
                    && "\(error)".contains("the upgraded ledger would not hold its invariants")
                    && "\(error)".contains("transaction_events_append_only")
            }
            #expect(!(try Self.applied(at: path)).contains(PreviousSchema.lastMigration))
        }
    }

    /// Events after the last signed head of a ledger older than schema 11 carry no MAC: the
    /// upgrade names them and refuses, and signs over them only when told exactly which.
    @Test func eventsNoMACVouchesForAreSignedOverOnlyWhenNamed() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/old.sqlite"
            let old = try Self.schema10Ledger(at: path)
            // Transaction 3 approved after the head was signed, by a process killed before it
            // signed again (or by someone without the key: nothing tells).
            let tail = try old.write { db -> Int64 in
                try db.execute(sql: "UPDATE transactions SET state = 'purchased', updated_at = 32 WHERE id = 3")
                let (seq, previous) = try HashChain.next(db)
                let event = ChainedEvent(
                    seq: seq,
                    content: .init(
                        transactionID: 3, kind: .stateChanged, from: .deferred, to: .purchased, at: 32, detail: nil),
                    rowDigest: try #require(try HashChain.rowDigestBeforeCustomers(db, id: 3)))
                try db.execute(
                    sql: """
                        INSERT INTO transaction_events (seq, transaction_id, kind, from_state, to_state, at, detail, row_digest, hash)
                        VALUES (?, 3, 'stateChanged', 'deferred', 'purchased', 32, NULL, ?, ?)
                        """,
                    arguments: [seq, Data(event.rowDigest), Data(HashChain.link(previous: previous, event))])
                return seq
            }
            try old.close()
            for wrong in [nil, (tail - 1)...tail, tail...(tail + 1)] as [ClosedRange<Int64>?] {
                #expect {
                    try Ledger.upgrade(at: path, vouchingForEvents: wrong, configuration: Self.configuration)
                } throws: { error in
                    (error as? LedgerError)?.unvouchedEvents == tail...tail
                        && "\(error)".contains(
                            "event \(tail) follow the last signed head, and nothing vouches for them")
                }
            }
            #expect(!(try Self.applied(at: path)).contains("0011_event_authentication"))
            let upgraded = try Ledger.upgrade(
                at: path, vouchingForEvents: tail...tail, configuration: Self.configuration)
            #expect(upgraded.first == "0011_event_authentication" && upgraded.last == Ledger.knownMigrations.last)
            let ledger = try Ledger.open(at: path, configuration: Self.configuration)
            defer { try? ledger.close() }
            #expect(try ledger.verify().isEmpty)
            #expect(try ledger.chainStatus().head?.sequence == tail)
        }
    }

    /// Migration 11 signs a new head: before it does, the old head must match the history and be
    /// the ledger's, or the upgrade would erase the evidence of a rewrite (links carry no key
    /// before schema 11).
    @Test func aHeadThatNoLongerMatchesItsHistoryIsNotSignedOver() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/old.sqlite"
            let old = try Self.schema10Ledger(at: path)
            // The history before the head rewritten, its links recomputed: the head's link no
            // longer matches its event (here, the head made to name a link that is not there).
            try old.write { db in try db.execute(sql: "UPDATE chain_head SET hash = zeroblob(32)") }
            try old.close()
            #expect {
                try Ledger.upgrade(at: path, configuration: Self.configuration)
            } throws: { error in
                (error as? LedgerError)?.code == .upgradeFailed
                    && "\(error)".contains("does not match the history")
            }
            #expect(!(try Self.applied(at: path)).contains("0011_event_authentication"))
        }
    }
}
