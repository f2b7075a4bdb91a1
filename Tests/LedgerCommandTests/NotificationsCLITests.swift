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

    /// A URL the sender could not reach (a port past 65535 crashed it) is refused when set, with
    /// the rule it breaks, and the file is left as it was; one already stored (by an older
    /// release) fails each attempt with its reason, and `notifications send` goes on.
    @Test func aNotificationURLIsCheckedWholeAndAStoredBadOneNeverStopsTheSender() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            #expect(try workspace.ledger("purchase", "com.example.level1").status == 0)
            let before = fileBytes(workspace.database)
            for (url, why) in [
                ("http://127.0.0.1:65536/x", "its port 65536 is not between 1 and 65535"),
                ("http://[::1:9000/x", "it is not a URL"),
                ("http://999.0.0.1/x", "is not a valid IPv4 address"),
                ("http://exa%00mple.com/x", "is not a DNS name"),
            ] {
                let refused = try workspace.ledger("store", "set", "notificationURL", url)
                #expect(refused.status == 65 && refused.stderr.contains(why), "\(url): \(refused.stderr)")
                #expect(fileBytes(workspace.database) == before, "\(url): the file is unchanged")
            }
            #expect(try workspace.ledger("store", "set", "notificationURL", "http://[::1]:9/n").status == 0)
            let ledger = try Ledger.open(at: workspace.database)
            try ledger.setStoreSettings(["notificationURL": "http://127.0.0.1:65536/x"])
            try ledger.close()
            #expect(try workspace.ledger("purchase", "com.example.level1").status == 0)
            let sent = try workspace.ledger("notifications", "send")
            #expect(sent.status == 0, "\(sent.stderr)")
            let uuid = try #require(
                (try workspace.json("notifications", "list", "--json")["notifications"] as? [[String: Any]])?.last?[
                    "uuid"] as? String)
            let shown = try workspace.ledger("notifications", "show", uuid)
            #expect(
                shown.stdout.contains(
                    "OTHER: the notification URL \"http://127.0.0.1:65536/x\" cannot be used: its port 65536 is not between 1 and 65535"
                ), "\(shown.stdout)")
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
