import Foundation
import LedgerTestSupport
import LedgerTesting
import StoreLedger
import StoreTesting
import Testing

/// Renewal info tells the next renewal (Apple's `JWSRenewalInfoDecodedPayload`): its
/// `renewalPrice` is what that renewal charges, an offer pending included; `expirationIntent`
/// is there during billing retry, as Apple's payloads show; a notification's `data` names the
/// app's version (`bundleVersion`).
@Suite struct RenewalInfoTests {
    static let day: TimeInterval = 86_400

    static func payload(_ jws: JWS) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: jws.payload) as? [String: Any])
    }

    static func renewalInfo(_ ledger: Ledger) throws -> [String: Any] {
        try payload(try #require(try ledger.signedRenewalInfo(forProduct: SampleCatalog.subscription)))
    }

    /// An offer code redeemed by a current subscriber (LOYALTY: 2.99 a month for 3 months) is
    /// charged from the next renewal: the renewal info says 2.99, then the catalog's 4.99 once its
    /// periods are over.
    @Test func theRenewalPriceIsTheOfferPendingsWhenOneIs() async throws {
        try await StoreFixture.with { store in
            _ = try await store.buy(SampleCatalog.subscription)
            #expect(try Self.renewalInfo(store.ledger)["renewalPrice"] as? Int == 4_990)
            var loyalty = Payment(productID: SampleCatalog.subscription)
            loyalty.codeOffer = "LOYALTY"
            _ = try await store.session.buyProduct(loyalty)
            let status = try #require(try store.ledger.subscriptionStatus(forProduct: SampleCatalog.subscription))
            #expect(status.renewalOffer?.id == "LOYALTY" && status.renewalPrice == Decimal(string: "2.99"))
            let info = try Self.renewalInfo(store.ledger)
            #expect(info["renewalPrice"] as? Int == 2_990 && info["offerIdentifier"] as? String == "LOYALTY")
            _ = try await store.session.advanceClock(by: 4 * 31 * Self.day)  // the offer's three periods
            #expect(try Self.renewalInfo(store.ledger)["renewalPrice"] as? Int == 4_990)
        }
    }

    /// In billing retry (with or without a grace period), `expirationIntent` is 2 (a billing
    /// error) beside `isInBillingRetryPeriod`; renewed again, it is gone.
    @Test(arguments: [false, true])
    func expirationIntentIsThereDuringBillingRetry(grace: Bool) async throws {
        try await StoreFixture.with { store in
            try store.session.update {
                $0.billingRetryOnRenewal = true
                $0.billingGracePeriodEnabled = grace
            }
            let bought = try await store.buy(SampleCatalog.subscription)
            #expect(try Self.renewalInfo(store.ledger)["expirationIntent"] == nil)
            _ = try await store.session.advanceClock(by: 31 * Self.day)
            let info = try Self.renewalInfo(store.ledger)
            #expect(info["isInBillingRetryPeriod"] as? Bool == true && info["expirationIntent"] as? Int == 2)
            _ = try await store.session.resolveIssueForTransaction(bought.id)
            #expect(try Self.renewalInfo(store.ledger)["expirationIntent"] == nil)
        }
    }

    @Test func aNotificationsDataNamesTheAppsVersion() async throws {
        try await StoreFixture.with { store in
            _ = try store.session.set(.notificationURL, to: "http://127.0.0.1:9/n")
            try store.session.update { $0.appVersion = "2.4.1" }
            _ = try await store.buy(SampleCatalog.consumable)
            let notified = try Self.payload(
                try JWS(compactSerialization: try #require(try store.ledger.notifications().last).signedPayload))
            #expect((notified["data"] as? [String: Any])?["bundleVersion"] as? String == "2.4.1")
        }
    }
}
