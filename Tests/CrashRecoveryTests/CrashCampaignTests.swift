import Foundation
import LedgerTestSupport
import LedgerTesting
import StoreLedger
import Testing

/// `CrashCampaign` on code that is not the ledger's own workload. In `PowerLossTests`, which
/// runs one test at a time: the fault VFS is the process's.
extension PowerLossTests {
    @Test func anAppsOwnPurchaseCodeRunsACampaignAndPasses() async throws {
        let report = try await CrashCampaign(seed: 1, runs: 12, operations: 10...40, progress: nil).run(TipJarSubject())
        #expect(report.runs == 12 && report.faultsFired >= 8 && report.acknowledgedChecked > 0, "\(report)")
        #expect(report.failures.isEmpty, "\(report)")
    }

    /// A subject whose promise does not hold (every tip finished, with no launch to finish the
    /// leftovers) fails in some runs, and each failure replays to the same violations.
    @Test func aBrokenPromiseFailsWithALineThatReplaysIt() async throws {
        let report = try await CrashCampaign(seed: 5, runs: 8, faults: [.power], operations: 10...30, progress: nil)
            .run(ForgetfulTipJar())
        #expect(!report.failures.isEmpty, "\(report)")
        #expect(report.description.hasPrefix("\(8 - report.failures.count) passed, \(report.failures.count) failed"))
        for failure in report.failures {
            #expect(failure.violations.allSatisfy { $0.invariant == 0 })
            let replayed = try CrashRun(replay: failure.replay)
            #expect(replayed == failure.run)
            let outcome = await replayed.runInTemporaryFolder(ForgetfulTipJar())
            #expect(outcome.violations.map(\.invariant) == failure.violations.map(\.invariant), "\(failure.replay)")
        }
    }

    /// A campaign that cannot run is refused before any run, with what is wrong.
    @Test func aCampaignThatCannotRunIsRefused() async throws {
        var campaign = CrashCampaign(runs: -1, progress: nil)
        await #expect(throws: CrashCampaign.InvalidCampaign(reason: "runs is -1: it cannot be negative")) {
            try await campaign.run(TipJarSubject())
        }
        campaign = CrashCampaign(faults: [], progress: nil)
        await #expect(throws: CrashCampaign.InvalidCampaign(reason: "faults is empty: give at least one")) {
            try await campaign.run(TipJarSubject())
        }
        for operations in [0...5, 1...100_001, 0...Int.max] {
            campaign = CrashCampaign(operations: operations, progress: nil)
            await #expect(
                throws: CrashCampaign.InvalidCampaign(reason: "operations \(operations) is not within 1...100000")
            ) {
                try await campaign.run(TipJarSubject())
            }
            await #expect(throws: CrashCampaign.InvalidCampaign.self) {
                try await campaign.plannedRun(.power, seed: 1, subject: TipJarSubject())
            }
        }
    }

    /// For a subject whose writes follow from its seed, a planned run depends only on the seed
    /// and the fault.
    @Test func aPlannedRunDependsOnlyOnTheSeedAndTheFault() async throws {
        let campaign = CrashCampaign(progress: nil)
        let first = try await campaign.plannedRun(.io, seed: 42, subject: TipJarSubject())
        let second = try await campaign.plannedRun(.io, seed: 42, subject: TipJarSubject())
        #expect(first == second)
        #expect((20...199).contains(first.operations) && first.durability == .full && first.fault != .powerLoss)
        let other = try await campaign.plannedRun(.power, seed: 43, subject: TipJarSubject())
        #expect(other != first && other.fault == .powerLoss && !other.persistent)
    }
}

/// The tip jar without its launch: a tip bought just before the crash stays unfinished.
struct ForgetfulTipJar: CrashTestSubject {
    func prepare(_ context: CrashTestContext) async throws {
        try await TipJarSubject().prepare(context)
    }

    func run(_ context: CrashTestContext) async throws {
        try await TipJarSubject().run(context)
    }

    func check(_ context: CrashTestContext, acknowledged: [Acknowledgement]) async -> [InvariantViolation] {
        guard let ledger = try? Ledger.open(at: context.ledgerPath, configuration: context.configuration) else {
            return []
        }
        defer { try? ledger.close() }
        let unfinished = (try? ledger.unfinishedTransactions()) ?? []
        return unfinished.map { InvariantViolation(invariant: 0, message: "tip \($0.id) is unfinished") }
    }
}

@Suite struct CrashReplayTests {
    /// Any run a campaign can print reads back as the same run.
    @Test(arguments: [UInt64(1), 2, 3])
    func everyRunReadsBackFromItsReplayLine(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        for _ in 0..<200 {
            let faults: [FaultInjection.Fault] = [.powerLoss, .ioError, .diskFull]
            let (fault, persistent) = (faults[Int(random.next() % 3)], random.next() % 2 == 0)
            let point = 1 + Int64(random.next() % 1_000_000)
            let losses: [FaultInjection.LossMode] = [
                .loseAll, .loseRandom(seed: random.next()), .tornLastWrite, .keepAll,
            ]
            let run = CrashRun(
                seed: random.next(), operations: 1 + Int(random.next() % 10_000), fault: fault,
                trigger: random.next() % 2 == 0 ? .write(point) : .sync(point),
                lossMode: losses[Int(random.next() % 4)],
                durability: random.next() % 2 == 0 ? .full : .normal, persistent: persistent)
            #expect(try CrashRun(replay: run.description) == run, "\(run)")
        }
    }

    @Test(arguments: [
        ("--fault power --operations 5 --at-write 3 --loss lose-all --durability full", "--seed"),
        ("--fault fire --seed 1 --operations 5 --at-write 3 --loss lose-all --durability full", "--fault"),
        ("--fault power --seed 1 --operations 0 --at-write 3 --loss lose-all --durability full", "--operations"),
        ("--fault power --seed 1 --operations 5 --at-write 0 --loss lose-all --durability full", "--at-write"),
        ("--fault power --seed 1 --operations 5 --loss lose-all --durability full", "--at-sync"),
        ("--fault power --seed 1 --operations 5 --at-write 3 --loss lose-some --durability full", "--loss"),
        ("--fault power --seed 1 --operations 5 --at-write 3 --loss lose-all --durability full --color red", "--color"),
        ("--fault power --seed 1 --seed 2 --operations 5 --at-write 3 --loss lose-all --durability full", "--seed"),
        ("--fault power --seed 1 --operations 5 --at-write 3 --loss lose-all --durability", "--durability"),
    ])
    func aLineThatIsNotARunSaysWhichPartIsWrong(line: String, part: String) {
        #expect(throws: CrashRun.ReplayError(line: line, part: part)) { try CrashRun(replay: line) }
    }
}
