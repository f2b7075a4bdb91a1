// Runs purchase cycles (add, process, finish) through `PaymentQueue` or through the raw-SQLite
// baseline, so that `valgrind --tool=callgrind` can count the instructions of each: a
// repeatable measure on a noisy machine. Valgrind cannot run Swift's async `main` (it crashes
// in the concurrency runtime's start-up), so this `main` is synchronous and runs the cycles
// in a task it waits for. See docs/PERFORMANCE.md for the command and its figures.
//
//     ledger-cycles ledger|baseline COUNT [full|normal]
import CLedgerBaseline
import Dispatch
import Foundation
import StoreLedger
import Synchronization

let arguments = CommandLine.arguments.dropFirst()
guard arguments.count >= 2, ["ledger", "baseline"].contains(arguments.first!),
      let count = Int(arguments.dropFirst().first!), count > 0,
      let durability = arguments.count > 2 ? Durability(rawValue: arguments.dropFirst(2).first!) : .full
else {
    FileHandle.standardError.write(Data("usage: ledger-cycles ledger|baseline COUNT [full|normal]\n".utf8))
    exit(64)
}

let folder = NSTemporaryDirectory() + "ledger-cycles-\(UUID().uuidString)"
try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: folder) }
let product = "cycles.consumable"

if arguments.first == "baseline" {
    guard let base = lbase_open(folder + "/baseline.sqlite", durability == .full ? 2 : 1),
          lbase_purchase_cycles(base, Int32(count)) == 0
    else { fatalError("the baseline failed") }
    lbase_close(base)
} else {
    let done = DispatchSemaphore(value: 0)
    let failure = Mutex<(any Error)?>(nil)
    Task.detached {
        do {
            let ledger = try Ledger.open(
                at: folder + "/ledger.sqlite", mode: .createIfMissing, configuration: LedgerConfiguration(durability: durability))
            try ledger.saveProducts([Product(id: product, type: .consumable, price: 1)])
            let queue = try PaymentQueue(ledger: ledger)
            for _ in 0..<count {
                let transaction = try await queue.add(Payment(productID: product))
                try await queue.finish(transaction)
            }
            try ledger.close()
        } catch {
            failure.withLock { $0 = error }
        }
        done.signal()
    }
    done.wait()
    if let error = failure.withLock({ $0 }) { fatalError("\(error)") }
}
