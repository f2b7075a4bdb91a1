import Foundation
import LedgerTestSupport
import LedgerTesting
import StoreLedger
import Testing

@Suite struct KillTests {
    /// The crash invariants (`InvariantChecker`) after a SIGKILL: the seeded workload runs in a child `ledger-lab` process,
    /// syncing each acknowledgement to a log, and is killed twice at random moments; the
    /// reopened ledger must hold every acknowledged change and satisfy every invariant.
    ///
    /// The cases run one at a time: a dozen CPU-bound children at once on a two-core machine
    /// starved every other test's processes.
    @Test(.serialized, arguments: 1...12)
    func aKilledWorkloadLosesNothingItAcknowledged(seed: UInt64) async throws {
        try await withTemporaryDirectory { directory in
            let database = directory + "/ledger.sqlite"
            let ackLog = directory + "/acks.jsonl"
            var random = SplitMix64(seed: seed)
            // Two kills: the second lands on a ledger that already went through a crash.
            for round in 0..<2 {
                let process = LedgerProcess.start(
                    [
                        "torture", "--seed", "\(seed * 10 + UInt64(round))", "--operations", "5000",
                        "--ack-log", ackLog, "--database", database,
                    ], program: .lab)
                process.standardOutput = FileHandle.nullDevice
                let logged = Self.size(of: ackLog)
                try process.run()
                // The random moment counts from the round's first acknowledgement: on a loaded
                // machine, starting the process alone can take longer than the delay.
                let deadline = Date().addingTimeInterval(60)
                while Self.size(of: ackLog) == logged, process.isRunning, Date() < deadline { usleep(2_000) }
                LedgerProcess.kill(process, after: .milliseconds(Int(random.next() % 360) + 40))
                process.waitUntilExit()
            }
            let acknowledged = try AcknowledgementLog.read(from: ackLog)
            #expect(!acknowledged.isEmpty, "the workload was killed before it acknowledged anything")
            let violations = await InvariantChecker.check(
                ledgerAt: database, configuration: LedgerConfiguration(), acknowledged: acknowledged)
            #expect(violations.isEmpty, "replay: ledger-lab torture --seed \(seed * 10) ... -> \(violations)")
        }
    }

    static func size(of path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
    }
}
