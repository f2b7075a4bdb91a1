import Foundation
import LedgerTestSupport
import LedgerTesting
import StoreLedger
import StoreTesting
import Testing

/// Seeded randomized tests of subscription time: random purchase instants (sub-millisecond
/// ones too), periods, time rates and clock jumps from a millisecond to past the year 9999.
/// Every move ends (made or refused), every renewal chain is contiguous, every period is
/// exactly its product's, and a refused move changes nothing.
@Suite struct RenewalPropertyTests {
    /// One group per period, so that any period can be bought.
    static let periods = ["P1W", "P1M", "P2M", "P3M", "P6M", "P1Y"]
    static let catalog = """
        {"products": [], "version": {"major": 3, "minor": 0},
         "subscriptionGroups": [\(periods.map { period in """
            {"id": "g\(period)", "name": "g\(period)", "subscriptions": [
              {"productID": "sub.\(period)", "type": "RecurringSubscription", "displayPrice": "1.99",
               "groupNumber": 1, "recurringSubscriptionPeriod": "\(period)"}]}
            """ }.joined(separator: ","))]}
        """

    /// A small limit keeps the test fast; the rules do not depend on its size.
    static let limit = 200

    @Test(arguments: 0..<24)
    func randomClockJumpsKeepRenewalChainsExactAndEveryMoveEnds(seed: UInt64) async throws {
        var random = SplitMix(seed: seed)
        // A purchase instant between 2001 and 2033 with a random sub-millisecond part.
        let start = Date(
            timeIntervalSince1970: 1e9 + Double(random.next() % 1_000_000_000) + Double(random.next() % 1_000_000) / 1e6
        )
        let configuration = LedgerConfiguration(clock: .fixed(start), renewalLimit: Self.limit)
        try await withTemporaryDirectory { directory in
            let catalogPath = directory + "/Periods.storekit"
            try write(Self.catalog, to: catalogPath)
            let path = directory + "/ledger.sqlite"
            let created = try Ledger.open(at: path, mode: .createIfMissing, configuration: configuration)
            try ProductCatalog(ledger: created).importConfigurations(at: [catalogPath])
            try created.close()
            let queue = try PaymentQueue(path: path, configuration: configuration)
            let session = StoreTestSession(queue: queue)
            try session.update { $0.timeRate = random.pick(TimeRate.allCases) }
            for period in Self.periods where random.next() % 2 == 0 || period == "P1M" {
                try await queue.add(Payment(productID: "sub.\(period)"))
            }
            for _ in 0..<10 {
                if random.next() % 4 == 0 { try session.update { $0.timeRate = random.pick(TimeRate.allCases) } }
                let clockBefore = try queue.ledger.storeDate()
                let countBefore = try queue.ledger.allTransactions().count
                // A jump of 10^x milliseconds, x uniform in [0, 12.5): up to ~100 years; or the end of time.
                let jump =
                    random.next() % 8 == 0
                    ? Ledger.latestStoreDate.timeIntervalSince(clockBefore)
                    : pow(10, Double(random.next() % 12_500) / 1_000) / 1_000
                do {
                    let renewed = try await session.advanceClock(by: jump)
                    #expect(renewed.count <= Self.limit)
                    #expect(
                        try await queue.processSubscriptionRenewals().isEmpty, "a move makes every renewal it allowed")
                } catch StoreControlError.tooManyRenewals(let limit) {
                    #expect(limit == Self.limit)
                    #expect(try queue.ledger.storeDate() == clockBefore, "a refused move leaves the clock")
                    #expect(try queue.ledger.allTransactions().count == countBefore, "a refused move makes nothing")
                } catch StoreControlError.clockOutOfRange {
                    #expect(try queue.ledger.storeDate() == clockBefore)
                }
                #expect(try queue.ledger.dueIndexProblems() == [], "seed \(seed)")
            }
            #expect(try queue.ledger.verify() == [], "seed \(seed)")
            try Self.expectExactChains(try queue.ledger.allTransactions(), seed: seed)
        }
    }

    /// Each chain (by original id) is contiguous and each of its periods lasts at least two
    /// seconds (the fastest time rate) and one whole period of its product.
    static func expectExactChains(_ transactions: [PaymentTransaction], seed: UInt64) throws {
        let periods = transactions.filter { $0.productType == .autoRenewable && $0.state == .purchased }
        for chain in Dictionary(grouping: periods, by: \.originalID).values {
            let ordered = chain.sorted { $0.id < $1.id }
            for (previous, renewal) in zip(ordered, ordered.dropFirst()) {
                #expect(
                    renewal.purchaseDate == previous.expirationDate,
                    "seed \(seed): chain \(renewal.originalID) is contiguous")
            }
            for period in ordered {
                let expiration = try #require(period.expirationDate)
                #expect(
                    expiration.timeIntervalSince(period.purchaseDate) >= 2, "seed \(seed): transaction \(period.id)")
            }
        }
    }

    @Test(arguments: 0..<16)
    func aYearlyOrMonthlySubscriptionBoughtAtAnyInstantRenewsOncePerPeriod(seed: UInt64) async throws {
        var random = SplitMix(seed: seed)
        // The reported hang: a purchase at an instant with a sub-millisecond part, then a long jump.
        let start = Date(
            timeIntervalSince1970: 1.7e9 + Double(random.next() % 100_000_000) + Double(random.next() % 1_000_000) / 1e6
        )
        let configuration = LedgerConfiguration(clock: .fixed(start))
        try await withTemporaryDirectory { directory in
            try SampleCatalog.ledger(in: directory, configuration: configuration).close()
            let queue = try PaymentQueue(path: directory + "/ledger.sqlite", configuration: configuration)
            let session = StoreTestSession(queue: queue)
            let yearly = try await queue.add(Payment(productID: SampleCatalog.yearlySubscription))
            #expect(
                yearly.purchaseDate.timeIntervalSince1970 * 1000
                    == (yearly.purchaseDate.timeIntervalSince1970 * 1000).rounded(),
                "dates are whole milliseconds")
            let renewed = try await session.advanceClock(by: 20 * 365.2425 * day)
            #expect(renewed.count == 20 || renewed.count == 19, "one renewal per year, seed \(seed)")
            #expect(try await queue.processSubscriptionRenewals().isEmpty)
            var previous = yearly
            for renewal in renewed {
                #expect(renewal.purchaseDate == previous.expirationDate)
                // One calendar year; a year anchored on February 29 ends on the 28th, then the 29th.
                let calendarEnd = milliseconds(SubscriptionPeriod(value: 1, unit: .year).advance(renewal.purchaseDate))
                let end = milliseconds(try #require(renewal.expirationDate))
                #expect(
                    end == calendarEnd || end == calendarEnd + 86_400_000, "seed \(seed): transaction \(renewal.id)")
                previous = renewal
            }
            #expect(try queue.ledger.verify() == [])
        }
    }
}

/// A date in whole milliseconds, as the ledger stores it.
func milliseconds(_ date: Date) -> Int64 {
    Int64((date.timeIntervalSince1970 * 1000).rounded())
}
