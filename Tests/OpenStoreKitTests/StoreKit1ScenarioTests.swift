import Foundation
import LedgerTestSupport
import LedgerTesting
import OpenStoreKit
import OpenStoreKitTest
import Testing

/// StoreKit 1 client code (`Clients/StoreObserver.swift`) driven by `SKTestSession`.
@MainActor
@Suite struct StoreKit1ScenarioTests {
    @Test func productsComeLocalizedAndPricedForTheStorefront() async throws {
        try await Shop.withSession { session in
            let fetcher = ProductFetcher()
            fetcher.fetch(Shop.all + ["com.example.unknown"])
            try await waitFor(session) { fetcher.finished }
            #expect(fetcher.failure == nil)
            #expect(fetcher.products.map(\.productIdentifier) == Shop.all.sorted())
            #expect(fetcher.invalidIdentifiers == ["com.example.unknown"])
            let monthly = try #require(fetcher.products.first { $0.productIdentifier == Shop.monthly })
            #expect(monthly.localizedTitle == "Pro Monthly")
            #expect(monthly.price == NSDecimalNumber(string: "3.99"))
            #expect(ProductFetcher.formattedPrice(of: monthly) == "$3.99")
            #expect(monthly.subscriptionGroupIdentifier == Shop.groupID)
            #expect(monthly.subscriptionPeriod?.unit == .month && monthly.subscriptionPeriod?.numberOfUnits == 1)
            #expect(monthly.introductoryPrice?.paymentMode == .freeTrial)
            #expect(monthly.introductoryPrice?.subscriptionPeriod.unit == .week)
            #expect(monthly.discounts.map(\.identifier) == ["com.example.fixtures.garden.pro.monthly.comeback"])
            #expect(monthly.discounts.first?.type == .subscription)
        }
    }

    @Test func aPurchaseOfEachProductTypeIsDeliveredAndFinished() async throws {
        try await Shop.withSession { session in
            let products = try await fetchShopProducts(session)
            let observer = StoreObserver()
            SKPaymentQueue.default().add(observer)
            #expect(observer.isAuthorizedForPayments)
            observer.buy(try #require(products[Shop.seeds]), quantity: 3)
            for id in [Shop.greenhouse, Shop.season, Shop.monthly] { observer.buy(try #require(products[id])) }
            try await waitFor(session) { observer.removedCount == 4 }
            #expect(observer.delivered == [Shop.seeds: 3, Shop.greenhouse: 1, Shop.season: 1, Shop.monthly: 1])
            #expect(observer.failures.isEmpty)
            #expect(session.allTransactions().allSatisfy { $0.isFinished })
            #expect(SKPaymentQueue.default().transactions.isEmpty)
        }
    }

    /// StoreKit 1 code never asks for a signature: its purchases sign nothing until some code
    /// listens to `Transaction.updates`, whose values are signed and verified.
    @Test func storeKit1PurchasesSignNothingThatNobodyAskedFor() async throws {
        try await Shop.withSession { session in
            let products = try await fetchShopProducts(session)
            let observer = StoreObserver()
            SKPaymentQueue.default().add(observer)
            for id in [Shop.greenhouse, Shop.season] { observer.buy(try #require(products[id])) }
            try await waitFor(session) { observer.removedCount == 2 }
            let signer = try StoreContext.current().origin.signer
            #expect(signer.signatureCount == 0)
            let listener = Task { for await _ in Transaction.updates { break } }
            try await Task.sleep(for: .milliseconds(50))  // the sequence is listening
            observer.buy(try #require(products[Shop.seeds]))
            try await waitFor(session) { observer.removedCount == 3 }
            _ = await listener.value
            #expect(signer.signatureCount > 0)
        }
    }

    @Test func aTransactionLeftUnfinishedByAKilledAppComesBackAtTheNextLaunch() async throws {
        try await Shop.withSession { session in
            let products = try await fetchShopProducts(session)
            let killed = StoreObserver()
            killed.finishesTransactions = false
            SKPaymentQueue.default().add(killed)
            killed.buy(try #require(products[Shop.greenhouse]))
            try await waitFor(session) { killed.delivered[Shop.greenhouse] == 1 }
            #expect(SKPaymentQueue.default().transactions.map(\.transactionState) == [.purchased])

            // The kill destroys the app's observer; the queue lives on in the test process.
            SKPaymentQueue.default().remove(killed)
            try session.relaunch()
            let analytics = MainActorObserver()
            SKPaymentQueue.default().add(analytics)
            let observer = StoreObserver()
            SKPaymentQueue.default().add(observer)
            try await waitFor(session) { observer.removedCount == 1 }
            // Both observers of the new launch got the unfinished purchase; the second one,
            // which finishes, delivered it once and finished it.
            #expect(analytics.states == [.purchased])
            #expect(observer.delivered == [Shop.greenhouse: 1])
            #expect(SKPaymentQueue.default().transactions.isEmpty)
            #expect(killed.removedCount == 0, "the killed launch's observer hears nothing more")
        }
    }

    /// Apple sets no rule on `applicationUsername`: "" is an account like any other.
    @Test func anEmptyApplicationUsernameBuysAndRestoresAsAnyOther() async throws {
        try await Shop.withSession { session in
            let products = try await fetchShopProducts(session)
            let observer = StoreObserver()
            SKPaymentQueue.default().add(observer)
            observer.buy(try #require(products[Shop.greenhouse]), username: "")
            observer.buy(try #require(products[Shop.monthly]), username: "player-2")
            try await waitFor(session) { observer.removedCount == 2 }
            #expect(observer.failures.isEmpty)
            observer.restore(username: "")
            try await waitFor(session) { observer.restoresFinished == 1 }
            #expect(observer.restoredProducts == [Shop.greenhouse])
            #expect(observer.restoreFailures.isEmpty)
        }
    }

    @Test func askToBuyApprovedThenDeclined() async throws {
        try await Shop.withSession { session in
            let products = try await fetchShopProducts(session)
            session.askToBuyEnabled = true
            let observer = StoreObserver()
            SKPaymentQueue.default().add(observer)
            observer.buy(try #require(products[Shop.greenhouse]))
            observer.buy(try #require(products[Shop.season]))
            try await waitFor(session) { observer.pendingProducts.count == 2 }
            let deferred = session.allTransactions().filter(\.pendingAskToBuyConfirmation)
            #expect(deferred.map(\.productIdentifier) == [Shop.greenhouse, Shop.season])
            try session.approveAskToBuyTransaction(identifier: deferred[0].identifier)
            try session.declineAskToBuyTransaction(identifier: deferred[1].identifier)
            try await waitFor(session) { observer.removedCount == 2 }
            #expect(observer.delivered == [Shop.greenhouse: 1])
            #expect(observer.failures == [.paymentCancelled])
            let again = #expect(throws: (any Error).self) {
                try session.approveAskToBuyTransaction(identifier: deferred[0].identifier)
            }
            #expect(
                again?.localizedDescription
                    == "transaction \(deferred[0].identifier) is purchased, not deferred: only a deferred (Ask to Buy) transaction can be approved or declined"
            )
        }
    }

    @Test func aRestoreReplaysWhatCanBeRestoredAndFinishesOnce() async throws {
        try await Shop.withSession { session in
            let products = try await fetchShopProducts(session)
            let buyer = StoreObserver()
            SKPaymentQueue.default().add(buyer)
            for id in [Shop.seeds, Shop.greenhouse, Shop.monthly] {
                buyer.buy(try #require(products[id]), username: "gardener-7")
            }
            buyer.buy(try #require(products[Shop.season]), username: "someone-else")
            try await waitFor(session) { buyer.removedCount == 4 }
            SKPaymentQueue.default().remove(buyer)

            let observer = StoreObserver()
            SKPaymentQueue.default().add(observer)
            observer.restore(username: "gardener-7")
            try await waitFor(session) { observer.restoresFinished == 1 }
            #expect(observer.restoredProducts.sorted() == [Shop.greenhouse, Shop.monthly])
            #expect(observer.restoreFailures.isEmpty)
            observer.restore()
            try await waitFor(session) { observer.restoresFinished == 2 }
            #expect(observer.restoredProducts.count == 4, "a restore for everyone restores both purchases again")
            #expect(observer.restoresFinished == 2)
        }
    }

    @Test func aRefundRevokesTheEntitlementWithoutHandingTheTransactionBack() async throws {
        try await Shop.withSession { session in
            let products = try await fetchShopProducts(session)
            let observer = StoreObserver()
            SKPaymentQueue.default().add(observer)
            let watcher = MainActorObserver()
            SKPaymentQueue.default().add(watcher)
            observer.buy(try #require(products[Shop.greenhouse]))
            try await waitFor(session) { observer.removedCount == 1 }
            let updatesBefore = watcher.states.count
            let purchase = try #require(session.allTransactions().first)
            try session.refundTransaction(identifier: purchase.identifier)
            try await waitFor(session) { observer.revokedProducts == [Shop.greenhouse] }
            #expect(observer.delivered[Shop.greenhouse] == nil)
            #expect(watcher.states.count == updatesBefore, "a finished transaction is never handed back")
            #expect(session.allTransactions().first?.cancelDate != nil)
        }
    }

    @Test func aSubscriptionRenewsWhenTheStoreClockPassesItsPeriod() async throws {
        try await Shop.withSession { session in
            let products = try await fetchShopProducts(session)
            let observer = StoreObserver()
            SKPaymentQueue.default().add(observer)
            observer.buy(try #require(products[Shop.yearly]))
            try await waitFor(session) { observer.removedCount == 1 }
            try session.advanceTime(by: 400 * 86_400)
            try await waitFor(session) { observer.removedCount == 2 }
            #expect(observer.delivered[Shop.yearly] == 2)
            let renewals = session.allTransactions().filter { $0.productIdentifier == Shop.yearly }
            #expect(renewals.count == 2 && renewals[1].originalTransactionIdentifier == renewals[0].identifier)
        }
    }

    @Test func refusedPaymentsFailWithStoreKitErrors() async throws {
        try await Shop.withSession { session in
            let products = try await fetchShopProducts(session)
            let observer = StoreObserver()
            SKPaymentQueue.default().add(observer)
            let unknown = SKMutablePayment()
            unknown.productIdentifier = "com.example.not.sold"
            SKPaymentQueue.default().add(unknown)
            observer.buy(try #require(products[Shop.seeds]), quantity: 11)
            try await waitFor(session) { observer.failures.count == 2 }
            #expect(observer.failures == [.storeProductNotAvailable, .paymentInvalid])
            #expect(session.allTransactions().isEmpty, "nothing was stored")

            session.failTransactionsEnabled = true
            session.failureError = .paymentNotAllowed
            observer.buy(try #require(products[Shop.greenhouse]))
            try await waitFor(session) { observer.failures.count == 3 }
            #expect(observer.failures.last == .paymentNotAllowed)
        }
    }

    @Test func anSKErrorBridgesToNSErrorWithStoreKitsDomainAndCodes() {
        let error = SKError(.paymentNotAllowed)
        let bridged = error as NSError
        #expect(bridged.domain == SKErrorDomain && bridged.code == 4)
        #expect(error.localizedDescription == "This device is not allowed to make the payment.")
        var matched = false
        do { throw SKError(.paymentCancelled) } catch SKError.paymentCancelled { matched = true } catch {}
        #expect(matched)
    }
}

/// Waits until `condition` holds, letting the store's calls and callbacks run; fails after four
/// minutes, a bound for a hang only: the whole suite runs in parallel on small CI machines,
/// where a StoreKit test's steps have taken over 100 seconds in all.
@MainActor
func waitFor(
    _ session: SKTestSession, _ condition: @MainActor () -> Bool, sourceLocation: SourceLocation = #_sourceLocation
) async throws {
    let deadline = Date().addingTimeInterval(240)
    while !condition() {
        guard Date() < deadline else {
            Issue.record("timed out waiting", sourceLocation: sourceLocation)
            return
        }
        await session.waitUntilIdle()
        if !condition() { try await Task.sleep(nanoseconds: 1_000_000) }
    }
}

/// Promotional offers with StoreKit 1's `SKPaymentDiscount`.
@MainActor
@Suite struct StoreKit1PromotionalOfferTests {
    @Test func aPaymentDiscountSignedByTheServerIsRedeemedAndABadOneFails() async throws {
        try await Shop.withSession { session in
            let products = try await fetchShopProducts(session)
            let monthly = try #require(products[Shop.monthly])
            let offerID = try #require(monthly.discounts.first?.identifier)
            let observer = StoreObserver()
            SKPaymentQueue.default().add(observer)
            func discount(_ offer: SignedOffer) -> SKPaymentDiscount {
                SKPaymentDiscount(
                    identifier: offer.offerID, keyIdentifier: offer.keyID, nonce: offer.nonce,
                    signature: offer.signature,
                    timestamp: NSNumber(value: offer.timestamp))
            }
            observer.buy(
                monthly, username: "player-7",
                discount: discount(
                    try OfferServer.sign(
                        productID: Shop.monthly, offerID: offerID, account: "player-7")))
            try await waitFor(session) { observer.failures == [.ineligibleForOffer] }
            observer.buy(monthly)
            try await waitFor(session) { observer.delivered[Shop.monthly] == 1 }
            try session.expireSubscription(productIdentifier: Shop.monthly)
            // Signed for another account: the signature does not hold.
            observer.buy(
                monthly, username: "player-7",
                discount: discount(
                    try OfferServer.sign(
                        productID: Shop.monthly, offerID: offerID, account: "player-8")))
            try await waitFor(session) { observer.failures == [.ineligibleForOffer, .invalidSignature] }
            observer.buy(
                monthly, username: "player-7",
                discount: discount(
                    try OfferServer.sign(
                        productID: Shop.monthly, offerID: offerID, account: "player-7")))
            try await waitFor(session) { observer.delivered[Shop.monthly] == 2 }
            let redeemed = try #require(session.allTransactions().last)
            #expect(redeemed.productIdentifier == Shop.monthly && redeemed.state == .purchased)
            #expect(observer.failures == [.ineligibleForOffer, .invalidSignature])
        }
    }
}
