import Foundation
import LedgerTestSupport
import LedgerTesting
import StoreLedger
import StoreTesting
import Synchronization
import Testing

/// Reversed refunds (Apple's REFUND_REVERSED): the App Store gives back, after a dispute, what a
/// refund took.
@Suite struct RefundReversalTests {
    static let day = NotificationOutboxTests.day

    @Test func aReversedRefundEntitlesAgainWithTheCopiesItRevoked() async throws {
        try await NotificationOutboxTests.withNotifyingStore { ledger, session in
            let bought = try await session.buyProduct(Payment(productID: SampleCatalog.nonConsumable))
            let copy = try #require(
                try await PaymentQueue(ledger: ledger).restoreCompletedTransactions().restored.all().first)
            try await session.refundTransaction(bought.id, revocationPercentage: 25_000)
            #expect(try !ledger.currentEntitlements().map(\.productID).contains(SampleCatalog.nonConsumable))

            let reinstated = try await session.reverseRefund(of: copy.id)
            #expect(reinstated.id == copy.id, "the transaction asked for is returned")
            for id in [bought.id, copy.id] {
                let transaction = try #require(try ledger.transaction(id))
                #expect(transaction.revocationDate == nil && transaction.revocationReason == nil, "\(id)")
                #expect(try ledger.revocationPercentage(of: id) == nil, "the prorated part goes: \(id)")
                #expect(try ledger.events(of: id).last?.kind == .reinstated, "\(id)")
                let signed = try PriceIncreaseTests.payload(try ledger.signedTransaction(id))
                #expect(signed["revocationDate"] == nil && signed["revocationType"] == nil, "\(id)")
                #expect(signed["revocationPercentage"] == nil && signed["revocationReason"] == nil, "\(id)")
            }
            #expect(try ledger.currentEntitlements().map(\.productID).contains(SampleCatalog.nonConsumable))
            // One notification, of the purchase (the copy is the same purchase).
            let last = try #require(try ledger.notifications().last)
            #expect(last.type == "REFUND_REVERSED" && last.subtype == nil && last.transactionID == bought.id)
            #expect(try ledger.verify().isEmpty)
            // It may be refunded again, and reversed again.
            try await session.refundTransaction(bought.id, revocationPercentage: 50_000)
            #expect(try ledger.revocationPercentage(of: copy.id) == 50_000)
            try await session.reverseRefund(of: bought.id)
            #expect(
                try RefundRequestTests.notified(ledger).suffix(3) == ["REFUND_REVERSED", "REFUND", "REFUND_REVERSED"])
            #expect(try ledger.verify().isEmpty)
        }
    }

    @Test func whatHasNoRefundToReverseIsRefusedAndNothingChanges() async throws {
        try await NotificationOutboxTests.withNotifyingStore { ledger, session in
            let bought = try await session.buyProduct(Payment(productID: SampleCatalog.nonConsumable))
            let shared = try await session.shareFamilyPurchase(Payment(productID: FamilySharingTests.shareable))
            try await session.revokeFamilySharing(shared.id)
            let sharedAndRefunded = try await session.shareFamilyPurchase(
                Payment(productID: SampleCatalog.yearlySubscription))
            try await session.refundTransaction(sharedAndRefunded.id)
            let before = try ledger.notifications().count
            await #expect(throws: PaymentQueueError.unknownTransaction(999)) {
                try await session.reverseRefund(of: 999)
            }
            await #expect(throws: StoreControlError.notRefunded(bought.id)) {
                try await session.reverseRefund(of: bought.id)
            }
            for revoked in [shared.id, sharedAndRefunded.id] {
                await #expect(throws: StoreControlError.revokedByFamilySharing(revoked)) {
                    try await session.reverseRefund(of: revoked)
                }
                #expect(try ledger.transaction(revoked)?.revocationDate != nil)
                #expect(try ledger.events(of: revoked).last?.kind == .revoked)
            }
            #expect(try ledger.notifications().count == before)
        }
    }

    /// A subscription keeps its renewal date (Apple): reversed while its period runs, it renews
    /// at the period's end; reversed after the period ended, it stays ended and nothing is
    /// charged for the time it was refunded.
    @Test func aSubscriptionKeepsItsRenewalDate() async throws {
        try await NotificationOutboxTests.withNotifyingStore { ledger, session in
            let running = try await session.buyProduct(Payment(productID: SampleCatalog.subscription))
            try await session.refundTransaction(running.id)
            #expect(try ledger.subscriptionStatus(forProduct: SampleCatalog.subscription)?.state == .revoked)
            #expect(try ledger.nextRenewalDate() == nil, "a refunded subscription does not renew")
            try await session.reverseRefund(of: running.id)
            let status = try #require(try ledger.subscriptionStatus(forProduct: SampleCatalog.subscription))
            #expect(status.state == .subscribed && status.willAutoRenew)
            #expect(try ledger.nextRenewalDate() == running.expirationDate)
            let renewals = try await session.advanceClock(by: 32 * Self.day)
            #expect(renewals.map(\.productID) == [SampleCatalog.subscription])
            #expect(renewals.first?.purchaseDate == running.expirationDate)
        }
        try await NotificationOutboxTests.withNotifyingStore { ledger, session in
            let ended = try await session.buyProduct(Payment(productID: SampleCatalog.subscription))
            try await session.refundTransaction(ended.id)
            #expect(try await session.advanceClock(by: 65 * Self.day).isEmpty)
            try await session.reverseRefund(of: ended.id)
            let status = try #require(try ledger.subscriptionStatus(forProduct: SampleCatalog.subscription))
            #expect(status.state == .expired)
            #expect(try ledger.nextRenewalDate() == nil)
            #expect(try await session.advanceClock(by: 65 * Self.day).isEmpty, "nothing renews for the refunded time")
            #expect(try ledger.verify().isEmpty)
        }
    }

    /// Reversing the refund of an older period leaves the group's renewals as they were: the
    /// current period, which fell due while nobody renewed it, still renews. The store's renewal
    /// task is told to look again.
    @Test func anOlderPeriodsReversalKeepsTheGroupRenewing() async throws {
        let machine = Mutex(NotificationOutboxTests.now)
        let clock = LedgerClock { machine.withLock { $0 } }
        try await withTemporaryLedger(configuration: LedgerConfiguration(clock: clock)) { ledger in
            let session = StoreTestSession(ledger: ledger)
            let first = try await session.buyProduct(Payment(productID: SampleCatalog.subscription))
            let renewal = try #require(try await session.advanceClock(by: 32 * Self.day).first)
            try await session.refundTransaction(first.id)
            // Time passes the renewal's end with nobody renewing (no app, no `ledger serve`).
            machine.withLock { $0 += 31 * Self.day }
            #expect(try ledger.storeDate() > (try #require(renewal.expirationDate)))
            let outcome = try await ledger.perform(.reverseRefund(first.id))
            #expect(outcome.movesNextRenewal && outcome.notice == .reinstated)
            #expect(try ledger.nextRenewalDate() == renewal.expirationDate)
            let renewed = try await ledger.perform(.renewDueSubscriptions).transactions
            #expect(renewed.map(\.purchaseDate) == [try #require(renewal.expirationDate)])
        }
    }

    /// A yearly period refunded, then a monthly one bought: reversing the yearly refund would
    /// make two periods of one subscription run side by side, so it is refused, nothing changes,
    /// and the monthly subscription stays the one (its status, "already subscribed", renewals).
    @Test func aRefundIsNotReversedBesideALaterPeriodOfItsSubscription() async throws {
        try await NotificationOutboxTests.withNotifyingStore { ledger, session in
            let yearly = try await session.buyProduct(Payment(productID: SampleCatalog.yearlySubscription))
            try await session.refundTransaction(yearly.id)
            let monthly = try await session.buyProduct(Payment(productID: SampleCatalog.subscription))
            let before = try ledger.allTransactions()
            await #expect(throws: StoreControlError.supersededSinceRefund(yearly.id, by: monthly.id)) {
                try await session.reverseRefund(of: yearly.id)
            }
            #expect(try ledger.allTransactions() == before, "nothing changed")
            #expect(try ledger.subscriptionStatus(forGroup: "pro")?.transaction.id == monthly.id)
            let again = try await session.buyProduct(Payment(productID: SampleCatalog.subscription))
            #expect(again.state == .failed && again.error?.message.hasPrefix("Already subscribed") == true)
            let renewed = try await session.advanceClock(by: 32 * Self.day)
            #expect(renewed.map(\.productID) == [SampleCatalog.subscription])
            #expect(renewed.first?.originalID == monthly.originalID)
        }
    }

    /// The queue's observers hear `reinstatedTransactions`, after the commit, with the rows as
    /// stored (finished ones included).
    @Test func observersHearTheReinstatedTransactions() async throws {
        try await withTemporaryLedger { ledger in
            let queue = try PaymentQueue(ledger: ledger)
            let session = StoreTestSession(queue: queue)
            let bought = try await queue.add(Payment(productID: SampleCatalog.nonConsumable))
            try await queue.finish(bought.id)
            try await session.refundTransaction(bought.id)
            let updates = try await queue.updates()
            try await session.reverseRefund(of: bought.id)
            var iterator = updates.makeAsyncIterator()
            guard case .reinstated(let transactions) = await iterator.next() else {
                Issue.record("expected a reinstatement")
                return
            }
            #expect(transactions.map(\.id) == [bought.id])
            #expect(transactions[0].isFinished && transactions[0].revocationDate == nil)
        }
    }
}
