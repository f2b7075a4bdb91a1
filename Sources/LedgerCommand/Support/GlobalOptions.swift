import ArgumentParser
import Foundation
import Synchronization
import LedgerTesting
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

    @Option(name: .long, help: ArgumentHelp(
        "Seconds to wait for another process that holds the ledger (default 30); then exit 75.",
        valueName: "seconds"))
    var wait: Double = 30

    func validate() throws {
        guard wait.isFinite, wait >= 0, wait <= 86_400 else {
            throw ValidationError("--wait takes a number of seconds from 0 to 86400")
        }
    }

    var databasePath: String {
        database ?? ProcessInfo.processInfo.environment["LEDGER_DATABASE"].flatMap { $0.isEmpty ? nil : $0 }
            ?? "ledger.sqlite"
    }

    var output: Output { Output(json: json) }

    /// Opens the ledger; only `mode: .createIfMissing` may create the file.
    func openLedger(mode: Ledger.OpenMode = .existing, access: Ledger.Access = .readWrite) throws -> Ledger {
        OpenLedgers.keep(try Ledger.open(at: databasePath, mode: mode, access: access, configuration: try ledgerConfiguration()))
    }

    /// The configuration every command opens ledgers with. For tests of the tool itself,
    /// `STORELEDGER_FAULT=KIND@write:N` or `KIND@sync:N` (KIND: power, io, io-persistent,
    /// disk-full) opens the ledger through the fault VFS with that fault armed.
    func ledgerConfiguration() throws -> LedgerConfiguration {
        let path = databasePath, wait = wait
        let configuration = LedgerConfiguration(durability: durability, busyTimeout: wait, onLockWait: {
            Output.message("another process holds the ledger \(path); waiting up to \(wait.formatted()) s (--wait SECONDS)...")
        })
        guard let fault = ProcessInfo.processInfo.environment["STORELEDGER_FAULT"], !fault.isEmpty else { return configuration }
        let parts = fault.split(separator: "@").map(String.init)
        let point = parts.count == 2 ? parts[1].split(separator: ":").map(String.init) : []
        guard point.count == 2, let nth = Int64(point[1]), nth >= 1, ["write", "sync"].contains(point[0]) else {
            throw InputError(description: "invalid STORELEDGER_FAULT \"\(fault)\": use KIND@write:N or KIND@sync:N")
        }
        let kind: FaultInjection.Fault
        switch parts[0] {
        case "power": kind = .powerLoss
        case "io", "io-persistent": kind = .ioError
        case "disk-full": kind = .diskFull
        default: throw InputError(description: "invalid STORELEDGER_FAULT kind \"\(parts[0])\": power, io, io-persistent or disk-full")
        }
        FaultInjection.reset()
        let persistent = parts[0] != "io"
        if point[0] == "write" {
            FaultInjection.arm(kind, atWrite: nth, persistent: persistent)
        } else {
            FaultInjection.arm(kind, atSync: nth, persistent: persistent)
        }
        return FaultInjection.configuration(configuration)
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

/// The ledgers a command opened, closed before the command exits on every path (errors
/// included), so that the final checkpoint runs before the process ends.
enum OpenLedgers {
    private static let open = Mutex<[Ledger]>([])

    static func keep(_ ledger: Ledger) -> Ledger {
        open.withLock { $0.append(ledger) }
        return ledger
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
