import Foundation
import OpenStoreKit
import OpenStoreKitTest
import Testing

import enum LedgerModel.PromotionalOfferError

/// Offer codes through StoreKit: the test session redeems a code as the redemption sheet does,
/// and the app sees a transaction whose offer is a code.
@Suite struct OfferCodeStoreKitTests {
    static let monthly = "com.example.pro.monthly"  // FREEMONTH (new, expired), LOYALTY (existing)

    @MainActor @Test func aCodeRedeemedInTheSheetReachesTheAppWithItsOffer() async throws {
        try await SampleShop.withSession { session in
            try await AppStore.presentOfferCodeRedeemSheet(in: UIWindowScene())
            #expect(session.offerCodeRedeemSheetCount == 1)
            var updates = Transaction.updates.makeAsyncIterator()
            let bought = try await session.buyProduct(
                identifier: Self.monthly, options: [.codeOffer(referenceName: "FREEMONTH")])
            let offer = try #require(bought.offer)
            #expect(offer.type == .code && offer.id == "FREEMONTH" && offer.paymentMode == .freeTrial)
            #expect(bought.price == 0)
            let update = try #require(await updates.next()?.payloadValue)
            #expect(update.id == bought.id && update.offer?.type == .code)
        }
    }

    @Test func theRenewalInfoShowsACodeWaitingForTheNextRenewal() async throws {
        try await SampleShop.withSession { session in
            _ = try await session.buyProduct(identifier: Self.monthly)
            _ = try await session.buyProduct(identifier: Self.monthly, options: [.codeOffer(referenceName: "LOYALTY")])
            let status = try #require(try await Product.SubscriptionInfo.status(for: "pro").first)
            let info = try status.renewalInfo.payloadValue
            #expect(info.offer?.type == .code && info.offer?.id == "LOYALTY" && info.offer?.paymentMode == .payAsYouGo)
            #expect(info.offerType == .code && info.offerID == "LOYALTY")
        }
    }

    @Test func aCodeNotForTheCustomerIsRefused() async throws {
        try await SampleShop.withSession { session in
            await #expect(
                throws: PromotionalOfferError.codeIneligible(
                    productID: Self.monthly, referenceName: "LOYALTY", customer: .new)
            ) {
                try await session.buyProduct(identifier: Self.monthly, options: [.codeOffer(referenceName: "LOYALTY")])
            }
            let product = try #require(try await Product.products(for: [Self.monthly]).first)
            await #expect(throws: Product.PurchaseError.ineligibleForOffer) {
                try await product.purchase(options: [.codeOffer(referenceName: "LOYALTY")])
            }
        }
    }
}
