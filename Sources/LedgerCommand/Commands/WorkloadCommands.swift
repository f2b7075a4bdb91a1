import ArgumentParser
import Foundation
import StoreLedger

/// Buys products like an app, prints each acknowledged transaction, then waits to be killed
/// before finishing anything: the "crash before finish" of `ledger demo`.
struct HoldPurchasesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hold-purchases",
        abstract: "Buy products, print each acknowledged transaction, then wait (to be killed) without finishing.",
        shouldDisplay: false)

    @OptionGroup var options: GlobalOptions

    @Argument(help: "Product identifiers to buy.")
    var productIDs: [String]

    func run() async throws {
        try await reportingFailures {
            let queue = try options.openQueue()
            for productID in productIDs {
                let transaction = try await queue.add(Payment(productID: productID))
                AcknowledgementLog.standardOutput.record(["op": "purchase", "id": "\(transaction.id)", "state": transaction.state.rawValue])
            }
            AcknowledgementLog.standardOutput.record(["op": "holding"])
            while true { try await Task.sleep(for: .seconds(3600)) }
        }
    }
}

/// A seeded random mix of the queue's operations, each acknowledged on stdout and, synced, in
/// an acknowledgement log, so that a test can kill it at any moment and check the ledger
/// against what was acknowledged.
struct TortureCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "torture",
        abstract: "Run a seeded random workload, logging every acknowledged operation (for crash tests).",
        shouldDisplay: false)

    @OptionGroup var options: GlobalOptions

    @Option(help: "The seed: the same seed replays the same operations.")
    var seed: UInt64 = 1

    @Option(help: "How many operations.")
    var operations = 100

    @Option(name: .customLong("ack-log"), help: "A file that receives one synced JSON line per acknowledged operation.")
    var ackLog: String?

    func validate() throws {
        guard operations >= 0 else { throw ValidationError("--operations must be 0 or more") }
    }

    func run() async throws {
        try await reportingFailures {
            let log = try ackLog.map(AcknowledgementLog.init(path:)) ?? .standardOutput
            let queue = try options.openQueue()
            let products = try queue.catalog.allProducts().map(\.id)
            guard !products.isEmpty else { throw InputError(description: "the ledger has no products: import some first") }
            var random = SplitMix64(seed: seed)
            var deferred: [UInt64] = []
            var finishable: [UInt64] = try queue.transactions.filter { $0.state.canBeFinished }.map(\.id)
            for index in 0..<operations {
                let roll = random.next() % 100
                if roll < 55 || (deferred.isEmpty && finishable.isEmpty) {
                    let outcomes: [SimulatedOutcome] = [.success, .success, .success, .userCancelled, .deferred,
                                                        .failed(StoreErrorCode(rawValue: Int(random.next() % 6))!)]
                    let key = roll % 3 == 0 ? "torture-\(seed)-\(index)" : nil
                    let transaction = try await queue.add(Payment(
                        productID: products[Int(random.next() % UInt64(products.count))],
                        quantity: Int(random.next() % 10) + 1, idempotencyKey: key,
                        simulatedOutcome: outcomes[Int(random.next() % UInt64(outcomes.count))]))
                    if transaction.state == .deferred { deferred.append(transaction.id) } else { finishable.append(transaction.id) }
                    log.record(["op": "purchase", "id": "\(transaction.id)", "state": transaction.state.rawValue, "key": key ?? ""])
                } else if roll < 70, !deferred.isEmpty {
                    let id = deferred.remove(at: Int(random.next() % UInt64(deferred.count)))
                    let transaction = roll % 2 == 0 ? try await queue.approve(id) : try await queue.decline(id)
                    finishable.append(id)
                    log.record(["op": "resolve", "id": "\(id)", "state": transaction.state.rawValue])
                } else if !finishable.isEmpty {
                    let id = finishable.remove(at: Int(random.next() % UInt64(finishable.count)))
                    try await queue.finish(id)
                    log.record(["op": "finish", "id": "\(id)", "state": "finished"])
                }
            }
        }
    }
}

/// One JSON object per line, flushed (and for files, fsync'ed) before the next operation.
final class AcknowledgementLog: Sendable {
    private let descriptor: Int32

    static let standardOutput = AcknowledgementLog(descriptor: STDOUT_FILENO)

    private init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    convenience init(path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw InputError(description: "cannot open the acknowledgement log \(path)") }
        self.init(descriptor: fd)
    }

    func record(_ fields: [String: String]) {
        var line = (try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])) ?? Data()
        line.append(0x0A)
        line.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written <= 0 { break }
                offset += written
            }
        }
        if descriptor != STDOUT_FILENO { fsync(descriptor) }
    }
}

/// A tiny seeded generator (SplitMix64): the same seed gives the same sequence everywhere.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
