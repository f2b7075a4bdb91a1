import ArgumentParser
import Dispatch
import Foundation
import GRDB
import LedgerTesting
import StoreLedger

/// `ledger-lab queue-threads`: Ask to Buy approvals on more ledgers than Swift has threads,
/// while another writer holds each ledger's lock; then how long a sleeping task waited for a
/// thread to go on. A payment queue that waited for its ledger on Swift's cooperative threads
/// would hold them all, and the task would go on only once the locks are released. In a
/// process of its own: a test process's other tests use the same threads.
struct QueueThreadsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "queue-threads",
        abstract: "Check that payment queues waiting for their ledgers' locks leave Swift's threads free.",
        discussion: """
            Prints {"ledgers": N, "resumedAfterSeconds": S}: S stays far below the \(Int(lockSeconds)) seconds \
            the locks are held for when the queues leave the threads free.
            """)

    /// How long the other writer holds each lock at most.
    static let lockSeconds: Double = 20

    func run() async throws {
        let count = ProcessInfo.processInfo.activeProcessorCount + 1  // more than Swift's threads
        try await withTemporaryDirectory { directory in try await approve(on: count, in: directory) }
    }

    private func approve(on count: Int, in directory: String) async throws {
        var queues: [(queue: PaymentQueue, deferred: UInt64, path: String)] = []
        for index in 0..<count {
            let folder = directory + "/\(index)"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try SampleCatalog.ledger(in: folder).close()
            let queue = try PaymentQueue(path: folder + "/ledger.sqlite")
            let deferred = try await queue.add(
                Payment(productID: SampleCatalog.nonConsumable, simulatedOutcome: .deferred))
            queues.append((queue, deferred.id, folder + "/ledger.sqlite"))
        }
        // Another writer holds every ledger's lock until this task goes on (or `lockSeconds`).
        let release = DispatchSemaphore(value: 0)
        let locked = DispatchGroup()
        for entry in queues {
            locked.enter()
            let holder = try DatabaseQueue(path: entry.path)
            DispatchQueue.global().async {
                try? holder.writeWithoutTransaction { db in
                    try db.execute(sql: "BEGIN IMMEDIATE")
                    locked.leave()
                    _ = release.wait(timeout: .now() + Self.lockSeconds)
                    try db.execute(sql: "ROLLBACK")
                }
            }
        }
        locked.wait()
        let approvals = queues.map { entry in Task { try await entry.queue.approve(entry.deferred) } }
        let clock = ContinuousClock()
        let start = clock.now
        try await Task.sleep(for: .milliseconds(300))  // every approval now waits for its lock
        let resumedAfter = clock.now - start
        for _ in queues { release.signal() }
        for approval in approvals {
            guard try await approval.value.state == .purchased else { throw ValidationError("an approval failed") }
        }
        let seconds = Double(resumedAfter.components.seconds) + Double(resumedAfter.components.attoseconds) / 1e18
        print(#"{"ledgers": \#(count), "resumedAfterSeconds": \#(String(format: "%.3f", seconds))}"#)
    }
}
