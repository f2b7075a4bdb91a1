import Foundation
import GRDB
import LedgerTestSupport
import LedgerTesting
import StoreLedger
import StoreTesting
import Synchronization
import Testing

/// The index the store's clock looks through (`subscription_renewal.due_from`, migration 27): a
/// look that finds nothing due reads one index entry and writes nothing, a change that brings a
/// moment nearer lowers it, and it is never later than the truth, whatever happens.
@Suite struct DueIndexTests {
    static let day: TimeInterval = 86_400
    static let url = "http://127.0.0.1:9/notifications"

    /// A store of three customers (Alice and Bob of one family, Carol alone), each with a
    /// session of their own, with a notification URL.
    static func withStore(
        configuration: LedgerConfiguration = StoreFixture.configuration,
        _ body: (Ledger, [StoreTestSession]) async throws -> Void
    ) async throws {
        try await withTemporaryDirectory { directory in
            let ledger = try SampleCatalog.ledger(in: directory, configuration: configuration)
            defer { try? ledger.close() }
            try ledger.addCustomer(Customer(name: "alice", family: "smiths"))
            try ledger.addCustomer(Customer(name: "bob", family: "smiths"))
            try ledger.addCustomer(Customer(name: "carol"))
            _ = try StoreTestSession(ledger: ledger).set(.notificationURL, to: url)
            let sessions = try ["alice", "bob", "carol"].map {
                StoreTestSession(queue: try PaymentQueue(ledger: try ledger.forCustomer($0)))
            }
            try await body(ledger, sessions)
        }
    }

    @Test func aLookThatFindsNothingDueWritesNothingAndAChangeIsLookedAtOnce() async throws {
        try await Self.withStore { ledger, sessions in
            #expect(try ledger.clockMayHaveSomethingDue() == false, "no subscription yet")
            _ = try await sessions[0].buyProduct(Payment(productID: SampleCatalog.subscription))
            _ = try await sessions[2].buyProduct(Payment(productID: SampleCatalog.yearlySubscription))
            #expect(try ledger.clockMayHaveSomethingDue(), "new subscriptions wait for their first look")
            #expect(try ledger.settleDueChanges(), "the look sets their next moments")
            #expect(try ledger.clockMayHaveSomethingDue() == false)
            #expect(try ledger.settleDueChanges() == false, "nothing due: no write")
            try await sessions[0].setAutoRenew(false, for: SampleCatalog.subscription)
            #expect(try ledger.clockMayHaveSomethingDue() == false, "nothing changed its moments")
            #expect(try ledger.dueIndexProblems() == [])
        }
    }

    /// The store's time moves without a clock move (the injected clock runs): the look of
    /// `ledger serve` makes what fell due, for the customers it fell due for only.
    @Test func theLookMakesWhatFellDueForEveryCustomerAndOnlyThat() async throws {
        let clock = MovingClock(storeEpoch)
        try await Self.withStore(configuration: LedgerConfiguration(clock: LedgerClock { clock.now })) {
            ledger, sessions in
            let monthly = try await sessions[0].buyProduct(Payment(productID: SampleCatalog.subscription))
            _ = try await sessions[2].buyProduct(Payment(productID: SampleCatalog.yearlySubscription))
            #expect(try ledger.settleDueChanges())
            clock.advance(by: 32 * Self.day)
            #expect(try ledger.clockMayHaveSomethingDue(), "Alice's month ended")
            #expect(try ledger.settleDueChanges())
            let renewals = try sessions.map { try $0.ledger.allTransactions().filter { $0.reason == .renewal } }
            #expect(renewals.map { $0.map(\.originalID) } == [[monthly.originalID], [], []], "one renewal, Alice's")
            #expect(try ledger.settleDueChanges() == false, "nothing more until her next month ends")
            #expect(try ledger.dueIndexProblems() == [])
        }
    }

    /// Without the triggers that lower it, the index would miss a subscription bought again
    /// after it lapsed, and the check says so: the check can fail.
    @Test func theCheckFindsASubscriptionTheClockWouldMiss() async throws {
        try await Self.withStore { ledger, sessions in
            _ = try await sessions[2].buyProduct(Payment(productID: SampleCatalog.subscription))
            try await sessions[2].setAutoRenew(false, for: SampleCatalog.subscription)
            _ = try await sessions[2].advanceClock(by: 40 * Self.day)
            #expect(try ledger.dueIndexProblems() == [], "lapsed: nothing to come")
            let raw = try DatabaseQueue(path: ledger.path)
            try await raw.write { db in
                try db.execute(
                    sql: """
                        DROP TRIGGER subscription_periods_are_due_at_their_end;
                        DROP TRIGGER changed_subscription_periods_are_due_at_their_end;
                        """)
            }
            try raw.close()
            _ = try await sessions[2].buyProduct(Payment(productID: SampleCatalog.subscription))
            let problems = try ledger.dueIndexProblems()
            #expect(problems.count == 1 && problems[0].contains("the store's clock would look at it never"))
        }
    }

    /// A ledger of the previous release: after the upgrade every subscription is looked at by
    /// the first look, and renews as before.
    @Test func aSubscriptionOfALedgerOfBeforeRenewsAfterTheUpgrade() async throws {
        try await withTemporaryDirectory { directory in
            let ledger = try SampleCatalog.ledger(in: directory, configuration: StoreFixture.configuration)
            let monthly = try await StoreTestSession(ledger: ledger).buyProduct(
                Payment(productID: SampleCatalog.subscription))
            let path = ledger.path
            try ledger.close()
            let raw = try DatabaseQueue(path: path)
            try await raw.write { db in
                try db.execute(sql: PreviousSchema.undoLastMigration)
                try db.execute(sql: PreviousSchema.undoMigration27)
            }
            try raw.close()
            #expect(
                try Ledger.upgrade(at: path, configuration: StoreFixture.configuration) == [
                    "0027_bounded_store_work", PreviousSchema.lastMigration,
                ])
            let upgraded = try Ledger.open(at: path, configuration: StoreFixture.configuration)
            defer { try? upgraded.close() }
            #expect(try upgraded.clockMayHaveSomethingDue(), "looked at once")
            let renewed = try await StoreTestSession(ledger: upgraded).advanceClock(by: 32 * Self.day)
            #expect(renewed.map(\.originalID) == [monthly.originalID])
            #expect(try upgraded.dueIndexProblems() == [])
            #expect(try upgraded.verify() == [])
        }
    }

    /// Seeded random operations by three customers (purchases, family shares, auto-renew,
    /// billing retry and its resolution, refunds and their reversal, expiries, forced renewals,
    /// price increases, clock moves from a minute to two months): after each, the index is
    /// nowhere later than the truth, and nothing due is left after a clock move.
    @Test(arguments: 0..<12)
    func theIndexIsNeverLaterThanTheTruth(seed: UInt64) async throws {
        var random = SplitMix(seed: seed)
        let products = [SampleCatalog.subscription, SampleCatalog.yearlySubscription, SampleCatalog.basicSubscription]
        try await Self.withStore { ledger, sessions in
            for step in 0..<40 {
                let session = random.pick(sessions)
                let product = random.pick(products)
                let owned = try session.ledger.allTransactions().filter {
                    $0.productType == .autoRenewable && $0.state == .purchased
                }
                do {
                    switch random.next() % 11 {
                    case 0, 1: _ = try await session.buyProduct(Payment(productID: product))
                    case 2: try await session.setAutoRenew(random.next() % 2 == 0, for: product)
                    case 3: try session.update { $0.billingRetryOnRenewal.toggle() }
                    case 4: _ = try await session.resolveBillingIssue(for: product)
                    case 5:
                        if let bought = owned.randomElement(using: &random) {
                            _ = try await session.refundTransaction(bought.id)
                        }
                    case 6:
                        if let refunded = owned.filter({ $0.revocationDate != nil }).randomElement(using: &random) {
                            _ = try await session.reverseRefund(of: refunded.id)
                        }
                    case 7: _ = try await session.expireSubscription(product)
                    case 8: _ = try await session.forceRenewalOfSubscription(product)
                    case 9: _ = try await session.requestPriceIncrease(for: product, price: 9.99, needsConsent: true)
                    default:
                        _ = try await session.advanceClock(by: 60 + Double(random.next() % UInt64(60 * Self.day)))
                        #expect(
                            try ledger.nextRenewalDate().map { $0 > (try ledger.storeDate()) } ?? true,
                            "seed \(seed), step \(step): a clock move makes every renewal due")
                    }
                } catch is StoreControlError, is UnknownProductError, is PaymentQueueError {
                    // Refused as the store refuses it: nothing changed.
                }
                #expect(try ledger.dueIndexProblems() == [], "seed \(seed), step \(step)")
            }
            #expect(try ledger.verify() == [], "seed \(seed)")
        }
    }
}

/// A clock the test moves.
final class MovingClock: Sendable {
    private let date: Mutex<Date>

    init(_ date: Date) { self.date = Mutex(date) }

    var now: Date { date.withLock { $0 } }

    func advance(by interval: TimeInterval) { date.withLock { $0 += interval } }
}
