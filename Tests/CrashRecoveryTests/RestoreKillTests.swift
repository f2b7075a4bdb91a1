import Foundation
import LedgerTestSupport
import LedgerTesting
import StoreLedger
import Testing

@Suite struct RestoreKillTests {
    /// A restore is one commit: a SIGKILL in the middle leaves all of its transactions or none.
    @Test func aKilledRestoreLeavesAllOrNone() async throws {
        try await withTemporaryDirectory { directory in
            let purchases = 1_000
            // Set up fast (durability normal: no fsync per commit); the restore runs with full.
            let ledger = try SampleCatalog.ledger(
                in: directory, configuration: LedgerConfiguration(durability: .normal))
            for _ in 0..<purchases {
                let id = try await ledger.addPayment(NewPayment(productID: SampleCatalog.nonConsumable)).transaction.id
                _ = try await ledger.applyPlannedOutcome(of: id)
            }
            try ledger.close()
            let database = directory + "/ledger.sqlite"
            var outcomes: Set<Int> = []
            // A debug build restores 1,000 in about a second: the kills land before, during and
            // after the commit.
            for attempt in 0..<6 {
                let process = LedgerProcess.start(["restore", "--json", "--database", database])
                process.standardOutput = FileHandle.nullDevice
                process.standardError = FileHandle.nullDevice
                try process.run()
                LedgerProcess.kill(process, after: .milliseconds(50 + attempt * 300))
                process.waitUntilExit()
                let reopened = try Ledger.open(at: database)
                let restored = try reopened.transactions(matching: TransactionFilter(state: .restored)).count
                #expect(restored % purchases == 0, "a restore was half-applied: \(restored) restored transactions")
                #expect(try reopened.verify() == [])
                outcomes.insert(restored / purchases)
                try reopened.close()
            }
            #expect(!outcomes.isEmpty)
        }
    }
}
