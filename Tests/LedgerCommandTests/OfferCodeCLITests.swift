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
