import Foundation
import LedgerTestSupport
import StoreLedger
import StoreTesting
import Testing

@testable import LedgerTesting
@testable import SimulatedStore

/// A current subscriber's downgrade, crossgrade to another period, offer for the product they
/// subscribe to, or purchase of that product again to cancel a change: the App Store makes no
/// transaction and charges nothing now (Apple: a downgrade's "product change occurs on the
/// subscription renewal date. The resulting transactionReason is RENEWAL"). The payment ends
/// finished, with no period, and none of the server's views, restores or StoreKit 2's lists has
/// it; the change is notified about the period the customer has.
@Suite struct RenewalChangeTests {
    static let day: TimeInterval = 86_400

    /// What the App Store's server lists, ids oldest first.
    static func serverIDs(_ ledger: Ledger) throws -> [UInt64] {
        var query = ServerHistoryQuery()
        query.limit = 1_000
        return try ledger.serverHistory(query).transactions.map(\.id)
    }

    @Test func aDowngradeMakesNoTransactionAndChargesNothingUntilTheRenewal() async throws {
        try await StoreFixture.with { store in
            _ = try store.session.set(.notificationURL, to: "http://127.0.0.1:9/n")
            let pro = try await store.buy(SampleCatalog.subscription)
            try store.ledger.advanceClock(by: Self.day)
            let downgrade = try await store.buy(SampleCatalog.basicSubscription)
            // The device's payment ends: purchased, no period, finished (nothing for the app to finish).
            #expect(downgrade.state == .purchased && downgrade.isFinished)
            #expect(downgrade.expirationDate == downgrade.purchaseDate)
            #expect(try store.ledger.subscriptionChanged(byPayment: downgrade.id)?.id == pro.id)
            #expect(try store.ledger.subscriptionChanged(byPayment: pro.id) == nil)
            // No transaction of the App Store's: not listed, not signed for the server, no order.
            #expect(try Self.serverIDs(store.ledger) == [pro.id])
            #expect(try store.ledger.serverSignedPurchase(downgrade.id) == nil)
            #expect(try store.ledger.serverSignedPurchase(pro.id) != nil)
            #expect(try store.ledger.transaction(forOrder: OrderID.of(downgrade.id)) == nil)
            #expect(try store.ledger.transaction(forOrder: OrderID.of(pro.id))?.id == pro.id)
            #expect(try store.ledger.latestTransaction(for: SampleCatalog.basicSubscription) == nil)
            // The change is notified about the period the customer has, whose renewal names it.
            let notified = try #require(try store.ledger.notifications().last)
            #expect(notified.type == "DID_CHANGE_RENEWAL_PREF" && notified.subtype == "DOWNGRADE")
            #expect(notified.transactionID == pro.id)
            let status = try #require(try store.ledger.subscriptionStatus(forProduct: SampleCatalog.subscription))
            #expect(status.transaction.id == pro.id && status.autoRenewProductID == SampleCatalog.basicSubscription)
            #expect(try store.queue.currentEntitlements().map(\.id) == [pro.id])
            // A restore copies the subscription, never the payment.
            await store.queue.restoreCompletedTransactions()
            #expect(
                try store.ledger.allTransactions().filter { $0.restoredFromID != nil }.map(\.restoredFromID) == [pro.id]
            )
            // The renewal is the downgrade's one transaction, and its one charge.
            let renewed = try await store.session.advanceClock(by: 31 * Self.day)
            #expect(renewed.map(\.productID) == [SampleCatalog.basicSubscription])
            #expect(renewed.first?.reason == .renewal && renewed.first?.originalID == pro.id)
            #expect(try Self.serverIDs(store.ledger) == [pro.id, renewed[0].id])
            #expect(try store.ledger.verify() == [])
            // Each charged transaction has one charge notification; the payment none.
            let violations = try InvariantChecker.checkOutbox(
                store.ledger,
                byID: Dictionary(uniqueKeysWithValues: try store.ledger.allTransactions().map { ($0.id, $0) }))
            #expect(violations.isEmpty, "\(violations)")
        }
    }

    @Test func aCrossgradeToAnotherPeriodIsARenewalChangeToo() async throws {
        try await StoreFixture.with { store in
            let monthly = try await store.buy(SampleCatalog.subscription)
            let yearly = try await store.buy(SampleCatalog.yearlySubscription)
            #expect(try store.ledger.subscriptionChanged(byPayment: yearly.id)?.id == monthly.id)
            #expect(try Self.serverIDs(store.ledger) == [monthly.id])
            #expect(
                try store.ledger.pendingProductChange(for: SampleCatalog.subscription)
                    == SampleCatalog.yearlySubscription)
        }
    }

    @Test func buyingTheCurrentProductAgainCancelsAPendingDowngrade() async throws {
        try await StoreFixture.with { store in
            _ = try store.session.set(.notificationURL, to: "http://127.0.0.1:9/n")
            let pro = try await store.buy(SampleCatalog.subscription)
            // Without a change waiting, buying it again is refused, as before.
            let again = try await store.buy(SampleCatalog.subscription)
            #expect(again.state == .failed && again.error?.message.hasPrefix("Already subscribed to") == true)
            try await store.queue.finish(again.id)
            _ = try await store.buy(SampleCatalog.basicSubscription)
            let back = try await store.buy(SampleCatalog.subscription)
            #expect(back.state == .purchased && back.isFinished && back.expirationDate == back.purchaseDate)
            #expect(try store.ledger.subscriptionChanged(byPayment: back.id)?.id == pro.id)
            #expect(try store.ledger.pendingProductChange(for: SampleCatalog.subscription) == nil)
            // Apple: DID_CHANGE_RENEWAL_PREF with no subtype, "effectively canceling a downgrade".
            let notified = try #require(try store.ledger.notifications().last)
            #expect(notified.type == "DID_CHANGE_RENEWAL_PREF" && notified.subtype == nil)
            #expect(notified.transactionID == pro.id)
            #expect(try Self.serverIDs(store.ledger) == [pro.id])
            let renewed = try await store.session.advanceClock(by: 31 * Self.day)
            #expect(renewed.map(\.productID) == [SampleCatalog.subscription], "it renews what it was")
            // With no change waiting any more, buying it again is refused again.
            #expect(try await store.buy(SampleCatalog.subscription).state == .failed)
        }
    }

    /// An Ask to Buy downgrade approved later is a renewal change when it is charged; a purchase
    /// of the current product approved after the change it was to cancel is gone is refused as
    /// "already subscribed" then (no cancellation notified for nothing).
    @Test func whatAnAskToBuyPaymentChangesIsDecidedWhenItIsApproved() async throws {
        try await StoreFixture.with { store in
            _ = try store.session.set(.notificationURL, to: "http://127.0.0.1:9/n")
            let pro = try await store.buy(SampleCatalog.subscription)
            let asked = try await store.buy(SampleCatalog.basicSubscription, outcome: .deferred)
            #expect(asked.state == .deferred)
            let approved = try await store.session.approveAskToBuyTransaction(asked.id)
            #expect(approved.state == .purchased && approved.isFinished)
            #expect(try store.ledger.subscriptionChanged(byPayment: asked.id)?.id == pro.id)
            #expect(
                try store.ledger.pendingProductChange(for: SampleCatalog.subscription)
                    == SampleCatalog.basicSubscription)
            // A purchase of pro asked while the downgrade waits, approved after another cancelled it.
            let cancel = try await store.buy(SampleCatalog.subscription, outcome: .deferred)
            _ = try await store.session.buyProduct(Payment(productID: SampleCatalog.subscription))
            #expect(try store.ledger.pendingProductChange(for: SampleCatalog.subscription) == nil)
            let notified = try store.ledger.notifications().count
            let late = try await store.session.approveAskToBuyTransaction(cancel.id)
            #expect(late.state == .failed && late.error?.message.hasPrefix("Already subscribed to") == true)
            #expect(try store.ledger.subscriptionChanged(byPayment: cancel.id) == nil)
            #expect(try store.ledger.notifications().count == notified, "nothing notified")
        }
    }

    /// A downgrade while auto-renew is off turns it on: the customer chose what it renews to.
    @Test func aDowngradeWithAutoRenewOffTurnsItOn() async throws {
        try await StoreFixture.with { store in
            _ = try await store.buy(SampleCatalog.subscription)
            try await store.session.setAutoRenew(false, for: SampleCatalog.subscription)
            _ = try await store.buy(SampleCatalog.basicSubscription)
            #expect(try store.ledger.isAutoRenewEnabled(for: SampleCatalog.subscription))
            let renewed = try await store.session.advanceClock(by: 31 * Self.day)
            #expect(renewed.map(\.productID) == [SampleCatalog.basicSubscription])
        }
    }

    /// Nothing was charged: a downgrade's payment cannot be refunded, nor its refund asked for.
    @Test func aRenewalChangeCannotBeRefunded() async throws {
        try await StoreFixture.with { store in
            _ = try await store.buy(SampleCatalog.subscription)
            let downgrade = try await store.buy(SampleCatalog.basicSubscription)
            await #expect(throws: StoreControlError.nothingCharged(downgrade.id)) {
                try await store.session.refundTransaction(downgrade.id)
            }
            await #expect(throws: StoreControlError.nothingCharged(downgrade.id)) {
                try await store.session.requestRefund(downgrade.id)
            }
            #expect(try store.ledger.transaction(downgrade.id)?.revocationDate == nil)
        }
    }

    /// A payment interrupted by a crash between its commit and its charge is completed at the
    /// next launch by the same rule: a renewal change, finished, not a transaction.
    @Test func aDowngradeCompletedAtLaunchIsStillARenewalChange() async throws {
        try await StoreFixture.with { store in
            let pro = try await store.buy(SampleCatalog.subscription)
            let added = try await store.ledger.addPayment(NewPayment(productID: SampleCatalog.basicSubscription))
            #expect(added.transaction.state == .purchasing)
            let recovered = try store.ledger.recoverAtLaunch().completed
            #expect(recovered.map(\.id) == [added.transaction.id] && recovered.first?.isFinished == true)
            #expect(try store.ledger.subscriptionChanged(byPayment: added.transaction.id)?.id == pro.id)
            #expect(try Self.serverIDs(store.ledger) == [pro.id])
        }
    }
}
