import Foundation
import LedgerTestSupport
import StoreLedger
import Testing

/// What the killed workload acknowledged, read back from its synced acknowledgement log.
struct Acknowledged {
    var lastState: [UInt64: String] = [:]
    var keys: [String: UInt64] = [:]
    var count = 0

    init(logAt path: String) throws {
        let text = String(decoding: fileBytes(path) ?? Data(), as: UTF8.self)
        // A line cut by the kill was never acknowledged: only whole lines count.
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
            let fields = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String])
            let id = try #require(fields["id"].flatMap(UInt64.init))
            lastState[id] = fields["state"]
            if let key = fields["key"], !key.isEmpty { keys[key] = id }
            count += 1
        }
    }
}

@Suite struct KillTests {
    /// SPEC section 9 after a SIGKILL: acknowledged changes present, nothing duplicated, legal
    /// histories that end in the current row, none left purchasing, every unfinished one
    /// redelivered at the launch, integrity ok.
    @Test(arguments: 1...12)
    func aKilledWorkloadLosesNothingItAcknowledged(seed: UInt64) async throws {
        try await withTemporaryDirectory { directory in
            try SampleCatalog.ledger(in: directory).close()
            let database = directory + "/ledger.sqlite"
            let ackLog = directory + "/acks.jsonl"
            var random = SystemRandomNumberGenerator()
            // Two kills per run: the second lands on a ledger that already went through a crash.
            for round in 0..<2 {
                let process = LedgerProcess.start([
                    "torture", "--seed", "\(seed * 10 + UInt64(round))", "--operations", "5000",
                    "--ack-log", ackLog, "--database", database,
                ])
                process.standardOutput = FileHandle.nullDevice
                try process.run()
                try await Task.sleep(for: .milliseconds(Int.random(in: 40...400, using: &random)))
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
                #expect(process.terminationReason == .uncaughtSignal || process.terminationStatus == 0)
            }
            let acknowledged = try Acknowledged(logAt: ackLog)
            let queue = try PaymentQueue(path: database)
            let ledger = queue.ledger
            let all = try ledger.allTransactions()
            let byID = Dictionary(uniqueKeysWithValues: all.map { ($0.id, $0) })

            for (id, state) in acknowledged.lastState {
                let transaction = try #require(byID[id], "acknowledged transaction \(id) is missing")
                switch state {
                case "finished": #expect(transaction.isFinished, "\(id) was acknowledged finished")
                case "deferred": #expect([.deferred, .purchased, .failed].contains(transaction.state))
                default: #expect(transaction.state.rawValue == state, "\(id) was acknowledged \(state)")
                }
            }
            for (key, id) in acknowledged.keys {
                #expect(all.filter { $0.idempotencyKey == key }.map(\.id) == [id], "key \(key)")
            }
            #expect(!all.contains { $0.state == .purchasing })
            #expect(try ledger.verify() == [])

            let observer = CollectingObserver()
            try await queue.add(observer)
            let unfinished = all.filter { !$0.isFinished }.map(\.id)
            #expect(observer.updated.map(\.id) == unfinished)
            #expect(acknowledged.count > 0, "the workload was killed before it acknowledged anything")
        }
    }
}
