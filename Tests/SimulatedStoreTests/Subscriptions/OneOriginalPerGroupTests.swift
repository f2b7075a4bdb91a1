import Foundation
import LedgerTestSupport
import LedgerTesting
import StoreLedger
import StoreTesting
import Testing

/// One original transaction per subscription group (StoreKit's `originalID`: "the ID of the
/// original transaction for productID or subscriptionGroupID if this is a subscription"): the
/// customer's subscription keeps the group's first purchase as its original transaction, and
/// its date as the original purchase date, across renewals, upgrades, downgrades, crossgrades,
/// lapses, resubscriptions, refunds and offers. A family member's share keeps its own.
@Suite struct OneOriginalPerGroupTests {
    static let day: TimeInterval = 86_400

    @Test func everyWayOfBuyingTheGroupAgainKeepsItsOriginalTransaction() async throws {
        try await StoreFixture.with { store in
            let first = try await store.buy(SampleCatalog.basicSubscription)
            #expect(first.originalID == first.id)
            var seen: [PaymentTransaction] = []
            try store.ledger.advanceClock(by: Self.day)
            seen.append(try await store.buy(SampleCatalog.subscription))  // an upgrade
            seen.append(try await store.buy(SampleCatalog.yearlySubscription))  // a crossgrade, at the renewal
            seen += try await store.session.advanceClock(by: 31 * Self.day)  // the renewal into yearly
            _ = try await store.session.expireSubscription(SampleCatalog.yearlySubscription)
            try store.ledger.advanceClock(by: 10 * Self.day)
            seen.append(try await store.buy(SampleCatalog.subscription))  // a resubscription after a lapse
            _ = try await store.session.refundTransaction(seen.last!.id)
            seen.append(try await store.buy(SampleCatalog.basicSubscription))  // after a refund
            #expect(seen.allSatisfy { $0.state == .purchased }, "\(seen.map { ($0.productID, $0.state) })")
            #expect(seen.contains { $0.reason == .renewal && $0.productID == SampleCatalog.yearlySubscription })
            for transaction in seen {
                let stored = try #require(try store.ledger.transaction(transaction.id))
                #expect(stored.originalID == first.id, "\(stored.id) \(stored.productID)")
                #expect(stored.originalPurchaseDate == first.purchaseDate, "\(stored.id)")
            }
            #expect(try store.ledger.subscriptionStatus(forGroup: "pro")?.transaction.originalID == first.id)
            #expect(try store.ledger.verify() == [])
        }
    }

    /// An offer redeemed after a lapse (a win-back offer) resubscribes in the group's chain.
    @Test func anOfferRedeemedAfterALapseKeepsTheOriginalTransaction() async throws {
        try await StoreFixture.with { store in
            let first = try await store.buy(SampleCatalog.basicSubscription)
            _ = try await store.session.advanceClock(by: 31 * Self.day)  // paid for a month: renewed
            _ = try await store.session.expireSubscription(SampleCatalog.basicSubscription)
            try store.ledger.advanceClock(by: 40 * Self.day)
            var payment = Payment(productID: SampleCatalog.basicSubscription)
            payment.winBackOffer = "COMEBACK_HALF"
            let back = try await store.session.buyProduct(payment)
            #expect(back.offer?.type == .winBack)
            #expect(back.originalID == first.id && back.originalPurchaseDate == first.purchaseDate)
            #expect(try store.ledger.verify() == [])
        }
    }

    /// An interrupted purchase's replacement, made once its issue is resolved, is a purchase of
    /// the group like any other: it keeps the group's original transaction.
    @Test func anInterruptedPurchasesReplacementKeepsTheOriginalTransaction() async throws {
        try await StoreFixture.with { store in
            let first = try await store.buy(SampleCatalog.subscription)
            _ = try await store.session.expireSubscription(SampleCatalog.subscription)
            try store.ledger.advanceClock(by: 10 * Self.day)
            try store.session.update { $0.interruptedPurchasesEnabled = true }
            let interrupted = try await store.buy(SampleCatalog.yearlySubscription)
            #expect(interrupted.state == .failed)
            try await store.queue.finish(interrupted)
            let replacement = try #require(try await store.session.resolveIssueForTransaction(interrupted.id))
            #expect(replacement.state == .purchased && replacement.id != interrupted.id)
            #expect(replacement.originalID == first.id && replacement.originalPurchaseDate == first.purchaseDate)
            #expect(try store.ledger.verify() == [])
        }
    }

    /// A family member's purchase shared with the customer is theirs: its own original
    /// transaction, beside the customer's own subscription of the group; the customer's next
    /// purchase keeps the customer's.
    @Test func aFamilyShareKeepsItsOwnOriginalTransaction() async throws {
        try await StoreFixture.with { store in
            let own = try await store.buy(SampleCatalog.subscription)
            let shared = try await store.session.shareFamilyPurchase(
                Payment(productID: SampleCatalog.yearlySubscription))
            #expect(shared.originalID == shared.id && shared.originalID != own.originalID)
            _ = try await store.session.expireSubscription(SampleCatalog.subscription)
            try store.ledger.advanceClock(by: 40 * Self.day)
            let again = try await store.buy(SampleCatalog.subscription)
            #expect(again.originalID == own.id)
            #expect(try store.ledger.verify() == [])
        }
    }
}
