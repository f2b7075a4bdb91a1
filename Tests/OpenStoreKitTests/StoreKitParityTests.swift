import Foundation
import OpenStoreKit
import OpenStoreKitTest
import Testing

/// StoreKit API that real clients call, beyond the scenarios: each compiles with Apple's names
/// and gives what the ledger holds.
@Suite struct StoreKitParityTests {
    @Test func renewalInfoCarriesThePriceCurrencyTokenAndRunStart() async throws {
        try await Shop.withSession { session in
            let token = UUID()
            let bought = try await session.buyProduct(identifier: Shop.monthly, options: [.appAccountToken(token)])
            let status = try #require(try await Product.SubscriptionInfo.status(for: Shop.groupID).first)
            let info = try status.renewalInfo.payloadValue
            #expect(info.renewalPrice == Decimal(string: "3.99") && info.currency == Locale.Currency("USD"))
            #expect(info.appAccountToken == token)
            #expect(info.recentSubscriptionStartDate == bought.purchaseDate)
            #expect(info.appTransactionID == bought.appTransactionID && !info.appTransactionID.isEmpty)
            #expect(info.priceIncreaseStatus == .noIncreasePending && info.eligibleWinBackOfferIDs.isEmpty)
            #expect(info.offer == nil && info.offerType == nil && info.offerID == nil)
        }
    }

    @Test func allForAProductGivesOnlyItsTransactions() async throws {
        try await Shop.withSession { session in
            let greenhouse = try await session.buyProduct(identifier: Shop.greenhouse)
            _ = try await session.buyProduct(identifier: Shop.season)
            var ids: [UInt64] = []
            for await transaction in Transaction.all(for: Shop.greenhouse) {
                ids.append(try transaction.payloadValue.id)
            }
            #expect(ids == [greenhouse.id])
            var none = 0
            for await _ in Transaction.all(for: "com.example.unknown") { none += 1 }
            #expect(none == 0)
            let product = try #require(try await Product.products(for: [Shop.greenhouse]).first)
            var entitled: [UInt64] = []
            for await transaction in product.currentEntitlements { entitled.append(try transaction.payloadValue.id) }
            #expect(entitled == [greenhouse.id])
        }
    }

    @Test func aTransactionDescribesItselfAndItsRevocation() async throws {
        try await Shop.withSession { session in
            let bought = try await session.buyProduct(identifier: Shop.greenhouse)
            let json = try #require(
                try JSONSerialization.jsonObject(with: Data(bought.debugDescription.utf8)) as? [String: Any])
            #expect(json["transactionId"] as? String == String(bought.id))
            #expect(json["productId"] as? String == Shop.greenhouse)
            #expect(Transaction.RevocationReason.developerIssue.localizedDescription.contains("issue with the app"))
            #expect(Transaction.RevocationReason.other.localizedDescription.contains("another reason"))
            #expect(Transaction.RevocationReason(rawValue: 7).localizedDescription.contains("7"))

            try session.refundTransaction(identifier: UInt(bought.id))
            let refunded = try #require(session.allTransactions().first)
            #expect(refunded.cancelDate != nil && refunded.isPendingPriceIncreaseConsent == false)
        }
    }

    @MainActor @Test func sheetsTheAppAsksForAreCountedOnTheSession() async throws {
        try await Shop.withSession { session in
            let scene = UIWindowScene()
            #expect(session.reviewRequestCount == 0 && session.manageSubscriptionsRequests.isEmpty)
            SKStoreReviewController.requestReview()
            SKStoreReviewController.requestReview(in: scene)
            AppStore.requestReview(in: scene)
            try await AppStore.showManageSubscriptions(in: scene)
            try await AppStore.showManageSubscriptions(in: scene, subscriptionGroupID: Shop.groupID)
            try await AppStore.presentOfferCodeRedeemSheet(in: scene)
            SKPaymentQueue.default().presentCodeRedemptionSheet()
            #expect(session.reviewRequestCount == 3)
            #expect(session.manageSubscriptionsRequests == [nil, Shop.groupID])
            #expect(session.offerCodeRedeemSheetCount == 2)

            // A simulated error fails the sheet, which records nothing.
            try await session.setSimulatedError(.generic(.userCancelled), forAPI: .manageSubscriptions)
            try await session.setSimulatedError(.generic(.networkError(URLError(.timedOut))), forAPI: .offerCodeRedeem)
            await #expect(throws: StoreKitError.userCancelled) { try await AppStore.showManageSubscriptions(in: scene) }
            await #expect(throws: StoreKitError.networkError(URLError(.timedOut))) {
                try await AppStore.presentOfferCodeRedeemSheet(in: scene)
            }
            #expect(session.manageSubscriptionsRequests.count == 2 && session.offerCodeRedeemSheetCount == 2)

            // A relaunch keeps the counts; a reset clears them.
            try session.relaunch()
            #expect(session.reviewRequestCount == 3)
            session.resetToDefaultState()
            #expect(session.reviewRequestCount == 0 && session.manageSubscriptionsRequests.isEmpty)
            #expect(session.offerCodeRedeemSheetCount == 0)
            try await AppStore.showManageSubscriptions(in: scene)
            #expect(session.manageSubscriptionsRequests == [nil], "the reset cleared the simulated error too")

            // The list keeps the last 1,000 sheets.
            for index in 0..<1_005 {
                try await AppStore.showManageSubscriptions(in: scene, subscriptionGroupID: String(index))
            }
            #expect(session.manageSubscriptionsRequests.count == 1_000)
            #expect(
                session.manageSubscriptionsRequests.first == "5" && session.manageSubscriptionsRequests.last == "1004")
        }
    }

    @Test func theAppTransactionIsSignedVerifiedAndFailsAsATestSays() async throws {
        try await Shop.withSession { session in
            let bought = try await session.buyProduct(identifier: Shop.greenhouse)
            let shared = try await AppTransaction.shared
            let app = try shared.payloadValue
            #expect(app.bundleID == "com.example.app" && app.appVersion == "1.0" && app.originalAppVersion == "1.0")
            #expect(app.environment == .xcode && app.appID == nil && app.appVersionID == nil && app.preorderDate == nil)
            #expect(app.appTransactionID == bought.appTransactionID && app.originalPlatform == .iOS)
            #expect(app.originalPurchaseDate <= bought.purchaseDate && app.signedDate >= bought.purchaseDate)
            #expect(shared.deviceVerificationNonce == app.deviceVerificationNonce && app.deviceVerification.count == 48)
            #expect(
                shared.jwsRepresentation.split(separator: ".").count == 3
                    && shared.payloadData == app.jsonRepresentation)
            #expect(AppStore.deviceVerificationID != nil)
            // Signed anew each time: a new device verification nonce.
            let refreshed = try await AppTransaction.refresh().payloadValue
            #expect(refreshed.deviceVerificationNonce != app.deviceVerificationNonce)
            #expect(refreshed.appTransactionID == app.appTransactionID)

            try await session.setSimulatedError(.verification(.invalidDeviceVerification), forAPI: .verification)
            guard case .unverified(_, let error) = try await AppTransaction.shared else {
                Issue.record("a simulated verification failure applies to the app transaction")
                return
            }
            #expect(error == .invalidDeviceVerification)
            try await session.setSimulatedError(
                .generic(.networkError(URLError(.notConnectedToInternet))), forAPI: .appTransaction)
            await #expect(throws: StoreKitError.networkError(URLError(.notConnectedToInternet))) {
                try await AppTransaction.refresh()
            }
        }
    }

    @MainActor @Test func aRefundRequestIsDecidedByTheSessionAndAGrantArrivesAsARevocation() async throws {
        try await Shop.withSession { session in
            let scene = UIWindowScene()
            let greenhouse = try await session.buyProduct(identifier: Shop.greenhouse)
            let seeds = try await session.buyProduct(identifier: Shop.seeds)
            // Finished, so that the launch's first updates sequence starts with no unfinished ones.
            await greenhouse.finish()
            await seeds.finish()
            var updates = Transaction.updates.makeAsyncIterator()
            #expect(try await greenhouse.beginRefundRequest(in: scene) == .success)
            await #expect(throws: Transaction.RefundRequestError.duplicateRequest) {
                try await greenhouse.beginRefundRequest(in: scene)
            }
            #expect(try await Transaction.beginRefundRequest(for: seeds.id, in: scene) == .success)
            try session.declineRefundRequest(identifier: UInt(seeds.id))
            try session.approveRefundRequest(identifier: UInt(greenhouse.id))
            let revoked = try #require(await updates.next()).unsafePayloadValue
            #expect(revoked.id == greenhouse.id && revoked.revocationDate != nil && revoked.revocationReason == .other)
            #expect(await Transaction.currentEntitlement(for: Shop.greenhouse) == nil)
            #expect(session.allTransactions().first { $0.identifier == UInt(seeds.id) }?.cancelDate == nil)
            // A refunded, unknown or undecided one: the request fails; the session's decision too.
            await #expect(throws: Transaction.RefundRequestError.failed) {
                try await Transaction.beginRefundRequest(for: greenhouse.id, in: scene)
            }
            await #expect(throws: Transaction.RefundRequestError.failed) {
                try await Transaction.beginRefundRequest(for: 424_242, in: scene)
            }
            let undecided = #expect(throws: (any Error).self) {
                try session.approveRefundRequest(identifier: UInt(seeds.id))
            }
            #expect(
                undecided?.localizedDescription == "no refund request of transaction \(seeds.id) waits for a decision")
            // Simulated errors, both kinds.
            try await session.setSimulatedError(.refundRequest(.failed), forAPI: .refundRequest)
            await #expect(throws: Transaction.RefundRequestError.failed) {
                try await seeds.beginRefundRequest(in: scene)
            }
            try await session.setSimulatedError(.generic(.notEntitled), forAPI: .refundRequest)
            await #expect(throws: StoreKitError.notEntitled) { try await seeds.beginRefundRequest(in: scene) }
            try await session.setSimulatedError(nil, forAPI: .refundRequest)
            #expect(try await seeds.beginRefundRequest(in: scene) == .success, "asked again after a decline")
        }
    }

    @MainActor @Test func aUserWhoClosesTheRefundSheetAsksForNothingAndAGrantMayBeProrated() async throws {
        try await Shop.withSession { session in
            let scene = UIWindowScene()
            let greenhouse = try await session.buyProduct(identifier: Shop.greenhouse)
            #expect(session.refundRequestSheetAnswer == .request)
            session.refundRequestSheetAnswer = .cancel
            #expect(try await greenhouse.beginRefundRequest(in: scene) == .userCancelled)
            #expect(throws: (any Error).self) { try session.declineRefundRequest(identifier: UInt(greenhouse.id)) }
            try session.relaunch()
            #expect(session.refundRequestSheetAnswer == .cancel, "a relaunch keeps the answer")
            session.resetToDefaultState()
            #expect(session.refundRequestSheetAnswer == .request, "a reset restores it")
            let seeds = try await session.buyProduct(identifier: Shop.seeds)
            #expect(try await seeds.beginRefundRequest(in: scene) == .success)
            try session.approveRefundRequest(identifier: UInt(seeds.id), revocationPercentage: 40_000)
            await session.waitUntilIdle()
            #expect(session.allTransactions().first { $0.identifier == UInt(seeds.id) }?.cancelDate != nil)
        }
    }

    @Test func aBackdatedPurchaseRenewsUpToNowOrEndsAfterItsFirstPeriod() async throws {
        try await Shop.withSession { session in
            let yearAgo = Date().addingTimeInterval(-400 * 86_400)
            let greenhouse = try #require(try await Product.products(for: [Shop.greenhouse]).first)
            guard case .success(let bought) = try await greenhouse.purchase(options: [.purchaseDate(yearAgo)]) else {
                Issue.record("a back-dated purchase succeeds")
                return
            }
            #expect(abs(try bought.payloadValue.purchaseDate.timeIntervalSince(yearAgo)) < 0.001)
            // A yearly subscription bought 400 days ago renewed once; the renewal reaches the app.
            var updates = Transaction.updates.makeAsyncIterator()
            _ = try await session.buyProduct(identifier: Shop.yearly, options: [.purchaseDate(yearAgo)])
            var renewal: Transaction?
            while renewal == nil, let next = await updates.next() {
                let transaction = next.unsafePayloadValue
                if transaction.productID == Shop.yearly, transaction.reason == .renewal { renewal = transaction }
            }
            #expect(renewal.map { $0.purchaseDate < Date() && $0.expirationDate! > Date() } == true)
            let status = try #require(try await Product.SubscriptionInfo.status(for: Shop.groupID).first)
            #expect(status.state == .subscribed && status.transaction.unsafePayloadValue.id == renewal?.id)
            await #expect(throws: StoreKitError.self) {
                try await greenhouse.purchase(options: [.purchaseDate(Date().addingTimeInterval(86_400))])
            }
        }
        try await Shop.withSession { session in
            let monthAgo = Date().addingTimeInterval(-45 * 86_400)
            _ = try await session.buyProduct(
                identifier: Shop.monthly, options: [.purchaseDate(monthAgo, renewalBehavior: .cancelImmediately)])
            let status = try #require(try await Product.SubscriptionInfo.status(for: Shop.groupID).first)
            #expect(status.state == .expired && status.renewalInfo.unsafePayloadValue.willAutoRenew == false)
        }
    }

    @MainActor @Test func hostedContentIsNeverDownloaded() async throws {
        try await Shop.withSession { session in
            let products = try await fetchShopProducts(session)
            let observer = TransactionRecorder()
            SKPaymentQueue.default().add(observer)
            SKPaymentQueue.default().add(SKPayment(product: try #require(products[Shop.greenhouse])))
            await session.waitUntilIdle()
            let transaction = try #require(observer.transactions.last)
            #expect(transaction.transactionState == .purchased)
            let downloads: [SKDownload] = transaction.downloads
            #expect(downloads.isEmpty)
            SKPaymentQueue.default().start(downloads)
            SKPaymentQueue.default().cancel(downloads)
            #expect(SKDownloadState.cancelled.rawValue == 5 && SKDownloadTimeRemainingUnknown == -1)
        }
    }
}

/// Keeps every transaction a StoreKit 1 queue hands over.
@MainActor final class TransactionRecorder: NSObject, SKPaymentTransactionObserver {
    private(set) var transactions: [SKPaymentTransaction] = []

    nonisolated func paymentQueue(_ queue: SKPaymentQueue, updatedTransactions transactions: [SKPaymentTransaction]) {
        MainActor.assumeIsolated { self.transactions += transactions }
    }
}
