public import ArgumentParser
import Foundation
import LedgerCommand
import LedgerTesting
import StoreLedger

/// `ledger-lab`: the project's laboratory, kept out of the shipped `ledger`: the benchmark and
/// its raw-SQLite baseline, the crash campaigns and their workload, and `ledger` commands run
/// through the fault-injecting VFS.
public struct LabRootCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "ledger-lab",
        abstract: "Benchmarks, crash campaigns and fault injection for StoreLedger (not shipped with `ledger`).",
        discussion: """
            `ledger-lab ledger ARGUMENTS...` runs one `ledger` command; with \
            STORELEDGER_FAULT=KIND@write:N or KIND@sync:N (KIND: power, io, io-persistent, disk-full) it opens \
            the ledger through the fault VFS with that fault armed.
            """,
        subcommands: [
            BenchCommand.self, CrashCampaignCommand.self, CrashRunCommand.self, TortureCommand.self,
            LedgerThroughLab.self,
            QueueThreadsCommand.self, PeakMemoryCommand.self, ConstantServerCommand.self,
        ])

    public init() {}

    /// The `ledger-lab` executable's entry point.
    public static func run() async {
        await runAsRoot(Self.self, arguments: Array(CommandLine.arguments.dropFirst()))
    }
}

/// `ledger-lab ledger ARGUMENTS...`: the `ledger` command with those arguments, in this process,
/// its ledgers opened with the fault that STORELEDGER_FAULT arms (none without it).
struct LedgerThroughLab: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ledger",
        abstract: "Run one `ledger` command, through the fault VFS when STORELEDGER_FAULT is set.")

    @Argument(parsing: .captureForPassthrough, help: "The `ledger` command and its arguments.")
    var arguments: [String] = []

    func run() async throws {
        let fault = try FaultSetting(environment: ProcessInfo.processInfo.environment["STORELEDGER_FAULT"])
        await LedgerCLI.main(arguments: arguments, configure: { fault?.arm($0) ?? $0 })
    }
}

/// A fault to arm for one `ledger` command: `KIND@write:N` or `KIND@sync:N`.
struct FaultSetting: Sendable {
    let kind: FaultInjection.Fault
    let atWrite: Bool
    let nth: Int64
    let persistent: Bool

    /// `nil` when the variable is unset or empty.
    init?(environment value: String?) throws {
        guard let value, !value.isEmpty else { return nil }
        let parts = value.split(separator: "@").map(String.init)
        let point = parts.count == 2 ? parts[1].split(separator: ":").map(String.init) : []
        guard point.count == 2, let nth = Int64(point[1]), nth >= 1, ["write", "sync"].contains(point[0]) else {
            throw ValidationError("invalid STORELEDGER_FAULT \"\(value)\": use KIND@write:N or KIND@sync:N")
        }
        switch parts[0] {
        case "power": kind = .powerLoss
        case "io", "io-persistent": kind = .ioError
        case "disk-full": kind = .diskFull
        default:
            throw ValidationError(
                "invalid STORELEDGER_FAULT kind \"\(parts[0])\": power, io, io-persistent or disk-full")
        }
        atWrite = point[0] == "write"
        self.nth = nth
        persistent = parts[0] != "io"
    }

    /// Arms the fault and returns `configuration` opened through the fault VFS.
    func arm(_ configuration: LedgerConfiguration) -> LedgerConfiguration {
        FaultInjection.reset()
        if atWrite {
            FaultInjection.arm(kind, atWrite: nth, persistent: persistent)
        } else {
            FaultInjection.arm(kind, atSync: nth, persistent: persistent)
        }
        return FaultInjection.configuration(configuration)
    }
}
