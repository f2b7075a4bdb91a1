import Foundation
import LedgerTestSupport
import LedgerTesting
import Testing

/// `ledger refund-requests`: submit, approve, decline, list, and what each refuses.
@Suite struct RefundRequestCLITests {
    @Test func aRequestIsSubmittedThenApprovedOrDeclined() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            #expect(try workspace.ledger("purchase", SampleCatalog.consumable).status == 0)
            #expect(try workspace.ledger("purchase", SampleCatalog.nonConsumable).status == 0)
            let submitted = try workspace.json("refund-requests", "submit", "1", "--reason", "fulfillment_issue")
            #expect(submitted["transactionID"] as? Int == 1 && submitted["reason"] as? String == "FULFILLMENT_ISSUE")
            #expect(submitted["outcome"] as? String == "pending" && submitted["decidedAt"] is NSNull)
            let text = try workspace.ledger("refund-requests", "submit", "2")
            #expect(text.status == 0 && text.stdout.hasPrefix("requested transaction 2  OTHER  pending"))
            let granted = try workspace.json("refund-requests", "approve", "1")
            #expect(granted["outcome"] as? String == "granted" && granted["decidedAt"] is String)
            let shown = try workspace.json("show", "1")
            #expect((shown["transaction"] as? [String: Any])?["revocationDate"] is String)
            #expect((shown["refundRequest"] as? [String: Any])?["outcome"] as? String == "granted")
            #expect(
                try workspace.ledger("show", "1").stdout.contains(
                    "refund request: transaction 1  FULFILLMENT_ISSUE  granted"))
            #expect(try workspace.json("refund-requests", "decline", "2")["outcome"] as? String == "declined")
            #expect((try workspace.json("show", "2")["transaction"] as? [String: Any])?["revocationDate"] is NSNull)
            let listed = try #require(try workspace.json("refund-requests", "list")["requests"] as? [[String: Any]])
            #expect(listed.map { $0["outcome"] as? String } == ["granted", "declined"])
            let page = try #require(
                try workspace.json("refund-requests", "list", "--after", "1")["requests"] as? [[String: Any]])
            #expect(page.map { $0["transactionID"] as? Int } == [2])
        }
    }

    /// `ledger reverse-refund`: the transaction entitles again, its history says so; what has no
    /// refund to reverse exits 1 with the reason, and changes nothing.
    @Test func aRefundIsReversed() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            #expect(try workspace.ledger("purchase", SampleCatalog.nonConsumable).status == 0)
            let none = try workspace.ledger("reverse-refund", "1")
            #expect(
                none.status == 1 && none.stderr.contains("transaction 1 is not refunded: there is no refund to reverse")
            )
            let unknown = try workspace.ledger("reverse-refund", "9")
            #expect(unknown.status == 1 && unknown.stderr.contains("unknown transaction 9"))
            #expect(try workspace.ledger("reverse-refund", "x").status == 64)
            #expect(try workspace.ledger("refund", "1", "--revocation-percentage", "40000").status == 0)
            let text = try workspace.ledger("reverse-refund", "1")
            #expect(text.status == 0 && text.stdout.hasPrefix("reinstated #1  \(SampleCatalog.nonConsumable)"))
            let shown = try workspace.json("show", "1")
            #expect((shown["transaction"] as? [String: Any])?["revocationDate"] is NSNull)
            let events = try #require(shown["events"] as? [[String: Any]])
            #expect(events.map { $0["kind"] as? String }.suffix(2) == ["revoked", "reinstated"])
            #expect(try workspace.ledger("verify").status == 0)
            #expect(try workspace.ledger("reverse-refund", "1").status == 1, "reversed once")
            // The prorated part went with the reversal: a new refund takes its own.
            #expect(try workspace.ledger("refund", "1", "--revocation-percentage", "20000").status == 0)
            #expect(try workspace.json("show", "1")["revocationPercentage"] as? Int == 20_000)
        }
    }

    /// A refunded subscription period whose subscription was bought again since: the reversal
    /// exits 1 with the reason and the file is left byte for byte.
    @Test func aRefundBesideALaterPeriodIsNotReversed() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            #expect(try workspace.ledger("purchase", SampleCatalog.yearlySubscription).status == 0)
            #expect(try workspace.ledger("refund", "1").status == 0)
            #expect(try workspace.ledger("purchase", SampleCatalog.subscription).status == 0)
            let before = fileBytes(workspace.database)
            let refused = try workspace.ledger("reverse-refund", "1")
            #expect(
                refused.status == 1
                    && refused.stderr.contains(
                        "transaction 1's period would run beside transaction 2, bought since its refund"),
                "\(refused.stderr)")
            #expect(fileBytes(workspace.database) == before)
        }
    }

    @Test func whatTheStoreRefusesExitsWithItsReason() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            #expect(try workspace.ledger("purchase", SampleCatalog.nonConsumable).status == 0)
            #expect(try workspace.json("show", "1")["refundRequest"] is NSNull)
            let unknown = try workspace.ledger("refund-requests", "submit", "9")
            #expect(unknown.status == 1 && unknown.stderr.contains("unknown transaction 9"))
            let none = try workspace.ledger("refund-requests", "approve", "1")
            #expect(none.status == 1 && none.stderr.contains("no refund request of transaction 1 waits for a decision"))
            let reason = try workspace.ledger("refund-requests", "submit", "1", "--reason", "boredom")
            #expect(reason.status == 64 && reason.stderr.contains("boredom"))
            #expect(try workspace.ledger("refund-requests", "submit", "1").status == 0)
            let twice = try workspace.ledger("refund-requests", "submit", "1")
            #expect(twice.status == 1 && twice.stderr.contains("was asked for already"))
            #expect(try workspace.ledger("refund", "1").status == 0)
            #expect(
                try workspace.json("refund-requests", "list")["requests"].map { "\($0)" }?.contains("granted") == true)
            let refunded = try workspace.ledger("refund-requests", "submit", "1")
            #expect(refunded.status == 1 && refunded.stderr.contains("already refunded"))
        }
    }
}
