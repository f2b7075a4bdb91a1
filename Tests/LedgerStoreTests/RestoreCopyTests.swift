import Foundation
@testable import LedgerStore
import Testing

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
            let added = try ledger.addPayment(NewPayment(productID: product, appAccountToken: token, applicationUsername: name))
            bought.append(try ledger.applyPlannedOutcome(of: added.transaction.id))
        }
        _ = try ledger.refund(bought[4].id, reason: 0)
        _ = try ledger.finish([bought[0].id])
        _ = try ledger.advanceClock(by: 60)
        let restoreTime = try ledger.storeDate()

        let batch = try ledger.restorePurchases(delivery: recordingDelivery ? .recorded : .notRecorded)
        let ids = try #require(batch.ids)
        let copies = try ledger.transactions(in: ids, after: 0, limit: 100)
        #expect(copies.count == batch.count && batch.count == 3)
        #expect(copies.map(\.id) == copies.map(\.id).sorted() && copies.first?.id == ids.lowerBound && copies.last?.id == ids.upperBound)
        for copy in copies {
            let sourceID = try #require(copy.restoredFromID)
            let source = try #require(try ledger.transaction(sourceID))
            #expect(copy.state == .restored && !copy.isFinished && copy.error == nil && copy.reason == .purchase)
            #expect(copy.originalID == source.originalID && copy.originalPurchaseDate == source.originalPurchaseDate)
            #expect(copy.purchaseDate == restoreTime && copy.createdAt == restoreTime && copy.updatedAt == restoreTime)
            #expect(copy.productID == source.productID && copy.productType == source.productType && copy.quantity == source.quantity)
            #expect(copy.appAccountToken == source.appAccountToken && copy.applicationUsername == source.applicationUsername)
            #expect(copy.expirationDate == source.expirationDate && copy.isUpgraded == source.isUpgraded)
            #expect(copy.storefront == source.storefront && copy.environment == source.environment && copy.offer == source.offer)
            #expect(copy.subscriptionGroupID == source.subscriptionGroupID && copy.idempotencyKey == nil)
            #expect(copy.deliveryCount == (recordingDelivery ? 1 : 0))
            #expect(try ledger.events(of: copy.id).map(\.kind) == (recordingDelivery ? [.created, .delivered] : [.created]))
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
            _ = try ledger.applyPlannedOutcome(of: try ledger.addPayment(NewPayment(productID: "consumable")).transaction.id)
            let before = try ledger.counts()
            #expect(try ledger.restorePurchases(delivery: .recorded) == RestoreBatch(ids: nil, count: 0))
            #expect(try ledger.counts() == before)
        }
    }
}
