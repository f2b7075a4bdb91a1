import Foundation
import LedgerTestSupport
import LedgerTesting
import OpenStoreKit
import OpenStoreKitTest
import Testing

/// StoreKitTest's `setSimulatedError(_:forAPI:)`: StoreKit 2 calls fail as a test says.
@Suite struct SimulatedErrorTests {
    @Test func aSimulatedVerificationFailureMakesEveryResultUnverifiedUntilCleared() async throws {
        try await Shop.withSession { session in
            try await session.setSimulatedError(.verification(.invalidSignature), forAPI: .verification)
            #expect(await session.simulatedError(forAPI: .verification) == .verification(.invalidSignature))
            let monthly = try #require(try await Product.products(for: [Shop.monthly]).first)
            guard case .success(.unverified(let bought, let error)) = try await monthly.purchase() else {
                Issue.record("expected an unverified purchase")
                return
            }
            #expect(error == .invalidSignature && bought.productID == Shop.monthly)
            #expect(throws: VerificationResult<Transaction>.VerificationError.invalidSignature) {
                try Transaction.latestVerified(in: [.unverified(bought, error)])
            }
            var entitlements: [VerificationResult<Transaction>] = []
            for await entitlement in Transaction.currentEntitlements { entitlements.append(entitlement) }
            #expect(
                entitlements.count == 1 && entitlements.allSatisfy { if case .unverified = $0 { true } else { false } })
            let status = try #require(try await monthly.subscription?.status.first)
            guard case .unverified(_, .invalidSignature) = status.transaction, case .unverified = status.renewalInfo
            else {
                Issue.record("expected the status's transaction and renewal info unverified")
                return
            }
            // A relaunch keeps it; `nil` clears it.
            try session.relaunch()
            guard case .unverified = try #require(await Transaction.latest(for: Shop.monthly)) else {
                Issue.record("expected the latest transaction unverified after a relaunch")
                return
            }
            try await session.setSimulatedError(nil, forAPI: .verification)
            #expect(await session.simulatedError(forAPI: .verification) == nil)
            guard case .verified = try #require(await Transaction.latest(for: Shop.monthly)) else {
                Issue.record("expected the latest transaction verified once cleared")
                return
            }
        }
    }

    @Test func simulatedPurchaseErrorsAreThrownAndRecordNothing() async throws {
        try await Shop.withSession { session in
            let greenhouse = try #require(try await Product.products(for: [Shop.greenhouse]).first)
            try await session.setSimulatedError(.generic(.userCancelled), forAPI: .purchase)
            await #expect(throws: StoreKitError.userCancelled) { try await greenhouse.purchase() }
            try await session.setSimulatedError(
                SKTestFailures.Purchase.purchase(.productUnavailable), forAPI: StoreKitPurchaseAPI.purchase)
            #expect(await session.simulatedError(forAPI: .purchase) == .purchase(.productUnavailable))
            await #expect(throws: Product.PurchaseError.productUnavailable) { try await greenhouse.purchase() }
            #expect(session.allTransactions().isEmpty)
            session.resetToDefaultState()
            #expect(await session.simulatedError(forAPI: .purchase) == nil)
            guard case .success(.verified) = try await greenhouse.purchase() else {
                Issue.record("expected the purchase to work after the reset")
                return
            }
        }
    }

    @Test func loadingProductsSyncAndSubscriptionStatusFailAsSimulated() async throws {
        try await Shop.withSession { session in
            let monthly = try #require(try await Product.products(for: [Shop.monthly]).first)
            let offline = StoreKitError.networkError(URLError(.notConnectedToInternet))
            try await session.setSimulatedError(.generic(offline), forAPI: .loadProducts)
            await #expect(throws: offline) { try await Product.products(for: [Shop.monthly]) }
            try await session.setSimulatedError(.generic(.unknown), forAPI: .appStoreSync)
            await #expect(throws: StoreKitError.unknown) { try await AppStore.sync() }
            try await session.setSimulatedError(.generic(.notEntitled), forAPI: .subscriptionStatus)
            await #expect(throws: StoreKitError.notEntitled) { try await monthly.subscription?.status }
            #expect(await session.simulatedError(forAPI: .appStoreSync) == .generic(.unknown))
            #expect(await session.simulatedError(forAPI: .subscriptionStatus) == .generic(.notEntitled))
        }
    }
}

/// Client code that checks verification, as Apple's sample does, under a simulated failure.
@MainActor
@Suite struct SimulatedVerificationClientTests {
    @Test func theStoreRefusesAnUnverifiedPurchase() async throws {
        try await Shop.withProcessSession { session in
            let store = Store()
            try await store.requestProducts([Shop.greenhouse])
            let greenhouse = try #require(store.product(Shop.greenhouse))
            try await session.setSimulatedError(.verification(.invalidCertificateChain), forAPI: .verification)
            await #expect(throws: StoreError.failedVerification) { try await store.purchase(greenhouse) }
            #expect(!store.isPurchased(Shop.greenhouse))
        }
    }
}

extension Transaction {
    /// The first value of `results`, as client code unwraps it (`payloadValue` throws the error
    /// of an unverified value).
    static func latestVerified(in results: [VerificationResult<Transaction>]) throws -> Transaction? {
        try results.first?.payloadValue
    }
}

/// `SKTestSession.buyProduct` is a purchase made outside the app.
@Suite struct OutsidePurchaseTests {
    @Test func buyProductSucceedsWhateverTheAppsSwitches() async throws {
        try await Shop.withSession { session in
            session.askToBuyEnabled = true
            session.failTransactionsEnabled = true
            try StoreSwitches.setPaymentsAllowed(false, ledgerPath: session.ledgerPath)
            #expect(!AppStore.canMakePayments)
            let bought = try await session.buyProduct(identifier: Shop.greenhouse)
            #expect(bought.productID == Shop.greenhouse)
            #expect(session.allTransactions().map(\.state) == [.purchased])
        }
    }
}
