import Foundation
import LedgerTestSupport
import LedgerTesting
import StoreLedger
import Testing

/// The facts kept beside the hash chain, edited as outside testing edited them (plain SQL, or a
/// trigger dropped, a row edited and the trigger put back): none is signed or sent, and
/// `verify` reports each.
@Suite struct AuthenticatedRecordsCLITests {
    /// Runs `sql` on the workspace's ledger with Python's sqlite3, as a person would.
    static func tamper(_ workspace: CLIWorkspace, _ sql: String) throws {
        let status = try runPython(
            """
            import sqlite3
            db = sqlite3.connect('\(workspace.database)', isolation_level=None)
            db.executescript(\"\"\"\(sql)\"\"\")
            db.close()
            """)
        #expect(status == 0, "python refused: \(sql)")
    }

    static func expectReported(_ workspace: CLIWorkspace, _ expected: String) throws {
        let verified = try workspace.ledger("verify")
        #expect(verified.status == 2 && verified.stdout.contains(expected), "\(verified.stdout)")
    }

    @Test func factsInsertedWithPlainSQLAreNeitherSignedNorTrusted() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            #expect(try workspace.ledger("purchase", "com.example.level1").status == 0)  // 1
            #expect(try workspace.ledger("purchase", "com.example.level2").status == 0)  // 2
            #expect(try workspace.ledger("purchase", "com.example.rocket_car").status == 0)  // 3
            #expect(try workspace.ledger("refund", "3").status == 0)
            #expect(try workspace.ledger("verify").status == 0)
            try Self.tamper(
                workspace,
                """
                INSERT INTO family_shares (original_transaction_id, shared_at) VALUES (1, 0);
                INSERT INTO app_account_tokens (original_transaction_id, token, set_at)
                    VALUES (2, 'e621e1f8-c36c-495a-93fc-0c247a3e6e5f', 0);
                INSERT INTO refund_portions (transaction_id, percentage) VALUES (3, 50000);
                """)
            for (id, table) in [
                ("1", "family_shares row 1"), ("2", "app_account_tokens row 2"), ("3", "refund_portions row 3"),
            ] {
                let refused = try workspace.ledger("jws", id)
                #expect(refused.status == 74, "jws \(id): \(refused.stdout)")
                #expect(
                    refused.stderr.contains("the \(table) was written without the ledger's key"), "\(refused.stderr)")
            }
            try Self.expectReported(workspace, "the family_shares row 1 was written without the ledger's key")
        }
    }

    /// Deleting or clearing transactions takes their authenticated facts with them through their
    /// records: the seals stay true, and the ledger verifies (and so can be upgraded).
    @Test func deletedTransactionsTakeTheirRecordsAlong() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            #expect(try workspace.ledger("purchase", "com.example.level1").status == 0)  // 1
            #expect(try workspace.ledger("purchase", "com.example.level2").status == 0)  // 2
            for id in ["1", "2"] {
                #expect(try workspace.ledger("refund", id, "--revocation-percentage", "25000").status == 0)
            }
            #expect(try workspace.ledger("store", "delete", "1").status == 0)
            #expect(try workspace.ledger("verify").status == 0, "one deleted")
            #expect(try workspace.ledger("store", "clear").status == 0)
            let verified = try workspace.ledger("verify")
            #expect(verified.status == 0, "all cleared: \(verified.stdout)")
        }
    }

    /// The record of a downgrade's payment: deleted with plain SQL, `verify` reports the seal
    /// (the server would sign the payment); one put back without the key is refused where it is
    /// used and reported. Deleting the payment takes its record along.
    @Test func aRenewalChangeRecordEditedWithPlainSQLIsReportedOrRefused() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            #expect(try workspace.ledger("purchase", "com.example.pro.monthly").status == 0)  // 1
            #expect(try workspace.ledger("purchase", "com.example.basic.monthly").status == 0)  // 2: a downgrade
            #expect(try workspace.ledger("verify").status == 0)
            try Self.tamper(workspace, "DELETE FROM renewal_changes WHERE transaction_id = 2;")
            try Self.expectReported(workspace, "renewal_changes")
            try Self.tamper(workspace, "INSERT INTO renewal_changes (transaction_id, subscription_id) VALUES (2, 1);")
            try Self.expectReported(workspace, "the renewal_changes row 2 was written without the ledger's key")
            let refund = try workspace.ledger("refund", "2")
            #expect(refund.status == 74, "a forged record is refused where it is used")
            #expect(
                refund.stderr.contains("the renewal_changes row 2 was written without the ledger's key"),
                "\(refund.stderr)")
        }
        try await CLIWorkspace.withCatalog { (workspace: CLIWorkspace) throws in
            #expect(try workspace.ledger("purchase", "com.example.pro.monthly").status == 0)
            #expect(try workspace.ledger("purchase", "com.example.basic.monthly").status == 0)
            #expect(try workspace.ledger("store", "delete", "2").status == 0)
            #expect(try workspace.ledger("verify").status == 0, "the record went with its payment")
        }
    }

    @Test func aPriceIncreaseInsertedWithPlainSQLIsNotTheRenewalPrice() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            #expect(try workspace.ledger("purchase", "com.example.pro.monthly").status == 0)
            try Self.tamper(
                workspace,
                """
                INSERT INTO price_increases
                    (customer_id, group_id, product_id, price, needs_consent, status, requested_at, answered_at)
                    VALUES (1, 'pro', 'com.example.pro.monthly', '0.01', 0, 'agreed', 0, 0);
                """)
            let status = try workspace.ledger("subscriptions", "status", "com.example.pro.monthly")
            #expect(status.status == 74 && status.stderr.contains(#"price_increases row 1 "pro""#), "\(status.stderr)")
            try Self.expectReported(workspace, #"the price_increases row 1 "pro" was written without the ledger's key"#)
        }
    }

    /// A notification deleted, or its signed payload replaced, past the triggers: the changed one
    /// is never sent (its attempt fails, saying why), and `verify` reports both.
    @Test func aNotificationChangedOrDeletedIsNotSentAndIsReported() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            #expect(try workspace.ledger("store", "set", "notificationURL", "http://127.0.0.1:9/n").status == 0)
            #expect(try workspace.ledger("purchase", "com.example.level1").status == 0)
            #expect(try workspace.ledger("purchase", "com.example.level2").status == 0)
            try Self.tamper(
                workspace,
                """
                DROP TRIGGER notifications_keep_their_payload;
                UPDATE notifications SET signed_payload = 'forged.payload.x' WHERE seq = 1;
                CREATE TRIGGER notifications_keep_their_payload
                BEFORE UPDATE OF seq, uuid, type, subtype, transaction_id, original_transaction_id, event_key, created_at,
                    signed_payload ON notifications
                BEGIN
                    SELECT RAISE(ABORT, 'a notification is never changed, only attempted');
                END;
                """)
            #expect(try workspace.ledger("notifications", "send").status == 0)
            let listed = try workspace.json("notifications", "list", "--json")["notifications"] as? [[String: Any]]
            let forged = try #require(listed?.first?["uuid"] as? String)
            let shown = try workspace.ledger("notifications", "show", forged)
            #expect(
                shown.status == 74 && shown.stderr.contains("notifications row 1 was changed without the ledger's key"))
            try Self.expectReported(workspace, "the notifications row 1 was changed without the ledger's key")
            // Its attempt is recorded as failed, with the reason, and nothing reached the port.
            let detail = try runProcess(
                "/usr/bin/env",
                [
                    "python3", "-c",
                    "import sqlite3; print(sqlite3.connect('\(workspace.database)').execute('SELECT result, detail FROM notification_attempts WHERE notification_seq = 1').fetchall())",
                ])
            #expect(detail.output.contains("OTHER") && detail.output.contains("it is not sent"), "\(detail.output)")

            try Self.tamper(
                workspace,
                """
                DROP TRIGGER notifications_never_deleted;
                DELETE FROM notifications WHERE seq = 2;
                CREATE TRIGGER notifications_never_deleted BEFORE DELETE ON notifications
                BEGIN SELECT RAISE(ABORT, 'notifications are never deleted'); END;
                """)
            try Self.expectReported(workspace, "notifications holds 1 authenticated rows where its seal counts 2")
        }
    }
}
