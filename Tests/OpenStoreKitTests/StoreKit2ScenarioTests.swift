import Foundation
import LedgerTestSupport
import LedgerTesting
import OpenStoreKit
import OpenStoreKitTest
import Testing

import enum LedgerModel.StoreControlError

/// StoreKit 2 client code (`Clients/Store.swift`, whose `Transaction.updates` listener is a
/// detached task as in Apple's sample) driven by `SKTestSession` bound to the process.
@MainActor
@Suite struct StoreKit2ScenarioTests {
    @Test func productsShowNamesPricesAndOffers() async throws {
        try await Shop.withProcessSession { session in
            let store = Store()
            try await store.requestProducts([Shop.monthly, Shop.greenhouse, "com.example.unknown"])
            #expect(store.products.map(\.id) == [Shop.monthly, Shop.greenhouse])
            let monthly = try #require(store.product(Shop.monthly))
            #expect(
                monthly.displayName == "Pro Monthly" && monthly.displayPrice == "$3.99"
                    && monthly.price == Decimal(string: "3.99"))
            #expect(monthly.type == .autoRenewable && store.product(Shop.greenhouse)?.type == .nonConsumable)
            #expect(monthly.price.formatted(monthly.priceFormatStyle) == "$3.99")
            let subscription = try #require(monthly.subscription)
            #expect(subscription.subscriptionGroupID == Shop.groupID && subscription.groupLevel == 2)
            #expect(subscription.subscriptionPeriod.unit == .month && subscription.subscriptionPeriod.value == 1)
            #expect(subscription.introductoryOffer?.paymentMode == .freeTrial)
            #expect(subscription.introductoryOffer?.period.unit == .week && subscription.introductoryOffer?.id == nil)
            #expect(subscription.promotionalOffers.map(\.id) == ["com.example.fixtures.garden.pro.monthly.comeback"])
            #expect(subscription.promotionalOffers.first?.displayPrice == "$0.99")
            #expect(await subscription.isEligibleForIntroOffer)
            #expect(try await subscription.status.isEmpty)
        }
    }

    @Test func whatPurchaseReturnsIsNotEmittedAgainByUpdates() async throws {
        try await Shop.withProcessSession { session in
            let store = Store()
            try await store.requestProducts(Shop.all)
            let product = try #require(store.product(Shop.greenhouse))
            let bought = try #require(try await store.purchase(product))
            #expect(
                bought.productID == Shop.greenhouse && bought.purchasedQuantity == 1 && bought.environment == .xcode)
            #expect(store.isPurchased(Shop.greenhouse))
            // A purchase made outside the app reaches the listener.
            try session.buyProduct(productIdentifier: Shop.season)
            try await waitFor(session) {
                store.isPurchased(Shop.season) && SKPaymentQueue.default().transactions.isEmpty
            }
            #expect(store.updates.count == 1 && !store.updates.contains(bought.id))
            var unfinished = 0
            for await _ in Transaction.unfinished { unfinished += 1 }
            #expect(unfinished == 0, "the store finishes what it delivers")
        }
    }

    @Test func askToBuyIsPendingUntilApprovedThenArrivesAsAnUpdate() async throws {
        try await Shop.withProcessSession { session in
            let store = Store()
            try await store.requestProducts(Shop.all)
            session.askToBuyEnabled = true
            let result = try await store.purchase(try #require(store.product(Shop.greenhouse)))
            #expect(result == nil)
            let deferred = try #require(session.allTransactions().first { $0.pendingAskToBuyConfirmation })
            try session.approveAskToBuyTransaction(identifier: deferred.identifier)
            try await waitFor(session) { store.isPurchased(Shop.greenhouse) }
            #expect(store.updates == [UInt64(deferred.identifier)])
        }
    }

    @Test func cancelledAndRefusedPurchasesLeaveNothingUnfinished() async throws {
        try await Shop.withProcessSession { session in
            let store = Store()
            try await store.requestProducts(Shop.all)
            let greenhouse = try #require(store.product(Shop.greenhouse))
            session.failureError = .paymentCancelled
            session.failTransactionsEnabled = true
            #expect(try await store.purchase(greenhouse) == nil)
            session.failureError = .paymentNotAllowed
            await #expect(throws: Product.PurchaseError.purchaseNotAllowed) { try await store.purchase(greenhouse) }
            await #expect(throws: Product.PurchaseError.invalidQuantity) {
                try await store.purchase(try #require(store.product(Shop.seeds)), quantity: 11)
            }
            var unfinished = 0
            for await _ in Transaction.unfinished { unfinished += 1 }
            #expect(unfinished == 0)
            #expect(session.allTransactions().allSatisfy { $0.isFinished })
        }
    }

    /// Each StoreKit 1 error a purchase fails with, as StoreKit 2 reports it (`FailedPurchase`),
    /// written here from the meaning Apple's documentation gives each error.
    nonisolated static let failures: [(SKError.Code, String)] = [
        (.unknown, "StoreKitError.unknown"),
        (.clientInvalid, "PurchaseError.purchaseNotAllowed"),
        (.paymentCancelled, "userCancelled"),
        (.paymentInvalid, "PurchaseError.productUnavailable"),
        (.paymentNotAllowed, "PurchaseError.purchaseNotAllowed"),
        (.storeProductNotAvailable, "PurchaseError.productUnavailable"),
        (.cloudServicePermissionDenied, "StoreKitError.notEntitled"),
        (.cloudServiceNetworkConnectionFailed, "StoreKitError.networkError"),
        (.cloudServiceRevoked, "StoreKitError.notEntitled"),
        (.privacyAcknowledgementRequired, "PurchaseError.purchaseNotAllowed"),
        (.unauthorizedRequestData, "StoreKitError.notEntitled"),
        (.invalidOfferIdentifier, "PurchaseError.invalidOfferIdentifier"),
        (.invalidSignature, "PurchaseError.invalidOfferSignature"),
        (.missingOfferParams, "PurchaseError.missingOfferParameters"),
        (.invalidOfferPrice, "PurchaseError.invalidOfferPrice"),
        (.overlayCancelled, "userCancelled"),
        (.overlayInvalidConfiguration, "StoreKitError.systemError"),
        (.overlayTimeout, "StoreKitError.systemError"),
        (.ineligibleForOffer, "PurchaseError.ineligibleForOffer"),
        (.unsupportedPlatform, "StoreKitError.unsupported"),
        (.overlayPresentedInBackgroundScene, "StoreKitError.systemError"),
    ]

    @Test func everyStoreKit1ErrorHasARow() {
        // Every code StoreKit 1 has (SKError.Code is not CaseIterable: its raw values are small).
        #expect(Set(Self.failures.map(\.0)) == Set((0..<1_000).compactMap(SKError.Code.init(rawValue:))))
    }

    @Test(arguments: failures)
    func aFailedPurchaseIsReportedAsStoreKit2ReportsIt(_ code: SKError.Code, _ expected: String) async throws {
        try await Shop.withProcessSession { session in
            let greenhouse = try #require(try await Product.products(for: [Shop.greenhouse]).first)
            session.failureError = code
            session.failTransactionsEnabled = true
            var outcome: String
            do {
                let result = try await greenhouse.purchase()
                outcome = if case .userCancelled = result { "userCancelled" } else { "\(result)" }
            } catch let error as Product.PurchaseError {
                outcome = "PurchaseError.\(error)"
            } catch let error as StoreKitError {
                outcome =
                    switch error {
                    case .networkError(let urlError):
                        urlError.code == .notConnectedToInternet ? "StoreKitError.networkError" : "\(urlError)"
                    case .systemError: "StoreKitError.systemError"
                    default: "StoreKitError.\(error)"
                    }
            }
            #expect(outcome == expected, "\(code)")
            #expect(session.allTransactions().allSatisfy { $0.isFinished }, "nothing left unfinished")
        }
    }

    /// A transaction's price is the whole purchase (the quantity times the price, or the
    /// offer's), in the storefront's currency; a subscription's web order line item is the id of
    /// the purchase or renewal that began its period; every transaction names one app
    /// transaction. Each is what the signed payload says.
    @Test func aTransactionCarriesItsPriceCurrencyAndIdentifiersAsSigned() async throws {
        try await Shop.withProcessSession { session in
            let store = Store()
            try await store.requestProducts(Shop.all)
            let seedsProduct = try #require(store.product(Shop.seeds))
            let seeds = try #require(try await store.purchase(seedsProduct, quantity: 3))
            #expect(seeds.price == Decimal(string: "2.97"))
            #expect(seeds.currency == Locale.Currency("USD"))
            #expect(seeds.webOrderLineItemID == nil)
            let monthly = try #require(store.product(Shop.monthly))
            let trial = try #require(try await store.purchase(monthly))
            #expect(trial.offerType == .introductory && trial.price == 0, "a free trial costs nothing")
            #expect(trial.webOrderLineItemID == String(trial.id))
            try session.advanceTime(by: 20 * 86_400)
            try await waitFor(session) { store.updates.count == 1 }
            let renewal = try #require(await Transaction.latest(for: Shop.monthly)).unsafePayloadValue
            #expect(renewal.price == Decimal(string: "3.99") && renewal.webOrderLineItemID == String(renewal.id))
            #expect(!seeds.appTransactionID.isEmpty)
            #expect(Set([seeds.appTransactionID, trial.appTransactionID, renewal.appTransactionID]).count == 1)
            let payload = try #require(
                try JSONSerialization.jsonObject(with: seeds.jsonRepresentation) as? [String: Any])
            #expect(payload["price"] as? Int == 2_970 && payload["currency"] as? String == "USD", "milliunits, signed")
        }
    }

    /// StoreKit's named periods compare with a product's, as app code compares them.
    @Test func aProductsPeriodIsOneOfStoreKitsNamedPeriods() async throws {
        try await Shop.withProcessSession { _ in
            let products = try await Product.products(for: [Shop.monthly, Shop.yearly])
            let monthly = try #require(products.first { $0.id == Shop.monthly }?.subscription)
            let yearly = try #require(products.first { $0.id == Shop.yearly }?.subscription)
            #expect(monthly.subscriptionPeriod == .monthly && monthly.subscriptionPeriod != .yearly)
            #expect(yearly.subscriptionPeriod == .yearly)
            #expect(monthly.introductoryOffer?.period == .weekly, "the free trial week")
            let named: [Product.SubscriptionPeriod] = [
                .everyThreeDays, .weekly, .everyTwoWeeks, .monthly, .everyTwoMonths, .everyThreeMonths, .everySixMonths,
                .yearly,
            ]
            #expect(
                named.map { "\($0.value) \($0.unit)" } == [
                    "3 day", "1 week", "2 week", "1 month", "2 month", "3 month", "6 month", "1 year",
                ])
        }
    }

    @Test func aSubscriptionRenewsThenExpiresWithItsStatus() async throws {
        try await Shop.withProcessSession { session in
            let store = Store()
            try await store.requestProducts(Shop.all)
            let product = try #require(store.product(Shop.monthly))
            let bought = try #require(try await store.purchase(product))
            #expect(store.subscriptionState == .subscribed)
            let status = try #require(try await Product.SubscriptionInfo.status(for: Shop.groupID).first)
            let renewalInfo = try status.renewalInfo.payloadValue
            #expect(renewalInfo.willAutoRenew && renewalInfo.currentProductID == Shop.monthly)
            #expect(renewalInfo.renewalDate == bought.expirationDate)
            #expect(await Product.SubscriptionInfo.isEligibleForIntroOffer(for: Shop.groupID) == false)

            // The free trial week ends, and one monthly period starts.
            try session.advanceTime(by: 20 * 86_400)
            try await waitFor(session) { store.updates.count == 1 }
            let renewal = try #require(await Transaction.latest(for: Shop.monthly)).unsafePayloadValue
            #expect(renewal.reason == .renewal && renewal.originalID == bought.id && store.updates == [renewal.id])
            // The listener finishes the renewal once it has updated the store's status: wait for
            // that, or its update (read before the expiry) could land after the one below (four
            // minutes bound a hang only, as `waitFor`'s).
            let deadline = Date().addingTimeInterval(240)
            var unfinished = true
            while unfinished {
                unfinished = false
                for await result in Transaction.unfinished where result.unsafePayloadValue.id == renewal.id {
                    unfinished = true
                }
                guard unfinished else { break }
                try #require(Date() < deadline, "the listener never finished the renewal")
                try await Task.sleep(nanoseconds: 1_000_000)
            }

            try session.expireSubscription(productIdentifier: Shop.monthly)
            await store.updateCustomerProductStatus()
            #expect(store.subscriptionState == .expired && !store.isPurchased(Shop.monthly))
            let expired = try #require(try await Product.SubscriptionInfo.status(for: Shop.groupID).first)
            #expect(try expired.renewalInfo.payloadValue.expirationReason == .autoRenewDisabled)
        }
    }

    @Test func aNewSubscriberGetsTheIntroductoryFreeTrial() async throws {
        try await Shop.withProcessSession { session in
            let store = Store()
            try await store.requestProducts(Shop.all)
            let monthly = try #require(store.product(Shop.monthly))
            #expect(await monthly.subscription?.isEligibleForIntroOffer == true)
            let trial = try #require(try await store.purchase(monthly))
            #expect(trial.offer?.type == .introductory && trial.offerType == .introductory)
            #expect(trial.offer?.paymentMode == .freeTrial && trial.offer?.period?.unit == .week)
            #expect(trial.expirationDate == trial.purchaseDate.addingTimeInterval(7 * 86_400))
            #expect(await monthly.subscription?.isEligibleForIntroOffer == false)
        }
    }

    @Test func aRunningAppKeepsItsSubscriptionAsTheStoreRenewsItBySelf() async throws {
        try await Shop.withProcessSession { session in
            session.timeRate = .oneRenewalEveryTwoSeconds
            let store = Store()
            try await store.requestProducts(Shop.all)
            let product = try #require(store.product(Shop.yearly))
            let bought = try #require(try await store.purchase(product))
            // Nobody moves the clock or asks: two seconds later the store renews by itself.
            try await waitFor(session) { !store.updates.isEmpty }
            let renewal = try #require(await Transaction.latest(for: Shop.yearly)).unsafePayloadValue
            #expect(renewal.originalID == bought.id && renewal.reason == .renewal)
            #expect(store.isPurchased(Shop.yearly))
        }
    }

    /// A refund arrives as an update and removes the entitlement; its reversal
    /// (REFUND_REVERSED) arrives again, without the revocation, and entitles again.
    @Test func aRefundAndItsReversalArriveAsUpdates() async throws {
        try await Shop.withProcessSession { session in
            let store = Store()
            try await store.requestProducts(Shop.all)
            let product = try #require(store.product(Shop.greenhouse))
            let bought = try #require(try await store.purchase(product))
            try session.refundTransaction(identifier: UInt(bought.id))
            try await waitFor(session) { store.revokedUpdates == [bought.id] && !store.isPurchased(Shop.greenhouse) }
            #expect(await Transaction.currentEntitlement(for: Shop.greenhouse) == nil)
            #expect(await Transaction.latest(for: Shop.greenhouse)?.unsafePayloadValue.revocationReason == .other)

            try session.reverseRefundForTransaction(identifier: UInt(bought.id))
            try await waitFor(session) {
                store.updates == [bought.id, bought.id] && store.isPurchased(Shop.greenhouse)
            }
            #expect(store.revokedUpdates == [bought.id], "the second update has no revocation")
            let entitlement = try #require(await Transaction.currentEntitlement(for: Shop.greenhouse))
            #expect(entitlement.unsafePayloadValue.revocationDate == nil)
            #expect(throws: StoreControlError.notRefunded(bought.id)) {
                try session.reverseRefundForTransaction(identifier: UInt(bought.id))
            }
        }
    }

    @Test func anUnfinishedTransactionReachesTheUpdatesListenerAtTheNextLaunch() async throws {
        try await Shop.withProcessSession { session in
            let products = try await Product.products(for: [Shop.greenhouse])
            guard case .success(let verification) = try await products[0].purchase() else {
                Issue.record("the purchase did not succeed")
                return
            }
            let unfinished = try verification.payloadValue
            try session.relaunch()
            let store = Store()
            try await waitFor(session) {
                store.updates == [unfinished.id] && store.isPurchased(Shop.greenhouse)
                    && SKPaymentQueue.default().transactions.isEmpty
            }
            var left = 0
            for await _ in Transaction.unfinished { left += 1 }
            #expect(left == 0)
        }
    }

    @Test func historyAndEntitlementsLeaveFinishedConsumablesOut() async throws {
        try await Shop.withProcessSession { session in
            let store = Store()
            try await store.requestProducts(Shop.all)
            for id in [Shop.seeds, Shop.greenhouse, Shop.season] {
                _ = try await store.purchase(try #require(store.product(id)))
            }
            var all: [String] = []
            for await result in Transaction.all { all.append(try result.payloadValue.productID) }
            #expect(all == [Shop.greenhouse, Shop.season])
            var entitled: [String] = []
            for await result in Transaction.currentEntitlements { entitled.append(result.unsafePayloadValue.productID) }
            #expect(entitled.sorted() == [Shop.greenhouse, Shop.season])
            #expect(store.purchasedIdentifiers == [Shop.greenhouse, Shop.season])
        }
    }

    @Test func promotionOrderAndVisibilityAreKept() async throws {
        try await Shop.withProcessSession { _ in
            try await Product.PromotionInfo.updateProductOrder(byID: [Shop.monthly, Shop.greenhouse])
            var order = try await Product.PromotionInfo.currentOrder
            #expect(order.map(\.productID) == [Shop.monthly, Shop.greenhouse])
            order[1].visibility = .hidden
            try await order[1].update()
            #expect(
                try await Product.PromotionInfo.currentOrder.map(\.visibility) == [.appStoreConnectDefault, .hidden])
            await #expect(throws: StoreKitError.self) {
                try await Product.PromotionInfo.updateProductOrder(byID: ["com.example.unknown"])
            }
            try await Product.PromotionInfo.updateAll([Product.PromotionInfo]())
            #expect(try await Product.PromotionInfo.currentOrder.isEmpty)
        }
    }

    @Test func aStorefrontChangeIsAnnouncedAndPricesFollowIt() async throws {
        try await Shop.withProcessSession { session in
            #expect(await Storefront.current?.countryCode == "USA")
            #expect(await Storefront.current?.id == "143441", "Apple's number of the United States storefront")
            #expect(SKPaymentQueue.default().storefront?.identifier == "143441")
            #expect(AppStore.canMakePayments)
            var announcements = Storefront.updates.makeAsyncIterator()
            session.storefront = "FRA"
            session.locale = Locale(identifier: "fr_FR")
            let france = await announcements.next()
            #expect(france?.countryCode == "FRA" && france?.id == "143442")
            session.storefront = "XKS"
            #expect(await announcements.next()?.id == "XKS", "no number is known for Kosovo: its code")
            session.storefront = "FRA"
            let monthly = try #require(try await Product.products(for: [Shop.monthly]).first)
            #expect(monthly.displayPrice == "3,99\u{a0}€")
            #expect(await Storefront.current?.currency == Locale.Currency("EUR"))
        }
    }
}

/// StoreKit 2 behaviour that needs no detached listener: task-local stores, run in parallel.
@Suite struct StoreKit2LaunchTests {
    /// Apple: "Your app doesn't receive a transaction because you declined Ask to Buy." The
    /// declined StoreKit 2 purchase leaves nothing unfinished for any later launch, while a
    /// StoreKit 1 payment's decline waits for its observer to finish it.
    @Test func aDeclinedAskToBuyPurchaseOfStoreKit2LeavesNothingBehind() async throws {
        try await Shop.withSession { session in
            session.askToBuyEnabled = true
            let greenhouse = try #require(try await Product.products(for: [Shop.greenhouse]).first)
            guard case .pending = try await greenhouse.purchase() else {
                Issue.record("an Ask to Buy purchase is pending")
                return
            }
            var updates = Transaction.updates.makeAsyncIterator()
            let deferred = try #require(session.allTransactions().first)
            try session.declineAskToBuyTransaction(identifier: deferred.identifier)
            await session.waitUntilIdle()
            let declined = try #require(session.allTransactions().first)
            #expect(declined.state == .failed && declined.isFinished)
            // A StoreKit 1 payment declined stays for its observer.
            SKPaymentQueue.default().add(
                SKPayment(product: try #require(try await fetchShopProducts(session)[Shop.season])))
            await session.waitUntilIdle()
            let season = try #require(session.allTransactions().last)
            try session.declineAskToBuyTransaction(identifier: season.identifier)
            await session.waitUntilIdle()
            // Transaction.updates never saw either decline: a purchase made outside the app is next.
            try session.buyProduct(productIdentifier: Shop.seeds)
            #expect(try await updates.next()?.payloadValue.productID == Shop.seeds)
            try session.relaunch()
            let unfinished = SKPaymentQueue.default().transactions.filter { $0.transactionState == .failed }
            #expect(unfinished.map(\.payment.productIdentifier) == [Shop.season])
        }
    }

    /// A StoreKit 2 purchase declined while no launch heard of it (by another process, the
    /// `ledger` tool) is finished by the next launch.
    @Test func aStoreKit2PurchaseDeclinedElsewhereIsFinishedAtTheNextLaunch() async throws {
        try await Shop.withSession { session in
            session.askToBuyEnabled = true
            let greenhouse = try #require(try await Product.products(for: [Shop.greenhouse]).first)
            guard case .pending = try await greenhouse.purchase() else {
                Issue.record("an Ask to Buy purchase is pending")
                return
            }
            let deferred = try #require(session.allTransactions().first)
            let declined = try LedgerProcess.run([
                "decline", "\(deferred.identifier)", "--database", session.ledgerPath,
            ])
            #expect(declined.status == 0, "\(declined.stderr)")
            #expect(session.allTransactions().first?.isFinished == false, "this launch did not hear of it")
            try session.relaunch()
            // The launch's own work, however long a busy machine makes it.
            await session.waitUntilIdle()
            #expect(session.allTransactions().first?.isFinished == true, "the next launch finished it")
        }
    }

    @Test func unfinishedTransactionsReachOnlyTheFirstUpdatesSequenceOfALaunch() async throws {
        try await Shop.withSession { session in
            let greenhouse = try #require(try await Product.products(for: [Shop.greenhouse]).first)
            guard case .success(let verification) = try await greenhouse.purchase() else {
                Issue.record("the purchase did not succeed")
                return
            }
            let bought = try verification.payloadValue
            try session.relaunch()
            var first = Transaction.updates.makeAsyncIterator()
            #expect(try await first.next()?.payloadValue.id == bought.id)
            // A second sequence of the same launch starts with what happens next, not a replay.
            var second = Transaction.updates.makeAsyncIterator()
            try session.buyProduct(productIdentifier: Shop.season)
            #expect(try await second.next()?.payloadValue.productID == Shop.season)
            #expect(try await first.next()?.payloadValue.productID == Shop.season)
        }
    }

    @Test func aTransactionFinishesInTheStoreItCameFrom() async throws {
        let session = try SKTestSession(contentsOf: Shop.file, scope: .taskLocal)
        let bought = try await session.withTaskLocalStore { () -> Transaction in
            let greenhouse = try #require(try await Product.products(for: [Shop.greenhouse]).first)
            guard case .success(let verification) = try await greenhouse.purchase() else { throw StoreKitError.unknown }
            return try verification.payloadValue
        }
        // Outside the scope: no store reaches this task, yet finishing goes to the right one.
        await bought.finish()
        #expect(session.allTransactions().map(\.isFinished) == [true])
    }

    @Test func buyingOutsideTheAppWithOptionsReturnsThatTransaction() async throws {
        try await Shop.withSession { session in
            let account = UUID()
            let bought = try await session.buyProduct(
                identifier: Shop.seeds, options: [.quantity(3), .appAccountToken(account)])
            #expect(
                bought.productID == Shop.seeds && bought.purchasedQuantity == 3 && bought.appAccountToken == account)
            _ = try await session.buyProduct(identifier: Shop.monthly)
            await #expect(throws: SKTestSessionError.purchaseFailed(productIdentifier: Shop.monthly)) {
                try await session.buyProduct(identifier: Shop.monthly)  // already subscribed
            }
        }
    }
}

@Suite struct BillingRetryScenarioTests {
    @Test func aSubscriptionInItsGracePeriodStaysEntitledUntilTheIssueIsResolved() async throws {
        try await Shop.withSession { session in
            session.shouldEnterBillingRetryOnRenewal = true
            session.billingGracePeriodIsEnabled = true
            let yearly = try #require(try await Product.products(for: [Shop.yearly]).first)
            guard case .success(let verification) = try await yearly.purchase() else { throw StoreKitError.unknown }
            let bought = try verification.payloadValue
            await bought.finish()
            try session.advanceTime(by: 370 * 86_400)
            let status = try #require(try await yearly.subscription?.status.first)
            #expect(status.state == .inGracePeriod)
            let renewalInfo = try status.renewalInfo.payloadValue
            #expect(renewalInfo.isInBillingRetry && renewalInfo.gracePeriodExpirationDate != nil)
            #expect(await Transaction.currentEntitlement(for: Shop.yearly)?.unsafePayloadValue.id == bought.id)

            var updates = Transaction.updates.makeAsyncIterator()
            try session.resolveIssueForTransaction(identifier: UInt(bought.id))
            let renewal = try #require(await updates.next()).payloadValue
            #expect(renewal.reason == .renewal && renewal.purchaseDate == bought.expirationDate)
            #expect(try await yearly.subscription?.status.first?.state == .subscribed)
        }
    }
}

extension BillingRetryScenarioTests {
    /// A forced renewal obeys the billing switch as the store's own renewals do: when every
    /// renewal fails (`shouldEnterBillingRetryOnRenewal`), the one forced now fails too. The
    /// period ends now, the subscription is in billing retry (in its grace period when enabled,
    /// still entitled then), no renewal reaches `Transaction.updates`, and once the issue is
    /// resolved the renewal comes.
    @Test(arguments: [false, true])
    func aForcedRenewalEntersBillingRetryWhenRenewalsFail(grace: Bool) async throws {
        try await Shop.withSession { session in
            session.shouldEnterBillingRetryOnRenewal = true
            session.billingGracePeriodIsEnabled = grace
            let yearly = try #require(try await Product.products(for: [Shop.yearly]).first)
            guard case .success(let verification) = try await yearly.purchase() else { throw StoreKitError.unknown }
            let bought = try verification.payloadValue
            await bought.finish()
            try session.forceRenewalOfSubscription(productIdentifier: Shop.yearly)
            let status = try #require(try await yearly.subscription?.status.first)
            #expect(status.state == (grace ? .inGracePeriod : .inBillingRetryPeriod))
            #expect(try status.renewalInfo.payloadValue.isInBillingRetry)
            #expect(try status.transaction.payloadValue.id == bought.id, "no renewal was made")
            #expect(try status.transaction.payloadValue.expirationDate ?? .distantFuture <= Date())
            #expect((await Transaction.currentEntitlement(for: Shop.yearly) != nil) == grace)

            var updates = Transaction.updates.makeAsyncIterator()
            try session.resolveIssueForTransaction(identifier: UInt(bought.id))
            let renewal = try #require(await updates.next()).payloadValue
            #expect(renewal.reason == .renewal && renewal.originalID == bought.id)
            #expect(try await yearly.subscription?.status.first?.state == .subscribed)
        }
    }
}

/// One original transaction per subscription group, as StoreKit 2 shows it: an upgrade's
/// `Transaction.originalID` (and `originalPurchaseDate`) is the group's first purchase's, and so
/// is that of a resubscription after the subscription expired.
@Suite struct StoreKit2OriginalTransactionTests {
    @Test func anUpgradeAndAResubscriptionKeepTheGroupsOriginalTransaction() async throws {
        try await Shop.withSession { session in
            let products = try await Product.products(for: [Shop.monthly, Shop.yearly])
            let monthly = try #require(products.first { $0.id == Shop.monthly })
            let yearly = try #require(products.first { $0.id == Shop.yearly })
            guard case .success(let first) = try await monthly.purchase() else { throw StoreKitError.unknown }
            let bought = try first.payloadValue
            await bought.finish()
            #expect(bought.originalID == bought.id)
            guard case .success(let second) = try await yearly.purchase() else { throw StoreKitError.unknown }
            let upgrade = try second.payloadValue
            await upgrade.finish()
            #expect(upgrade.id != bought.id)
            #expect(upgrade.originalID == bought.id && upgrade.originalPurchaseDate == bought.purchaseDate)
            try session.expireSubscription(productIdentifier: Shop.yearly)
            try session.advanceTime(by: 3 * 86_400)
            guard case .success(let third) = try await monthly.purchase() else { throw StoreKitError.unknown }
            let again = try third.payloadValue
            #expect(again.originalID == bought.id)
            #expect(try await yearly.subscription?.status.first?.transaction.payloadValue.originalID == bought.id)
        }
    }

    /// A downgrade makes no transaction (it takes effect at the next renewal): `purchase()`
    /// succeeds with the subscription the customer has, whose renewal info names the change, and
    /// no list of StoreKit 2 has a transaction of it.
    @Test func aDowngradeReturnsTheSubscriptionTheCustomerHas() async throws {
        try await Shop.withSession { session in
            let products = try await Product.products(for: [Shop.monthly, Shop.yearly])
            let monthly = try #require(products.first { $0.id == Shop.monthly })
            let yearly = try #require(products.first { $0.id == Shop.yearly })
            guard case .success(let first) = try await yearly.purchase() else { throw StoreKitError.unknown }
            let current = try first.payloadValue
            await current.finish()
            guard case .success(let second) = try await monthly.purchase() else { throw StoreKitError.unknown }
            let returned = try second.payloadValue
            #expect(returned.id == current.id && returned.productID == Shop.yearly)
            let status = try #require(try await yearly.subscription?.status.first)
            #expect(try status.transaction.payloadValue.id == current.id)
            #expect(try status.renewalInfo.payloadValue.autoRenewPreference == Shop.monthly)
            var all: [UInt64] = []
            for await result in Transaction.all { all.append(try result.payloadValue.id) }
            #expect(all == [current.id])
            #expect(await Transaction.latest(for: Shop.monthly) == nil)
            var unfinished = 0
            for await _ in Transaction.unfinished { unfinished += 1 }
            #expect(unfinished == 0, "nothing for the app to finish")
        }
    }
}

/// Promotional offers, signed by the app's server, redeemed with StoreKit 2's purchase option.
@MainActor
@Suite struct StoreKit2PromotionalOfferTests {
    static let comeback = "com.example.fixtures.garden.pro.monthly.comeback"

    @Test func aLapsedSubscriberRedeemsAServerSignedOfferAndBadOnesAreRefused() async throws {
        try await Shop.withProcessSession { session in
            let store = Store()
            try await store.requestProducts([Shop.monthly])
            let monthly = try #require(store.product(Shop.monthly))
            // Promotional offers are for current and lapsed subscribers.
            await #expect(throws: Product.PurchaseError.ineligibleForOffer) {
                try await store.purchase(
                    monthly, offer: try OfferServer.sign(productID: Shop.monthly, offerID: Self.comeback))
            }
            _ = try #require(try await store.purchase(monthly))
            try session.expireSubscription(productIdentifier: Shop.monthly)
            await #expect(throws: Product.PurchaseError.invalidOfferSignature) {
                try await store.purchase(
                    monthly,
                    offer: try OfferServer.sign(
                        productID: Shop.monthly, offerID: Self.comeback, signedProductID: Shop.yearly))
            }
            await #expect(throws: Product.PurchaseError.invalidOfferIdentifier) {
                try await store.purchase(monthly, offer: try OfferServer.sign(productID: Shop.monthly, offerID: "nope"))
            }
            let signed = try OfferServer.sign(productID: Shop.monthly, offerID: Self.comeback)
            let redeemed = try #require(try await store.purchase(monthly, offer: signed))
            #expect(redeemed.offer?.type == .promotional && redeemed.offer?.id == Self.comeback)
            #expect(redeemed.offer?.paymentMode == .payAsYouGo)
            #expect(redeemed.offerType == .promotional && redeemed.offerID == Self.comeback)
            #expect(store.isPurchased(Shop.monthly))
            // The App Store takes each nonce once.
            await #expect(throws: Product.PurchaseError.invalidOfferSignature) {
                try await store.purchase(monthly, offer: signed)
            }
        }
    }

    @Test(
        .enabled(
            if: ApplePython.shouldRun,
            "app-store-server-library and jwcrypto are not in .build/python (.ci/run installs them)"))
    func anOfferSignedByApplesServerLibraryIsAccepted() async throws {
        guard let python = ApplePython.path else {
            Issue.record("STORELEDGER_PYTHON is set, but: \(ApplePython.unavailableReason)")
            return
        }
        try await Shop.withProcessSession { session in
            let store = Store()
            try await store.requestProducts([Shop.monthly])
            let monthly = try #require(store.product(Shop.monthly))
            let account = UUID()
            _ = try #require(try await store.purchase(monthly, account: account))
            try session.expireSubscription(productIdentifier: Shop.monthly)
            let signed = try OfferServer.signWithAppleLibrary(
                python: python, productID: Shop.monthly, offerID: Self.comeback, account: account.uuidString)
            let result = try await monthly.purchase(options: [
                .appAccountToken(account),
                .promotionalOffer(
                    offerID: signed.offerID, keyID: signed.keyID, nonce: signed.nonce,
                    signature: try #require(Data(base64Encoded: signed.signature)), timestamp: signed.timestamp),
            ])
            guard case .success(.verified(let transaction)) = result else {
                Issue.record("expected a verified purchase, got \(result)")
                return
            }
            #expect(transaction.offerID == Self.comeback && transaction.appAccountToken == account)
            await transaction.finish()
        }
    }

    @Test(
        .enabled(
            if: ApplePython.shouldRun,
            "app-store-server-library and jwcrypto are not in .build/python (.ci/run installs them)"))
    func anOfferSignedAsAJWSByApplesServerLibraryIsAcceptedOnce() async throws {
        let python = try #require(ApplePython.path, "STORELEDGER_PYTHON is set, but: \(ApplePython.unavailableReason)")
        try await Shop.withSession { session in
            let monthly = try #require(try await Product.products(for: [Shop.monthly]).first)
            let first = try await session.buyProduct(identifier: Shop.monthly)
            try session.expireSubscription(productIdentifier: Shop.monthly)
            let jws = try OfferServer.signJWSWithAppleLibrary(
                python: python, productID: Shop.monthly, offerID: Self.comeback, transactionID: String(first.id))
            let options = Set(Product.PurchaseOption.promotionalOffer(Self.comeback, compactJWS: jws))
            guard case .success(.verified(let transaction)) = try await monthly.purchase(options: options) else {
                Issue.record("expected a verified purchase")
                return
            }
            #expect(transaction.offerID == Self.comeback && transaction.offerType == .promotional)
            try session.expireSubscription(productIdentifier: Shop.monthly)
            await #expect(throws: Product.PurchaseError.invalidOfferSignature) {
                try await monthly.purchase(options: options)
            }
        }
    }

    @Test(
        .enabled(
            if: ApplePython.shouldRun,
            "app-store-server-library and jwcrypto are not in .build/python (.ci/run installs them)"))
    func applesServerLibraryWithholdsTheIntroductoryOffer() async throws {
        let python = try #require(ApplePython.path, "STORELEDGER_PYTHON is set, but: \(ApplePython.unavailableReason)")
        try await Shop.withSession { session in
            let monthly = try #require(try await Product.products(for: [Shop.monthly]).first)
            #expect(await monthly.subscription?.isEligibleForIntroOffer == true)
            let app = try await AppTransaction.shared.payloadValue.appTransactionID
            let jws = try OfferServer.signEligibilityWithAppleLibrary(
                python: python, productID: Shop.monthly, allow: false, transactionID: app)
            guard
                case .success(.verified(let transaction)) = try await monthly.purchase(options: [
                    .introductoryOfferEligibility(compactJWS: jws)
                ])
            else {
                Issue.record("expected a verified purchase")
                return
            }
            #expect(transaction.offer == nil, "the server withheld the free week")
        }
    }

    @Test func aTestSessionBuysWithAnUnsignedOffer() async throws {
        try await Shop.withSession { session in
            _ = try await session.buyProduct(identifier: Shop.monthly)
            try session.expireSubscription(productIdentifier: Shop.monthly)
            let redeemed = try await session.buyProduct(
                identifier: Shop.monthly, options: [.promotionalOffer(id: Self.comeback)])
            #expect(redeemed.offerID == Self.comeback && redeemed.offerType == .promotional)
        }
    }
}
