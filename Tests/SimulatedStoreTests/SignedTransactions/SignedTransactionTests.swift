import Foundation
import LedgerTestSupport
import LedgerTesting
import StoreLedger
import StoreTesting
import Testing

/// Transactions and renewal info signed as the App Store signs them (`Ledger.signedTransaction`,
/// `signedRenewalInfo`), and `JWS.verify` against a ledger's root.
@Suite struct SignedTransactionTests {
    /// The payload of a JWS as a dictionary.
    private func fields(_ jws: JWS) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: jws.payload) as? [String: Any])
    }

    @Test func aPurchaseIsSignedWithApplesFieldsAndVerifiesAgainstItsOwnRoot() async throws {
        try await StoreFixture.with { store in
            let account = UUID()
            let bought = try await store.buy(SampleCatalog.nonConsumable, account: account)
            let jws = try store.ledger.signedTransaction(bought.id)
            let payload = try fields(jws)
            #expect(payload["transactionId"] as? String == String(bought.id))
            #expect(payload["originalTransactionId"] as? String == String(bought.id))
            #expect(payload["bundleId"] as? String == Ledger.defaultBundleID)
            #expect(payload["productId"] as? String == SampleCatalog.nonConsumable)
            #expect(payload["type"] as? String == "Non-Consumable")
            #expect(payload["purchaseDate"] as? Int64 == storeEpoch.ms)
            #expect(payload["signedDate"] as? Int64 == bought.updatedAt.ms)
            #expect(payload["quantity"] as? Int == 1)
            #expect(payload["price"] as? Int == 990 && payload["currency"] as? String == "USD")
            #expect(payload["environment"] as? String == "Xcode" && payload["storefront"] as? String == "USA")
            #expect(payload["transactionReason"] as? String == "PURCHASE")
            #expect(payload["inAppOwnershipType"] as? String == "PURCHASED")
            #expect(payload["appAccountToken"] as? String == account.uuidString.lowercased())
            #expect(payload["expiresDate"] == nil && payload["revocationDate"] == nil && payload["isUpgraded"] == nil)
            #expect(payload["revocationType"] == nil && payload["webOrderLineItemId"] == nil, "not a subscription")
            let customer = try #require(payload["appTransactionId"] as? String)
            #expect(!customer.isEmpty && customer.allSatisfy(\.isNumber))
            let other = try await store.buy(SampleCatalog.consumable)
            #expect(try fields(try store.ledger.signedTransaction(other.id))["appTransactionId"] as? String == customer)
            let header = try #require(try JSONSerialization.jsonObject(with: jws.header) as? [String: Any])
            let certificates = try store.ledger.signingCertificates()
            #expect(header["alg"] as? String == "ES256")
            #expect(header["x5c"] as? [String] == certificates.chain.map { Data($0).base64EncodedString() })
            #expect(jws.signature.count == 64)
            // Read back from its text (checked whole, signature included), it gives the same parts.
            let read = try JWS(compactSerialization: jws.compactSerialization)
            try read.verify(trustingRoot: certificates.root)
            #expect(read.header == jws.header && read.payload == jws.payload && read.signature == jws.signature)
        }
    }

    @Test func subscriptionsRefundsAndSettingsShowInThePayload() async throws {
        try await StoreFixture.with { store in
            try store.session.set(.bundleID, to: "com.example.shop")
            try store.session.set(.environment, to: "Sandbox")
            try store.session.set(.storefront, to: "FRA")
            let period = try await store.buy(SampleCatalog.subscription)
            let payload = try fields(try store.ledger.signedTransaction(period.id))
            #expect(payload["type"] as? String == "Auto-Renewable Subscription")
            #expect(payload["subscriptionGroupIdentifier"] as? String == "pro")
            #expect(payload["expiresDate"] as? Int64 == period.expirationDate?.ms)
            #expect(payload["transactionReason"] as? String == "PURCHASE")
            #expect(
                payload["bundleId"] as? String == "com.example.shop" && payload["environment"] as? String == "Sandbox")
            #expect(payload["storefront"] as? String == "FRA" && payload["currency"] as? String == "EUR")
            #expect(payload["price"] as? Int == 4990)

            // A renewal says so; its renewal info names the next renewal and its price.
            let renewal = try await store.session.forceRenewalOfSubscription(SampleCatalog.subscription)
            let renewed = try fields(try store.ledger.signedTransaction(renewal.id))
            #expect(renewed["transactionReason"] as? String == "RENEWAL")
            #expect(payload["webOrderLineItemId"] as? String == String(period.id))
            #expect(renewed["webOrderLineItemId"] as? String == String(renewal.id), "each period its own")
            #expect(renewed["originalTransactionId"] as? String == String(period.id))
            let info = try #require(try store.ledger.signedRenewalInfo(forProduct: SampleCatalog.subscription))
            let renewalPayload = try fields(info)
            #expect(renewalPayload["originalTransactionId"] as? String == String(period.id))
            #expect(renewalPayload["autoRenewProductId"] as? String == SampleCatalog.subscription)
            #expect(renewalPayload["autoRenewStatus"] as? Int == 1)
            #expect(renewalPayload["renewalDate"] as? Int64 == renewal.expirationDate?.ms)
            #expect(renewalPayload["renewalPrice"] as? Int == 4990 && renewalPayload["currency"] as? String == "EUR")
            #expect(renewalPayload["environment"] as? String == "Sandbox")
            try JWS(compactSerialization: info.compactSerialization)
                .verify(trustingRoot: try store.ledger.signingCertificates().root)
            try await store.session.setAutoRenew(false, for: SampleCatalog.subscription)
            #expect(
                try fields(try #require(try store.ledger.signedRenewalInfo(forProduct: SampleCatalog.subscription)))[
                    "autoRenewStatus"] as? Int == 0)

            // A refund dates the revocation and gives its reason.
            _ = try await store.session.advanceClock(by: day)
            let refunded = try await store.session.refundTransaction(renewal.id, reason: .developerIssue)
            let revoked = try fields(try store.ledger.signedTransaction(renewal.id))
            #expect(
                revoked["revocationDate"] as? Int64 == refunded.revocationDate?.ms && refunded.revocationDate != nil)
            #expect(revoked["revocationReason"] as? Int == 1)
            #expect(revoked["revocationType"] as? String == "REFUND_FULL")
            #expect(revoked["signedDate"] as? Int64 == refunded.updatedAt.ms)
            // same group
            #expect(try store.ledger.signedRenewalInfo(forProduct: SampleCatalog.basicSubscription) != nil)
        }
    }

    /// `recentSubscriptionStartDate`: the start of the run of periods reaching the latest one
    /// with no gap over 60 days.
    @Test func renewalInfoDatesTheSubscribersRecentRun() async throws {
        try await StoreFixture.with { store in
            func recentStart() throws -> Int64? {
                let info = try #require(try store.ledger.signedRenewalInfo(forProduct: SampleCatalog.subscription))
                return try fields(info)["recentSubscriptionStartDate"] as? Int64
            }
            let first = try await store.buy(SampleCatalog.subscription)
            #expect(try recentStart() == first.purchaseDate.ms)
            _ = try await store.session.advanceClock(by: 65 * day)  // two renewals: the same run
            #expect(try recentStart() == first.purchaseDate.ms)
            _ = try await store.session.expireSubscription(SampleCatalog.subscription)
            _ = try await store.session.advanceClock(by: 30 * day)
            _ = try await store.buy(SampleCatalog.subscription)  // a gap of 30 days: still one run
            #expect(try recentStart() == first.purchaseDate.ms)
            _ = try await store.session.expireSubscription(SampleCatalog.subscription)
            _ = try await store.session.advanceClock(by: 61 * day)
            let back = try await store.buy(SampleCatalog.subscription)  // over 60 days: a new run
            #expect(try recentStart() == back.purchaseDate.ms)
        }
    }

    @Test func onlyPurchasedAndRestoredTransactionsAreSigned() async throws {
        try await StoreFixture.with { store in
            let deferred = try await store.buy(SampleCatalog.nonConsumable, outcome: .deferred)
            #expect(throws: StoreControlError.notSigned(deferred.id, state: .deferred)) {
                try store.ledger.signedTransaction(deferred.id)
            }
            let failed = try await store.buy(SampleCatalog.consumable, outcome: .failed(.paymentCancelled))
            #expect(throws: StoreControlError.notSigned(failed.id, state: .failed)) {
                try store.ledger.signedTransactions([failed])
            }
            #expect(
                "\(StoreControlError.notSigned(failed.id, state: .failed))"
                    == "transaction \(failed.id) is failed: only purchased and restored transactions are signed")
            #expect(throws: PaymentQueueError.unknownTransaction(999)) { try store.ledger.signedTransaction(999) }
            #expect(try store.ledger.signedRenewalInfo(forProduct: SampleCatalog.subscription) == nil)  // never bought
            #expect(throws: StoreControlError.notAutoRenewable(SampleCatalog.nonConsumable)) {
                try store.ledger.signedRenewalInfo(forProduct: SampleCatalog.nonConsumable)
            }
        }
    }

    @Test func verificationFailsForAnotherRootATamperedPayloadABadSignatureAndAnExpiredLeaf() async throws {
        try await StoreFixture.with { store in
            let bought = try await store.buy(SampleCatalog.nonConsumable)
            let jws = try store.ledger.signedTransaction(bought.id)
            let root = try store.ledger.signingCertificates().root
            let otherRoot = try await withTemporaryLedger { other in try other.signingCertificates().root }
            #expect(throws: JWSVerificationError.self) { try jws.verify(trustingRoot: otherRoot) }
            #expect(kind { try jws.verify(trustingRoot: otherRoot) } == .invalidCertificateChain)

            // The payload changed after signing: the price halved.
            let parts = jws.compactSerialization.split(separator: ".").map(String.init)
            let cheaper = String(decoding: jws.payload, as: UTF8.self).replacingOccurrences(
                of: "\"price\":990", with: "\"price\":495")
            let tampered = try JWS(
                compactSerialization: [parts[0], JWS.base64URL(Data(cheaper.utf8)), parts[2]].joined(separator: "."))
            #expect(kind { try tampered.verify(trustingRoot: root) } == .invalidSignature)

            // Tampered into a date outside the chain's validity: still a bad signature, as the
            // dates of an unverified payload are not trusted.
            let future = String(decoding: jws.payload, as: UTF8.self).replacingOccurrences(
                of: "\"signedDate\":\(bought.updatedAt.ms)", with: "\"signedDate\":7258118400000")
            #expect(future != String(decoding: jws.payload, as: UTF8.self))
            let postdated = try JWS(
                compactSerialization: [parts[0], JWS.base64URL(Data(future.utf8)), parts[2]].joined(separator: "."))
            #expect(kind { try postdated.verify(trustingRoot: root) } == .invalidSignature)

            // A chain of the root three times: signed all along, but its "intermediate" is not a
            // signing authority of path length 0.
            let certificates = try store.ledger.signingCertificates()
            let rootOnly = try JSONSerialization.data(withJSONObject: [
                "alg": "ES256", "x5c": Array(repeating: Data(certificates.root).base64EncodedString(), count: 3),
            ])
            let rootChain = try JWS(
                compactSerialization: [JWS.base64URL(rootOnly), parts[1], parts[2]].joined(separator: "."))
            #expect(kind { try rootChain.verify(trustingRoot: root) } == .invalidCertificateChain)
            let twoCertificates = try JSONSerialization.data(withJSONObject: [
                "alg": "ES256", "x5c": certificates.chain.prefix(2).map { Data($0).base64EncodedString() },
            ])
            let short = try JWS(
                compactSerialization: [JWS.base64URL(twoCertificates), parts[1], parts[2]].joined(separator: "."))
            #expect(kind { try short.verify(trustingRoot: root) } == .invalidEncoding)

            // The store's test control signs badly.
            try store.session.set(.invalidSignatures, to: "true")
            let bad = try store.ledger.signedTransaction(bought.id)
            #expect(bad.payload == jws.payload)
            #expect(kind { try bad.verify(trustingRoot: root) } == .invalidSignature)
            try store.session.set(.invalidSignatures, to: "false")

            // Signed after the leaf expired (20 years after the ledger made it).
            _ = try await store.session.advanceClock(by: 21 * 365.25 * day)
            let late = try await store.buy(SampleCatalog.nonConsumable2)
            let expired = try store.ledger.signedTransaction(late.id)
            #expect(kind { try expired.verify(trustingRoot: root) } == .invalidCertificateChain)
        }
    }

    /// A store verifies many values signed by one chain: `VerifiedChains` checks the chain once,
    /// and still checks every value's signature and dates; another root's chain is refused and
    /// not kept.
    @Test func aChainIsCheckedOnceAndEverySignatureAndDateStill() async throws {
        try await StoreFixture.with { store in
            let root = try store.ledger.signingCertificates().root
            let chains = VerifiedChains(root: root)
            var bought: [PaymentTransaction] = []
            for product in [SampleCatalog.nonConsumable, SampleCatalog.nonConsumable2, SampleCatalog.consumable] {
                bought.append(try await store.buy(product))
            }
            for jws in try store.ledger.signedTransactions(bought) {
                #expect(kind { try jws.verify(with: chains) } == nil)
            }
            #expect(chains.count == 1)
            let other = try await withTemporaryLedger { other in
                _ = try other.saveProducts([Product(id: "p", type: .consumable, price: 1)])
                return try other.signingCertificates().root
            }
            #expect(
                kind { try store.ledger.signedTransaction(bought[0].id).verify(with: VerifiedChains(root: other)) }
                    == .invalidCertificateChain)

            // With the chain known, a changed payload and the store's bad signatures still fail.
            let jws = try store.ledger.signedTransaction(bought[0].id)
            let parts = jws.compactSerialization.split(separator: ".").map(String.init)
            let changed = String(decoding: jws.payload, as: UTF8.self).replacingOccurrences(
                of: "\"quantity\":1", with: "\"quantity\":2")
            let tampered = try JWS(
                compactSerialization: [parts[0], JWS.base64URL(Data(changed.utf8)), parts[2]].joined(separator: "."))
            #expect(kind { try tampered.verify(with: chains) } == .invalidSignature)
            try store.session.set(.invalidSignatures, to: "true")
            #expect(kind { try store.ledger.signedTransaction(bought[0].id).verify(with: chains) } == .invalidSignature)
            try store.session.set(.invalidSignatures, to: "false")
            // And the dates: signed after the leaf expired.
            _ = try await store.session.advanceClock(by: 21 * 365.25 * day)
            let late = try await store.buy(SampleCatalog.nonConsumable2)
            #expect(
                kind { try store.ledger.signedTransaction(late.id).verify(with: chains) } == .invalidCertificateChain)
            #expect(chains.count == 1)
        }
    }

    /// Seeded: a JWS with any of its characters changed, cut or extended never verifies, and
    /// is refused with a reason, never a crash. (Seed 3 changes the last character of the
    /// signature into one that differs only in bits base64 leaves unused: it verified until
    /// parts had to be spelled canonically.)
    @Test(arguments: [1, 2, 3] as [UInt64])
    func noAlteredJWSVerifies(seed: UInt64) async throws {
        try await StoreFixture.with { store in
            let bought = try await store.buy(SampleCatalog.nonConsumable)
            let jws = try store.ledger.signedTransaction(bought.id).compactSerialization
            let root = try store.ledger.signingCertificates().root
            var random = SplitMix64(seed: seed)
            let alphabet = Array("ABCabc0189-_.=+/ ")
            for _ in 0..<300 {
                var text = Array(jws)
                switch Int.random(in: 0..<3, using: &random) {
                case 0:
                    let at = Int.random(in: 0..<text.count, using: &random)
                    let replacement = alphabet.randomElement(using: &random)!
                    if text[at] == replacement { continue }
                    text[at] = replacement
                case 1: text.removeLast(Int.random(in: 1...text.count, using: &random))
                default:
                    text.insert(
                        alphabet.randomElement(using: &random)!, at: Int.random(in: 0...text.count, using: &random))
                }
                let altered = String(text)
                if altered == jws { continue }
                let failure = kind { try JWS(compactSerialization: altered).verify(trustingRoot: root) }
                #expect(failure != nil, "verified: \(altered)")
            }
        }
    }

    @Test(arguments: [4, 5] as [UInt64])
    func pricesBecomeMilliunitsExactly(seed: UInt64) async throws {
        // Prices of up to 6 integer digits and 2 decimals, as a catalog has them: the payload's
        // milliunits are the price's digits followed by a zero.
        var random = SplitMix64(seed: seed)
        for _ in 0..<2_000 {
            let cents = Int64.random(in: 0...99_999_999, using: &random)
            let text = "\(cents / 100).\(String(format: "%02d", cents % 100))"
            #expect(Decimal(string: text)!.milliunits == cents * 10, "\(text)")
        }
    }

    private func kind(_ body: () throws -> Void) -> JWSVerificationError.Kind? {
        do {
            try body()
            return nil
        } catch let error as JWSVerificationError {
            return error.kind
        } catch {
            Issue.record("unexpected \(error)")
            return nil
        }
    }
}

extension Date {
    /// Milliseconds since 1970, as the payloads give dates.
    fileprivate var ms: Int64 { Int64((timeIntervalSince1970 * 1000).rounded()) }
}
