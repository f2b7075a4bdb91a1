import Foundation
import LedgerTestSupport
import LedgerTesting
import StoreLedger
import Testing

/// A ledger written by the previous release, as a script meets it: reading never writes,
/// `verify` says its schema, `ledger upgrade` upgrades it and says what it applied.
@Suite struct UpgradeCLITests {
    @Test func readsLeaveAnOlderLedgerAloneAndUpgradeSaysWhatItApplied() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            #expect(try workspace.ledger("purchase", "com.example.level1").status == 0)
            // Back to schema 21: 0022's columns, table and record removed, as the previous release left it.
            let downgraded = try runPython(
                """
                import sqlite3
                db = sqlite3.connect('\(workspace.database)')
                for table in ["api_keys", "family_shares", "app_account_tokens", "refund_portions", "price_increases", "charged_prices", "notifications"]:
                    db.execute(f"ALTER TABLE {table} DROP COLUMN mac")
                db.execute("DROP TABLE record_seals")
                db.execute("DELETE FROM grdb_migrations WHERE identifier = '0022_authenticated_records'")
                db.commit()
                db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                db.close()
                """)
            #expect(downgraded == 0)
            let before = fileBytes(workspace.database)
            for command in [["list"], ["show", "1"], ["jws", "1"], ["notifications", "list"]] {
                let refused = try workspace.ledger(arguments: command)
                #expect(refused.status == 74, "\(command): \(refused.stderr)")
                #expect(
                    refused.stderr.contains(
                        "written by an older version of StoreLedger (schema 21 (0021_attempt_details)")
                        && refused.stderr.contains("`ledger upgrade` upgrades it after checking it"),
                    "\(command): \(refused.stderr)")
                #expect(fileBytes(workspace.database) == before, "\(command) wrote nothing")
            }
            let verified = try workspace.ledger("verify")
            #expect(verified.status == 2)
            #expect(
                verified.stdout.contains(
                    "the ledger is at schema 21 (0021_attempt_details) of this version's 22 (0022_authenticated_records)"
                ),
                "\(verified.stdout)")
            #expect(fileBytes(workspace.database) == before, "verify wrote nothing")
            #expect(try workspace.ledger("upgrade", "--vouch-for-events", "3-2").status == 64)
            let upgraded = try workspace.ledger("upgrade")
            #expect(
                upgraded.status == 0 && upgraded.stdout.contains("applied 0022_authenticated_records"),
                "\(upgraded.stderr)")
            #expect(try workspace.ledger("upgrade").stdout.contains("nothing to upgrade"))
            #expect(try workspace.ledger("verify").status == 0)
            #expect(try workspace.ledger("list").status == 0)
        }
    }
}
