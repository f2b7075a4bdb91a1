// Runs purchase cycles (add, process, finish) through `PaymentQueue` or through the raw-SQLite
// baseline, so that `valgrind --tool=callgrind` can count the instructions of each: a
// repeatable measure on a noisy machine. Valgrind cannot run Swift's async `main` (it crashes
// in the concurrency runtime's start-up), so this `main` is synchronous and runs the cycles
// in a task it waits for. See docs/PERFORMANCE.md for the command and its figures.
//
//     ledger-cycles ledger|baseline COUNT [full|normal]
//     ledger-cycles launch COUNT [FINISHED]     (COUNT launches on 1,000 unfinished among FINISHED)
//     ledger-cycles payers COUNT [PAYERS]       (COUNT cycles shared by PAYERS concurrent tasks)
//     ledger-cycles jws COUNT [each|cached]     (one transaction signed and verified COUNT times, its
//                                               chain checked each time or once, as OpenStoreKit does)
//     ledger-cycles resident PATH               (opens the ledger at PATH, launches its queue with an
//                                               observer and prints the resident memory in MB)
//
// `resident` is `ledger-lab bench`'s "memory of an open ledger": measured here, in a process that
// links what an app links (StoreLedger), not the lab's whole tool and its HTTP stacks (7 MB more
// at start-up, which the figure is not about).
//
// LEDGER_CYCLES_CHAIN=off runs the ledger without its hash chain, =unsigned with the chain but
// no head signed until close, =every-commit with the head signed at every commit (default: as
// shipped, which under valgrind's slowdown signs far more often than at full speed).
import CLedgerBaseline
import Dispatch
import Foundation
import StoreLedger
import Synchronization

let arguments = CommandLine.arguments.dropFirst()
if arguments.first == "resident", let path = arguments.dropFirst().first {
    runAndWait {
        let queue = try PaymentQueue(ledger: try Ledger.open(at: path))
        try await queue.add(CountingObserver())
        _ = try queue.ledger.counts()
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        guard let kilobytes = Double(line.split(separator: " ").dropFirst().first ?? "") else {
            fatalError("no VmRSS in /proc/self/status")
        }
        print(String(format: "%.1f", kilobytes / 1024))
        try queue.ledger.close()
    }
    exit(0)
}
guard arguments.count >= 2, ["ledger", "baseline", "launch", "payers", "jws"].contains(arguments.first!),
    let count = Int(arguments.dropFirst().first!), count > 0
else {
    FileHandle.standardError.write(
        Data(
            "usage: ledger-cycles ledger|baseline COUNT [full|normal], launch|payers COUNT [N], jws COUNT [each|cached], or resident PATH\n"
                .utf8))
    exit(64)
}
let third = arguments.dropFirst(2).first
let durability = third.flatMap(Durability.init(rawValue:)) ?? .full

let folder = NSTemporaryDirectory() + "ledger-cycles-\(UUID().uuidString)"
try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
// LEDGER_CYCLES_KEEP=1 keeps the folder and its ledgers (to measure other commands on them).
defer {
    if ProcessInfo.processInfo.environment["LEDGER_CYCLES_KEEP"] == nil {
        try? FileManager.default.removeItem(atPath: folder)
    } else {
        print("kept", folder)
    }
}
let product = "cycles.consumable"

/// The configuration `LEDGER_CYCLES_CHAIN` asks for (see above).
@Sendable func configuration(_ durability: Durability) -> LedgerConfiguration {
    var configuration = LedgerConfiguration(durability: durability)
    switch ProcessInfo.processInfo.environment["LEDGER_CYCLES_CHAIN"] {
    case "off": configuration.keepsHashChain = false
    case "unsigned": configuration.headSigningInterval = .seconds(86_400)
    case "every-commit": configuration.headSigningInterval = .zero
    default: break
    }
    return configuration
}

/// Runs `body` in a task and waits for it (see above: no async `main`).
func runAndWait(_ body: @escaping @Sendable () async throws -> Void) {
    let done = DispatchSemaphore(value: 0)
    let failure = Mutex<(any Error)?>(nil)
    Task.detached {
        do { try await body() } catch { failure.withLock { $0 = error } }
        done.signal()
    }
    done.wait()
    if let error = failure.withLock({ $0 }) { fatalError("\(error)") }
}

/// Counts the transactions an observer receives.
final class CountingObserver: PaymentTransactionObserver {
    let count = Mutex(0)
    func paymentQueue(_ queue: PaymentQueue, updatedTransactions transactions: [PaymentTransaction]) async {
        count.withLock { $0 += transactions.count }
    }
}

if arguments.first == "launch" {
    let path = folder + "/launch.sqlite"
    let finished = third.flatMap { Int($0) } ?? 100_000
    runAndWait {
        let ledger = try Ledger.open(at: path, mode: .createIfMissing, configuration: configuration(.normal))
        try ledger.saveProducts([Product(id: product, type: .consumable, price: 1)])
        try ledger.appendSyntheticPurchases(productID: product, finished: finished, unfinished: 1_000)
        try ledger.close()
        let clock = ContinuousClock()
        var phases: [Duration] = [.zero, .zero, .zero, .zero]
        for _ in 0..<count {
            var start = clock.now
            func lap(_ index: Int) {
                let now = clock.now
                phases[index] += now - start
                start = now
            }
            let ledger = try Ledger.open(at: path, configuration: configuration(.full))
            lap(0)
            let queue = try PaymentQueue(ledger: ledger)
            lap(1)
            let observer = CountingObserver()
            try await queue.add(observer)
            guard observer.count.withLock({ $0 }) == 1_000 else {
                fatalError("the launch delivered the wrong transactions")
            }
            lap(2)
            try queue.ledger.close()
            lap(3)
        }
        if ProcessInfo.processInfo.environment["LEDGER_CYCLES_PHASES"] != nil {
            print("open, queue, first observer, close:", phases.map { $0 / count })
        }
    }
} else if arguments.first == "payers" {
    let payers = third.flatMap { Int($0) } ?? 64
    runAndWait {
        let ledger = try Ledger.open(
            at: folder + "/payers.sqlite", mode: .createIfMissing, configuration: configuration(.full))
        try ledger.saveProducts([Product(id: product, type: .consumable, price: 1)])
        let queue = try PaymentQueue(ledger: ledger)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<payers {
                group.addTask {
                    for _ in 0..<max(1, count / payers) {
                        try await queue.finish(try await queue.add(Payment(productID: product)))
                    }
                }
            }
            try await group.waitForAll()
        }
        try ledger.close()
    }
} else if arguments.first == "jws" {
    runAndWait {
        let ledger = try Ledger.open(at: folder + "/jws.sqlite", mode: .createIfMissing)
        try ledger.saveProducts([Product(id: product, type: .consumable, price: 1)])
        let bought = try await PaymentQueue(ledger: ledger).add(Payment(productID: product))
        let root = try ledger.signingCertificates().root
        let chains = VerifiedChains(root: root)
        for _ in 0..<count {
            let jws = try ledger.signedTransactions([bought])[0]
            if third == "each" { try jws.verify(trustingRoot: root) } else { try jws.verify(with: chains) }
        }
        try ledger.close()
    }
} else if arguments.first == "baseline" {
    guard let base = lbase_open(folder + "/baseline.sqlite", durability == .full ? 2 : 1),
        lbase_purchase_cycles(base, Int32(count)) == 0
    else { fatalError("the baseline failed") }
    lbase_close(base)
} else {
    runAndWait {
        // LEDGER_CYCLES_DATABASE: a ledger prepared beforehand (for experiments on its schema).
        let path = ProcessInfo.processInfo.environment["LEDGER_CYCLES_DATABASE"] ?? folder + "/ledger.sqlite"
        let ledger = try Ledger.open(at: path, mode: .createIfMissing, configuration: configuration(durability))
        try ledger.saveProducts([Product(id: product, type: .consumable, price: 1)])
        let queue = try PaymentQueue(ledger: ledger)
        for _ in 0..<count {
            let transaction = try await queue.add(Payment(productID: product))
            try await queue.finish(transaction)
        }
        try ledger.close()
    }
}
