import Foundation
import LedgerTestSupport
import LedgerTesting
import StoreLedger
import StoreTesting
import Testing

/// A one-group catalog whose monthly subscription has `intro` as its introductory offer (a
/// `.storekit` `introductoryOffer` object), and a yearly one of the same group without offer.
private func offerCatalog(_ intro: String) -> String {
    """
    {"products": [], "settings": {},
     "subscriptionGroups": [{"id": "g1", "name": "Plus", "subscriptions": [
        {"productID": "plus.monthly", "type": "RecurringSubscription", "displayPrice": "4.99", "groupNumber": 2,
         "recurringSubscriptionPeriod": "P1M", "referenceName": "monthly", "subscriptionGroupID": "g1",
         "introductoryOffer": \(intro), "localizations": []},
        {"productID": "plus.yearly", "type": "RecurringSubscription", "displayPrice": "39.99", "groupNumber": 1,
         "recurringSubscriptionPeriod": "P1Y", "referenceName": "yearly", "subscriptionGroupID": "g1",
         "localizations": []}]}],
     "version": {"major": 3, "minor": 0}}
    """
}

/// Runs `body` with a launched queue on a new ledger of `catalog`, the clock fixed at `storeEpoch`.
private func withOfferStore(
    _ catalog: String, rate: TimeRate = .realTime, _ body: (PaymentQueue, StoreTestSession) async throws -> Void
) async throws {
    try await withTemporaryDirectory { directory in
        let file = directory + "/offers.storekit"
        try Data(catalog.utf8).write(to: URL(fileURLWithPath: file))
        let ledger = try Ledger.open(
            at: directory + "/l.sqlite", mode: .createIfMissing, configuration: StoreFixture.configuration)
        try ProductCatalog(ledger: ledger).importConfigurations(at: [file])
        let queue = try PaymentQueue(ledger: ledger)
        let session = StoreTestSession(queue: queue)
        try session.update { $0.timeRate = rate }
        try await body(queue, session)
    }
}

private let freeWeek = #"{"paymentMode": "free", "subscriptionPeriod": "P1W", "numberOfPeriods": 1}"#
private let threeCheaperMonths =
    #"{"paymentMode": "payAsYouGo", "subscriptionPeriod": "P1M", "numberOfPeriods": 3, "displayPrice": "0.99"}"#
private let quarterUpFront =
    #"{"paymentMode": "payUpFront", "subscriptionPeriod": "P3M", "numberOfPeriods": 1, "displayPrice": "9.99"}"#

@Suite struct IntroductoryOfferTests {
    @Test func aNewSubscriberGetsTheFreeTrialThenRenewsAtTheProductsPeriod() async throws {
        try await withOfferStore(offerCatalog(freeWeek)) { queue, session in
            #expect(try queue.ledger.isEligibleForIntroductoryOffer(group: "g1"))
            let trial = try await queue.add(Payment(productID: "plus.monthly"))
            #expect(
                trial.offer
                    == TransactionOffer(
                        type: .introductory, paymentMode: .freeTrial, period: SubscriptionPeriod(value: 1, unit: .week))
            )
            #expect(trial.expirationDate == storeEpoch.addingTimeInterval(7 * day))
            #expect(try !queue.ledger.isEligibleForIntroductoryOffer(group: "g1"))
            let renewals = try await session.advanceClock(by: 8 * day)
            #expect(renewals.count == 1)
            #expect(renewals[0].offer == nil && renewals[0].purchaseDate == trial.expirationDate)
            let monthLater = Calendar(identifier: .gregorian).date(
                byAdding: .month, value: 1, to: try #require(trial.expirationDate))
            #expect(renewals[0].expirationDate == monthLater)
            #expect(try queue.ledger.verify() == [])
        }
    }

    /// What Apple's format allows: subscription and offer periods of App Store Connect's
    /// lengths, 1 to 12 periods an offer. Seeded: anything else is refused at import, with its
    /// key path, and the ledger is unchanged.
    @Test func importAcceptsOnlyTheAppStoresPeriodsAndCounts() async throws {
        var random = SplitMix(seed: 23)
        let subscriptionPeriods: Set = ["P1W", "P1M", "P2M", "P3M", "P6M", "P1Y"]
        let offerPeriods: Set = ["P3D", "P1W", "P2W", "P1M", "P2M", "P3M", "P6M", "P1Y"]
        for _ in 0..<40 {
            let period = "P\(1 + random.next() % 13)\(random.pick(["D", "W", "M", "Y"]))"
            let offerPeriod = "P\(1 + random.next() % 13)\(random.pick(["D", "W", "M", "Y"]))"
            let count = random.pick([-1, 0, 1, 2, 3, 6, 12, 13, 1_000_000, 1_000_000_000_000])
            let intro =
                #"{"paymentMode": "payAsYouGo", "subscriptionPeriod": "\#(offerPeriod)", "numberOfPeriods": \#(count), "displayPrice": "0.99"}"#
            let catalog = offerCatalog(intro).replacingOccurrences(
                of: #""recurringSubscriptionPeriod": "P1M""#, with: #""recurringSubscriptionPeriod": "\#(period)""#)
            let accepted =
                subscriptionPeriods.contains(period) && offerPeriods.contains(offerPeriod) && (1...12).contains(count)
            try await withTemporaryDirectory { directory in
                let file = directory + "/offers.storekit"
                try Data(catalog.utf8).write(to: URL(fileURLWithPath: file))
                let ledger = try Ledger.open(
                    at: directory + "/l.sqlite", mode: .createIfMissing, configuration: StoreFixture.configuration)
                defer { try? ledger.close() }
                do {
                    try ProductCatalog(ledger: ledger).importConfigurations(at: [file])
                    #expect(accepted, "\(period), offer \(count) x \(offerPeriod) was accepted")
                } catch let error as CatalogError {
                    #expect(!accepted, "\(period), offer \(count) x \(offerPeriod): \(error)")
                    let text = "\(error)"
                    #expect(
                        text.contains("recurringSubscriptionPeriod") || text.contains("subscriptionPeriod")
                            || text.contains("numberOfPeriods"), "\(text)")
                    #expect(try ledger.allProducts().isEmpty, "a refused import changes nothing")
                }
            }
        }
    }

    /// An offer stored by an older ledger with a huge period count is applied as 12 periods:
    /// buying and renewing take bounded work.
    @Test func aStoredOfferWithAHugeCountIsBounded() async throws {
        try await withOfferStore(offerCatalog(freeWeek)) { queue, session in
            var products = try queue.ledger.allProducts()
            let index = try #require(products.firstIndex { $0.id == "plus.monthly" })
            products[index].subscription?.introductoryOffer?.periodCount = 1_000_000_000_000
            try queue.ledger.saveProducts(products)
            let trial = try await queue.add(Payment(productID: "plus.monthly"))
            #expect(trial.state == .purchased)
            #expect(trial.expirationDate == storeEpoch.addingTimeInterval(12 * 7 * day), "12 free weeks")
            #expect(try await session.advanceClock(by: 12 * 7 * day + 1).count == 1)
            #expect(try queue.ledger.verify() == [])
        }
    }

    @Test func theOfferIsOncePerGroup() async throws {
        try await withOfferStore(offerCatalog(freeWeek)) { queue, session in
            try await queue.add(Payment(productID: "plus.yearly"))
            try await session.expireSubscription("plus.yearly")
            // Buying the group's other product, which has the offer, after the yearly one: no trial.
            let monthly = try await queue.add(Payment(productID: "plus.monthly"))
            #expect(monthly.offer == nil)
            #expect(
                monthly.expirationDate
                    == Calendar(identifier: .gregorian).date(byAdding: .month, value: 1, to: storeEpoch))
        }
    }

    @Test func payAsYouGoChargesTheOfferForItsPeriodsThenThePrice() async throws {
        try await withOfferStore(offerCatalog(threeCheaperMonths)) { queue, session in
            let first = try await queue.add(Payment(productID: "plus.monthly"))
            let renewals = try await session.advanceClock(by: 130 * day)
            let chain = [first] + renewals
            #expect(chain.count == 5)
            #expect(chain.map { $0.offer?.paymentMode } == [.payAsYouGo, .payAsYouGo, .payAsYouGo, nil, nil])
            #expect(zip(chain, chain.dropFirst()).allSatisfy { $0.expirationDate == $1.purchaseDate })
            #expect(try queue.ledger.verify() == [])
        }
    }

    @Test func payUpFrontCoversAllItsPeriodsInOneTransaction() async throws {
        try await withOfferStore(offerCatalog(quarterUpFront)) { queue, _ in
            let first = try await queue.add(Payment(productID: "plus.monthly"))
            #expect(
                first.offer?.paymentMode == .payUpFront
                    && first.offer?.period == SubscriptionPeriod(value: 3, unit: .month))
            #expect(
                first.expirationDate
                    == Calendar(identifier: .gregorian).date(byAdding: .month, value: 3, to: storeEpoch))
        }
    }

    /// Offers of every mode, length and count under every time rate, with random clock jumps
    /// (seeded): every chain is contiguous, its first periods carry the offer as many times as
    /// the offer says (one for a trial or an up-front payment), the rest none, and the ledger
    /// verifies.
    @Test(arguments: 0..<12)
    func offersHoldUnderEveryRateAndClockJump(seed: Int) async throws {
        var random = SplitMix(seed: UInt64(seed) &* 0x9E37_79B9 &+ 7)
        let mode = random.pick(["free", "payAsYouGo", "payUpFront"])
        let length =
            mode == "payAsYouGo"
            ? random.pick(["P1M", "P2M", "P3M"]) : random.pick(["P3D", "P1W", "P2W", "P1M", "P2M", "P3M"])
        let count = 1 + Int(random.next() % 4)
        let intro =
            #"{"paymentMode": "\#(mode)", "subscriptionPeriod": "\#(length)", "numberOfPeriods": \#(count), "displayPrice": "0.99"}"#
        let rate = random.pick([
            TimeRate.realTime, .oneMinuteIsOneDay, .monthlyRenewalEveryThirtySeconds, .oneRenewalEveryTenSeconds,
        ])
        try await withOfferStore(offerCatalog(intro), rate: rate) { queue, session in
            var chain = [try await queue.add(Payment(productID: "plus.monthly"))]
            for _ in 0..<(1 + random.next() % 5) {
                let jump = Double(random.next() % 90 * 86_400) / (rate == .realTime ? 1 : 20_000)
                chain += try await session.advanceClock(by: jump)
            }
            let offered = mode == "payAsYouGo" ? min(count, chain.count) : 1
            #expect(chain.prefix(offered).allSatisfy { $0.offer?.type == .introductory }, "\(intro) at \(rate)")
            #expect(chain.dropFirst(offered).allSatisfy { $0.offer == nil }, "\(intro) at \(rate)")
            #expect(zip(chain, chain.dropFirst()).allSatisfy { $0.expirationDate == $1.purchaseDate })
            #expect(try queue.ledger.verify() == [], "\(intro) at \(rate)")
        }
    }
}
