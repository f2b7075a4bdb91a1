public import ArgumentParser
import Foundation
package import StoreLedger
import Synchronization

extension Durability: ExpressibleByArgument {}
extension ServerNotification.Status: ExpressibleByArgument {}
extension SigningEnvironment: ExpressibleByArgument {}

/// The options every command shares.
package struct GlobalOptions: ParsableArguments {
    package init() {}

    @Option(name: .long, help: "The ledger file (default: $LEDGER_DATABASE, else ./ledger.sqlite).")
    package var database: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The customer the command acts for (`ledger customers list`); with one in the store, it may be left out.",
            valueName: "name"))
    package var customer: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The app the command acts in (`ledger apps list`); with one in the store, it may be left out.",
            valueName: "bundle-id"))
    package var app: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The customer's device the command runs on (`ledger devices list`); with one, it may be left out.",
            valueName: "name"))
    package var device: String?

    @Flag(name: .long, help: "Print exactly one JSON document on stdout.")
    package var json = false

    @Option(name: .long, help: "full (default: survives power loss) or normal (survives a killed process).")
    package var durability: Durability = .full

    @Option(
        name: .long, parsing: .unconditional,
        help: ArgumentHelp(
            "Seconds to wait for another process that holds the ledger (default 30); then exit 75.",
            valueName: "seconds"))
    package var wait: Double = 30

    package func validate() throws {
        guard wait.isFinite, wait >= 0, wait <= 86_400 else {
            throw ValidationError("--wait takes a number of seconds from 0 to 86400")
        }
    }

    package var databasePath: String {
        database ?? ProcessInfo.processInfo.environment["LEDGER_DATABASE"].flatMap { $0.isEmpty ? nil : $0 }
            ?? "ledger.sqlite"
    }

    package var output: Output { Output(json: json) }

    /// Opens the ledger; only `mode: .createIfMissing` may create the file.
    package func openLedger(mode: Ledger.OpenMode = .existing, access: Ledger.Access = .readWrite) throws -> Ledger {
        OpenLedgers.keep(
            try Ledger.open(at: databasePath, mode: mode, access: access, configuration: try ledgerConfiguration()))
    }

    /// The configuration every command opens ledgers with: the options', then `configure`.
    package func ledgerConfiguration() throws -> LedgerConfiguration {
        let path = databasePath
        let wait = wait
        var configuration = LedgerConfiguration(
            durability: durability, busyTimeout: wait,
            onLockWait: {
                Output.message(
                    "another process holds the ledger \(path); waiting up to \(wait.formatted()) s (--wait SECONDS)...")
            })
        configuration.customer = customer
        configuration.app = app
        configuration.device = device
        return try Self.configure.withLock { $0 }(configuration)
    }

    /// What the process applies to every ledger configuration (`LedgerCLI.main(arguments:configure:)`):
    /// nothing in `ledger`; the lab's fault injection in `ledger-lab ledger ...`.
    static let configure = Mutex<@Sendable (LedgerConfiguration) throws -> LedgerConfiguration>({ $0 })

    /// Opens the ledger for a command that only reads: nothing is written to the file.
    package func openLedgerForReading() throws -> Ledger {
        try openLedger(access: .readOnly)
    }

    /// Opens the ledger and launches a payment queue on it.
    package func openQueue() throws -> PaymentQueue {
        try PaymentQueue(ledger: try openLedger())
    }
}

/// The ledgers a command opened, closed before the command exits on every path (errors
/// included), so that the final checkpoint runs before the process ends.
enum OpenLedgers {
    private static let open = Mutex<[Ledger]>([])

    static func keep(_ ledger: Ledger) -> Ledger {
        open.withLock { $0.append(ledger) }
        return ledger
    }

    /// The product identifier of the first open ledger's catalog nearest to `identifier`, for a
    /// "did you mean" after a typo.
    static func nearestProduct(to identifier: String) -> String? {
        guard let ledger = open.withLock({ $0.first }), let products = try? ledger.allProducts() else { return nil }
        return Suggestion.nearest(to: identifier, among: products.map(\.id))
    }

    /// Closes every ledger opened so far; the first failure is returned.
    static func closeAll() -> (any Error)? {
        let ledgers = open.withLock { ledgers in
            defer { ledgers.removeAll() }
            return ledgers
        }
        var failure: (any Error)?
        for ledger in ledgers.reversed() {
            do { try ledger.close() } catch { failure = failure ?? error }
        }
        return failure
    }
}
