import ArgumentParser
import Foundation
import StoreLedger

extension Durability: ExpressibleByArgument {}

/// The options every command shares.
struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: "The ledger file (default: $LEDGER_DATABASE, else ./ledger.sqlite).")
    var database: String?

    @Flag(name: .long, help: "Print exactly one JSON document on stdout.")
    var json = false

    @Option(name: .long, help: "full (default: survives power loss) or normal (survives a killed process).")
    var durability: Durability = .full

    var databasePath: String {
        database ?? ProcessInfo.processInfo.environment["LEDGER_DATABASE"].flatMap { $0.isEmpty ? nil : $0 }
            ?? "ledger.sqlite"
    }

    var output: Output { Output(json: json) }

    /// Opens the ledger; only `mode: .createIfMissing` may create the file.
    func openLedger(mode: Ledger.OpenMode = .existing, access: Ledger.Access = .readWrite) throws -> Ledger {
        try Ledger.open(
            at: databasePath, mode: mode, access: access, configuration: LedgerConfiguration(durability: durability))
    }

    /// Opens the ledger for a command that only reads: nothing is written to the file.
    func openLedgerForReading() throws -> Ledger {
        try openLedger(access: .readOnly)
    }

    /// Opens the ledger and launches a payment queue on it.
    func openQueue() throws -> PaymentQueue {
        try PaymentQueue(ledger: try openLedger())
    }
}
