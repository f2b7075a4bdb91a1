import Crypto
import Foundation
import LedgerTestSupport
import LedgerTesting
import StoreLedger
import StoreTesting
import Testing

@testable import AppStoreServer

/// Get All Subscription Statuses: Apple's status codes through a subscription's life, its
/// latest transaction and renewal info signed, the `status` filter.
@Suite struct StatusEndpointTests {
    let maker = TokenMaker()
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let day: TimeInterval = 86_400

    /// The statuses of the group `pro` as the endpoint reports them: (status, original id,
    /// renewal info's auto-renew product).
    static func statuses(
        _ api: AppStoreServerAPI, id: UInt64, token: String, query: String? = nil
    ) throws -> [(status: Int, original: String, autoRenewProduct: String?)] {
        let response = api.respond(
            to: APIRequest(method: "GET", path: "/inApps/v1/subscriptions/\(id)", query: query, authorization: token))
        guard response.status == 200, let json = response.json,
            let body = try JSONSerialization.jsonObject(with: json) as? [String: Any],
            let data = body["data"] as? [[String: Any]]
        else { return [] }
        return try data.flatMap { group -> [(Int, String, String?)] in
            #expect(group["subscriptionGroupIdentifier"] as? String == "pro")
            return try (group["lastTransactions"] as? [[String: Any]] ?? []).map { last in
                let renewal = try JWS(compactSerialization: last["signedRenewalInfo"] as? String ?? "")
                let payload = try JSONSerialization.jsonObject(with: renewal.payload) as? [String: Any]
                _ = try JWS(compactSerialization: last["signedTransactionInfo"] as? String ?? "")
                return (
                    last["status"] as? Int ?? 0, last["originalTransactionId"] as? String ?? "",
                    payload?["autoRenewProductId"] as? String
                )
            }
        }
    }

    @Test func aSubscriptionsLifeInApplesStatusCodes() async throws {
        try await withTemporaryLedger(configuration: LedgerConfiguration(clock: .fixed(Self.now))) { ledger in
            try ledger.addAPIKey(keyID: maker.keyID, issuerID: maker.issuerID, publicKey: maker.key.publicKey)
            let session = StoreTestSession(ledger: ledger)
            try session.update {
                $0.bundleID = maker.bundleID
                $0.billingRetryOnRenewal = true
                $0.billingGracePeriodEnabled = true
            }
            let api = AppStoreServerAPI(ledger: ledger, now: { Self.now })
            let token = try maker.authorization(claims: maker.claims(now: Self.now))
            let consumable = try await session.buyProduct(Payment(productID: SampleCatalog.consumable))
            #expect(try Self.statuses(api, id: consumable.id, token: token).isEmpty, "nothing subscribed yet")
            let bought = try await session.buyProduct(Payment(productID: SampleCatalog.subscription))
            let original = String(bought.originalID)
            func codes(_ query: String? = nil) throws -> [Int] {
                try Self.statuses(api, id: bought.id, token: token, query: query).map(\.status)
            }
            #expect(try Self.statuses(api, id: bought.id, token: token).map(\.original) == [original])
            #expect(try codes() == [1])
            _ = try await session.advanceClock(by: 32 * Self.day)  // the renewal fails: grace period
            #expect(try codes() == [4])
            _ = try await session.advanceClock(by: 20 * Self.day)  // grace over, still retried
            #expect(try codes() == [3])
            #expect(try codes("status=3&status=5") == [3] && codes("status=1").isEmpty)
            _ = try await session.advanceClock(by: 60 * Self.day)  // retries over
            #expect(try codes() == [2])
            let again = try await session.buyProduct(Payment(productID: SampleCatalog.subscription))
            #expect(try codes() == [1])
            try await session.refundTransaction(again.id)
            #expect(try codes() == [5])
        }
    }

    /// A customer subscribed to the group who also has a family member's subscription of it
    /// gets one group item with both in `lastTransactions`, the customer's own first, each with
    /// its own renewal info; the status filter applies to each.
    @Test func aGroupHeldTwiceListsBothSubscriptions() async throws {
        try await maker.withServedLedger(now: Self.now) { api, ledger, session, token in
            let own = try await session.buyProduct(Payment(productID: SampleCatalog.subscription))
            let shared = try await session.shareFamilyPurchase(Payment(productID: SampleCatalog.yearlySubscription))
            let statuses = try Self.statuses(api, id: own.id, token: token)
            #expect(statuses.map(\.original) == [String(own.originalID), String(shared.originalID)])
            #expect(statuses.map(\.status) == [1, 1])
            #expect(statuses.map(\.autoRenewProduct) == [SampleCatalog.subscription, SampleCatalog.yearlySubscription])
            _ = try await session.revokeFamilySharing(shared.id)
            #expect(
                try Self.statuses(api, id: own.id, token: token, query: "status=5").map(\.original) == [
                    String(shared.originalID)
                ])
        }
    }

    @Test func aBadStatusIsApplesInvalidStatusError() async throws {
        try await withTemporaryLedger { ledger in
            try ledger.addAPIKey(keyID: maker.keyID, issuerID: maker.issuerID, publicKey: maker.key.publicKey)
            let session = StoreTestSession(ledger: ledger)
            try session.update { $0.bundleID = maker.bundleID }
            let bought = try await session.buyProduct(Payment(productID: SampleCatalog.subscription))
            let api = AppStoreServerAPI(ledger: ledger, now: { Self.now })
            let token = try maker.authorization(claims: maker.claims(now: Self.now))
            for query in ["status=0", "status=6", "status=active", "status="] {
                let response = api.respond(
                    to: APIRequest(
                        method: "GET", path: "/inApps/v1/subscriptions/\(bought.id)", query: query, authorization: token
                    ))
                let body = try response.json.flatMap { try JSONSerialization.jsonObject(with: $0) as? [String: Any] }
                #expect(response.status == 400 && body?["errorCode"] as? Int == 4_000_031, "\(query)")
            }
        }
    }
}
