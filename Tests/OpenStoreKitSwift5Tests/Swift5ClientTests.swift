import Foundation
import LedgerTestSupport
import LedgerTesting
import OpenStoreKit
import OpenStoreKitTest
import Testing

/// The same StoreKit client code (`Clients/`, shared with OpenStoreKitTests by a symlink),
/// compiled in Swift 5 language mode, as most app code still is, and run once.
@MainActor
@Suite struct Swift5ClientTests {
    static let file = URL(fileURLWithPath: Repository.fixture("v3.0-garden-shop.storekit"))
    static let greenhouse = "com.example.fixtures.garden.greenhouse"
    static let season = "com.example.fixtures.garden.season"
    static let monthly = "com.example.fixtures.garden.pro.monthly"

    @Test func theStoreKit1ObserverBuysAndFinishes() async throws {
        let session = try SKTestSession(contentsOf: Self.file, scope: .taskLocal)
        try await session.withTaskLocalStore {
            let fetcher = ProductFetcher()
            fetcher.fetch([Self.greenhouse])
            await session.waitUntilIdle()
            while !fetcher.finished { await Task.yield() }
            let observer = StoreObserver()
            SKPaymentQueue.default().add(observer)
            observer.buy(try #require(fetcher.products.first))
            while observer.removedCount < 1 { await session.waitUntilIdle() }
            #expect(observer.delivered == [Self.greenhouse: 1])
        }
    }

    /// The subscription screen holds the App Store's price consent message, shows it when it
    /// may, and says what the subscriber must do.
    @Test func theSubscriptionScreenShowsThePriceConsentWhenItMay() async throws {
        let session = try SKTestSession(contentsOf: Self.file, scope: .taskLocal)
        try await session.withTaskLocalStore {
            let bought = try await session.buyProduct(identifier: Self.monthly)
            let screen = SubscriptionScreen()
            screen.holdMessages()
            screen.appear()
            // The screen's task may start listening a little later: a status only reaches it
            // once it listens, so change one until it reports.
            for _ in 0..<1_000 where screen.reportedStates.isEmpty {
                try session.disableAutoRenewForTransaction(identifier: UInt(bought.id))
                try session.enableAutoRenewForTransaction(identifier: UInt(bought.id))
                await session.waitUntilIdle()
            }
            try session.requestPriceIncreaseConsentForTransaction(identifier: Int(bought.id))
            // Status.updates wakes at once; the bound keeps a broken watch from hanging the run.
            for _ in 0..<1_000 where screen.heldMessages.isEmpty || !screen.renewalLine.hasPrefix("Agree") {
                await session.waitUntilIdle()
            }
            #expect(screen.renewalLine == "Agree to the new price (3.99) to keep your subscription")
            #expect(screen.heldMessages.map(\.reason) == [.priceIncreaseConsent])
            let monthly = try #require(try await Product.products(for: [Self.monthly]).first)
            #expect(screen.periodLine(for: monthly) == "every 1 month (per month)")
            #expect(session.priceConsentSheetCount == 0, "held, not shown yet")
            screen.showHeldMessages(in: UIWindowScene())
            #expect(session.priceConsentSheetCount == 1)
            screen.disappear()
        }
    }

    /// The subscription screen's "Come back" banner finds the win-back offer a churned
    /// subscriber may redeem, and its button redeems it.
    @Test func theSubscriptionScreenWinsBackAChurnedSubscriber() async throws {
        try await withTemporaryDirectory { directory in
            let file = URL(fileURLWithPath: try SampleCatalog.write(in: directory))
            let session = try SKTestSession(contentsOf: file, scope: .taskLocal)
            try await session.withTaskLocalStore {
                let basic = try #require(try await Product.products(for: [SampleCatalog.basicSubscription]).first)
                let screen = SubscriptionScreen()
                let bought = try await session.buyProduct(identifier: SampleCatalog.basicSubscription)
                #expect(await screen.comeBackOffer(for: basic) == nil, "subscribed: no banner")
                try session.disableAutoRenewForTransaction(identifier: UInt(bought.id))
                try session.advanceTime(by: 32 * 86_400)
                let offer = try #require(await screen.comeBackOffer(for: basic))
                #expect(offer.id == "COMEBACK_FREE" && offer.type == .winBack)
                #expect(await screen.comeBack(to: basic, with: offer))
                #expect(await screen.comeBackOffer(for: basic) == nil, "subscribed again")
            }
        }
    }

    /// The store's `Transaction.updates` listener is a detached task, which only the
    /// process's store reaches: one such test at a time in the whole test process.
    @Test func theStoreKit2StoreBuysAndSeesItsEntitlement() async throws {
        await SerialGate.processStore.acquire()
        defer { Task { await SerialGate.processStore.release() } }
        let session = try SKTestSession(contentsOf: Self.file)
        let store = Store()
        try await store.requestProducts([Self.season])
        let transaction = try await store.purchase(try #require(store.product(Self.season)))
        #expect(transaction?.productID == Self.season)
        #expect(store.isPurchased(Self.season))
        session.clearTransactions()
    }
}
