import Foundation
import LedgerTestSupport
import LedgerTesting
import StoreLedger
import StoreTesting
import Testing

/// Offer codes: a customer redeems a code of a subscription's `codeOffers`, if it is for them
/// (new to the group, lapsed, or subscribed now), and the periods it covers are charged at it.
@Suite struct OfferCodeTests {
    static let monthly = SampleCatalog.subscription  // FREEMONTH (new, expired), LOYALTY (existing)
    static let day = NotificationOutboxTests.day

    static func redeeming(_ code: String, of product: String = monthly) -> Payment {
        var payment = Payment(productID: product)
        payment.codeOffer = code
        return payment
    }

    /// The signed offer fields and price of transaction `id`.
    static func signedOffer(_ ledger: Ledger, _ id: UInt64) throws -> String {
        let payload = try PriceIncreaseTests.payload(try ledger.signedTransaction(id))
        let type = (payload["offerType"] as? Int).map(String.init) ?? "-"
        let offer = payload["offerIdentifier"] as? String ?? "-"
        let price = (payload["price"] as? Int).map(String.init) ?? "-"
        return "\(type) \(offer) \(price)"
    }

    @Test func aNewCustomersCodeGivesItsOfferThenTheProductsPrice() async throws {
        try await NotificationOutboxTests.withNotifyingStore { ledger, session in
            let bought = try await session.buyProduct(Self.redeeming("FREEMONTH"))
            let offer = try #require(bought.offer)
            #expect(offer.type == .code && offer.id == "FREEMONTH" && offer.paymentMode == .freeTrial)
            #expect(try Self.signedOffer(ledger, bought.id) == "3 FREEMONTH 0")
            let renewals = try await session.advanceClock(by: 32 * Self.day)
            #expect(renewals.count == 1 && renewals[0].offer == nil)
            #expect(try Self.signedOffer(ledger, renewals[0].id) == "- - 4990")
            let notified = try ledger.notifications().map { [$0.type, $0.subtype].compactMap { $0 } }
            #expect(notified == [["OFFER_REDEEMED", "INITIAL_BUY"], ["DID_RENEW"]])
            #expect(try ledger.verify().isEmpty)
        }
    }

    @Test func aSubscribersCodeChargesTheNextRenewalsAtItsPrice() async throws {
        try await NotificationOutboxTests.withNotifyingStore { ledger, session in
            try await session.buyProduct(Payment(productID: Self.monthly))
            let redeemed = try await session.buyProduct(Self.redeeming("LOYALTY"))
            #expect(redeemed.offer?.type == .code && redeemed.expirationDate == redeemed.purchaseDate)
            await #expect(
                throws: PromotionalOfferError.offerInProgress(productID: Self.monthly, offer: "LOYALTY")
            ) { try await session.buyProduct(Self.redeeming("LOYALTY")) }
            // The renewal info says which offer the next renewal is charged at.
            let status = try #require(try ledger.subscriptionStatus(forProduct: Self.monthly))
            #expect(status.renewalOffer?.type == .code && status.renewalOffer?.id == "LOYALTY")
            let info = try PriceIncreaseTests.payload(
                try #require(try ledger.signedRenewalInfo(forProduct: Self.monthly)))
            #expect(info["offerType"] as? Int == 3 && info["offerIdentifier"] as? String == "LOYALTY")
            #expect(info["offerDiscountType"] as? String == "PAY_AS_YOU_GO" && info["offerPeriod"] as? String == "P1M")
            let renewals = try await session.advanceClock(by: 125 * Self.day)
            #expect(try ledger.subscriptionStatus(forProduct: Self.monthly)?.renewalOffer == nil, "the code has run")
            #expect(
                try renewals.map { try Self.signedOffer(ledger, $0.id) } == [
                    "3 LOYALTY 2990", "3 LOYALTY 2990", "3 LOYALTY 2990", "- - 4990",
                ])
            let subtypes = try ledger.notifications().map { "\($0.type) \($0.subtype ?? "-")" }
            #expect(subtypes.prefix(2) == ["SUBSCRIBED INITIAL_BUY", "OFFER_REDEEMED -"])
            #expect(try ledger.verify().isEmpty)
        }
    }

    @Test func aLapsedCustomersCodeResubscribes() async throws {
        try await NotificationOutboxTests.withNotifyingStore { ledger, session in
            try await session.buyProduct(Payment(productID: Self.monthly))
            try await session.setAutoRenew(false, for: Self.monthly)
            _ = try await session.advanceClock(by: 40 * Self.day)
            let back = try await session.buyProduct(Self.redeeming("FREEMONTH"))
            #expect(back.offer?.id == "FREEMONTH" && back.expirationDate! > back.purchaseDate)
            #expect(
                try ledger.notifications().last.map { "\($0.type) \($0.subtype ?? "-")" }
                    == "OFFER_REDEEMED RESUBSCRIBE")
        }
    }

    @Test func codesTheStoreCannotTakeAreRefusedAndChangeNothing() async throws {
        try await NotificationOutboxTests.withNotifyingStore { ledger, session in
            await #expect(
                throws: PromotionalOfferError.codeIneligible(
                    productID: Self.monthly, referenceName: "LOYALTY", customer: .new)
            ) { try await session.buyProduct(Self.redeeming("LOYALTY")) }
            await #expect(throws: PromotionalOfferError.unknownCode(productID: Self.monthly, referenceName: "NOPE")) {
                try await session.buyProduct(Self.redeeming("NOPE"))
            }
            await #expect(
                throws: PromotionalOfferError.unknownCode(
                    productID: SampleCatalog.yearlySubscription, referenceName: "FREEMONTH")
            ) { try await session.buyProduct(Self.redeeming("FREEMONTH", of: SampleCatalog.yearlySubscription)) }
            var both = Self.redeeming("FREEMONTH")
            both.discount = PaymentDiscount(offerID: "promo", signature: nil)
            await #expect(throws: PromotionalOfferError.twoOffers(productID: Self.monthly)) {
                try await session.buyProduct(both)
            }
            await #expect(throws: PromotionalOfferError.unknownCode(productID: Self.monthly, referenceName: "")) {
                try await session.buyProduct(Self.redeeming(""))
            }
            #expect(try ledger.allTransactions().isEmpty, "nothing refused was stored")
            try await session.buyProduct(Payment(productID: Self.monthly))
            await #expect(
                throws: PromotionalOfferError.codeIneligible(
                    productID: Self.monthly, referenceName: "FREEMONTH", customer: .existing)
            ) { try await session.buyProduct(Self.redeeming("FREEMONTH")) }
            #expect(try ledger.allTransactions().count == 1)
        }
    }

    @Test func aCatalogsCodeOffersAreReadWithTheirEligibility() async throws {
        try await withTemporaryLedger { ledger in
            let product = try #require(try ledger.products(withIDs: [Self.monthly]).first)
            let codes = try #require(product.subscription?.codeOffers)
            #expect(codes.map(\.referenceName) == ["FREEMONTH", "LOYALTY"])
            #expect(codes.map(\.eligibility) == [[.new, .expired], [.existing]])
            #expect(codes[1].offer.price == Decimal(string: "2.99") && codes[1].offer.periodCount == 3)
            let json = String(decoding: try JSONEncoder().encode(codes[0]), as: UTF8.self)
            #expect(json.contains(#""eligibility":["new","expired"]"#))
            #expect(try JSONDecoder().decode(CodeOffer.self, from: Data(json.utf8)) == codes[0])
        }
    }
}
