import Foundation
import LedgerTestSupport
import LedgerTesting
import Testing

/// `ledger-lab bench`'s own arguments (the figures live in docs/PERFORMANCE.md, never in tests).
@Suite struct BenchCommandTests {
    @Test(arguments: [
        (["--workloads", "purchase,nope"], #"invalid --workloads "purchase,nope""#),
        (["--workloads", ","], #"invalid --workloads ",": name at least one"#),
        (["--sizes", "10,zero"], #"invalid --sizes "10,zero""#),
        (["--cycles", "0"], "invalid --cycles 0, --restorable 100000 or --runs 5"),
        (["--runs", "0"], "invalid --cycles 600, --restorable 100000 or --runs 0"),
        (["--runs", "101"], "--runs at most 100"),
    ])
    func badArgumentsAreRefusedBeforeAnyWork(_ arguments: [String], message: String) throws {
        let result = try LedgerProcess.run(["bench", "--quick"] + arguments, program: .lab)
        #expect(result.status == 65)
        #expect(result.stderr.contains(message), Comment(rawValue: result.stderr))
        #expect(result.stdout.isEmpty)
    }

    @Test func onlyTheWorkloadsAskedForRun() throws {
        let result = try LedgerProcess.run(
            ["bench", "--quick", "--json", "--workloads", "purchase,catalog"], program: .lab)
        #expect(result.status == 0, Comment(rawValue: result.stderr))
        let report = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let workloads = (report["results"] as? [[String: Any]] ?? []).compactMap { $0["workload"] as? String }
        #expect(workloads.count == 6)
        #expect(workloads.filter { $0.hasPrefix("purchase cycle, 1 writer") }.count == 2)
        #expect(workloads.filter { $0.hasPrefix("ledger products") }.count == 4)
        // Each purchase row is the median of its runs (two with --quick), each run's ratio listed.
        for row in (report["results"] as? [[String: Any]] ?? [])
        where (row["workload"] as? String)?.hasPrefix("purchase cycle") == true {
            let ratios = row["runRatios"] as? [Double] ?? []
            #expect(ratios.count == 2 && (row["note"] as? String)?.hasPrefix("2 runs: min") == true, "\(row)")
        }
    }
}

/// Payment queues waiting for their ledgers' locks leave Swift's threads free: their writes go
/// through the group commit, where at most one commit of the process waits on a cooperative
/// thread (`ledger-lab queue-threads`, in a process of its own: this one's other tests use the
/// same threads).
@Suite struct QueueThreadTests {
    @Test(.enabled(if: ProcessInfo.processInfo.activeProcessorCount >= 2, "one core: Swift has one thread only"))
    func queuesWaitingForTheirLedgersLeaveSwiftsThreadsFree() throws {
        let result = try LedgerProcess.run(["queue-threads"], program: .lab)
        #expect(result.status == 0, Comment(rawValue: result.stderr))
        let report = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let waited = try #require(report["resumedAfterSeconds"] as? Double)
        // Locks held for 20 s: a queue holding the threads makes the wait about that long.
        #expect(waited < 10, "the approvals waiting for their locks held every thread (\(waited) s)")
    }
}

/// `ledger-lab crash-campaign --resume`: a campaign stopped goes on from its progress file, and
/// a progress file of another campaign is refused before any run.
@Suite struct CampaignResumeTests {
    @Test func aCampaignGoesOnFromItsProgressFile() throws {
        let folder = NSTemporaryDirectory() + "campaign-resume-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        do {
            let progress = folder + "/progress.json"
            let first = try LedgerProcess.run(
                ["crash-campaign", "--mode", "power", "--iterations", "2", "--seed", "9", "--resume", progress],
                program: .lab)
            #expect(first.status == 0, Comment(rawValue: first.stderr))
            #expect(first.stdout.contains("2 passed, 0 failed"), Comment(rawValue: first.stdout))
            let second = try LedgerProcess.run(
                ["crash-campaign", "--mode", "power", "--iterations", "3", "--seed", "9", "--resume", progress],
                program: .lab)
            #expect(second.status == 0, Comment(rawValue: second.stderr))
            #expect(second.stdout.contains("resuming at run 3"), Comment(rawValue: second.stdout))
            #expect(second.stdout.contains("runs 3 (power 3)"), Comment(rawValue: second.stdout))
            #expect(second.stdout.contains("3 passed, 0 failed"), Comment(rawValue: second.stdout))

            let other = try LedgerProcess.run(
                ["crash-campaign", "--mode", "io", "--iterations", "3", "--seed", "9", "--resume", progress],
                program: .lab)
            #expect(other.status != 0)
            #expect(
                other.stderr.contains("holds the campaign of --seed 9 --mode power, not this one"),
                Comment(rawValue: other.stderr))
            #expect(!other.stdout.contains("passed"))
        }
    }

    @Test func aStatesTargetMustBePositive() throws {
        let result = try LedgerProcess.run(["crash-campaign", "--states", "0"], program: .lab)
        #expect(result.status != 0)
        #expect(result.stderr.contains("--states must be at least 1"), Comment(rawValue: result.stderr))
    }
}
