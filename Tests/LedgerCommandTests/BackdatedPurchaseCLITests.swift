import Foundation
import LedgerTestSupport
import LedgerTesting
import Testing

/// `ledger purchase --purchase-date`: a test purchase dated in the past.
@Suite struct BackdatedPurchaseCLITests {
    @Test func aPurchaseIsBackdatedAndItsRenewalsMadeUpToNow() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            #expect(try workspace.ledger("clock", "set", "2027-06-01").status == 0)
            let bought = try workspace.json(
                "purchase", SampleCatalog.subscription, "--purchase-date", "2027-03-15T00:00:00Z")
            #expect(bought["purchaseDate"] as? String == "2027-03-15T00:00:00.000Z")
            let listed = try #require(try workspace.json("list")["transactions"] as? [[String: Any]])
            #expect(listed.count == 3 && listed.allSatisfy { $0["originalID"] as? Int == 1 }, "two renewals up to now")
            let cancelled = try workspace.ledger(
                "purchase", SampleCatalog.nonConsumable, "--cancel-immediately")
            #expect(
                cancelled.status == 64 && cancelled.stderr.contains("--cancel-immediately goes with --purchase-date"))
            let future = try workspace.ledger("purchase", SampleCatalog.nonConsumable, "--purchase-date", "2027-07-01")
            #expect(future.status == 1 && future.stderr.contains("it is after the store's time"))
            let malformed = try workspace.ledger(
                "purchase", SampleCatalog.nonConsumable, "--purchase-date", "2027-02-30")
            #expect(malformed.status == 65 && malformed.stderr.contains("invalid date"))
        }
    }
}
