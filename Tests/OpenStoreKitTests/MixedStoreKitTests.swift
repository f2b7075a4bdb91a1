import Foundation
import OpenStoreKit
import OpenStoreKitTest
import Testing

/// An app that buys with StoreKit 2 and still has a StoreKit 1 observer (an analytics
/// library, a wrapper in observer mode). Apple documents no rule for what the StoreKit 1 observer
/// hears; wrappers report that it hears StoreKit 2's purchases (see docs/STOREKIT.md). Here it
/// hears them as it hears its own queue's payments: `purchasing` once, then the outcome, then
/// `removedTransactions` when StoreKit 2 finishes the transaction.
@MainActor
@Suite struct MixedStoreKitTests {
    /// Records what a StoreKit 1 observer hears, transaction by transaction.
    @MainActor final class Recorder: NSObject, @preconcurrency SKPaymentTransactionObserver {
        private(set) var heard: [(id: String?, product: String, state: SKPaymentTransactionState)] = []
        private(set) var removed: [String?] = []

        func paymentQueue(_ queue: SKPaymentQueue, updatedTransactions transactions: [SKPaymentTransaction]) {
            heard += transactions.map { ($0.transactionIdentifier, $0.payment.productIdentifier, $0.transactionState) }
        }

        func paymentQueue(_ queue: SKPaymentQueue, removedTransactions transactions: [SKPaymentTransaction]) {
            removed += transactions.map(\.transactionIdentifier)
        }

        func states(of product: String) -> [SKPaymentTransactionState] {
            heard.filter { $0.product == product }.map(\.state)
        }
    }

    @Test func aStoreKit2PurchaseReachesTheStoreKit1ObserverOnceThenItsFinish() async throws {
        try await Shop.withSession { session in
            let recorder = Recorder()
            SKPaymentQueue.default().add(recorder)
            let greenhouse = try #require(try await Product.products(for: [Shop.greenhouse]).first)
            guard case .success(let verification) = try await greenhouse.purchase() else {
                Issue.record("the purchase succeeds")
                return
            }
            let transaction = try verification.payloadValue
            try await waitFor(session) { recorder.states(of: Shop.greenhouse) == [.purchasing, .purchased] }
            #expect(recorder.heard.last?.id == String(transaction.id))
            #expect(recorder.removed.isEmpty, "unfinished until StoreKit 2 finishes it")
            await transaction.finish()
            try await waitFor(session) { recorder.removed == [String(transaction.id)] }
            #expect(SKPaymentQueue.default().transactions.isEmpty)
            #expect(recorder.states(of: Shop.greenhouse) == [.purchasing, .purchased], "nothing heard twice")
        }
    }

    @Test func anAskToBuyPurchaseOfStoreKit2IsPurchasingOnceThroughItsApproval() async throws {
        try await Shop.withSession { session in
            let recorder = Recorder()
            SKPaymentQueue.default().add(recorder)
            session.askToBuyEnabled = true
            let greenhouse = try #require(try await Product.products(for: [Shop.greenhouse]).first)
            guard case .pending = try await greenhouse.purchase() else {
                Issue.record("an Ask to Buy purchase is pending")
                return
            }
            try await waitFor(session) { recorder.states(of: Shop.greenhouse) == [.purchasing, .deferred] }
            let deferred = try #require(session.allTransactions().first { $0.pendingAskToBuyConfirmation })
            try session.approveAskToBuyTransaction(identifier: deferred.identifier)
            try await waitFor(session) { recorder.states(of: Shop.greenhouse).last == .purchased }
            #expect(recorder.states(of: Shop.greenhouse) == [.purchasing, .deferred, .purchased])
            try session.relaunch()
            // At the next launch the unfinished purchase comes back as it is: `purchased`, never
            // `purchasing` again.
            try await waitFor(session) { recorder.states(of: Shop.greenhouse).count == 4 }
            #expect(recorder.states(of: Shop.greenhouse) == [.purchasing, .deferred, .purchased, .purchased])
        }
    }

    @Test func aFailedStoreKit2PurchaseIsFailedThenRemovedForTheStoreKit1Observer() async throws {
        try await Shop.withSession { session in
            let recorder = Recorder()
            SKPaymentQueue.default().add(recorder)
            session.failTransactionsEnabled = true
            session.failureError = .paymentNotAllowed
            let greenhouse = try #require(try await Product.products(for: [Shop.greenhouse]).first)
            await #expect(throws: (any Error).self) { try await greenhouse.purchase() }
            // StoreKit 2 shows no failed transaction: it finishes it at once.
            try await waitFor(session) { recorder.removed.count == 1 }
            #expect(recorder.states(of: Shop.greenhouse) == [.purchasing, .failed])
        }
    }
}
