import Foundation
import LedgerTestSupport
import LedgerTesting
import StoreLedger
import StoreTesting
import Testing

/// The store's one door (`StoreTestSession` over `Ledger.perform`): a control made while
/// observers listen commits its change and the delivery of what they are handed in one
/// commit, so a crash can never keep the change and lose its delivery. At full durability a
/// commit is one sync of the WAL, which the fault VFS counts.
@Suite(.serialized, .faultInjection) struct StoreControlCommitTests {
    static let epoch = Date(timeIntervalSince1970: 1_700_000_000)

    @Test func everyControlAndTheDeliveryOfWhatItHandsOutAreOneCommit() async throws {
        try await withTemporaryDirectory { directory in
            let configuration = FaultInjection.configuration(LedgerConfiguration(clock: .fixed(Self.epoch)))
            try SampleCatalog.ledger(in: directory, configuration: configuration).close()
            let queue = try PaymentQueue(path: directory + "/ledger.sqlite", configuration: configuration)
            let observer = CollectingObserver()
            try await queue.add(observer)
            let session = StoreTestSession(queue: queue)
            try session.update { $0.askToBuyEnabled = true }
            let first = try await queue.add(Payment(productID: SampleCatalog.nonConsumable))
            let second = try await queue.add(Payment(productID: SampleCatalog.nonConsumable2))
            let subscribed = try await session.buyProduct(Payment(productID: SampleCatalog.subscription))
            #expect(first.state == .deferred && second.state == .deferred && subscribed.state == .purchased)
            let watch = Watch(queue: queue, observer: observer)

            #expect(try await watch.oneCommit("approve") { [try await session.approveAskToBuyTransaction(first.id)] })
            #expect(try await watch.oneCommit("decline") { [try await session.declineAskToBuyTransaction(second.id)] })
            #expect(
                try await watch.oneCommit("buy outside the app") {
                    [try await session.buyProduct(Payment(productID: SampleCatalog.consumable))]
                })
            #expect(
                try await watch.oneCommit("force renewal") {
                    [try await session.forceRenewalOfSubscription(SampleCatalog.subscription)]
                })
            #expect(try await watch.oneCommit("advance the clock") { try await session.advanceClock(by: 65 * 86_400) })
            #expect(watch.last.count == 2 && watch.last.allSatisfy { $0.reason == .renewal })
            let later = Self.epoch.addingTimeInterval(100 * 86_400)
            #expect(try await watch.oneCommit("set the clock") { try await session.setClock(to: later) })
            #expect(watch.last.count == 1)
            // A renewal at an agreed price increase: the renewal, its price and the end of the
            // increase are one commit too.
            try await session.requestPriceIncrease(for: SampleCatalog.subscription, price: 6)
            try await session.answerPriceIncrease(for: SampleCatalog.subscription, agree: true)
            #expect(
                try await watch.oneCommit("renew at an agreed price") {
                    [try await session.forceRenewalOfSubscription(SampleCatalog.subscription)]
                })
            #expect(try queue.ledger.priceIncrease(forProduct: SampleCatalog.subscription) == nil)
            #expect(try queue.ledger.subscriptionStatus(forProduct: SampleCatalog.subscription)?.renewalPrice == 6)
            try session.update { $0.billingRetryOnRenewal = true }
            _ = try await session.advanceClock(by: 31 * 86_400)
            #expect(try queue.ledger.hasBillingIssue(SampleCatalog.subscription))
            #expect(
                try await watch.oneCommit("resolve the billing issue") {
                    [try await session.resolveBillingIssue(for: SampleCatalog.subscription)]
                })
            try queue.ledger.close()
        }
    }

    /// A refund's reversal writes every copy's reinstatement, its history events and its
    /// REFUND_REVERSED notification in one commit: a crash keeps all or none.
    @Test func aRefundsReversalIsOneCommit() async throws {
        try await withTemporaryDirectory { directory in
            let configuration = FaultInjection.configuration(LedgerConfiguration(clock: .fixed(Self.epoch)))
            try SampleCatalog.ledger(in: directory, configuration: configuration).close()
            let queue = try PaymentQueue(path: directory + "/ledger.sqlite", configuration: configuration)
            let session = StoreTestSession(queue: queue)
            _ = try session.set(.notificationURL, to: "http://127.0.0.1:9/notifications")
            let bought = try await queue.add(Payment(productID: SampleCatalog.nonConsumable))
            let copy = try #require(try await queue.restoreCompletedTransactions().restored.all().first)
            try await session.refundTransaction(bought.id, revocationPercentage: 30_000)
            let notified = try queue.ledger.notifications().count
            FaultInjection.reset()
            try await session.reverseRefund(of: bought.id)
            #expect(FaultInjection.counters.syncs == 1)
            for id in [bought.id, copy.id] {
                #expect(try queue.ledger.transaction(id)?.revocationDate == nil)
                #expect(try queue.ledger.events(of: id).last?.kind == .reinstated)
            }
            #expect(try queue.ledger.notifications().count == notified + 1)
            try queue.ledger.close()
        }
    }

    /// Runs one control at a time and checks its commit.
    final class Watch {
        let queue: PaymentQueue
        let observer: CollectingObserver
        /// What the last control handed out.
        private(set) var last: [PaymentTransaction] = []

        init(queue: PaymentQueue, observer: CollectingObserver) {
            self.queue = queue
            self.observer = observer
        }

        /// Runs `control` and tells whether it handed something out in one sync, each
        /// transaction counted as delivered once more and received by the observer as stored.
        func oneCommit(_ name: String, _ control: () async throws -> [PaymentTransaction]) async throws -> Bool {
            let received = observer.updated.count
            let counts = Dictionary(
                uniqueKeysWithValues: try queue.ledger.allTransactions().map { ($0.id, $0.deliveryCount) })
            FaultInjection.reset()
            last = try await control()
            let syncs = FaultInjection.counters.syncs
            #expect(syncs == 1, "\(name): \(syncs) syncs")
            #expect(Array(observer.updated.dropFirst(received)) == last, "\(name): the observer got it")
            for transaction in last {
                #expect(transaction.deliveryCount == (counts[transaction.id] ?? 0) + 1, "\(name): delivered once")
                #expect(try queue.ledger.transaction(transaction.id) == transaction, "\(name): as stored")
            }
            return syncs == 1 && !last.isEmpty
        }
    }
}
