import Foundation
import LedgerTestSupport
import LedgerTesting
import StoreLedger
import Synchronization
import Testing

/// A launch delivers any number of unfinished transactions in batches of at most
/// `PaymentQueue.deliveryBatchLimit`, oldest first, each batch's delivery committed before it
/// is handed over: a large ledger's redelivery takes bounded memory (`ledger-lab bench
/// --workloads redelivery` measures it).
@Suite struct RedeliveryBatchTests {
    /// A ledger of the sample catalog holding `unfinished` unfinished purchases (and 10 finished).
    static func ledger(unfinished: Int, in directory: String) throws -> (path: String, ids: [UInt64]) {
        let ledger = try SampleCatalog.ledger(in: directory)
        let ids = try ledger.appendSyntheticPurchases(
            productID: SampleCatalog.consumable, finished: 10, unfinished: unfinished)
        try ledger.close()
        return (directory + "/ledger.sqlite", ids)
    }

    @Test func aLaunchDeliversInBatchesOldestFirstEachOnce() async throws {
        try await withTemporaryDirectory { directory in
            let (path, ids) = try Self.ledger(unfinished: 2_345, in: directory)
            let queue = try PaymentQueue(path: path)
            let observer = CollectingObserver()
            try await queue.add(observer)
            let batches = observer.callbacks.compactMap { callback -> [PaymentTransaction]? in
                if case .updated(let transactions) = callback { return transactions }
                return nil
            }
            #expect(PaymentQueue.deliveryBatchLimit == 1_000)
            #expect(batches.map(\.count) == [1_000, 1_000, 345])
            #expect(batches.flatMap { $0 }.map(\.id) == ids)
            #expect(batches.flatMap { $0 }.allSatisfy { $0.deliveryCount == 1 })
            // Each delivery was committed before it was handed over.
            #expect(observer.committedAtNotification == batches.flatMap { $0 }.map(Optional.some))
            // Delivering again reaches every observer, in batches too, and says how many.
            #expect(try await queue.redeliverUnfinishedTransactions() == 2_345)
            #expect(observer.callbacks.count == 6)
            #expect(try queue.ledger.transaction(ids[2_000])?.deliveryCount == 2)
        }
    }

    /// What the observer's callbacks do during the redelivery is theirs: a purchase it makes
    /// is delivered as it is made, never again as part of the redelivery; what it finishes
    /// ahead is not delivered.
    @Test func whatTheCallbacksChangeIsNotPartOfTheRedelivery() async throws {
        try await withTemporaryDirectory { directory in
            let (path, ids) = try Self.ledger(unfinished: 1_500, in: directory)
            let queue = try PaymentQueue(path: path)
            let observer = ActingObserver { queue, batch in
                guard batch.first?.id == ids.first else { return }
                _ = try? await queue.add(Payment(productID: SampleCatalog.nonConsumable))
                _ = try? await queue.finish([ids[1_400]])
            }
            try await queue.add(observer)
            await queue.waitUntilNotified()
            let bought = try #require(try queue.ledger.transactions().last)
            #expect(bought.productID == SampleCatalog.nonConsumable && bought.id > ids.last!)
            let delivered = observer.batches.flatMap { $0 }
            #expect(delivered.filter { $0.id == bought.id }.map(\.state) == [.purchasing, .purchased])
            #expect(delivered.filter { ids.contains($0.id) }.map(\.id) == ids.filter { $0 != ids[1_400] })
            #expect(try queue.ledger.transaction(bought.id)?.deliveryCount == 2)
        }
    }
    /// A change committed while a new observer's redelivery is under way reaches it after the
    /// redelivery, never between its batches: its first updates are the redelivery.
    @Test func aChangeMadeDuringTheRedeliveryWaitsForItsEnd() async throws {
        try await withTemporaryDirectory { directory in
            let (path, ids) = try Self.ledger(unfinished: 2_345, in: directory)
            let queue = try PaymentQueue(path: path)
            let other = ActingObserver()
            try await queue.add(other)
            let newcomer = ActingObserver { queue, batch in
                guard batch.first?.id == ids.first else { return }
                _ = try? await queue.finish([ids[1_400]])  // in the second batch
            }
            try await queue.add(newcomer)
            await queue.waitUntilNotified()
            // The second batch takes the next 1,000 unfinished: the finished one is not among them.
            #expect(newcomer.log == ["updated 1000", "updated 1000", "updated 344", "removed \(ids[1_400])"])
            #expect(other.log.suffix(1) == ["removed \(ids[1_400])"])
            // Added again while it is registered: nothing happens.
            try await queue.add(newcomer)
            #expect(newcomer.log.count == 4)
        }
    }
}

/// An observer that records each update and runs `act` on each `updatedTransactions` (inside
/// the callback).
private final class ActingObserver: PaymentTransactionObserver {
    private let act: @Sendable (PaymentQueue, [PaymentTransaction]) async -> Void
    private let state = Mutex<(batches: [[PaymentTransaction]], log: [String])>(([], []))

    init(act: @escaping @Sendable (PaymentQueue, [PaymentTransaction]) async -> Void = { _, _ in }) {
        self.act = act
    }

    var batches: [[PaymentTransaction]] { state.withLock { $0.batches } }
    /// Each callback: `updated N` (how many), `removed ID...`.
    var log: [String] { state.withLock { $0.log } }

    func paymentQueue(_ queue: PaymentQueue, updatedTransactions transactions: [PaymentTransaction]) async {
        state.withLock {
            $0.batches.append(transactions)
            $0.log.append("updated \(transactions.count)")
        }
        await act(queue, transactions)
    }

    func paymentQueue(_ queue: PaymentQueue, removedTransactions transactions: [PaymentTransaction]) async {
        state.withLock { $0.log.append("removed " + transactions.map { String($0.id) }.joined(separator: " ")) }
    }
}
