import Foundation
import OpenStoreKit
import OpenStoreKitTest
import Testing

/// Win-back offers through StoreKit 2: the product lists them, the renewal info says which a
/// churned subscriber may redeem, `winBackOffer(_:)` redeems one, and the App Store's
/// `.winBackOffer` message reaches the app.
@Suite struct WinBackStoreKitTests {
    /// COMEBACK_FREE (a free month: 1 paid month, within 6 months of the lapse) and
    /// COMEBACK_HALF (2 paid months, a lapse of 1 to 24 months).
    static let basic = "com.example.basic.monthly"
    static let month: TimeInterval = 32 * 86_400

    @MainActor @Test func aChurnedSubscriberRedeemsAWinBackOffer() async throws {
        try await SampleShop.withSession { session in
            let product = try #require(try await Product.products(for: [Self.basic]).first)
            let offers = try #require(product.subscription?.winBackOffers)
            #expect(offers.map(\.id) == ["COMEBACK_FREE", "COMEBACK_HALF"])
            #expect(offers.allSatisfy { $0.type == .winBack })
            #expect(offers[0].paymentMode == .freeTrial && offers[0].price == 0)
            #expect(offers[1].paymentMode == .payAsYouGo && offers[1].periodCount == 3)
            #expect(offers[1].price == Decimal(string: "0.99"))

            let bought = try await session.buyProduct(identifier: Self.basic)
            await #expect(throws: Product.PurchaseError.ineligibleForOffer, "subscribed: not churned") {
                try await product.purchase(options: [.winBackOffer(offers[0])])
            }
            try session.disableAutoRenewForTransaction(identifier: UInt(bought.id))
            try session.advanceTime(by: Self.month)
            await session.waitUntilIdle()
            let status = try #require(try await product.subscription?.status.first)
            #expect(status.state == .expired)
            #expect(try status.renewalInfo.payloadValue.eligibleWinBackOfferIDs == ["COMEBACK_FREE"])
            await #expect(throws: Product.PurchaseError.ineligibleForOffer, "one paid month: not the half-price offer")
            {
                try await product.purchase(options: [.winBackOffer(offers[1])])
            }

            guard case .success(let verification) = try await product.purchase(options: [.winBackOffer(offers[0])])
            else {
                Issue.record("the win-back purchase did not succeed")
                return
            }
            let redeemed = try verification.payloadValue
            let offer = try #require(redeemed.offer)
            #expect(offer.type == .winBack && offer.id == "COMEBACK_FREE" && offer.paymentMode == .freeTrial)
            #expect(redeemed.price == 0)
            await redeemed.finish()
            let renewed = try #require(try await product.subscription?.status.first)
            #expect(renewed.state == .subscribed)
            #expect(try renewed.renewalInfo.payloadValue.eligibleWinBackOfferIDs.isEmpty)
        }
    }

    /// A test session's purchase takes the same options as the app's: a win-back offer
    /// (dropped on the way before) is redeemed by `buyProduct(identifier:options:)` too.
    @MainActor @Test func aTestSessionsPurchaseRedeemsAWinBackOffer() async throws {
        try await SampleShop.withSession { session in
            let product = try #require(try await Product.products(for: [Self.basic]).first)
            let offers = try #require(product.subscription?.winBackOffers)
            let bought = try await session.buyProduct(identifier: Self.basic)
            try session.disableAutoRenewForTransaction(identifier: UInt(bought.id))
            try session.advanceTime(by: Self.month)
            await session.waitUntilIdle()
            let redeemed = try await session.buyProduct(identifier: Self.basic, options: [.winBackOffer(offers[0])])
            #expect(redeemed.offer?.type == .winBack && redeemed.offer?.id == "COMEBACK_FREE")
            #expect(redeemed.price == 0)
        }
    }

    /// A churned subscriber's launch makes one `.winBackOffer` message, for the app's first
    /// listener; showing it is counted while the offer is open.
    @MainActor @Test func theWinBackMessageWaitsForTheAppAndIsShownWhileTheOfferIsOpen() async throws {
        try await SampleShop.withSession { session in
            let bought = try await session.buyProduct(identifier: Self.basic)
            try session.disableAutoRenewForTransaction(identifier: UInt(bought.id))
            try session.advanceTime(by: Self.month)
            try session.relaunch()
            await session.waitUntilIdle()
            var messages = Message.messages.makeAsyncIterator()
            let message = try #require(await messages.next())
            #expect(message.reason == .winBackOffer && message.reason.localizedDescription == "Win-back offer")
            try message.display(in: UIWindowScene())
            #expect(session.winBackOfferSheetCount == 1 && session.billingIssueSheetCount == 0)
            let product = try #require(try await Product.products(for: [Self.basic]).first)
            let offer = try #require(product.subscription?.winBackOffers.first)
            _ = try await product.purchase(options: [.winBackOffer(offer)])
            try message.display(in: UIWindowScene())
            #expect(session.winBackOfferSheetCount == 1, "an offer no longer open shows nothing")
        }
    }
}
