import Foundation
import LedgerTestSupport
import LedgerTesting
import StoreLedger
import Testing

@Suite struct MultiProcessTests {
    /// An app-like process writes continuously while other processes list, launch and finish,
    /// and verify the same file: no error surfaces (busy waits stay inside the timeout), no
    /// acknowledged update is lost, and no reader sees half a change (verify reads snapshots).
    @Test func readersAndLaunchesBesideAWritingAppSeeOnlyWholeChanges() async throws {
        try await withTemporaryDirectory { directory in
            let database = directory + "/ledger.sqlite", ackLog = directory + "/acks.jsonl"
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
