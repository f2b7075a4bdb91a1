import ArgumentParser
import Foundation
import LedgerCommand
import LedgerTesting
import StoreLedger

/// The seeded crash workload of `LedgerTesting`, on a ledger file, each acknowledged change
/// synced to an acknowledgement log before the next operation: a crash campaign kills it at
/// any moment and checks the ledger against the log.
struct TortureCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "torture",
        abstract: "Run the seeded crash workload, logging every acknowledged change (for kill tests).")

    @OptionGroup var options: GlobalOptions

    @Option(help: "The seed: the same seed replays the same operations.")
    var seed: UInt64 = 1

    @Option(help: "How many operations.")
    var operations = 100

    @Option(name: .customLong("ack-log"), help: "A file that receives one synced JSON line per acknowledged change.")
    var ackLog: String?

    @Flag(
        name: .customLong("shared-ledger"),
        help: "Other processes run workloads on the same ledger: skip what they answered or refunded first.")
    var sharedLedger = false

    @Flag(help: "A store of several customers and devices: each operation runs on one of them.")
    var customers = false

    func validate() throws {
        guard operations >= 0 else { throw ValidationError("--operations must be 0 or more") }
    }

    func run() async throws {
        let configuration = LedgerConfiguration(durability: options.durability)
        try CrashWorkload.prepareLedger(at: options.databasePath, configuration: configuration, customers: customers)
        let log = try ackLog.map(AcknowledgementLog.init(appendingTo:)) ?? AcknowledgementLog()
        let workload = CrashWorkload(
            seed: seed, operations: operations, sharesLedger: sharedLedger, customers: customers)
        if let error = await workload.run(ledgerAt: options.databasePath, configuration: configuration, log: log) {
            throw error
        }
        try options.output.emit(["acknowledged": log.acknowledgements.count]) {
            "\(log.acknowledgements.count) change(s) acknowledged"
        }
    }
}
