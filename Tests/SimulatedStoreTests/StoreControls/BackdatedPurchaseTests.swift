import Foundation
import LedgerTestSupport
import LedgerTesting
import StoreLedger
import StoreTesting
import Testing

/// Back-dated test purchases (StoreKitTest's `purchaseDate(_:renewalBehavior:)`).
@Suite struct BackdatedPurchaseTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let day: TimeInterval = 86_400

    static func withStore(_ body: (Ledger, PaymentQueue) async throws -> Void) async throws {
        try await withTemporaryLedger(configuration: LedgerConfiguration(clock: .fixed(now))) { ledger in
            try await body(ledger, try PaymentQueue(ledger: ledger))
        }
    }

    static func backdated(_ productID: String, daysAgo: Double, renews: Bool = true) -> Payment {
        var payment = Payment(productID: productID)
        payment.backdating = BackdatedPurchase(date: now.addingTimeInterval(-daysAgo * day), renews: renews)
        return payment
    }

    @Test func aOneTimePurchaseIsDatedAsAsked() async throws {
        try await Self.withStore { ledger, queue in
            let bought = try await queue.add(Self.backdated(SampleCatalog.nonConsumable, daysAgo: 10))
            #expect(bought.state == .purchased)
            #expect(bought.purchaseDate == Self.now.addingTimeInterval(-10 * Self.day))
            #expect(bought.originalPurchaseDate == bought.purchaseDate)
            #expect(try ledger.transaction(bought.id)?.purchaseDate == bought.purchaseDate, "as stored")
            #expect(try ledger.verify() == [])
        }
    }

    @Test func aSubscriptionRenewsFromItsDateUpToNow() async throws {
        try await Self.withStore { ledger, queue in
            let bought = try await queue.add(Self.backdated(SampleCatalog.subscription, daysAgo: 100))
            #expect(bought.purchaseDate == Self.now.addingTimeInterval(-100 * Self.day))
            let renewals = try await queue.processSubscriptionRenewals()
            let chain = [bought] + renewals
            // Each period starts where the last ended; the latest covers the store's time.
            for (earlier, later) in zip(chain, chain.dropFirst()) {
                #expect(later.purchaseDate == earlier.expirationDate && later.originalID == bought.id)
            }
            #expect(
                renewals.count == 3 && chain.last!.purchaseDate <= Self.now && chain.last!.expirationDate! > Self.now)
            #expect(try ledger.subscriptionStatus(forProduct: SampleCatalog.subscription)?.state == .subscribed)
            #expect(try ledger.verify() == [])
        }
    }

    @Test func cancelledImmediatelyASubscriptionHasItsFirstPeriodOnly() async throws {
        try await Self.withStore { ledger, queue in
            let bought = try await queue.add(
                Self.backdated(SampleCatalog.subscription, daysAgo: 100, renews: false))
            #expect(try await queue.processSubscriptionRenewals().isEmpty)
            let status = try #require(try ledger.subscriptionStatus(forProduct: SampleCatalog.subscription))
            #expect(status.state == .expired && status.expirationReason == .autoRenewDisabled)
            #expect(status.transaction.id == bought.id && !status.willAutoRenew)
        }
    }

    @Test func whatTheStoreCannotDateIsRefusedAndWritesNothing() async throws {
        try await Self.withStore { ledger, queue in
            let future = Self.backdated(SampleCatalog.nonConsumable, daysAgo: -1)
            await #expect(throws: PaymentQueueError.self) { try await queue.add(future) }
            let error = await #expect(throws: PaymentQueueError.self) { try await queue.add(future) }
            #expect("\(error!)".contains("it is after the store's time"))
            _ = try await queue.add(Payment(productID: SampleCatalog.subscription))
            let second = await #expect(throws: PaymentQueueError.self) {
                try await queue.add(Self.backdated(SampleCatalog.yearlySubscription, daysAgo: 5))
            }
            #expect("\(second!)".contains("only a first purchase may be back-dated"))
            #expect(try ledger.allTransactions().count == 1, "nothing written")
        }
        // Under a compressed time rate a day back is tens of thousands of periods: too many.
        try await Self.withStore { ledger, queue in
            _ = try StoreTestSession(ledger: ledger).update { $0.timeRate = .oneRenewalEveryTwoSeconds }
            await #expect(throws: StoreControlError.tooManyRenewals(limit: LedgerConfiguration.defaultRenewalLimit)) {
                try await queue.add(Self.backdated(SampleCatalog.subscription, daysAgo: 1))
            }
            #expect(try ledger.allTransactions().isEmpty)
        }
    }

    @Test func aDeferredBackdatedSubscriptionChargedAfterItsGroupWasBoughtIsDatedWhenCharged() async throws {
        try await Self.withStore { ledger, queue in
            var payment = Self.backdated(SampleCatalog.subscription, daysAgo: 50)
            payment.simulatedOutcome = .deferred
            let deferred = try await queue.add(payment)
            _ = try await queue.add(Payment(productID: SampleCatalog.yearlySubscription))
            let approved = try await queue.approve(deferred.id)
            #expect(approved.state == .purchased && approved.purchaseDate == Self.now, "the date was dropped")
            #expect(try ledger.verify() == [])
        }
    }

    /// Seeded: any date up to a year back gives a chain of contiguous periods from it, the
    /// latest covering the store's time, as many as the calendar counts.
    @Test(arguments: 0..<12)
    func randomDatesGiveAContiguousChainUpToNow(seed: UInt64) async throws {
        var random = SplitMix64(seed: seed)
        let daysAgo = Double.random(in: 0...365, using: &random)
        let yearly = Bool.random(using: &random)
        try await Self.withStore { ledger, queue in
            let product = yearly ? SampleCatalog.yearlySubscription : SampleCatalog.subscription
            let bought = try await queue.add(Self.backdated(product, daysAgo: daysAgo))
            let chain = [bought] + (try await queue.processSubscriptionRenewals())
            #expect(zip(chain, chain.dropFirst()).allSatisfy { $0.expirationDate == $1.purchaseDate }, "seed \(seed)")
            let asked = Self.now.addingTimeInterval(-daysAgo * Self.day)
            #expect(chain.first!.purchaseDate.ledgerMilliseconds == asked.ledgerMilliseconds, "seed \(seed)")
            #expect(chain.last!.expirationDate! > Self.now && chain.last!.purchaseDate <= Self.now, "seed \(seed)")
            #expect(chain.count <= (yearly ? 2 : 14), "seed \(seed): \(chain.count) periods")
        }
    }
}
