import Foundation
import LedgerTestSupport
import StoreLedger
import Testing

@testable import LedgerTesting

/// `CrashStateExploration`: one traced run, every crash state of its trace rebuilt and checked.
/// The exploration takes the fault VFS for itself while it traces, and checks the states beside
/// the other tests.
@Suite struct CrashStateExplorationTests {
    /// The store's workload (customers, devices, a family, the server's and the sender's
    /// writes) keeps every invariant in every state of its trace, with each loss mode.
    @Test func everyCrashStateOfATracedRunKeepsTheInvariants() async {
        let report = await CrashStateExploration(seed: 6, operations: 20).run(CrashWorkload.storeSubject)
        #expect(report.failures.isEmpty, "\(report)")
        let labels = Set(report.statesByLabel.keys)
        let storeWrites: Set = [
            "family purchase", "a member leaves the family", "notification sender's round",
            "server: Finish Transaction",
        ]
        #expect(storeWrites.isSubset(of: labels), "\(labels.sorted())")
        #expect(report.complete && report.states > 100 && report.writes > 0 && report.syncs > 0, "\(report)")
        #expect(Set(report.statesByLoss.keys) == ["lose-all", "keep-all", "torn", "lose-random"], "\(report)")
        #expect(report.acknowledgedChecked > 0, "\(report)")
    }

    /// The control: durability `normal` held to `full`'s rule must lose acknowledged changes in
    /// states that lost unsynced writes, never in one that kept them all; each failing state's
    /// files are kept for a look.
    @Test func theExplorationCatchesLossesUnderNormalDurability() async throws {
        let report = await CrashStateExploration(
            seed: 42, operations: 10, durability: .normal, stateLimit: 200, checkingAsFull: true
        )
        .run(CrashWorkload.subject)
        #expect(!report.failures.isEmpty, "\(report)")
        // Nothing is synced after an acknowledgement at `normal`: losing every unsynced write
        // leaves the files of an earlier state, checked again now that more is acknowledged.
        #expect(report.failures.contains { $0.state.loss == .loseAll }, "\(report)")
        for failure in report.failures {
            #expect(failure.state.loss != .keepAll, "\(failure)")
            #expect(failure.violations.contains { $0.invariant == 1 }, "\(failure)")
            let kept = try #require(failure.keptAt)
            #expect(FileManager.default.fileExists(atPath: kept + "/ledger.sqlite"))
            try? FileManager.default.removeItem(atPath: kept)
        }
    }

    /// The work is bounded: past `stateLimit` states the exploration stops and says so.
    @Test func anExplorationStopsAtItsStateLimit() async {
        let report = await CrashStateExploration(seed: 43, operations: 10, stateLimit: 10).run(CrashWorkload.subject)
        #expect(report.states == 10 && !report.complete && report.failures.isEmpty, "\(report)")
    }
}

/// The trace against the fault VFS itself: in `PowerLossTests`, which runs one test at a time.
extension PowerLossTests {
    /// The trace rebuilds exactly the files the fault VFS leaves: a run ends with a power loss
    /// of each mode, and the files on disk are those the replay of its whole trace gives.
    @Test(arguments: [FaultInjection.LossMode.loseAll, .keepAll, .tornLastWrite])
    func aTraceRebuildsTheFilesAPowerLossLeaves(_ loss: FaultInjection.LossMode) async throws {
        try await FaultInjection.exclusively {
            try await withTemporaryDirectory { folder in
                let run = CrashRun(
                    seed: 44, operations: 40, fault: .powerLoss, trigger: .write(0), durability: .normal)
                let context = run.context(in: folder, file: "ledger.sqlite", log: AcknowledgementLog())
                try await CrashRun.prepare(CrashWorkload.subject, context)
                let snapshot = TraceReplay.Snapshot(of: context.ledgerPath)
                #expect(TraceReplay.startTrace())
                defer { TraceReplay.clearTrace() }
                FaultInjection.setLossMode(loss)
                await CrashRun.runUntilThePowerGoes(CrashWorkload.subject, context)
                TraceReplay.stopTrace()
                FaultInjection.powerOn()
                FaultInjection.setLossMode(.loseAll)
                var replay = TraceReplay(snapshot: snapshot, names: [])
                for index in 0..<replay.count { replay.apply(index) }
                let rebuilt = replay.files(loss)
                let onDisk = try FileManager.default.contentsOfDirectory(atPath: folder)
                    .filter { $0.hasPrefix("ledger.sqlite") && !$0.hasSuffix("-shm") }
                #expect(Set(rebuilt.map(\.name)) == Set(onDisk), "\(loss)")
                #expect(rebuilt.contains { $0.name == "ledger.sqlite-wal" && !$0.bytes.isEmpty }, "\(loss)")
                for file in rebuilt {
                    let bytes = FileManager.default.contents(atPath: folder + "/" + file.name).map(Array.init)
                    #expect(bytes == file.bytes, "\(file.name), \(loss)")
                }
            }
        }
    }
}
