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
