import Foundation
import GRDB
import LedgerTestSupport
import LedgerTesting
import Testing

@testable import LedgerEngine
@testable import SimulatedStore

@Suite struct PaymentRulesTests {
    @Test func aNewPaymentIsStoredAsPurchasingWithItsCreationEvent() async throws {
        try await withLedger { (ledger, _) throws in
            let (transaction, isNew) = try ledger.addPayment(NewPayment(productID: "consumable", quantity: 3))
            #expect(isNew)
            #expect(transaction.id == 1 && transaction.originalID == 1)
            #expect(transaction.state == .purchasing && !transaction.isFinished && transaction.quantity == 3)
            #expect(transaction.purchaseDate == testEpoch && transaction.createdAt == testEpoch)
            #expect(transaction.productType == .consumable && transaction.reason == .purchase)
            #expect(try ledger.transaction(1) == transaction)
            let events = try ledger.events(of: 1)
            #expect(events.map(\.kind) == [.created] && events[0].toState == .purchasing && events[0].fromState == nil)
        }
    }

    /// The commit that charges a purchase vouches for its row before it changes it (the one read
    /// of the row before the change): a `purchasing` row edited outside the ledger is neither
    /// charged nor notified, and its history gets no event.
    @Test func aPurchasingRowEditedOutsideTheLedgerIsNotCharged() async throws {
        try await withLedger { (ledger, _) throws in
            let (added, _) = try ledger.addPayment(NewPayment(productID: "consumable"))
            try ledger.write { db in
                try db.execute(
                    sql: "UPDATE transactions SET storefront = 'FRA' WHERE id = ?", arguments: [Int64(added.id)])
            }
            let error = #expect(throws: LedgerError.self) { try ledger.applyPlannedOutcome(of: added.id) }
            #expect(error?.code == .corrupted)
            #expect(error.map { "\($0)".contains("differs from what its history recorded") } == true)
            #expect(try ledger.transaction(added.id)?.state == .purchasing)
            #expect(try ledger.events(of: added.id).map(\.kind) == [.created])
        }
    }

    @Test(arguments: [0, 11, -1])
    func aQuantityOutside1To10IsRefusedAndStoresNothing(_ quantity: Int) async throws {
        try await withLedger { (ledger, _) throws in
            #expect(throws: PaymentQueueError.invalidQuantity(quantity)) {
                try ledger.addPayment(NewPayment(productID: "consumable", quantity: quantity))
            }
            #expect(try ledger.counts().transactions == 0)
        }
    }

    @Test func unknownAndEmptyProductsAreRefused() async throws {
        try await withLedger { (ledger, _) throws in
            #expect(throws: UnknownProductError(productIdentifier: "nope")) {
                try ledger.addPayment(NewPayment(productID: "nope"))
            }
            #expect(throws: PaymentQueueError.emptyProductIdentifier) {
                try ledger.addPayment(NewPayment(productID: ""))
            }
            #expect(try ledger.counts().transactions == 0)
            // A refused payment does not use up an id.
            #expect(try ledger.addPayment(NewPayment(productID: "consumable")).transaction.id == 1)
        }
    }

    @Test func anIdempotencyKeyReturnsTheExistingTransactionAndCreatesNothing() async throws {
        try await withLedger { (ledger, _) throws in
            let first = try ledger.addPayment(NewPayment(productID: "consumable", idempotencyKey: "order-42"))
            let processed = try ledger.applyPlannedOutcome(of: first.transaction.id)
            let again = try ledger.addPayment(NewPayment(productID: "consumable", idempotencyKey: "order-42"))
            #expect(!again.isNew)
            #expect(again.transaction == processed)
            #expect(try ledger.counts().transactions == 1)
            #expect(try ledger.events(of: 1).count == 2)
        }
    }

    @Test func anIdempotencyKeyReusedForAnotherPaymentIsRefused() async throws {
        try await withLedger { (ledger, _) throws in
            try ledger.addPayment(NewPayment(productID: "consumable", idempotencyKey: "k"))
            #expect(throws: PaymentQueueError.idempotencyKeyReused(key: "k", existingTransactionID: 1)) {
                try ledger.addPayment(NewPayment(productID: "nonconsumable", idempotencyKey: "k"))
            }
            #expect(throws: PaymentQueueError.invalidIdempotencyKey("")) {
                try ledger.addPayment(NewPayment(productID: "consumable", idempotencyKey: ""))
            }
            #expect(try ledger.counts().transactions == 1)
        }
    }

    @Test func productIdentifiersWithSQLMetacharactersAreStoredVerbatim() async throws {
        try await withLedger { (ledger, _) throws in
            let id = #"com.x'; DROP TABLE transactions; -- "quoted" %_\"#
            try ledger.saveProducts([Product(id: id, type: .consumable, price: 1)])
            let transaction = try ledger.addPayment(NewPayment(productID: id)).transaction
            #expect(try ledger.transaction(transaction.id)?.productID == id)
            #expect(try ledger.transactions(matching: TransactionFilter(productID: id)).map(\.id) == [transaction.id])
            #expect(try ledger.products(withIDs: [id]).first?.id == id)
        }
    }

    @Test func thePlannedOutcomeIsAppliedAndASubscriptionGetsItsExpiration() async throws {
        try await withLedger { (ledger, _) throws in
            let failed = try ledger.addPayment(
                NewPayment(
                    productID: "consumable", simulatedOutcome: .failed(.paymentNotAllowed))
            ).transaction
            #expect(try ledger.applyPlannedOutcome(of: failed.id).error == TransactionError(code: .paymentNotAllowed))
            let monthly = try ledger.addPayment(NewPayment(productID: "monthly")).transaction
            let bought = try ledger.applyPlannedOutcome(of: monthly.id)
            #expect(bought.state == .purchased)
            #expect(bought.expirationDate == SubscriptionPeriod(value: 1, unit: .month).advance(testEpoch))
            #expect(bought.subscriptionGroupID == "g")
            // Applying again changes nothing.
            #expect(try ledger.applyPlannedOutcome(of: monthly.id) == bought)
        }
    }

    @Test func purchasingAndDeferredTransactionsCannotBeFinished() async throws {
        try await withLedger { (ledger, _) throws in
            let purchasing = try ledger.addPayment(NewPayment(productID: "consumable")).transaction
            #expect(throws: PaymentQueueError.cannotFinishPurchasing(purchasing.id)) {
                try ledger.finish([purchasing.id])
            }
            let deferred = try ledger.addPayment(NewPayment(productID: "consumable", simulatedOutcome: .deferred))
                .transaction
            _ = try ledger.applyPlannedOutcome(of: deferred.id)
            #expect(throws: PaymentQueueError.cannotFinishDeferred(deferred.id)) { try ledger.finish([deferred.id]) }
            #expect(throws: PaymentQueueError.unknownTransaction(999)) { try ledger.finish([999]) }
            #expect(try ledger.unfinishedTransactions().count == 2)
        }
    }

    @Test func finishingIsIdempotentAndRecordedOnce() async throws {
        try await withLedger { (ledger, _) throws in
            let id = try ledger.addPayment(NewPayment(productID: "consumable")).transaction.id
            _ = try ledger.applyPlannedOutcome(of: id)
            let first = try ledger.finish([id])
            #expect(
                first.changed == [true] && first.transactions[0].isFinished
                    && first.transactions[0].finishedAt == testEpoch)
            let second = try ledger.finish([id])
            #expect(second.changed == [false] && second.transactions == first.transactions && second.finished.isEmpty)
            #expect(try ledger.events(of: id).map(\.kind) == [.created, .stateChanged, .finished])
            #expect(try ledger.unfinishedTransactions().isEmpty)
        }
    }

    @Test func aBatchFinishIsAllOrNothing() async throws {
        try await withLedger { (ledger, _) throws in
            let id = try ledger.addPayment(NewPayment(productID: "consumable")).transaction.id
            _ = try ledger.applyPlannedOutcome(of: id)
            #expect(throws: PaymentQueueError.unknownTransaction(77)) { try ledger.finish([id, 77]) }
            #expect(try ledger.transaction(id)?.isFinished == false)
        }
    }

    @Test func approveAndDeclineApplyToDeferredTransactionsOnly() async throws {
        try await withLedger { (ledger, _) throws in
            let a = try ledger.addPayment(NewPayment(productID: "nonconsumable", simulatedOutcome: .deferred))
                .transaction.id
            let b = try ledger.addPayment(NewPayment(productID: "nonconsumable", simulatedOutcome: .deferred))
                .transaction.id
            _ = try ledger.recoverAtLaunch().completed
            #expect(try ledger.perform(.approveAskToBuy(a)).transactions[0].state == .purchased)
            let declined = try ledger.perform(.declineAskToBuy(b)).transactions[0]
            #expect(declined.state == .failed && declined.error?.code == .paymentCancelled)
            #expect(throws: PaymentQueueError.notDeferred(a, state: .purchased)) {
                try ledger.perform(.approveAskToBuy(a))
            }
            #expect(throws: PaymentQueueError.notDeferred(b, state: .failed)) {
                try ledger.perform(.declineAskToBuy(b))
            }
            #expect(throws: PaymentQueueError.unknownTransaction(50)) { try ledger.perform(.approveAskToBuy(50)) }
            #expect(try ledger.events(of: a).map(\.toState) == [.purchasing, .deferred, .purchased])
        }
    }

    @Test func launchRecoveryCompletesPurchasingTransactionsWithTheirStoredOutcome() async throws {
        try await withLedger { (ledger, _) throws in
            try ledger.addPayment(NewPayment(productID: "consumable"))
            try ledger.addPayment(NewPayment(productID: "consumable", simulatedOutcome: .userCancelled))
            try ledger.addPayment(NewPayment(productID: "consumable", simulatedOutcome: .deferred))
            let completed = try ledger.recoverAtLaunch().completed
            #expect(completed.map(\.state) == [.purchased, .failed, .deferred])
            #expect(completed[1].error?.code == .paymentCancelled)
            #expect(try ledger.transactions(matching: TransactionFilter(state: .purchasing)).isEmpty)
            #expect(try ledger.recoverAtLaunch().completed.isEmpty)
        }
    }

    @Test func deliveriesAreCountedWithAnEvent() async throws {
        try await withLedger { (ledger, _) throws in
            let id = try ledger.addPayment(NewPayment(productID: "consumable")).transaction.id
            _ = try ledger.applyPlannedOutcome(of: id)
            let delivered = try ledger.recordDeliveryOfUnfinishedTransactions()
            #expect(delivered.map(\.deliveryCount) == [1] && delivered[0].lastDeliveredAt == testEpoch)
            #expect(try ledger.recordDeliveryOfUnfinishedTransactions()[0].deliveryCount == 2)
            #expect(try ledger.events(of: id).filter { $0.kind == .delivered }.count == 2)
        }
    }

    @Test func theDatabaseItselfRejectsIllegalChanges() async throws {
        try await withLedger { (ledger, _) throws in
            let id = try ledger.addPayment(NewPayment(productID: "consumable")).transaction.id
            _ = try ledger.applyPlannedOutcome(of: id)
            func rejects(_ sql: String) {
                #expect(throws: LedgerError.self, Comment(rawValue: sql)) {
                    try ledger.write { db in try db.execute(sql: sql) }
                }
            }
            rejects("UPDATE transactions SET state = 'deferred' WHERE id = \(id)")
            rejects("UPDATE transactions SET state = 'purchasing' WHERE id = \(id)")
            rejects("UPDATE transactions SET quantity = 11 WHERE id = \(id)")
            rejects("UPDATE transactions SET product_id = 'other' WHERE id = \(id)")
            rejects("UPDATE transaction_events SET to_state = 'failed'")
            _ = try ledger.finish([id])
            rejects("UPDATE transactions SET is_finished = 0, finished_at = NULL WHERE id = \(id)")
            #expect(try ledger.transaction(id)?.state == .purchased)
        }
    }

    @Test func idsAreNeverReusedAndSeededIdsReplay() async throws {
        let seededIDs: () async throws -> [UInt64] = {
            try await withLedgerResult(idGenerator: .seeded(42)) { (ledger, _) throws in
                try (0..<5).map { _ in try ledger.addPayment(NewPayment(productID: "consumable")).transaction.id }
            }
        }
        let first = try await seededIDs()
        #expect(first == (try await seededIDs()))
        #expect(first == first.sorted() && Set(first).count == 5)
        try await withLedger { (ledger, _) throws in
            #expect(
                try (0..<3).map { _ in try ledger.addPayment(NewPayment(productID: "consumable")).transaction.id } == [
                    1, 2, 3,
                ])
        }
        try await withLedger(idGenerator: TransactionIDGenerator { _ in 0 }) { (ledger, _) throws in
            #expect(throws: PaymentQueueError.idGeneratorWentBackwards(lastIssued: 0, proposed: 0)) {
                try ledger.addPayment(NewPayment(productID: "consumable"))
            }
            // Every path allocates ids the same way: the bulk one of synthetic histories too.
            #expect(throws: PaymentQueueError.idGeneratorWentBackwards(lastIssued: 0, proposed: 0)) {
                try ledger.appendSyntheticPurchases(productID: "consumable", finished: 2, unfinished: 1)
            }
            #expect(try ledger.allTransactions().isEmpty)
        }
        try await withLedger(idGenerator: .seeded(7)) { (ledger, _) throws in
            let unfinished = try ledger.appendSyntheticPurchases(productID: "consumable", finished: 3, unfinished: 2)
            let all = try ledger.allTransactions()
            #expect(
                all.count == 5 && all.map(\.id) == all.map(\.id).sorted()
                    && Array(all.map(\.id).suffix(2)) == unfinished)
            #expect(all.prefix(3).allSatisfy(\.isFinished) && !all.suffix(2).contains(where: \.isFinished))
            #expect(try ledger.addPayment(NewPayment(productID: "consumable")).transaction.id > all.last!.id)
            #expect(try ledger.verify() == [])
        }
    }

    @Test func listingPagesOldestFirstWithFilters() async throws {
        try await withLedger { (ledger, _) throws in
            for index in 0..<7 {
                let id = try ledger.addPayment(NewPayment(productID: index % 2 == 0 ? "consumable" : "nonconsumable"))
                    .transaction.id
                _ = try ledger.applyPlannedOutcome(of: id)
            }
            _ = try ledger.finish([1, 2])
            #expect(try ledger.transactions(matching: TransactionFilter(limit: 3)).map(\.id) == [1, 2, 3])
            #expect(try ledger.transactions(matching: TransactionFilter(afterID: 3, limit: 3)).map(\.id) == [4, 5, 6])
            #expect(
                try ledger.transactions(matching: TransactionFilter(productID: "nonconsumable")).map(\.id) == [2, 4, 6])
            #expect(
                try ledger.transactions(matching: TransactionFilter(unfinishedOnly: true)).map(\.id) == [3, 4, 5, 6, 7])
            #expect(
                try ledger.transactions(matching: TransactionFilter(state: .purchased, afterID: 6)).map(\.id) == [7])
            let counts = try ledger.counts()
            #expect(counts.transactions == 7 && counts.unfinished == 5 && counts.byState["purchased"] == 7)
        }
    }

    @Test func twoConnectionsWritingAtOnceBothSucceedInOrder() async throws {
        try await withLedger { (ledger, directory) throws in
            let other = try Ledger.open(at: directory + "/ledger.sqlite")
            defer { try? other.close() }
            try await withThrowingTaskGroup(of: [UInt64].self) { group in
                for writer in [ledger, other] {
                    group.addTask {
                        try (0..<25).map { _ in
                            try writer.addPayment(NewPayment(productID: "consumable")).transaction.id
                        }
                    }
                }
                var all: [UInt64] = []
                for try await ids in group {
                    #expect(ids == ids.sorted())
                    all += ids
                }
                #expect(all.sorted() == Array(1...50))
            }
        }
    }
}
