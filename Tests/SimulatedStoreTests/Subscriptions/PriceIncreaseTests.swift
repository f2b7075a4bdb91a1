import Foundation
import LedgerTestSupport
import LedgerTesting
import StoreLedger
import StoreTesting
import Testing

/// Price increases: the App Store raises the price a subscriber renews at; with consent
/// needed, a subscriber who did not agree by the end of the period does not renew.
@Suite struct PriceIncreaseTests {
    static let monthly = SampleCatalog.subscription  // 4.99 a month
    static let day = NotificationOutboxTests.day

    /// The notifications recorded so far, as `TYPE` or `TYPE SUBTYPE`.
    static func notified(_ ledger: Ledger) throws -> [String] {
        try ledger.notifications().map { [$0.type, $0.subtype].compactMap { $0 }.joined(separator: " ") }
    }

    /// The payload of a JWS the ledger signed.
    static func payload(_ jws: JWS) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: jws.payload) as? [String: Any])
    }

    /// The signed price of transaction `id`, in milliunits.
    static func signedPrice(_ ledger: Ledger, _ id: UInt64) throws -> Int? {
        try payload(try ledger.signedTransaction(id))["price"] as? Int
    }

    /// The renewal info of the monthly subscription's group as signed.
    static func renewalInfo(_ ledger: Ledger) throws -> [String: Any] {
        try payload(try #require(try ledger.signedRenewalInfo(forProduct: monthly)))
    }

    @Test func aConsentedIncreaseIsChargedFromTheNextRenewalOn() async throws {
        try await NotificationOutboxTests.withNotifyingStore { ledger, session in
            let bought = try await session.buyProduct(Payment(productID: Self.monthly))
            try await session.requestPriceIncrease(for: Self.monthly, price: Decimal(string: "6.99")!)
            var status = try #require(try ledger.subscriptionStatus(forProduct: Self.monthly))
            #expect(status.priceIncrease?.status == .pending && status.priceIncrease?.needsConsent == true)
            #expect(status.renewalPrice == Decimal(string: "6.99") && status.willAutoRenew)
            #expect(try Self.renewalInfo(ledger)["priceIncreaseStatus"] as? Int == 0)
            #expect(try Self.renewalInfo(ledger)["renewalPrice"] as? Int == 6990)
            #expect(try Self.signedPrice(ledger, bought.id) == 4990, "what was charged already stays")

            try await session.answerPriceIncrease(for: Self.monthly, agree: true)
            #expect(try ledger.priceIncrease(forProduct: Self.monthly)?.status == .agreed)
            #expect(try Self.renewalInfo(ledger)["priceIncreaseStatus"] as? Int == 1)

            let renewals = try await session.advanceClock(by: 62 * Self.day)
            #expect(renewals.count == 2)
            #expect(try renewals.map { try Self.signedPrice(ledger, $0.id) } == [6990, 6990])
            status = try #require(try ledger.subscriptionStatus(forProduct: Self.monthly))
            #expect(status.priceIncrease == nil && status.renewalPrice == Decimal(string: "6.99"))
            #expect(try Self.renewalInfo(ledger)["priceIncreaseStatus"] == nil)
            #expect(try Self.renewalInfo(ledger)["renewalPrice"] as? Int == 6990)
            #expect(
                try Self.notified(ledger) == [
                    "SUBSCRIBED INITIAL_BUY", "PRICE_INCREASE PENDING", "PRICE_INCREASE ACCEPTED", "DID_RENEW",
                    "DID_RENEW",
                ])
            // Deleting a renewal charged at the new price deletes its price with it.
            try await session.deleteTransaction(renewals[1].id)
            #expect(try ledger.transaction(renewals[1].id) == nil)
        }
    }

    @Test func anUnansweredIncreaseEndsTheSubscriptionAtTheEndOfItsPeriod() async throws {
        try await NotificationOutboxTests.withNotifyingStore { ledger, session in
            try await session.buyProduct(Payment(productID: Self.monthly))
            try await session.requestPriceIncrease(for: Self.monthly)
            #expect(try ledger.priceIncrease(forProduct: Self.monthly)?.price == Decimal(string: "4.99"))
            await #expect(throws: StoreControlError.priceIncreaseNotAgreed(Self.monthly)) {
                try await session.forceRenewalOfSubscription(Self.monthly)
            }
            #expect(try ledger.nextRenewalDate() == nil, "nothing will renew")
            #expect(try await session.advanceClock(by: 40 * Self.day).isEmpty)
            let status = try #require(try ledger.subscriptionStatus(forProduct: Self.monthly))
            #expect(status.state == .expired && status.expirationReason == .didNotConsentToPriceIncrease)
            #expect(try Self.renewalInfo(ledger)["expirationIntent"] as? Int == 3)
            #expect(try Self.notified(ledger).suffix(2) == ["PRICE_INCREASE PENDING", "EXPIRED PRICE_INCREASE"])
            // Too late to consent: the period it was for is over.
            await #expect(throws: StoreControlError.noPriceIncrease(Self.monthly)) {
                try await session.answerPriceIncrease(for: Self.monthly, agree: true)
            }
        }
    }

    @Test func aDeclineTurnsAutoRenewOffAndResubscribingInThePeriodAcceptsIt() async throws {
        try await NotificationOutboxTests.withNotifyingStore { ledger, session in
            try await session.buyProduct(Payment(productID: Self.monthly))
            try await session.requestPriceIncrease(for: Self.monthly, price: 7)
            try await session.answerPriceIncrease(for: Self.monthly, agree: false)
            #expect(try !ledger.isAutoRenewEnabled(for: Self.monthly))
            #expect(try ledger.priceIncrease(forProduct: Self.monthly)?.status == .declined)
            #expect(try Self.renewalInfo(ledger)["priceIncreaseStatus"] as? Int == 0, "declined is not consented")
            // Turning auto-renew back on within the period takes the new price.
            try await session.setAutoRenew(true, for: Self.monthly)
            #expect(try ledger.priceIncrease(forProduct: Self.monthly)?.status == .agreed)
            let renewals = try await session.advanceClock(by: 31 * Self.day)
            #expect(try renewals.map { try Self.signedPrice(ledger, $0.id) } == [7000])
            #expect(
                try Self.notified(ledger) == [
                    "SUBSCRIBED INITIAL_BUY", "PRICE_INCREASE PENDING", "DID_CHANGE_RENEWAL_STATUS AUTO_RENEW_DISABLED",
                    "DID_CHANGE_RENEWAL_STATUS AUTO_RENEW_ENABLED", "PRICE_INCREASE ACCEPTED", "DID_RENEW",
                ])
        }
    }

    @Test func aDeclinedIncreaseExpiresForNotConsentingEvenOnceAutoRenewIsBackOn() async throws {
        try await NotificationOutboxTests.withNotifyingStore { ledger, session in
            try await session.buyProduct(Payment(productID: Self.monthly))
            try await session.requestPriceIncrease(for: Self.monthly, price: 7)
            try await session.answerPriceIncrease(for: Self.monthly, agree: false)
            _ = try await session.advanceClock(by: 31 * Self.day)
            try await session.setAutoRenew(true, for: Self.monthly)
            let status = try #require(try ledger.subscriptionStatus(forProduct: Self.monthly))
            #expect(status.state == .expired && status.expirationReason == .didNotConsentToPriceIncrease)
            #expect(try ledger.priceIncrease(forProduct: Self.monthly)?.status == .declined)
            #expect(try Self.notified(ledger).contains("EXPIRED PRICE_INCREASE"))
            #expect(try !Self.notified(ledger).contains("PRICE_INCREASE ACCEPTED"))
        }
    }

    @Test func anIncreaseWithoutConsentIsAgreedAtOnce() async throws {
        try await NotificationOutboxTests.withNotifyingStore { ledger, session in
            try await session.buyProduct(Payment(productID: Self.monthly))
            try await session.requestPriceIncrease(
                for: Self.monthly, price: Decimal(string: "5.49")!, needsConsent: false)
            let increase = try #require(try ledger.priceIncrease(forProduct: Self.monthly))
            #expect(increase.status == .agreed && !increase.needsConsent && increase.answeredAt == increase.requestedAt)
            #expect(try Self.renewalInfo(ledger)["priceIncreaseStatus"] as? Int == 1)
            await #expect(throws: StoreControlError.noPriceIncrease(Self.monthly)) {
                try await session.answerPriceIncrease(for: Self.monthly, agree: false)
            }
            let renewed = try await session.forceRenewalOfSubscription(Self.monthly)
            #expect(try Self.signedPrice(ledger, renewed.id) == 5490)
            #expect(try Self.notified(ledger) == ["SUBSCRIBED INITIAL_BUY", "PRICE_INCREASE ACCEPTED", "DID_RENEW"])
        }
    }

    @Test func aNewPeriodOtherThanTheRenewalDropsTheIncrease() async throws {
        try await NotificationOutboxTests.withNotifyingStore { ledger, session in
            try await session.buyProduct(Payment(productID: SampleCatalog.basicSubscription))
            try await session.requestPriceIncrease(for: SampleCatalog.basicSubscription, price: 3)
            // An upgrade replaces the period the increase was for.
            try await session.buyProduct(Payment(productID: Self.monthly))
            #expect(try ledger.priceIncrease(forProduct: Self.monthly) == nil)
            let status = try #require(try ledger.subscriptionStatus(forProduct: Self.monthly))
            #expect(status.renewalPrice == Decimal(string: "4.99"))
        }
    }

    @Test func requestsAndAnswersTheStoreCannotTakeAreRefusedAndChangeNothing() async throws {
        try await NotificationOutboxTests.withNotifyingStore { ledger, session in
            await #expect(throws: StoreControlError.noSubscription(Self.monthly)) {
                try await session.requestPriceIncrease(for: Self.monthly)
            }
            await #expect(throws: StoreControlError.notAutoRenewable(SampleCatalog.consumable)) {
                try await session.requestPriceIncrease(for: SampleCatalog.consumable)
            }
            try await session.buyProduct(Payment(productID: Self.monthly))
            await #expect(throws: StoreControlError.noPriceIncrease(Self.monthly)) {
                try await session.answerPriceIncrease(for: Self.monthly, agree: true)
            }
            await #expect(throws: StoreControlError.invalidPrice(-1)) {
                try await session.requestPriceIncrease(for: Self.monthly, price: -1)
            }
            let tooLong = Decimal(string: "1234567890123456")!
            await #expect(throws: StoreControlError.invalidPrice(tooLong)) {
                try await session.requestPriceIncrease(for: Self.monthly, price: tooLong)
            }
            try await session.setAutoRenew(false, for: Self.monthly)
            await #expect(throws: StoreControlError.notRenewing(Self.monthly)) {
                try await session.requestPriceIncrease(for: Self.monthly)
            }
            try await session.setAutoRenew(true, for: Self.monthly)
            try await session.requestPriceIncrease(for: Self.monthly, price: 6)
            await #expect(throws: StoreControlError.priceIncreasePending(Self.monthly)) {
                try await session.requestPriceIncrease(for: Self.monthly, price: 8)
            }
            #expect(
                try ledger.priceIncrease(forProduct: Self.monthly)?.price == 6, "the refused request changed nothing")
            #expect(
                try Self.notified(ledger) == [
                    "SUBSCRIBED INITIAL_BUY", "DID_CHANGE_RENEWAL_STATUS AUTO_RENEW_DISABLED",
                    "DID_CHANGE_RENEWAL_STATUS AUTO_RENEW_ENABLED", "PRICE_INCREASE PENDING",
                ])
            _ = try await session.advanceClock(by: Self.day)
            _ = try await session.expireSubscription(Self.monthly)
            await #expect(throws: StoreControlError.noPriceIncrease(Self.monthly)) {
                try await session.answerPriceIncrease(for: Self.monthly, agree: true)
            }
            // Expired by the store (auto-renew off), it expired for that, not for the increase.
            #expect(try ledger.subscriptionStatus(forProduct: Self.monthly)?.expirationReason == .autoRenewDisabled)
        }
    }

    /// Seeded random prices, answers and clock moves: a renewal happens exactly when the
    /// subscriber agreed (or no consent was needed), at the price asked; otherwise the
    /// subscription expires for not consenting. Prices out of range are refused.
    @Test func randomIncreasesRenewAtTheirPriceOrExpire() async throws {
        var random = SplitMix(seed: 0x5052_4943_4531)
        for round in 0..<12 {
            try await NotificationOutboxTests.withNotifyingStore { ledger, session in
                try await session.buyProduct(Payment(productID: Self.monthly))
                let digits = Int.random(in: 1...17, using: &random)
                let whole = (0..<digits).map { _ in String(Int.random(in: 0...9, using: &random)) }.joined()
                let cents = String(format: "%02d", Int.random(in: 0...99, using: &random))
                let price = Decimal(string: "\(whole).\(cents)")!
                // The ledger keeps at most 15 digits before the point (leading zeros aside).
                guard whole.drop(while: { $0 == "0" }).count <= 15 else {
                    await #expect(throws: StoreControlError.invalidPrice(price)) {
                        try await session.requestPriceIncrease(for: Self.monthly, price: price)
                    }
                    return
                }
                let answer = Int.random(in: 0...3, using: &random)  // 0 none, 1 agree, 2 decline, 3 no consent needed
                try await session.requestPriceIncrease(for: Self.monthly, price: price, needsConsent: answer != 3)
                if answer == 1 || answer == 2 {
                    try await session.answerPriceIncrease(for: Self.monthly, agree: answer == 1)
                }
                let days = Double.random(in: 31...300, using: &random)
                let renewals = try await session.advanceClock(by: days * Self.day)
                let status = try #require(try ledger.subscriptionStatus(forProduct: Self.monthly))
                if answer == 1 || answer == 3 {
                    #expect(!renewals.isEmpty, "round \(round)")
                    let milliunits = Int64(whole + cents + "0")!
                    for renewal in renewals {
                        #expect(
                            try Self.signedPrice(ledger, renewal.id).map(Int64.init) == milliunits, "round \(round)")
                    }
                    #expect(status.state == .subscribed && status.priceIncrease == nil, "round \(round)")
                } else {
                    #expect(renewals.isEmpty, "round \(round)")
                    #expect(status.expirationReason == .didNotConsentToPriceIncrease, "round \(round)")
                }
            }
        }
    }
}
