import Foundation
import LedgerTestSupport
import LedgerTesting
import Testing

/// `ledger subscriptions price-increase`: request, consent, decline, what status shows, and
/// what each refuses.
@Suite struct PriceIncreaseCLITests {
    static let monthly = SampleCatalog.subscription

    @Test func anIncreaseIsRequestedConsentedToAndCharged() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            #expect(try workspace.ledger("purchase", Self.monthly).status == 0)
            let requested = try #require(
                try workspace.json("subscriptions", "price-increase", "request", Self.monthly, "--price", "6.99")[
                    "priceIncrease"] as? [String: Any])
            #expect(requested["price"] as? String == "6.99" && requested["status"] as? String == "pending")
            #expect(requested["needsConsent"] as? Bool == true && requested["answeredAt"] is NSNull)
            let status = try #require(
                try workspace.json("subscriptions", "status", Self.monthly)["status"] as? [String: Any])
            #expect(status["renewalPrice"] as? String == "6.99")
            #expect((status["priceIncrease"] as? [String: Any])?["status"] as? String == "pending")
            let text = try workspace.ledger("subscriptions", "status", Self.monthly).stdout
            #expect(text.contains("renewal price: 6.99") && text.contains("price increase: pending, to 6.99"))

            let consented = try workspace.ledger("subscriptions", "price-increase", "consent", Self.monthly)
            #expect(consented.stdout == "consented to the price increase of \(Self.monthly) to 6.99: agreed\n")
            #expect(try workspace.ledger("subscriptions", "renew", Self.monthly).status == 0)
            let renewal = try workspace.json("jws", "2")
            #expect((renewal["payload"] as? [String: Any])?["price"] as? Int == 6990)
            let after = try #require(
                try workspace.json("subscriptions", "status", Self.monthly)["status"] as? [String: Any])
            #expect(after["priceIncrease"] is NSNull && after["renewalPrice"] as? String == "6.99")
        }
    }

    @Test func aDeclineTurnsAutoRenewOffAndAnIncreaseWithoutConsentIsAgreed() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            #expect(try workspace.ledger("purchase", Self.monthly).status == 0)
            #expect(try workspace.ledger("subscriptions", "price-increase", "request", Self.monthly).status == 0)
            let declined = try workspace.json("subscriptions", "price-increase", "decline", Self.monthly)
            #expect((declined["priceIncrease"] as? [String: Any])?["status"] as? String == "declined")
            let status = try #require(
                try workspace.json("subscriptions", "status", Self.monthly)["status"] as? [String: Any])
            #expect(status["willAutoRenew"] as? Bool == false)
            #expect(try workspace.ledger("subscriptions", "auto-renew", Self.monthly, "on").status == 0)
            let agreed = try #require(
                try workspace.json("subscriptions", "status", Self.monthly)["status"] as? [String: Any])
            #expect((agreed["priceIncrease"] as? [String: Any])?["status"] as? String == "agreed")
            let free = try workspace.json(
                "subscriptions", "price-increase", "request", Self.monthly, "--price", "5.49", "--without-consent")
            #expect((free["priceIncrease"] as? [String: Any])?["needsConsent"] as? Bool == false)
        }
    }

    @Test func whatTheStoreRefusesExitsWithItsReason() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            let never = try workspace.ledger("subscriptions", "price-increase", "request", Self.monthly)
            #expect(never.status == 1 && never.stderr.contains("no subscription to \"\(Self.monthly)\""))
            #expect(try workspace.ledger("purchase", Self.monthly).status == 0)
            for bad in ["-1", "abc", "1.2.3", "1234567890123456.99"] {
                let refused = try workspace.ledger(
                    "subscriptions", "price-increase", "request", Self.monthly, "--price=\(bad)")
                #expect(refused.status != 0 && refused.stderr.contains("is not a price"), "\(bad): \(refused.stderr)")
            }
            let unanswered = try workspace.ledger("subscriptions", "price-increase", "consent", Self.monthly)
            #expect(unanswered.status == 1 && unanswered.stderr.contains("no price increase"))
            let consumable = try workspace.ledger(
                "subscriptions", "price-increase", "request", SampleCatalog.consumable)
            #expect(consumable.status != 0 && consumable.stderr.contains("is not an auto-renewable subscription"))
            let status = try #require(
                try workspace.json("subscriptions", "status", Self.monthly)["status"] as? [String: Any])
            #expect(status["priceIncrease"] is NSNull, "nothing refused changed the ledger")
        }
    }
}
