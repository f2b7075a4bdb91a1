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
        (["--cycles", "0"], "invalid --cycles 0 or --restorable 100000"),
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
