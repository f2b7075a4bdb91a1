import Foundation
import LedgerTesting
import OpenStoreKit
import OpenStoreKitTest
import Testing

import struct LedgerModel.UnknownProductError

/// Purchases the customer starts on the App Store: a promoted product, or a win-back offer.
/// StoreKit 2 apps receive them from `PurchaseIntent.intents`; StoreKit 1 apps are asked
/// `paymentQueue(_:shouldAddStorePayment:for:)`.
@MainActor
@Suite struct PurchaseIntentTests {
    /// An app's store as Apple's sample writes it: it listens to the intents at launch and buys
    /// each intent's product.
    @MainActor final class PromotingStore {
        private(set) var purchased: [String] = []
        private(set) var intents: [PurchaseIntent] = []
        private var listener: Task<Void, Never>?

        func listenForPurchaseIntents(buying: Bool = true) {
            listener = Task {
                for await intent in PurchaseIntent.intents {
                    intents.append(intent)
                    if buying { await purchase(intent.product) }
                }
            }
        }

        func purchase(_ product: Product) async {
            guard case .success(let verification) = try? await product.purchase(),
                case .verified(let transaction) = verification
            else { return }
            purchased.append(transaction.productID)
            await transaction.finish()
        }

        deinit { listener?.cancel() }
    }

    @Test func aPromotedPurchaseReachesTheIntentsSequenceAndIsBought() async throws {
        try await Shop.withSession { session in
            let store = PromotingStore()
            store.listenForPurchaseIntents()
            try session.startPurchaseFromAppStore(productIdentifier: Shop.greenhouse)
            try await waitFor(session) { store.purchased == [Shop.greenhouse] }
            #expect(store.intents.map(\.id) == [Shop.greenhouse])
            #expect(store.intents.first?.offer == nil)
            #expect(store.intents.first?.product.displayPrice.isEmpty == false)
        }
    }

    @Test func anIntentStartedBeforeTheAppListensWaitsForItAcrossARelaunch() async throws {
        try await Shop.withSession { session in
            try session.startPurchaseFromAppStore(productIdentifier: Shop.greenhouse)
            try session.startPurchaseFromAppStore(productIdentifier: Shop.season)
            try session.relaunch()
            let store = PromotingStore()
            store.listenForPurchaseIntents()
            try await waitFor(session) { store.purchased.count == 2 }
            #expect(store.purchased == [Shop.greenhouse, Shop.season], "in the order they were started")
            // A second sequence made later gets only what is started from then on.
            let late = PromotingStore()
            late.listenForPurchaseIntents(buying: false)
            try await Task.sleep(for: .milliseconds(50))  // the late sequence listens
            try session.startPurchaseFromAppStore(productIdentifier: Shop.seeds)
            try await waitFor(session) { late.intents.count == 1 && store.purchased.count == 3 }
            #expect(late.intents.map(\.id) == [Shop.seeds])
        }
    }

    @Test func aWinBackOfferRedeemedOnTheAppStoreComesWithItsOffer() async throws {
        try await SampleShop.withSession { session in
            let store = PromotingStore()
            store.listenForPurchaseIntents(buying: false)
            try session.startPurchaseFromAppStore(
                productIdentifier: WinBackStoreKitTests.basic, winBackOfferID: "COMEBACK_FREE")
            try await waitFor(session) { store.intents.count == 1 }
            let offer = try #require(store.intents.first?.offer)
            #expect(offer.id == "COMEBACK_FREE" && offer.type == .winBack)
            #expect(store.intents.first?.product.subscription?.winBackOffers.contains(offer) == true)
        }
    }

    /// A StoreKit 1 app's observer decides: `true` adds the payment now, `false` keeps it.
    @MainActor final class PromotionObserver: NSObject, @preconcurrency SKPaymentTransactionObserver {
        var answer = true
        private(set) var asked: [String] = []
        private(set) var kept: [SKPayment] = []
        private(set) var purchased: [String] = []

        func paymentQueue(_ queue: SKPaymentQueue, updatedTransactions transactions: [SKPaymentTransaction]) {
            for transaction in transactions where transaction.transactionState == .purchased {
                purchased.append(transaction.payment.productIdentifier)
                queue.finishTransaction(transaction)
            }
        }

        func paymentQueue(
            _ queue: SKPaymentQueue, shouldAddStorePayment payment: SKPayment, for product: SKProduct
        )
            -> Bool
        {
            asked.append(product.productIdentifier)
            if !answer { kept.append(payment) }
            return answer
        }
    }

    @Test func aStoreKit1AppIsAskedAndAddsThePaymentOrKeepsItForLater() async throws {
        try await Shop.withSession { session in
            let observer = PromotionObserver()
            SKPaymentQueue.default().add(observer)
            try session.startPurchaseFromAppStore(productIdentifier: Shop.greenhouse)
            try await waitFor(session) { observer.purchased == [Shop.greenhouse] }
            #expect(observer.asked == [Shop.greenhouse])

            observer.answer = false
            try session.startPurchaseFromAppStore(productIdentifier: Shop.season)
            try await waitFor(session) { observer.kept.count == 1 }
            await session.waitUntilIdle()
            #expect(observer.purchased == [Shop.greenhouse], "kept, not added")
            // The app adds it when it is ready.
            SKPaymentQueue.default().add(try #require(observer.kept.first))
            try await waitFor(session) { observer.purchased == [Shop.greenhouse, Shop.season] }
        }
    }

    @Test func anIntentThatWaitedGoesToTheFirstStoreKit1ObserverAdded() async throws {
        try await Shop.withSession { session in
            try session.startPurchaseFromAppStore(productIdentifier: Shop.greenhouse)
            let observer = PromotionObserver()
            SKPaymentQueue.default().add(observer)
            try await waitFor(session) { observer.purchased == [Shop.greenhouse] }
            #expect(observer.asked == [Shop.greenhouse])
        }
    }

    @Test func withBothTheIntentsSequenceTakesThePurchaseAndTheDelegateIsNotAsked() async throws {
        try await Shop.withSession { session in
            let observer = PromotionObserver()
            SKPaymentQueue.default().add(observer)
            let store = PromotingStore()
            store.listenForPurchaseIntents()
            try await Task.sleep(for: .milliseconds(50))  // the sequence listens
            try session.startPurchaseFromAppStore(productIdentifier: Shop.greenhouse)
            try await waitFor(session) { store.purchased == [Shop.greenhouse] }
            #expect(observer.asked.isEmpty)
        }
    }

    @Test func whatTheAppStoreCannotStartIsRefusedAndNothingReachesTheApp() async throws {
        try await SampleShop.withSession { session in
            #expect(throws: UnknownProductError(productIdentifier: "com.example.unknown")) {
                try session.startPurchaseFromAppStore(productIdentifier: "com.example.unknown")
            }
            try await Product.PromotionInfo.updateProductVisibility(.hidden, for: SampleCatalog.nonConsumable)
            #expect(throws: SKTestSessionError.productNotPromoted(productIdentifier: SampleCatalog.nonConsumable)) {
                try session.startPurchaseFromAppStore(productIdentifier: SampleCatalog.nonConsumable)
            }
            // Once an order is set, a product left out of it is not shown either.
            try await Product.PromotionInfo.updateProductOrder(byID: [SampleCatalog.consumable])
            #expect(throws: SKTestSessionError.productNotPromoted(productIdentifier: SampleCatalog.nonConsumable2)) {
                try session.startPurchaseFromAppStore(productIdentifier: SampleCatalog.nonConsumable2)
            }
            #expect(
                throws: SKTestSessionError.unknownWinBackOffer(
                    productIdentifier: WinBackStoreKitTests.basic, offerID: "NO_SUCH_OFFER")
            ) {
                try session.startPurchaseFromAppStore(
                    productIdentifier: WinBackStoreKitTests.basic, winBackOfferID: "NO_SUCH_OFFER")
            }
            // The bound: 100 wait for an app that never listens; the next is refused.
            for _ in 0..<100 { try session.startPurchaseFromAppStore(productIdentifier: SampleCatalog.consumable) }
            #expect(throws: SKTestSessionError.tooManyPurchaseIntents(limit: 100)) {
                try session.startPurchaseFromAppStore(productIdentifier: SampleCatalog.consumable)
            }
            let store = PromotingStore()
            store.listenForPurchaseIntents(buying: false)
            try await waitFor(session) { store.intents.count == 100 }
            #expect(Set(store.intents.map(\.id)) == [SampleCatalog.consumable], "nothing refused reached the app")
            #expect(session.allTransactions().isEmpty)
        }
    }
}
