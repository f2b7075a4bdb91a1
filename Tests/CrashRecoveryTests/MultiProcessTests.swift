import Foundation
import LedgerTestSupport
import LedgerTesting
import StoreLedger
import StoreTesting
import Testing

@Suite struct MultiProcessTests {
    /// Opening a second connection in a process (as `ledger serve` opens its readers, as an app
    /// relaunches) keeps the first one's locks: another process that then closes its own last
    /// connection does not take this one for gone and delete the WAL it still writes to. (The
    /// ledger once read a file's header with a descriptor of its own: closing it dropped every
    /// POSIX lock of the process on the file, and the next commit went to a deleted WAL.)
    @Test func anotherConnectionInTheProcessKeepsTheFirstOnesCommitsVisible() async throws {
        try await withTemporaryLedger { ledger in
            let session = StoreTestSession(ledger: ledger)
            for _ in 0..<3 { _ = try await session.buyProduct(Payment(productID: SampleCatalog.consumable)) }
            try Ledger.open(at: ledger.path, access: .readOnly).close()
            // Another process writes, and closes the file as it exits.
            let bought = try LedgerProcess.run(["purchase", SampleCatalog.consumable, "--database", ledger.path])
            #expect(bought.status == 0, "\(bought.stderr)")
            _ = try await session.buyProduct(Payment(productID: SampleCatalog.consumable))
            let seen = try LedgerProcess.run(["list", "--json", "--database", ledger.path])
            #expect((try seen.json()["transactions"] as? [Any])?.count == 5, "another process sees this one's commit")
            #expect(try ledger.allTransactions().count == 5)
        }
    }

    /// An app-like process writes continuously while other processes list, launch and finish,
    /// and verify the same file: no error surfaces (busy waits stay inside the timeout), no
    /// acknowledged update is lost, and no reader sees half a change (verify reads snapshots).
    @Test func readersAndLaunchesBesideAWritingAppSeeOnlyWholeChanges() async throws {
        try await withTemporaryDirectory { directory in
            let database = directory + "/ledger.sqlite"
            let ackLog = directory + "/acks.jsonl"
            try CrashWorkload.prepareLedger(at: database, configuration: LedgerConfiguration())
            let writer = LedgerProcess.start(
                ["torture", "--seed", "42", "--operations", "100000", "--ack-log", ackLog, "--database", database],
                program: .lab)
            writer.standardOutput = FileHandle.nullDevice
            try writer.run()
            defer { if writer.isRunning { writer.terminate() } }
            // At least six seconds and at least two rounds of the four readers: under CI's load
            // (parallel suites beside the crash campaign, two cores) one round of debug-built
            // processes took six seconds, so a deadline alone proved too little. The writer has
            // far more operations than any of these rounds take; the bound of 120 s keeps a hang
            // a failure instead of a stalled run.
            let start = Date()
            var commands = 0
            while Date().timeIntervalSince(start) < 6 || commands < 8 {
                try #require(Date().timeIntervalSince(start) < 120, "two rounds of readers took over 120 s")
                for arguments in [["list", "--limit", "20"], ["launch", "--finish"], ["verify"], ["entitlements"]] {
                    let result = try LedgerProcess.run(arguments + ["--json", "--database", database])
                    #expect(result.status == 0, "\(arguments): \(result.stderr)")
                    #expect((try? result.json()) != nil, "\(arguments): stdout is one JSON document")
                    commands += 1
                }
            }
            #expect(writer.isRunning, "the writer was still writing while the others ran")
            writer.terminate()
            writer.waitUntilExit()
            let acknowledged = try AcknowledgementLog.read(from: ackLog)
            #expect(acknowledged.count > 20)
            let violations = await InvariantChecker.check(
                ledgerAt: database, configuration: LedgerConfiguration(), acknowledged: acknowledged)
            #expect(violations.isEmpty, "\(violations)")
        }
    }
}
