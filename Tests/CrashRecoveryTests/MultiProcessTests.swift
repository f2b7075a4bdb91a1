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
                ["torture", "--seed", "42", "--operations", "100000", "--ack-log", ackLog, "--database", database])
            writer.standardOutput = FileHandle.nullDevice
            try writer.run()
            let deadline = Date().addingTimeInterval(6)
            var commands = 0
            while Date() < deadline {
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
            #expect(commands >= 8)
            let acknowledged = try AcknowledgementLog.read(from: ackLog)
            #expect(acknowledged.count > 20)
            let violations = await InvariantChecker.check(
                ledgerAt: database, configuration: LedgerConfiguration(), acknowledged: acknowledged)
            #expect(violations.isEmpty, "\(violations)")
        }
    }
}
