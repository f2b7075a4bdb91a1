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
            // Back to the previous schema, as the previous release left it.
            let downgraded = try runPython(
                """
                import sqlite3, sys
                db = sqlite3.connect(sys.argv[1])
                db.executescript(sys.argv[2])
                db.commit()
                db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                db.close()
                """, arguments: [workspace.database, PreviousSchema.undoLastMigration])
            #expect(downgraded == 0)
            let before = fileBytes(workspace.database)
            for command in [["list"], ["show", "1"], ["jws", "1"], ["notifications", "list"]] {
                let refused = try workspace.ledger(arguments: command)
                #expect(refused.status == 74, "\(command): \(refused.stderr)")
                #expect(
                    refused.stderr.contains(
                        "written by an older version of StoreLedger (schema \(PreviousSchema.name)")
                        && refused.stderr.contains("`ledger upgrade` upgrades it after checking it"),
                    "\(command): \(refused.stderr)")
                #expect(fileBytes(workspace.database) == before, "\(command) wrote nothing")
            }
            let verified = try workspace.ledger("verify")
            #expect(verified.status == 2)
            #expect(
                verified.stdout.contains(
                    "the ledger is at schema \(PreviousSchema.name) of this version's \(PreviousSchema.current)"
                ),
                "\(verified.stdout)")
            #expect(fileBytes(workspace.database) == before, "verify wrote nothing")
            #expect(try workspace.ledger("upgrade", "--vouch-for-events", "3-2").status == 64)
            let upgraded = try workspace.ledger("upgrade")
            #expect(
                upgraded.status == 0 && upgraded.stdout.contains("applied \(PreviousSchema.lastMigration)"),
                "\(upgraded.stderr)")
            #expect(try workspace.ledger("upgrade").stdout.contains("nothing to upgrade"))
            #expect(try workspace.ledger("verify").status == 0)
            #expect(try workspace.ledger("list").status == 0)
        }
    }
}

/// `ledger purchase` of a downgrade, and of the current product to cancel it, as a user sees
/// them: the payment says it only changes the next renewal.
@Suite struct RenewalChangeCLITests {
    @Test func aDowngradeSaysItChangesTheNextRenewalAndAPurchaseDoesNot() async throws {
        try await CLIWorkspace.withCatalog { workspace in
            let pro = try workspace.json("purchase", SampleCatalog.subscription)
            #expect(pro["changesRenewalOf"] is NSNull)
            let proID = try #require(pro["id"] as? Int)
            let downgrade = try workspace.ledger("purchase", SampleCatalog.basicSubscription)
            #expect(downgrade.status == 0)
            #expect(
                downgrade.stdout.contains(
                    "changes the next renewal of #\(proID) (\(SampleCatalog.subscription)): no transaction of the "
                        + "App Store, nothing charged now"), "\(downgrade.stdout)")
            let back = try workspace.json("purchase", SampleCatalog.subscription)
            #expect(back["changesRenewalOf"] as? Int == proID && back["state"] as? String == "purchased")
            #expect(back["isFinished"] as? Bool == true)
            let status = try workspace.json("subscriptions", "status", SampleCatalog.subscription)["status"]
            #expect(
                (status as? [String: Any])?["autoRenewProductID"] as? String == SampleCatalog.subscription,
                "the downgrade cancelled")
        }
    }
}
