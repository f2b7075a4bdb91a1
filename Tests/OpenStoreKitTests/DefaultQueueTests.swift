import Foundation
import LedgerTestSupport
import OpenStoreKit
import OpenStoreKitTest
import Testing

/// `SKPaymentQueue.default()` is one queue for the process, as Apple's "default payment queue
/// instance": an app that keeps it in a singleton, with its observer added once, keeps working
/// when a test makes a new session or relaunches the store.
@MainActor
@Suite struct DefaultQueueTests {
    /// The app's store singleton: the queue and the observer it adds once, at its first launch.
    @MainActor final class AppStore {
        let queue = SKPaymentQueue.default()
        let observer = MainActorObserver()
        let finisher = StoreObserver()

        init() {
            queue.add(observer)
            queue.add(finisher)
        }
    }

    @Test func theProcessQueueFollowsNewSessionsAndRelaunchesWithItsObservers() async throws {
        try await Shop.withProcessSession { first in
            try await followNewSessionsAndRelaunches(first)
        }
    }

    private func followNewSessionsAndRelaunches(_ first: SKTestSession) async throws {
        let app = AppStore()
        app.finisher.finishesTransactions = false
        let products = try await fetchShopProducts(first)
        app.finisher.buy(try #require(products[Shop.greenhouse]))
        try await waitFor(first) { app.observer.states == [.purchasing, .purchased] }
        #expect(SKPaymentQueue.default() === app.queue)

        try first.relaunch()
        #expect(SKPaymentQueue.default() === app.queue)
        // The observers moved to the new launch: the unfinished purchase reaches them again,
        // as it reaches an observer added at any launch.
        try await waitFor(first) { app.observer.states == [.purchasing, .purchased, .purchased] }
        app.finisher.finishesTransactions = true
        app.finisher.buy(try #require(products[Shop.seeds]))
        try await waitFor(first) { app.finisher.removedCount == 1 }
        #expect(app.queue.transactions.map(\.payment.productIdentifier) == [Shop.greenhouse])

        let second = try SKTestSession(contentsOf: Shop.file)
        #expect(SKPaymentQueue.default() === app.queue)
        #expect(app.queue.transactions.isEmpty, "the new session's store has nothing unfinished")
        app.finisher.buy(try #require(products[Shop.season]))
        try await waitFor(second) { app.finisher.removedCount == 2 }
        #expect(second.allTransactions().map(\.productIdentifier) == [Shop.season])
        #expect(first.allTransactions().map(\.productIdentifier).sorted() == [Shop.greenhouse, Shop.seeds])
        #expect(app.observer.states.suffix(2) == [.purchasing, .purchased])
    }

    @Test func aTaskLocalSessionHasItsOwnQueueThatFollowsItsRelaunches() async throws {
        let process = SKPaymentQueue.default()
        let session = try SKTestSession(contentsOf: Shop.file, scope: .taskLocal)
        let other = try SKTestSession(contentsOf: Shop.file, scope: .taskLocal)
        let (queue, observer, products) = try await session.withTaskLocalStore {
            let queue = SKPaymentQueue.default()
            #expect(queue !== process)
            #expect(SKPaymentQueue.default() === queue)
            let observer = StoreObserver()
            queue.add(observer)
            let products = try await fetchShopProducts(session)
            observer.buy(try #require(products[Shop.greenhouse]))
            try await waitFor(session) { observer.removedCount == 1 }
            try session.relaunch()
            #expect(SKPaymentQueue.default() === queue)
            return (queue, observer, products)
        }
        await other.withTaskLocalStore {
            #expect(SKPaymentQueue.default() !== queue)
            #expect(SKPaymentQueue.default() !== process)
        }
        // Kept and called outside the scope, the session's queue still reaches its store, and
        // its observer moved to the new launch. (The observer's own calls go to
        // `SKPaymentQueue.default()`, which is the process's queue out here: it does not finish.)
        observer.finishesTransactions = false
        queue.add(SKPayment(product: try #require(products[Shop.season])))
        try await waitFor(session) { observer.delivered[Shop.season] == 1 }
        #expect(session.allTransactions().map(\.productIdentifier).sorted() == [Shop.greenhouse, Shop.season])
        #expect(other.allTransactions().isEmpty)
    }
}
