import Foundation
import LedgerTestSupport
import LedgerTesting
import Testing

/// `ledger purchase --offer-code`: an offer code redeemed, and one the store refuses.
@Suite struct OfferCodeCLITests {
    @Test func aCodeIsRedeemedAndOneNotForTheCustomerIsRefused() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            let monthly = SampleCatalog.subscription
            let refused = try workspace.ledger("purchase", monthly, "--offer-code", "LOYALTY")
            #expect(refused.status == 1 && refused.stderr.contains("not eligible for the offer code \"LOYALTY\""))
            let unknown = try workspace.ledger("purchase", monthly, "--offer-code", "NOPE")
            #expect(unknown.status == 1 && unknown.stderr.contains("\"NOPE\" is not an offer code of \(monthly)"))
            let bought = try workspace.json("purchase", monthly, "--offer-code", "FREEMONTH")
            let offer = try #require(bought["offer"] as? [String: Any])
            #expect(offer["type"] as? String == "code" && offer["id"] as? String == "FREEMONTH")
            let signed = try workspace.json("jws", "1")["payload"] as? [String: Any]
            #expect(signed?["offerType"] as? Int == 3 && signed?["offerIdentifier"] as? String == "FREEMONTH")
            let both = try workspace.ledger(
                "purchase", monthly, "--offer-code", "LOYALTY", "--promotional-offer", "promo")
            #expect(both.status == 1 && both.stderr.contains("redeems one offer"))
        }
    }
}

/// `ledger purchase --win-back-offer`: a churned subscriber redeems a win-back offer; what the
/// store refuses exits 1 with its reason and records nothing.
@Suite struct WinBackOfferCLITests {
    @Test func aChurnedSubscriberRedeemsAWinBackOffer() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            let basic = SampleCatalog.basicSubscription
            let never = try workspace.ledger("purchase", basic, "--win-back-offer", "COMEBACK_FREE")
            #expect(never.status == 1 && never.stderr.contains("never subscribed to its subscription group"))
            #expect(try workspace.ledger("purchase", basic).status == 0)
            #expect(try workspace.ledger("subscriptions", "auto-renew", basic, "off").status == 0)
            #expect(try workspace.ledger("clock", "advance", "32d").status == 0)
            let status = try #require(try workspace.json("subscriptions", "status", basic)["status"] as? [String: Any])
            #expect(status["eligibleWinBackOfferIDs"] as? [String] == ["COMEBACK_FREE"])
            #expect(
                try workspace.ledger("subscriptions", "status", basic).stdout.contains(
                    "win-back offers open: COMEBACK_FREE"))
            let unknown = try workspace.ledger("purchase", basic, "--win-back-offer", "NOPE")
            #expect(unknown.status == 1 && unknown.stderr.contains("\"NOPE\" is not a win-back offer of \(basic)"))
            let half = try workspace.ledger("purchase", basic, "--win-back-offer", "COMEBACK_HALF")
            #expect(half.status == 1 && half.stderr.contains("not eligible for the win-back offer \"COMEBACK_HALF\""))
            let bought = try workspace.json("purchase", basic, "--win-back-offer", "COMEBACK_FREE")
            let offer = try #require(bought["offer"] as? [String: Any])
            #expect(offer["type"] as? String == "winBack" && offer["id"] as? String == "COMEBACK_FREE")
            let id = try #require(bought["id"] as? Int)
            let signed = try workspace.json("jws", String(id))["payload"] as? [String: Any]
            #expect(signed?["offerType"] as? Int == 4 && signed?["offerIdentifier"] as? String == "COMEBACK_FREE")
            #expect(try workspace.json("list")["transactions"].map { "\($0)" }?.contains("winBack") == true)
        }
    }
}
