import Foundation
import LedgerTestSupport
import LedgerTesting
import StoreLedger
import StoreTesting
import Testing

/// Win-back offers: the sample catalog's basic subscription has two. COMEBACK_FREE (a free
/// month) is for a churned customer who paid for at least 1 month, within 6 months of the
/// lapse; COMEBACK_HALF (3 months at 0.99, high priority) needs 2 paid months, a lapse of 1 to
/// 24 months, and 6 months since the last win-back offer.
@Suite struct WinBackOfferTests {
    static let basic = SampleCatalog.basicSubscription
    static let day = NotificationOutboxTests.day
    static let month = SubscriptionPeriod(value: 1, unit: .month)

    /// Buys the basic subscription, lets it renew `paidMonths - 1` times, turns auto-renew off
    /// and lets it lapse for `lapseDays` days after its last period's end.
    static func churn(
        _ session: StoreTestSession, paidMonths: Int, lapseDays: Int, at start: Date = NotificationOutboxTests.now
    ) async throws -> PaymentTransaction {
        let bought = try await session.buyProduct(Payment(productID: basic))
        var end = try #require(bought.expirationDate)
        if paidMonths > 1 {
            end = month.advance(end, times: paidMonths - 1)
            _ = try await session.setClock(to: end.addingTimeInterval(-1))
        }
        try await session.setAutoRenew(false, for: basic)
        _ = try await session.setClock(to: end.addingTimeInterval(Double(lapseDays) * day))
        return bought
    }

    static func winBack(_ id: String) -> Payment {
        var payment = Payment(productID: basic)
        payment.winBackOffer = id
        return payment
    }

    /// What a churned customer may redeem is what the status lists: the win-back offers of their
    /// most recent subscription in the group, not another product's of the group.
    @Test func onlyTheMostRecentSubscriptionsOffersAreRedeemable() async throws {
        try await NotificationOutboxTests.withNotifyingStore { ledger, session in
            let bought = try await session.buyProduct(Payment(productID: SampleCatalog.subscription))
            let end = try #require(bought.expirationDate)
            _ = try await session.setClock(to: Self.month.advance(end).addingTimeInterval(-1))
            try await session.setAutoRenew(false, for: SampleCatalog.subscription)
            _ = try await session.setClock(to: Self.month.advance(end).addingTimeInterval(10 * Self.day))
            let status = try #require(try ledger.subscriptionStatus(forProduct: Self.basic))
            #expect(status.state == .expired && status.transaction.productID == SampleCatalog.subscription)
            #expect(status.eligibleWinBackOfferIDs == [], "pro.monthly has no win-back offer")
            let before = try ledger.allTransactions().count
            await #expect(
                throws: PromotionalOfferError.winBackIneligible(
                    productID: Self.basic, offerID: "COMEBACK_FREE",
                    why:
                        "win-back offers are those of the customer's most recent subscription in the group, \(SampleCatalog.subscription)"
                )
            ) { try await session.buyProduct(Self.winBack("COMEBACK_FREE")) }
            #expect(try ledger.allTransactions().count == before, "nothing recorded")
        }
    }

    @Test func theCatalogReadsEachOfferAndItsRules() async throws {
        try await withTemporaryLedger { ledger in
            let offers = try #require(try ledger.products(withIDs: [Self.basic]).first?.subscription?.winBackOffers)
            #expect(offers.map(\.offerID) == ["COMEBACK_FREE", "COMEBACK_HALF"])
            #expect(offers[0].offer.paymentMode == .freeTrial && offers[0].offer.period.description == "P1M")
            #expect(offers[0].eligibility == .init(paidMonths: 1, monthsSinceLapse: 0...6, waitMonths: nil))
            #expect(offers[0].priority == .normal)
            #expect(offers[1].offer.paymentMode == .payAsYouGo && offers[1].offer.periodCount == 3)
            #expect(offers[1].offer.price == Decimal(string: "0.99"))
            #expect(offers[1].eligibility == .init(paidMonths: 2, monthsSinceLapse: 1...24, waitMonths: 6))
            #expect(offers[1].priority == .high)
        }
    }

    @Test func aChurnedSubscriberRedeemsAnOfferTheRulesAllow() async throws {
        try await NotificationOutboxTests.withNotifyingStore { ledger, session in
            let bought = try await session.buyProduct(Payment(productID: Self.basic))
            #expect(try ledger.subscriptionStatus(forProduct: Self.basic)?.eligibleWinBackOfferIDs == [])
            await #expect(
                throws: PromotionalOfferError.winBackIneligible(
                    productID: Self.basic, offerID: "COMEBACK_FREE",
                    why: "the customer is subscribed now; win-back offers are for churned subscribers")
            ) { try await session.buyProduct(Self.winBack("COMEBACK_FREE")) }
            try await session.setAutoRenew(false, for: Self.basic)
            _ = try await session.advanceClock(by: 32 * Self.day)
            let churned = try #require(try ledger.subscriptionStatus(forProduct: Self.basic))
            #expect(churned.state == .expired && churned.eligibleWinBackOfferIDs == ["COMEBACK_FREE"])
            let renewalInfo = try PriceIncreaseTests.payload(try ledger.signedRenewalInfo(churned))
            #expect(renewalInfo["eligibleWinBackOfferIds"] as? [String] == ["COMEBACK_FREE"])
            // One month paid: the half-price offer needs two, and a month's lapse.
            let before = try ledger.allTransactions().count
            await #expect(
                throws: PromotionalOfferError.winBackIneligible(
                    productID: Self.basic, offerID: "COMEBACK_HALF",
                    why: "the subscription lapsed less than 1 month(s) ago")
            ) { try await session.buyProduct(Self.winBack("COMEBACK_HALF")) }
            #expect(try ledger.allTransactions().count == before, "a refused offer records nothing")

            let redeemed = try await session.buyProduct(Self.winBack("COMEBACK_FREE"))
            #expect(redeemed.state == .purchased)
            #expect(
                redeemed.offer
                    == TransactionOffer(
                        type: .winBack, id: "COMEBACK_FREE", paymentMode: .freeTrial,
                        period: Self.month))
            #expect(redeemed.expirationDate == Self.month.advance(redeemed.purchaseDate))
            #expect(redeemed.purchaseDate > bought.purchaseDate)
            let signed = try PriceIncreaseTests.payload(try ledger.signedTransaction(redeemed.id))
            #expect(signed["offerType"] as? Int == 4 && signed["offerIdentifier"] as? String == "COMEBACK_FREE")
            #expect(signed["offerDiscountType"] as? String == "FREE_TRIAL" && signed["price"] as? Int == 0)
            let last = try #require(try ledger.notifications().last)
            #expect(last.type == "OFFER_REDEEMED" && last.subtype == "RESUBSCRIBE")
            #expect(try ledger.subscriptionStatus(forProduct: Self.basic)?.eligibleWinBackOfferIDs == [])
            #expect(try ledger.verify().isEmpty)
        }
    }

    /// Seeded random histories (1 to 4 paid months, a lapse of 0 to 900 days): each offer is
    /// eligible exactly when its paid months and lapse window hold, high priority first.
    @Test(arguments: 0..<12)
    func eligibilityFollowsEachOffersRules(seed: UInt64) async throws {
        var random = SplitMix(seed: seed)
        let paid = Int.random(in: 1...4, using: &random)
        let lapse = Int.random(in: 0...900, using: &random)
        try await withTemporaryLedger(configuration: LedgerConfiguration(clock: .fixed(NotificationOutboxTests.now))) {
            ledger in
            let session = StoreTestSession(ledger: ledger)
            let bought = try await Self.churn(session, paidMonths: paid, lapseDays: lapse)
            let status = try #require(try ledger.subscriptionStatus(forProduct: Self.basic))
            let lapsedAt = try #require(status.transaction.expirationDate)
            let now = try ledger.storeDate()
            func within(_ months: ClosedRange<Int>) -> Bool {
                now >= Self.month.advance(lapsedAt, times: months.lowerBound)
                    && now <= Self.month.advance(lapsedAt, times: months.upperBound)
            }
            var expected: [String] = []
            if paid >= 2 && within(1...24) { expected.append("COMEBACK_HALF") }
            if paid >= 1 && within(0...6) { expected.append("COMEBACK_FREE") }
            #expect(
                status.eligibleWinBackOfferIDs == expected,
                "seed \(seed): \(paid) paid month(s), lapse \(lapse) days, bought \(bought.id)")
            for id in ["COMEBACK_FREE", "COMEBACK_HALF"] where !expected.contains(id) {
                await #expect(throws: PromotionalOfferError.self, "seed \(seed) \(id)") {
                    try await session.buyProduct(Self.winBack(id))
                }
            }
            if let best = expected.first {
                #expect(try await session.buyProduct(Self.winBack(best)).offer?.id == best, "seed \(seed)")
            }
        }
    }

    /// COMEBACK_HALF waits 6 months after a win-back offer was redeemed in the group.
    @Test func anOfferWaitsItsMonthsAfterTheLastWinBack() async throws {
        try await withTemporaryLedger(configuration: LedgerConfiguration(clock: .fixed(NotificationOutboxTests.now))) {
            ledger in
            let session = StoreTestSession(ledger: ledger)
            _ = try await Self.churn(session, paidMonths: 2, lapseDays: 40)
            let redeemed = try await session.buyProduct(Self.winBack("COMEBACK_HALF"))
            #expect(redeemed.offer?.paymentMode == .payAsYouGo)
            // Its three discounted months, then one at full price, then it lapses again.
            let end = Self.month.advance(try #require(redeemed.expirationDate), times: 3)
            _ = try await session.setClock(to: end.addingTimeInterval(-1))
            try await session.setAutoRenew(false, for: Self.basic)
            _ = try await session.setClock(to: end.addingTimeInterval(35 * Self.day))
            let redeemedAt = redeemed.purchaseDate
            #expect(try ledger.storeDate() < Self.month.advance(redeemedAt, times: 6))
            await #expect(
                throws: PromotionalOfferError.winBackIneligible(
                    productID: Self.basic, offerID: "COMEBACK_HALF",
                    why: "a win-back offer was redeemed less than 6 month(s) ago")
            ) { try await session.buyProduct(Self.winBack("COMEBACK_HALF")) }
            _ = try await session.setClock(to: Self.month.advance(redeemedAt, times: 6))
            // High priority first.
            let open = try #require(try ledger.subscriptionStatus(forProduct: Self.basic))
            #expect(open.eligibleWinBackOfferIDs == ["COMEBACK_HALF", "COMEBACK_FREE"], "\(open)")
            #expect(try ledger.verify().isEmpty)
        }
    }

    /// The lapse window's bounds are inclusive, to the millisecond: COMEBACK_HALF opens exactly
    /// one month after the lapse, COMEBACK_FREE closes just after six.
    @Test func theLapseWindowIsInclusiveToTheMillisecond() async throws {
        try await withTemporaryLedger(configuration: LedgerConfiguration(clock: .fixed(NotificationOutboxTests.now))) {
            ledger in
            let session = StoreTestSession(ledger: ledger)
            _ = try await Self.churn(session, paidMonths: 2, lapseDays: 0)
            let lapsedAt = try #require(
                try ledger.subscriptionStatus(forProduct: Self.basic)?.transaction.expirationDate)
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = TimeZone(identifier: "UTC")!
            let oneMonth = try #require(calendar.date(byAdding: .month, value: 1, to: lapsedAt))
            let sixMonths = try #require(calendar.date(byAdding: .month, value: 6, to: lapsedAt))
            let steps: [(Date, [String])] = [
                (oneMonth.addingTimeInterval(-0.001), ["COMEBACK_FREE"]),
                (oneMonth, ["COMEBACK_HALF", "COMEBACK_FREE"]),
                (sixMonths, ["COMEBACK_HALF", "COMEBACK_FREE"]),
                (sixMonths.addingTimeInterval(0.001), ["COMEBACK_HALF"]),
            ]
            for (date, open) in steps {
                _ = try await session.setClock(to: date)
                #expect(
                    try ledger.subscriptionStatus(forProduct: Self.basic)?.eligibleWinBackOfferIDs == open,
                    "\(date.formatted(.iso8601))")
            }
        }
    }

    /// At an accelerated time rate a rule's month is the rate's (30 seconds here), as periods are.
    @Test func aRulesMonthsFollowTheTimeRate() async throws {
        try await withTemporaryLedger(configuration: LedgerConfiguration(clock: .fixed(NotificationOutboxTests.now))) {
            ledger in
            let session = StoreTestSession(ledger: ledger)
            try session.update { $0.timeRate = .monthlyRenewalEveryThirtySeconds }
            _ = try await session.buyProduct(Payment(productID: Self.basic))
            _ = try await session.advanceClock(by: 31)  // renewed once: two months paid
            try await session.setAutoRenew(false, for: Self.basic)
            let lapsedAt = try #require(
                try ledger.subscriptionStatus(forProduct: Self.basic)?.transaction.expirationDate)
            let steps: [(TimeInterval, [String])] = [
                (29, ["COMEBACK_FREE"]), (30, ["COMEBACK_HALF", "COMEBACK_FREE"]), (180.001, ["COMEBACK_HALF"]),
            ]
            for (seconds, open) in steps {
                _ = try await session.setClock(to: lapsedAt.addingTimeInterval(seconds))
                #expect(
                    try ledger.subscriptionStatus(forProduct: Self.basic)?.eligibleWinBackOfferIDs == open, "\(seconds)"
                )
            }
        }
    }

    /// A win-back payment waiting for Ask to Buy counts as redeemed: the wait rule holds it.
    @Test func aWinBackWaitingForApprovalCountsForTheWait() async throws {
        try await withTemporaryLedger(configuration: LedgerConfiguration(clock: .fixed(NotificationOutboxTests.now))) {
            ledger in
            let session = StoreTestSession(ledger: ledger)
            _ = try await Self.churn(session, paidMonths: 2, lapseDays: 40)
            try session.update { $0.askToBuyEnabled = true }
            let waiting = try await PaymentQueue(ledger: ledger).add(Self.winBack("COMEBACK_FREE"))
            #expect(waiting.state == .deferred)
            await #expect(
                throws: PromotionalOfferError.winBackIneligible(
                    productID: Self.basic, offerID: "COMEBACK_HALF",
                    why: "a win-back offer was redeemed less than 6 month(s) ago")
            ) { try await PaymentQueue(ledger: ledger).add(Self.winBack("COMEBACK_HALF")) }
        }
    }

    /// A retried payment (same idempotency key) is the same payment only with the same offer,
    /// of the same type: a win-back offer and an offer code of one name are not.
    @Test func aRetryMustRedeemTheSameKindOfOffer() async throws {
        try await withTemporaryLedger(configuration: LedgerConfiguration(clock: .fixed(NotificationOutboxTests.now))) {
            ledger in
            let session = StoreTestSession(ledger: ledger)
            _ = try await Self.churn(session, paidMonths: 1, lapseDays: 3)
            let queue = try PaymentQueue(ledger: ledger)
            var payment = Self.winBack("COMEBACK_FREE")
            payment.idempotencyKey = "order-1"
            let first = try await queue.add(payment)
            #expect(try await queue.add(payment).id == first.id, "the same payment, replayed")
            var asCode = Payment(productID: Self.basic, idempotencyKey: "order-1")
            asCode.codeOffer = "COMEBACK_FREE"
            await #expect(
                throws: PaymentQueueError.idempotencyKeyReused(key: "order-1", existingTransactionID: first.id)
            ) { try await queue.add(asCode) }
        }
    }

    @Test func whatIsNotAWinBackOfferIsRefusedAndNothingIsRecorded() async throws {
        try await withTemporaryLedger { ledger in
            let session = StoreTestSession(ledger: ledger)
            await #expect(
                throws: PromotionalOfferError.winBackIneligible(
                    productID: Self.basic, offerID: "COMEBACK_FREE",
                    why: "the customer never subscribed to its subscription group")
            ) { try await session.buyProduct(Self.winBack("COMEBACK_FREE")) }
            await #expect(
                throws: PromotionalOfferError.unknownWinBackOffer(productID: Self.basic, offerID: "NOPE")
            ) { try await session.buyProduct(Self.winBack("NOPE")) }
            await #expect(
                throws: PromotionalOfferError.unknownWinBackOffer(
                    productID: SampleCatalog.subscription, offerID: "COMEBACK_FREE")
            ) {
                var payment = Payment(productID: SampleCatalog.subscription)
                payment.winBackOffer = "COMEBACK_FREE"
                return try await session.buyProduct(payment)
            }
            await #expect(throws: PromotionalOfferError.unknownWinBackOffer(productID: Self.basic, offerID: "")) {
                try await session.buyProduct(Self.winBack(""))
            }
            await #expect(throws: PromotionalOfferError.twoOffers(productID: Self.basic)) {
                var payment = Self.winBack("COMEBACK_FREE")
                payment.codeOffer = "FREEMONTH"
                return try await session.buyProduct(payment)
            }
            let recorded = try ledger.allTransactions()
            #expect(recorded.isEmpty)
        }
    }

    /// A subscription in billing retry has not churned: no win-back offer (Apple).
    @Test func billingRetryIsNotChurn() async throws {
        try await withTemporaryLedger(configuration: LedgerConfiguration(clock: .fixed(NotificationOutboxTests.now))) {
            ledger in
            let session = StoreTestSession(ledger: ledger)
            _ = try await session.buyProduct(Payment(productID: Self.basic))
            try session.update { $0.billingRetryOnRenewal = true }
            _ = try await session.advanceClock(by: 32 * Self.day)
            let status = try #require(try ledger.subscriptionStatus(forProduct: Self.basic))
            #expect(status.isInBillingRetry && status.eligibleWinBackOfferIDs.isEmpty)
            await #expect(
                throws: PromotionalOfferError.winBackIneligible(
                    productID: Self.basic, offerID: "COMEBACK_FREE",
                    why: "the subscription is in billing retry; win-back offers are for churned subscribers")
            ) { try await session.buyProduct(Self.winBack("COMEBACK_FREE")) }
        }
    }
}
