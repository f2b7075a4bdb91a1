import ArgumentParser
import Foundation
import StoreLedger

/// Opens a ledger, launches on it and prints its resident memory in MB: for `ledger-lab bench`,
/// which measures the shipped `ledger` this way (hidden from the help).
struct BenchMemoryProbeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "bench-memory-probe", shouldDisplay: false)

    @OptionGroup var options: GlobalOptions

    func run() async throws {
        let queue = try options.openQueue()
        try await queue.add(DiscardingObserver())
        _ = try queue.ledger.counts()
        print(String(format: "%.1f", Memory.residentMB))
    }
}

/// Receives the launch's deliveries, as an app's observer would, and keeps nothing.
private final class DiscardingObserver: PaymentTransactionObserver {
    func paymentQueue(_ queue: PaymentQueue, updatedTransactions transactions: [PaymentTransaction]) async {}
}

/// The process's memory, from /proc/self/status.
package enum Memory {
    package static var residentMB: Double { field("VmRSS:") }
    package static var peakMB: Double { field("VmHWM:") }

    /// Resets the peak resident size, so that it measures from now (Linux: /proc/self/clear_refs).
    package static func resetPeak() {
        try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
    }

    private static func field(_ name: String) -> Double {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix(name) }),
              let kilobytes = Double(line.split(separator: " ").dropFirst().first ?? "")
        else { return 0 }
        return kilobytes / 1024
    }
}

/// Runs the `ledger` command given after it in this process, then prints the process's peak
/// resident memory in MB as the last line of stderr: for `ledger-lab bench`, which cannot
/// read a child's own peak from `wait4` (on Linux a child's maximum counts the parent's memory
/// before `exec`) (hidden from the help).
struct BenchPeakMemoryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "bench-peak-memory", shouldDisplay: false)

    @Argument(parsing: .captureForPassthrough) var arguments: [String] = []

    func run() async throws {
        let parsed = try LedgerRootCommand.parseAsRoot(arguments)
        if var command = parsed as? any AsyncParsableCommand {
            try await command.run()
        } else {
            var command = parsed
            try command.run()
        }
        FileHandle.standardError.write(Data(String(format: "peak resident MB: %.1f\n", Memory.peakMB).utf8))
    }
}
