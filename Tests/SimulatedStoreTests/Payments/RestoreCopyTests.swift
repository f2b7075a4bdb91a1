import Foundation
import GRDB
import LedgerTestSupport
import Testing

@testable import LedgerEngine
@testable import SimulatedStore

/// A restore makes its copies in one SQL statement when its ids follow each other and one at a
/// time otherwise: both must make the same copies.
@Suite struct RestoreCopyTests {
    /// Buys a mix of products (two accounts, a refund, a consumable, a subscription), moves the
    /// clock, restores, and checks every copy against its source. Returns what was restored
    /// from, as product ids in order.
    func restoreAndCheck(_ ledger: Ledger, recordingDelivery: Bool) throws -> [String] {
        let account = UUID()
        var bought: [PaymentTransaction] = []
        for (product, token, name) in [
            ("nonconsumable", account, nil), ("consumable", nil, nil), ("monthly", nil, "player"),
            ("nonconsumable", nil, "player"), ("nonconsumable", nil, nil),
        ] as [(String, UUID?, String?)] {
            let added = try ledger.addPayment(
                NewPayment(productID: product, appAccountToken: token, applicationUsername: name))
            bought.append(try ledger.applyPlannedOutcome(of: added.transaction.id))
        }
        try ledger.perform(.refund(bought[4].id, reason: 0))
        _ = try ledger.finish([bought[0].id])
        _ = try ledger.advanceClock(by: 60)
        let restoreTime = try ledger.storeDate()

        let batch = try ledger.restorePurchases(delivery: recordingDelivery ? .recorded : .notRecorded)
        let ids = try #require(batch.ids)
        let copies = try ledger.transactions(in: ids, after: 0, limit: 100)
        #expect(copies.count == batch.count && batch.count == 3)
        #expect(
            copies.map(\.id) == copies.map(\.id).sorted() && copies.first?.id == ids.lowerBound
                && copies.last?.id == ids.upperBound)
        for copy in copies {
            let sourceID = try #require(copy.restoredFromID)
            let source = try #require(try ledger.transaction(sourceID))
            #expect(copy.state == .restored && !copy.isFinished && copy.error == nil && copy.reason == .purchase)
            #expect(copy.originalID == source.originalID && copy.originalPurchaseDate == source.originalPurchaseDate)
            #expect(copy.purchaseDate == restoreTime && copy.createdAt == restoreTime && copy.updatedAt == restoreTime)
            #expect(
                copy.productID == source.productID && copy.productType == source.productType
                    && copy.quantity == source.quantity)
            #expect(
                copy.appAccountToken == source.appAccountToken && copy.applicationUsername == source.applicationUsername
            )
            #expect(copy.expirationDate == source.expirationDate && copy.isUpgraded == source.isUpgraded)
            #expect(
                copy.storefront == source.storefront && copy.environment == source.environment
                    && copy.offer == source.offer)
            #expect(copy.subscriptionGroupID == source.subscriptionGroupID && copy.idempotencyKey == nil)
            #expect(copy.deliveryCount == (recordingDelivery ? 1 : 0))
            #expect(
                try ledger.events(of: copy.id).map(\.kind) == (recordingDelivery ? [.created, .delivered] : [.created]))
        }
        #expect(try ledger.verify().isEmpty)
        return copies.map(\.productID)
    }

    @Test(arguments: [false, true])
    func copiesAreTheSameWhetherTheirIdsFollowEachOtherOrNot(recordingDelivery: Bool) async throws {
        let sequential = try await withLedgerResult(idGenerator: .sequential) { ledger, _ in
            try restoreAndCheck(ledger, recordingDelivery: recordingDelivery)
        }
        let seeded = try await withLedgerResult(idGenerator: .seeded(42)) { ledger, _ in
            try restoreAndCheck(ledger, recordingDelivery: recordingDelivery)
        }
        #expect(sequential == ["nonconsumable", "monthly", "nonconsumable"])
        #expect(seeded == sequential)
    }

    @Test func aRestoreWithNothingToRestoreWritesNothing() async throws {
        try await withLedger { ledger, _ in
            _ = try ledger.applyPlannedOutcome(
                of: try ledger.addPayment(NewPayment(productID: "consumable")).transaction.id)
            let before = try ledger.counts()
            #expect(try ledger.restorePurchases(delivery: .recorded) == RestoreBatch(ids: nil, count: 0))
            #expect(try ledger.counts() == before)
        }
    }
}

/// `FastStatement`, the C-API path of the hot statements, reports SQLite's refusals as GRDB's
/// path did (with the extended code and the statement) and its statement stays usable after.
@Suite struct FastStatementTests {
    @Test func aRefusedStatementReportsItsCodeAndStaysUsable() async throws {
        try await withLedger { ledger, _ in
            let outcome = try ledger.write { db -> (first: Result<UInt64, any Error>, second: UInt64) in
                var row = try NewTransactionRow(
                    db, productID: "consumable", owner: Owner(customer: 1, app: 1), state: .purchasing, at: 0)
                row.planned = (.purchased, nil)
                row.idempotencyKey = "same"
                let writer = ledger.writer(db, at: 0)
                _ = try writer.insert(row)
                let first = Result { try writer.insert(row).id }  // the same idempotency key: refused
                row.idempotencyKey = "other"
                return (first, try writer.insert(row).id)
            }
            #expect(outcome.second == 3)
            guard case .failure(let error as DatabaseError) = outcome.first else {
                Issue.record("the second insert was not refused: \(outcome.first)")
                return
            }
            #expect(error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE)
            #expect(error.sql?.contains("INSERT INTO transactions") == true)
            #expect(error.message?.contains("transactions.idempotency_key") == true)
        }
    }
}
