import Foundation
import LedgerTestSupport
import LedgerTesting
import Testing

/// `ledger family-sharing`: share a family member's purchase, stop sharing it, and what each
/// refuses.
@Suite struct FamilySharingCLITests {
    @Test func aSharedPurchaseShowsItsOwnershipUntilItIsRevoked() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            let shared = try workspace.json("family-sharing", "share", SampleCatalog.nonConsumable2)
            #expect(shared["id"] as? Int == 1 && shared["state"] as? String == "purchased")
            #expect(try workspace.json("show", "1")["ownership"] as? String == "FAMILY_SHARED")
            #expect(try workspace.ledger("show", "1").stdout.contains("shared by a family member (FAMILY_SHARED)"))
            let signed = try workspace.json("jws", "1")["payload"] as? [String: Any]
            #expect(signed?["inAppOwnershipType"] as? String == "FAMILY_SHARED")
            #expect(try workspace.ledger("purchase", SampleCatalog.nonConsumable).status == 0)
            #expect(try workspace.json("show", "2")["ownership"] as? String == "PURCHASED")

            let revoked = try #require(
                try workspace.json("family-sharing", "revoke", "1")["revoked"] as? [[String: Any]])
            #expect(revoked.map { $0["id"] as? Int } == [1] && revoked[0]["revocationDate"] is String)
            let again = try workspace.ledger("family-sharing", "revoke", "1")
            #expect(again.status == 1 && again.stderr.contains("is not shared by a family member"))
        }
    }

    /// A customer subscribed to pro.monthly and a family member sharing pro.yearly: the status
    /// lists both, and a month later only the customer's own product renewed, as PURCHASED.
    @Test func aShareBesideTheCustomersOwnSubscriptionIsNoChangeOfProduct() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            #expect(try workspace.ledger("purchase", SampleCatalog.subscription).status == 0)
            #expect(try workspace.ledger("family-sharing", "share", SampleCatalog.yearlySubscription).status == 0)
            let status = try workspace.json("subscriptions", "status", "pro")
            let statuses = try #require(status["statuses"] as? [[String: Any]])
            #expect(statuses.map { $0["isFamilyShared"] as? Bool } == [false, true])
            #expect(
                statuses.map { $0["autoRenewProductID"] as? String } == [
                    SampleCatalog.subscription, SampleCatalog.yearlySubscription,
                ])
            #expect((status["status"] as? [String: Any])?["isFamilyShared"] as? Bool == false)
            let text = try workspace.ledger("subscriptions", "status", "pro").stdout
            #expect(text.contains("shared by a family member (FAMILY_SHARED)"))
            #expect(try workspace.ledger("clock", "advance", "40d").status == 0)
            let transactions = try #require(try workspace.json("list")["transactions"] as? [[String: Any]])
            #expect(
                transactions.map { $0["productID"] as? String } == [
                    SampleCatalog.subscription, SampleCatalog.yearlySubscription, SampleCatalog.subscription,
                ])
            #expect(try workspace.json("show", "3")["ownership"] as? String == "PURCHASED")
        }
    }

    @Test func whatCannotBeSharedExitsWithItsReason() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            let consumable = try workspace.ledger("family-sharing", "share", SampleCatalog.consumable)
            #expect(consumable.status == 1 && consumable.stderr.contains("is not family-shareable"))
            let unknown = try workspace.ledger("family-sharing", "share", "com.example.none")
            #expect(unknown.status != 0 && unknown.stderr.contains("com.example.none"))
            let missing = try workspace.ledger("family-sharing", "revoke", "7")
            #expect(missing.status == 1 && missing.stderr.contains("unknown transaction 7"))
            #expect((try workspace.json("list")["transactions"] as? [Any])?.isEmpty == true, "nothing was stored")
        }
    }
}
