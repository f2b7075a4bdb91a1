import ArgumentParser
import Foundation
import LedgerCommand

/// `ledger-lab peak-memory ARGUMENTS...`: the `ledger` command with those arguments, in this
/// process, then the process's peak resident memory in MB as the last line of stderr, for
/// `bench`. A child's own peak cannot be read from `wait4` instead: on Linux its maximum
/// counts the parent's memory before `exec` (hidden from the help).
struct PeakMemoryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "peak-memory", shouldDisplay: false)

    @Argument(parsing: .captureForPassthrough) var arguments: [String] = []

    func run() async throws {
        // The command exits the process: the peak is printed on the way out.
        atexit {
            FileHandle.standardError.write(Data(String(format: "\(Memory.peakPrefix)%.1f\n", Memory.peakMB).utf8))
        }
        await LedgerCLI.main(arguments: arguments)
    }
}

/// The process's memory, from /proc/self/status.
enum Memory {
    static var residentMB: Double { field("VmRSS:") }
    static var peakMB: Double { field("VmHWM:") }
    /// What `peak-memory`'s last line starts with.
    static let peakPrefix = "peak resident MB: "

    /// Resets the peak resident size, so that it measures from now (Linux: /proc/self/clear_refs).
    static func resetPeak() {
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
