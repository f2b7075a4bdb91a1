import Foundation
import LedgerTestSupport
import LedgerTesting
import StoreLedger
import StoreTesting
import Testing

/// A one-group catalog with promotional offers, and the subscription offers key that signs them.
private func promotionalCatalog(key: SubscriptionOffersKey?) -> String {
    let pair =
        key.map { #", "subscriptionOffersKeyPair": {"id": "\#($0.id)", "privateKey": "\#($0.privateKeyBase64)"}"# }
        ?? ""
    return """
        {"products": [], "settings": {},
         "subscriptionGroups": [{"id": "g1", "name": "Plus", "subscriptions": [
            {"productID": "plus.monthly", "type": "RecurringSubscription", "displayPrice": "4.99", "groupNumber": 2,
             "recurringSubscriptionPeriod": "P1M", "referenceName": "monthly", "subscriptionGroupID": "g1", "localizations": [],
             "introductoryOffer": {"paymentMode": "free", "subscriptionPeriod": "P1W", "numberOfPeriods": 1},
             "adHocOffers": [
                {"offerID": "comeback", "paymentMode": "payAsYouGo", "subscriptionPeriod": "P1M", "numberOfPeriods": 2, "displayPrice": "0.99"},
                {"offerID": "three.free", "paymentMode": "free", "subscriptionPeriod": "P1M", "numberOfPeriods": 3}]},
            {"productID": "plus.yearly", "type": "RecurringSubscription", "displayPrice": "39.99", "groupNumber": 1,
             "recurringSubscriptionPeriod": "P1Y", "referenceName": "yearly", "subscriptionGroupID": "g1", "localizations": [],
             "adHocOffers": [
                {"offerID": "yearly.deal", "paymentMode": "payUpFront", "subscriptionPeriod": "P1Y", "numberOfPeriods": 1, "displayPrice": "19.99"}]}]}]
         \(pair), "version": {"major": 3, "minor": 0}}
        """
}

/// A launched queue on a new ledger of the promotional catalog, its clock fixed at `storeEpoch`.
private func withPromotionalStore(
    key: SubscriptionOffersKey? = nil, configuration: LedgerConfiguration = StoreFixture.configuration,
    _ body: (PaymentQueue, StoreTestSession, SubscriptionOffersKey) async throws -> Void
) async throws {
    let key = try key ?? SubscriptionOffersKey(generatingWithID: "K1")
    try await withTemporaryDirectory { directory in
        let file = directory + "/offers.storekit"
        try write(promotionalCatalog(key: key), to: file)
        let ledger = try Ledger.open(
            at: directory + "/l.sqlite", mode: .createIfMissing, configuration: configuration)
        try ProductCatalog(ledger: ledger).importConfigurations(at: [file])
        let queue = try PaymentQueue(ledger: ledger)
        try await body(queue, StoreTestSession(queue: queue), key)
    }
}

/// A payment of `productID` redeeming `offerID`, signed with `key` as the app's server signs.
private func signedPayment(
    _ productID: String, offer offerID: String, key: SubscriptionOffersKey, account: UUID? = nil,
    nonce: UUID = UUID(), timestamp: Date = storeEpoch, bundleID: String = Ledger.defaultBundleID,
    signedProductID: String? = nil
) throws -> Payment {
    let milliseconds = Int64((timestamp.timeIntervalSince1970 * 1000).rounded())
    let payload = OfferSignaturePayload(
        bundleID: bundleID, keyID: key.id, productID: signedProductID ?? productID, offerID: offerID,
        account: account?.uuidString ?? "", nonce: nonce, timestamp: milliseconds)
    var payment = Payment(productID: productID, appAccountToken: account)
    payment.discount = PaymentDiscount(
        offerID: offerID,
        signature: OfferSignature(
            keyID: key.id, nonce: nonce, timestamp: milliseconds, signature: try key.signature(for: payload)))
    return payment
}

private let month = SubscriptionPeriod(value: 1, unit: .month)

private func months(_ count: Int, after date: Date?) throws -> Date? {
    Calendar(identifier: .gregorian).date(byAdding: .month, value: count, to: try #require(date))
}

@Suite struct PromotionalOfferTests {
    @Test func aLapsedSubscriberRedeemsASignedOfferThatStartsNowAndRunsForItsPeriods() async throws {
        try await withPromotionalStore { queue, session, key in
            try await queue.add(Payment(productID: "plus.monthly"))  // the free week
            try await session.expireSubscription("plus.monthly")
            let redeemed = try await queue.add(try signedPayment("plus.monthly", offer: "comeback", key: key))
            #expect(redeemed.state == .purchased)
            #expect(
                redeemed.offer
                    == TransactionOffer(type: .promotional, id: "comeback", paymentMode: .payAsYouGo, period: month))
            #expect(redeemed.expirationDate == (try months(1, after: redeemed.purchaseDate)))
            // Two periods at the offer (this one and one renewal), then the product's price.
            let renewals = try await session.advanceClock(by: 100 * day)
            #expect(renewals.map(\.offer?.id) == ["comeback", nil, nil])
            #expect(renewals.first?.purchaseDate == redeemed.expirationDate)
            #expect(try queue.ledger.verify() == [])
        }
    }

    @Test func aCurrentSubscriberGetsTheOfferAtTheNextRenewal() async throws {
        try await withPromotionalStore { queue, session, key in
            try await queue.add(Payment(productID: "plus.monthly"))
            let firstRenewal = try await session.advanceClock(by: 8 * day)
            let current = try #require(firstRenewal.first)
            let redeemed = try await queue.add(
                try signedPayment(
                    "plus.monthly", offer: "three.free", key: key, timestamp: try queue.ledger.storeDate()))
            // The payment has no period of its own: the current one runs on unchanged.
            #expect(redeemed.state == .purchased && redeemed.offer?.id == "three.free")
            #expect(redeemed.expirationDate == redeemed.purchaseDate)
            #expect(try queue.ledger.transaction(current.id)?.expirationDate == current.expirationDate)
            // The next renewal is the free offer's three months at once, then monthly again.
            let renewals = try await session.advanceClock(by: 130 * day)
            #expect(renewals.map(\.offer?.id) == ["three.free", nil])
            #expect(renewals[0].purchaseDate == current.expirationDate)
            #expect(renewals[0].expirationDate == (try months(3, after: current.expirationDate)))
            #expect(renewals[1].expirationDate == (try months(1, after: renewals[0].expirationDate)))
            #expect(try queue.ledger.verify() == [])
        }
    }

    @Test func anOfferForTheProductSubscribedToDropsAPendingDowngradeAndTurnsAutoRenewOn() async throws {
        try await withPromotionalStore { queue, session, key in
            let yearly = try await queue.add(Payment(productID: "plus.yearly"))
            try await queue.add(Payment(productID: "plus.monthly"))  // a downgrade, at the next renewal
            #expect(try queue.ledger.pendingProductChange(for: "plus.yearly") == "plus.monthly")
            try await session.setAutoRenew(false, for: "plus.yearly")
            try await queue.add(try signedPayment("plus.yearly", offer: "yearly.deal", key: key))
            #expect(try queue.ledger.pendingProductChange(for: "plus.yearly") == nil)
            #expect(try queue.ledger.isAutoRenewEnabled(for: "plus.yearly"))
            let renewals = try await session.advanceClock(by: 370 * day)
            #expect(renewals.map(\.productID) == ["plus.yearly"] && renewals.map(\.offer?.id) == ["yearly.deal"])
            #expect(renewals.first?.purchaseDate == yearly.expirationDate)
            #expect(try queue.ledger.verify() == [])
        }
    }

    @Test func oneOfferAtATime() async throws {
        try await withPromotionalStore { queue, session, key in
            try await queue.add(Payment(productID: "plus.monthly"))  // the free week
            _ = try await session.advanceClock(by: 8 * day)
            try await queue.add(
                try signedPayment(
                    "plus.monthly", offer: "three.free", key: key, timestamp: try queue.ledger.storeDate()))
            // Waiting for the next renewal: a second offer is refused.
            await #expect(throws: PromotionalOfferError.offerInProgress(productID: "plus.monthly", offer: "three.free"))
            {
                try await queue.add(
                    try signedPayment(
                        "plus.monthly", offer: "comeback", key: key, timestamp: try queue.ledger.storeDate()))
            }
            try await session.expireSubscription("plus.monthly")
            // A lapsed subscriber's pay-as-you-go offer runs for two periods: no other offer meanwhile.
            let comeback = try await queue.add(
                try signedPayment("plus.monthly", offer: "comeback", key: key, timestamp: try queue.ledger.storeDate()))
            #expect(comeback.offer?.id == "comeback")
            await #expect(throws: PromotionalOfferError.offerInProgress(productID: "plus.monthly", offer: "comeback")) {
                try await queue.add(
                    try signedPayment(
                        "plus.monthly", offer: "three.free", key: key, timestamp: try queue.ledger.storeDate()))
            }
            #expect(PromotionalOfferError.offerInProgress(productID: "p", offer: "o").code == .ineligibleForOffer)
        }
    }

    @Test func aRetryOfAPaymentMadeWithoutTheOfferIsNotTheSamePayment() async throws {
        try await withPromotionalStore { queue, session, key in
            try await queue.add(Payment(productID: "plus.monthly"))
            try await session.expireSubscription("plus.monthly")
            var plain = Payment(productID: "plus.yearly")
            plain.idempotencyKey = "order-9"
            let first = try await queue.add(plain)
            var withOffer = try signedPayment("plus.yearly", offer: "yearly.deal", key: key)
            withOffer.idempotencyKey = "order-9"
            await #expect(
                throws: PaymentQueueError.idempotencyKeyReused(key: "order-9", existingTransactionID: first.id)
            ) {
                try await queue.add(withOffer)
            }
        }
    }

    @Test func anUpgradeWithAnOfferStartsNowAtTheOffer() async throws {
        try await withPromotionalStore { queue, _, key in
            let monthly = try await queue.add(Payment(productID: "plus.monthly"))
            let yearly = try await queue.add(try signedPayment("plus.yearly", offer: "yearly.deal", key: key))
            #expect(
                yearly.offer
                    == TransactionOffer(
                        type: .promotional, id: "yearly.deal", paymentMode: .payUpFront,
                        period: SubscriptionPeriod(value: 1, unit: .year)))
            #expect(
                yearly.expirationDate
                    == Calendar(identifier: .gregorian).date(byAdding: .year, value: 1, to: yearly.purchaseDate))
            #expect(try queue.ledger.transaction(monthly.id)?.isUpgraded == true)
            #expect(try queue.ledger.verify() == [])
        }
    }

    /// The offers' rows of the notifications table (`NotifiedEvent`): OFFER_REDEEMED with the
    /// subtype of how the payment started, about the payment; about the current period when the
    /// offer only changes the next renewal (a downgrade, or the product subscribed to).
    @Test(arguments: [
        (NotifiedEvent.offerRedeemedToResubscribe, "plus.monthly", "plus.monthly", "comeback", true),
        (.offerRedeemedWithUpgrade, "plus.monthly", "plus.yearly", "yearly.deal", false),
        (.offerRedeemedWithDowngrade, "plus.yearly", "plus.monthly", "comeback", false),
        (.offerRedeemedForActiveSubscription, "plus.yearly", "plus.yearly", "yearly.deal", false),
    ])
    func aRedeemedOfferIsNotifiedWithHowItStarted(
        _ event: NotifiedEvent, first: String, then: String, offer: String, lapsed: Bool
    ) async throws {
        try await withPromotionalStore { queue, session, key in
            _ = try session.set(.notificationURL, to: "http://127.0.0.1:9/n")
            let current = try await queue.add(Payment(productID: first))
            if lapsed { try await session.expireSubscription(first) }
            let redeemed = try await queue.add(
                try signedPayment(then, offer: offer, key: key, timestamp: try queue.ledger.storeDate()))
            let last = try #require(try queue.ledger.notifications().last)
            #expect(last.type == "OFFER_REDEEMED" && last.subtype == event.notification.subtype)
            #expect(event.notification.type == "OFFER_REDEEMED")
            let changesRenewal = event == .offerRedeemedWithDowngrade || event == .offerRedeemedForActiveSubscription
            #expect(last.transactionID == (changesRenewal ? current.id : redeemed.id))
            #expect(
                try queue.ledger.subscriptionChanged(byPayment: redeemed.id)?.id == (changesRenewal ? current.id : nil))
        }
    }

    @Test func aNewCustomerIsNotEligibleAndNothingIsRecorded() async throws {
        try await withPromotionalStore { queue, _, key in
            await #expect(throws: PromotionalOfferError.ineligible(productID: "plus.monthly")) {
                try await queue.add(try signedPayment("plus.monthly", offer: "comeback", key: key))
            }
            let recorded = try queue.ledger.allTransactions()
            #expect(recorded.isEmpty)
        }
    }

    @Test func everyBadSignatureIsRefusedWithItsReasonAndRecordsNothing() async throws {
        try await withPromotionalStore { queue, session, key in
            try await queue.add(Payment(productID: "plus.monthly"))
            try await session.expireSubscription("plus.monthly")
            let before = try queue.ledger.allTransactions()
            let otherKey = try SubscriptionOffersKey(generatingWithID: "K1")
            let account = UUID()
            var unsignedDetails = try signedPayment("plus.monthly", offer: "comeback", key: key)
            unsignedDetails.appAccountToken = account  // signed without the account
            var noKeyID = try signedPayment("plus.monthly", offer: "comeback", key: key)
            noKeyID.discount?.signature?.keyID = ""
            var noSignature = try signedPayment("plus.monthly", offer: "comeback", key: key)
            noSignature.discount?.signature?.signature = Data()
            var wrongKeyID = try signedPayment("plus.monthly", offer: "comeback", key: key)
            wrongKeyID.discount?.signature?.keyID = "K2"
            let cases: [(Payment, PromotionalOfferError)] = [
                (
                    try signedPayment("plus.monthly", offer: "nope", key: key),
                    .unknownOffer(productID: "plus.monthly", offerID: "nope")
                ),
                (
                    try signedPayment("plus.monthly", offer: "yearly.deal", key: key),
                    .unknownOffer(productID: "plus.monthly", offerID: "yearly.deal")
                ),
                (noKeyID, .missingParameters("no key identifier")),
                (noSignature, .missingParameters("no signature")),
                (wrongKeyID, .invalidSignature("unknown key \"K2\" (the store's key is \"K1\")")),
                (
                    try signedPayment("plus.monthly", offer: "comeback", key: otherKey),
                    .invalidSignature(Self.notSigned)
                ),
                (
                    try signedPayment("plus.monthly", offer: "comeback", key: key, signedProductID: "plus.yearly"),
                    .invalidSignature(Self.notSigned)
                ),
                (
                    try signedPayment("plus.monthly", offer: "comeback", key: key, bundleID: "com.other.app"),
                    .invalidSignature(Self.notSigned)
                ),
                (unsignedDetails, .invalidSignature(Self.notSigned)),
                (
                    try signedPayment(
                        "plus.monthly", offer: "comeback", key: key,
                        timestamp: storeEpoch.addingTimeInterval(-25 * 3600)),
                    .invalidSignature(
                        "it was signed at 1799910000000 ms, more than 24 hours from the store's clock (1800000000000 ms)"
                    )
                ),
            ]
            for (payment, error) in cases {
                await #expect(throws: error) { try await queue.add(payment) }
            }
            var emptyOffer = Payment(productID: "plus.monthly")
            emptyOffer.discount = PaymentDiscount(offerID: "", signature: nil)
            await #expect(throws: PromotionalOfferError.missingParameters("no offer identifier")) {
                try await queue.add(emptyOffer)
            }
            #expect(try queue.ledger.allTransactions() == before)
            #expect(PromotionalOfferError.invalidSignature("x").code == .invalidSignature)
            #expect(PromotionalOfferError.ineligible(productID: "p").code == .ineligibleForOffer)
            #expect(PromotionalOfferError.unknownOffer(productID: "p", offerID: "o").code == .invalidOfferIdentifier)
            #expect(PromotionalOfferError.missingParameters("x").code == .missingOfferParams)
        }
    }

    static let notSigned =
        "it does not sign this payment's bundle id (com.example.app), key, product, offer, account, nonce and timestamp"

    @Test func aNonceIsAcceptedOnceEvenWhenItsPurchaseFailed() async throws {
        try await withPromotionalStore { queue, session, key in
            try await queue.add(Payment(productID: "plus.monthly"))
            try await session.expireSubscription("plus.monthly")
            let nonce = UUID()
            var failing = try signedPayment("plus.monthly", offer: "comeback", key: key, nonce: nonce)
            failing.simulatedOutcome = .failed(.unknown)
            let failed = try await queue.add(failing)
            #expect(failed.state == .failed)
            await #expect(
                throws: PromotionalOfferError.invalidSignature(
                    "its nonce was used already, by transaction \(failed.id)")
            ) {
                try await queue.add(try signedPayment("plus.monthly", offer: "comeback", key: key, nonce: nonce))
            }
            // A retry of the same payment (its idempotency key) is not a second use.
            var keyed = try signedPayment("plus.monthly", offer: "comeback", key: key)
            keyed.idempotencyKey = "retry-me"
            let first = try await queue.add(keyed)
            let again = try await queue.add(keyed)
            #expect(first.id == again.id && first.state == .purchased)
        }
    }

    @Test func theSignatureSignsTheApplicationUsernameAndTheStoresBundleID() async throws {
        try await withPromotionalStore { queue, session, key in
            try await queue.add(Payment(productID: "plus.monthly"))
            try await session.expireSubscription("plus.monthly")
            try session.set(.bundleID, to: "org.example.garden")
            let nonce = UUID()
            let payload = OfferSignaturePayload(
                bundleID: "org.example.garden", keyID: key.id, productID: "plus.monthly", offerID: "comeback",
                account: "Player-42", nonce: nonce, timestamp: 1_800_000_000_000)
            // Apple's payload: the fields joined by U+2063, account and nonce in lowercase.
            let expected = [
                "org.example.garden", "K1", "plus.monthly", "comeback", "player-42", nonce.uuidString.lowercased(),
                "1800000000000",
            ]
            #expect(payload.bytes == Data(expected.joined(separator: "\u{2063}").utf8))
            var payment = Payment(productID: "plus.monthly", applicationUsername: "Player-42")
            payment.discount = PaymentDiscount(
                offerID: "comeback",
                signature: OfferSignature(
                    keyID: "K1", nonce: nonce, timestamp: 1_800_000_000_000, signature: try key.signature(for: payload))
            )
            let redeemed = try await queue.add(payment)
            #expect(redeemed.offer?.id == "comeback" && redeemed.applicationUsername == "Player-42")
        }
    }

    @Test func aStoreWithoutAKeyRefusesSignedOffersAndTakesUnsignedOnesFromATestSession() async throws {
        try await withTemporaryDirectory { directory in
            let file = directory + "/offers.storekit"
            try write(promotionalCatalog(key: nil), to: file)
            let ledger = try Ledger.open(
                at: directory + "/l.sqlite", mode: .createIfMissing, configuration: StoreFixture.configuration)
            try ProductCatalog(ledger: ledger).importConfigurations(at: [file])
            #expect(try ledger.subscriptionOffersKey() == nil)
            let queue = try PaymentQueue(ledger: ledger)
            try await queue.add(Payment(productID: "plus.monthly"))
            try await StoreTestSession(queue: queue).expireSubscription("plus.monthly")
            let key = try SubscriptionOffersKey(generatingWithID: "K1")
            await #expect(
                throws: PromotionalOfferError.invalidSignature(
                    "the store has no subscription offers key (a StoreKit configuration file's subscriptionOffersKeyPair)"
                )
            ) {
                try await queue.add(try signedPayment("plus.monthly", offer: "comeback", key: key))
            }
            var unsigned = Payment(productID: "plus.monthly")
            unsigned.discount = PaymentDiscount(offerID: "comeback", signature: nil)
            #expect(try await queue.add(unsigned).offer?.id == "comeback")
        }
    }

    /// A signature is good for 24 hours either side of the store's clock, wherever the clock has
    /// been moved to.
    @Test(arguments: [UInt64(1), 2, 3, 4, 5])
    func signaturesAreGoodFor24HoursAroundTheStoresClock(seed: UInt64) async throws {
        var random = SplitMix(seed: seed)
        try await withPromotionalStore { queue, session, key in
            try await queue.add(Payment(productID: "plus.monthly"))
            try await session.expireSubscription("plus.monthly")
            try session.update { $0.timeRate = .oneSecondIsOneDay }
            for _ in 0..<12 {
                _ = try await session.advanceClock(by: Double(random.next() % 200_000))
                let now = try queue.ledger.storeDate()
                let nowMilliseconds = Int64((now.timeIntervalSince1970 * 1000).rounded())
                // Offsets around the boundary, and anywhere within a few days.
                let offset: Int64 =
                    switch random.next() % 3 {
                    case 0: Ledger.offerSignatureLifetime + Int64(random.next() % 3) - 1
                    case 1: -Ledger.offerSignatureLifetime - Int64(random.next() % 3) + 1
                    default: Int64(random.next() % (4 * 86_400_000)) - 2 * 86_400_000
                    }
                let signedAt = Date(timeIntervalSince1970: Double(nowMilliseconds + offset) / 1000)
                var payment = try signedPayment("plus.monthly", offer: "comeback", key: key, timestamp: signedAt)
                payment.simulatedOutcome = .failed(.unknown)  // keeps the customer lapsed
                if abs(offset) <= Ledger.offerSignatureLifetime {
                    #expect(try await queue.add(payment).state == .failed, "seed \(seed), offset \(offset)")
                } else {
                    await #expect(throws: PromotionalOfferError.self, "seed \(seed), offset \(offset)") {
                        try await queue.add(payment)
                    }
                }
            }
            #expect(try queue.ledger.verify() == [])
        }
    }

    @Test func aConfigurationFilesKeyIsCheckedAtImportAndReplacesTheStoresKey() async throws {
        try await withTemporaryDirectory { directory in
            let bad = directory + "/bad.storekit"
            try write(
                promotionalCatalog(key: nil).replacingOccurrences(
                    of: #""version""#,
                    with: #""subscriptionOffersKeyPair": {"id": "K9", "privateKey": "bm90IGEga2V5"}, "version""#),
                to: bad)
            #expect(
                throws: CatalogError.invalidValue(
                    path: bad, keyPath: "subscriptionOffersKeyPair.privateKey",
                    expected: "a base64 PKCS #8 ECDSA P-256 private key", found: "a string")
            ) {
                try StoreKitConfiguration(contentsOf: bad)
            }
            let ledger = try Ledger.open(at: directory + "/l.sqlite", mode: .createIfMissing)
            for name in ["first", "second"] {
                let key = try SubscriptionOffersKey(generatingWithID: name)
                let file = directory + "/\(name).storekit"
                try write(promotionalCatalog(key: key), to: file)
                try ProductCatalog(ledger: ledger).importConfigurations(at: [file])
                #expect(try ledger.subscriptionOffersKey()?.privateKeyBase64 == key.privateKeyBase64)
            }
            #expect(try ledger.subscriptionOffersKey()?.id == "second")
        }
    }
}

/// A payment redeeming `offerID` with the 2025 form of the signature: a compact JWS signed with
/// `key`, its claims as Apple's `PromotionalOfferV2SignatureCreator` writes them; `change`
/// edits them first.
private func jwsPayment(
    _ productID: String, offer offerID: String, key: SubscriptionOffersKey,
    change: (inout [String: Any]) -> Void = { _ in }
) throws -> Payment {
    var claims: [String: Any] = [
        "aud": "promotional-offer", "bid": Ledger.defaultBundleID, "iss": "issuer-1",
        "iat": Int64(storeEpoch.timeIntervalSince1970), "nonce": UUID().uuidString.lowercased(),
        "productId": productID, "offerIdentifier": offerID,
    ]
    change(&claims)
    var payment = Payment(productID: productID)
    payment.discount = PaymentDiscount(offerID: offerID, compactJWS: try key.compactJWS(claims: claims))
    return payment
}

/// Promotional offers signed as a JWS (StoreKit's `promotionalOffer(_:compactJWS:)`).
@Suite struct PromotionalOfferJWSTests {
    static func payment(jws: String) -> Payment {
        var payment = Payment(productID: "plus.monthly")
        payment.discount = PaymentDiscount(offerID: "comeback", compactJWS: jws)
        return payment
    }

    @Test func aJWSSignedOfferIsRedeemedOnceByItsNonce() async throws {
        try await withPromotionalStore { queue, session, key in
            let first = try await queue.add(Payment(productID: "plus.monthly"))
            try await session.expireSubscription("plus.monthly")
            let payment = try jwsPayment("plus.monthly", offer: "comeback", key: key) {
                $0["transactionId"] = String(first.id)
            }
            let redeemed = try await queue.add(payment)
            #expect(redeemed.state == .purchased && redeemed.offer?.id == "comeback")
            try await session.expireSubscription("plus.monthly")
            await #expect(throws: PromotionalOfferError.self) { try await queue.add(payment) }
            let again = await #expect(throws: PromotionalOfferError.self) { try await queue.add(payment) }
            #expect("\(again!)".contains("its nonce was used already, by transaction \(redeemed.id)"))
        }
    }

    @Test func whatTheStoreCannotCheckIsRefusedAndWritesNothing() async throws {
        try await withPromotionalStore { queue, session, key in
            let first = try await queue.add(Payment(productID: "plus.monthly"))
            try await session.expireSubscription("plus.monthly")
            let other = try SubscriptionOffersKey(generatingWithID: "K1")
            let cases: [(Payment, String)] = [
                (
                    try jwsPayment("plus.monthly", offer: "comeback", key: key) { $0["aud"] = "appstoreconnect-v1" },
                    "has aud \"appstoreconnect-v1\", not \"promotional-offer\""
                ),
                (
                    try jwsPayment("plus.monthly", offer: "comeback", key: key) { $0["bid"] = "com.example.other" },
                    "has bid \"com.example.other\""
                ),
                (
                    try jwsPayment("plus.monthly", offer: "comeback", key: key) { $0["productId"] = "plus.yearly" },
                    "has productId \"plus.yearly\""
                ),
                (
                    try jwsPayment("plus.monthly", offer: "comeback", key: key) {
                        $0["offerIdentifier"] = "three.free"
                    },
                    "has offerIdentifier \"three.free\""
                ),
                (
                    try jwsPayment("plus.monthly", offer: "comeback", key: key) {
                        $0["iat"] = Int64(storeEpoch.timeIntervalSince1970) - 25 * 3_600
                    }, "more than 24 hours from the store's clock"
                ),
                (try jwsPayment("plus.monthly", offer: "comeback", key: key) { $0["nonce"] = nil }, "has no nonce"),
                (
                    try jwsPayment("plus.monthly", offer: "comeback", key: key) { $0["transactionId"] = "424242" },
                    "names transaction 424242, which is not this customer's"
                ),
                (try jwsPayment("plus.monthly", offer: "comeback", key: other), "is not signed by the store's key"),
                (
                    try jwsPayment(
                        "plus.monthly", offer: "comeback", key: try SubscriptionOffersKey(generatingWithID: "K7")),
                    "unknown key \"K7\""
                ),
            ]
            for (payment, reason) in cases {
                let error = await #expect(throws: PromotionalOfferError.self) { try await queue.add(payment) }
                #expect(error.map { "\($0)".contains(reason) } == true, "\(String(describing: error)) / \(reason)")
            }
            // A payload changed after signing, and what is not a JWS at all.
            var tampered = try jwsPayment("plus.monthly", offer: "comeback", key: key)
            let parts = tampered.discount!.compactJWS!.split(separator: ".").map(String.init)
            let forged = try jwsPayment("plus.monthly", offer: "three.free", key: key).discount!.compactJWS!
                .split(separator: ".")[1]
            tampered.discount = PaymentDiscount(
                offerID: "three.free", compactJWS: [parts[0], String(forged), parts[2]].joined(separator: "."))
            for (payment, reason) in [
                (tampered, "is not signed by the store's key"),
                (Self.payment(jws: "a.b"), "is not a compact JWS of JSON objects"),
                (Self.payment(jws: String(repeating: "a", count: 9_000)), "is over 8192 bytes"),
            ] {
                let error = await #expect(throws: PromotionalOfferError.self) { try await queue.add(payment) }
                #expect(error.map { "\($0)".contains(reason) } == true, "\(String(describing: error)) / \(reason)")
            }
            #expect(try queue.ledger.allTransactions().map(\.id) == [first.id], "nothing written")
        }
    }
}

/// A payment with the app's server's say on the introductory offer: a compact JWS signed with
/// `key`, its claims as Apple's `IntroductoryOfferEligibilitySignatureCreator` writes them;
/// `change` edits them first.
private func eligibilityPayment(
    _ productID: String, key: SubscriptionOffersKey, allow: Bool, transactionID: String,
    change: (inout [String: Any]) -> Void = { _ in }
) throws -> Payment {
    var claims: [String: Any] = [
        "aud": "introductory-offer-eligibility", "bid": Ledger.defaultBundleID, "iss": "issuer-1",
        "iat": Int64(storeEpoch.timeIntervalSince1970), "nonce": UUID().uuidString.lowercased(),
        "productId": productID, "allowIntroductoryOffer": allow, "transactionId": transactionID,
    ]
    change(&claims)
    var payment = Payment(productID: productID)
    payment.introductoryOfferEligibility = try key.compactJWS(claims: claims)
    return payment
}

/// The app's server gives or withholds the introductory offer
/// (StoreKit's `introductoryOfferEligibility(compactJWS:)`).
@Suite struct IntroductoryOfferEligibilityJWSTests {
    @Test func theServerWithholdsItFromANewSubscriberAndGivesItToALapsedOne() async throws {
        try await withPromotionalStore { queue, session, key in
            let app = try queue.ledger.appTransactionID()
            let withheld = try await queue.add(
                try eligibilityPayment("plus.monthly", key: key, allow: false, transactionID: app))
            #expect(withheld.state == .purchased && withheld.offer == nil)
            #expect(withheld.expirationDate == (try months(1, after: withheld.purchaseDate)), "a month, no free week")
            try await session.expireSubscription("plus.monthly")
            let given = try await queue.add(
                try eligibilityPayment("plus.monthly", key: key, allow: true, transactionID: String(withheld.id)))
            #expect(given.offer?.type == .introductory && given.offer?.paymentMode == .freeTrial)
            #expect(given.expirationDate == given.purchaseDate.addingTimeInterval(7 * 86_400), "the free week again")
        }
    }

    /// A back-dated purchase is refused when renewing it up to now would make more renewals
    /// than one clock move may; they are counted as its charge will make them, without the free
    /// week when the app's server withholds it (counted with the week before the server's answer
    /// was read, one renewal too many was refused).
    @Test func aBackdatedPurchaseCountsItsRenewalsAsTheServerDecides() async throws {
        var configuration = StoreFixture.configuration
        configuration.renewalLimit = 2
        try await withPromotionalStore(configuration: configuration) { queue, _, key in
            var payment = try eligibilityPayment(
                "plus.monthly", key: key, allow: false, transactionID: try queue.ledger.appTransactionID())
            // 75 days: two monthly renewals; with a free week first, three.
            payment.backdating = BackdatedPurchase(date: storeEpoch.addingTimeInterval(-75 * 86_400), renews: true)
            let bought = try await queue.add(payment)
            let aMonth = try months(1, after: bought.purchaseDate)
            #expect(bought.offer == nil && bought.expirationDate == aMonth, "a month, no free week")
            #expect(try await queue.processSubscriptionRenewals().count == 2)
        }
    }

    @Test func whatTheStoreCannotCheckIsRefusedAndWritesNothing() async throws {
        try await withPromotionalStore { queue, session, key in
            let app = try queue.ledger.appTransactionID()
            let reused = try eligibilityPayment("plus.monthly", key: key, allow: true, transactionID: app)
            let first = try await queue.add(reused)
            try await session.expireSubscription("plus.monthly")
            let cases: [(Payment, String)] = [
                (reused, "its nonce was used already"),
                (
                    try eligibilityPayment("plus.monthly", key: key, allow: true, transactionID: app) {
                        $0["aud"] = "promotional-offer"
                    }, "has aud \"promotional-offer\", not \"introductory-offer-eligibility\""
                ),
                (
                    try eligibilityPayment("plus.monthly", key: key, allow: true, transactionID: app) {
                        $0["allowIntroductoryOffer"] = nil
                    }, "has no allowIntroductoryOffer"
                ),
                (
                    try eligibilityPayment("plus.monthly", key: key, allow: true, transactionID: app) {
                        $0["transactionId"] = nil
                    }, "has no transactionId"
                ),
                (
                    try eligibilityPayment("plus.monthly", key: key, allow: true, transactionID: "424242"),
                    "names transaction 424242, which is not this customer's"
                ),
                (
                    try eligibilityPayment("plus.yearly", key: key, allow: true, transactionID: app) {
                        $0["productId"] = "plus.monthly"
                    }, "has productId \"plus.monthly\", not \"plus.yearly\""
                ),
            ]
            for (payment, reason) in cases {
                let error = await #expect(throws: PromotionalOfferError.self) { try await queue.add(payment) }
                #expect(error.map { "\($0)".contains(reason) } == true, "\(String(describing: error)) / \(reason)")
            }
            #expect(try queue.ledger.allTransactions().map(\.id) == [first.id], "nothing written")
        }
    }
}
