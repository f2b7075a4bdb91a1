import Foundation
import LedgerTestSupport
import LedgerTesting
import StoreLedger
import Testing

/// `ledger notifications` and `ledger store set notificationURL`: what a script sees.
@Suite struct NotificationsCLITests {
    @Test func aPurchaseIsListedShownAndSentOnce() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            #expect(try workspace.ledger("store", "set", "notificationURL", "http://127.0.0.1:9/n").status == 0)
            #expect(try workspace.ledger("purchase", "com.example.level1").status == 0)
            let listed = try workspace.json("notifications", "list", "--json")
            let lines = try #require(listed["notifications"] as? [[String: Any]])
            #expect(lines.map { $0["type"] as? String } == ["ONE_TIME_CHARGE"])
            #expect(lines.first?["status"] as? String == "pending" && lines.first?["transactionID"] as? String == "1")
            let uuid = try #require(lines.first?["uuid"] as? String)
            let shown = try workspace.json("notifications", "show", uuid, "--json")
            let payload = try #require(shown["payload"] as? [String: Any])
            #expect(payload["notificationType"] as? String == "ONE_TIME_CHARGE")
            #expect(payload["notificationUUID"] as? String == uuid)
            #expect((shown["transactionInfo"] as? [String: Any])?["productId"] as? String == "com.example.level1")
            // Port 9 (discard) refuses: the attempt is recorded, retried an hour later.
            let sent = try workspace.json("notifications", "send", "--json")
            let attempted = try #require(sent["attempted"] as? [[String: Any]])
            #expect(
                attempted.map { $0["attempts"] as? Int } == [1] && attempted.first?["status"] as? String == "pending")
            #expect((try workspace.json("notifications", "send", "--json")["attempted"] as? [Any])?.isEmpty == true)
            let again = try workspace.json("notifications", "show", uuid, "--json")
            #expect(
                (again["attempts"] as? [[String: Any]])?.map { $0["sendAttemptResult"] as? String } == ["SOCKET_ISSUE"])
            #expect(
                try workspace.json("notifications", "list", "--status", "delivered", "--json")["notifications"]
                    as? [Any] != nil)
        }
    }

    @Test func badInputIsRefusedWithItsExitCode() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            #expect(try workspace.ledger("store", "set", "notificationURL", "ftp://x/y").status == 65)
            #expect(try workspace.ledger("notifications", "show", "not-a-uuid").status == 65)
            let unknown = try workspace.ledger("notifications", "show", UUID().uuidString)
            #expect(unknown.status == 1 && unknown.stderr.contains("no notification"))
            #expect(try workspace.ledger("notifications", "list", "--status", "sent").status == 64)
            #expect(try workspace.ledger("notifications", "list").stdout == "no notifications\n")
        }
    }

    @Test func showPrintsWhatTheServerKeepsAboutATransaction() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            #expect(try workspace.ledger("purchase", "com.example.level1").status == 0)
            let plain = try workspace.json("show", "1", "--json")
            #expect(plain["orderID"] as? String == OrderID.of(1))
            #expect(plain["consumption"] is NSNull && plain["serverAppAccountToken"] is NSNull)
            let ledger = try Ledger.open(at: workspace.database)
            try ledger.recordConsumption(#"{"customerConsented":true}"#, version: 2, for: 1)
            let token = UUID()
            try ledger.setAppAccountToken(token, originalTransactionID: 1)
            try ledger.close()
            let shown = try workspace.json("show", "1", "--json")
            #expect((shown["consumption"] as? [String: Any])?["version"] as? Int == 2)
            #expect(
                ((shown["consumption"] as? [String: Any])?["request"] as? [String: Any])?["customerConsented"] as? Bool
                    == true)
            #expect(shown["serverAppAccountToken"] as? String == token.uuidString.lowercased())
            let text = try workspace.ledger("show", "1").stdout
            #expect(text.contains("order \(OrderID.of(1))") && text.contains("consumption information (v2"))
        }
    }
}
