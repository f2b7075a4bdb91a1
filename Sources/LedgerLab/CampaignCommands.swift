import ArgumentParser
import Foundation
import LedgerCommand
import LedgerTesting
import StoreLedger

/// `ledger-lab crash-campaign`: seeded crash runs against the crash invariants (`InvariantChecker`), until a
/// number of runs or minutes is reached. Every failing run prints the command that replays it.
/// `tools/crash-campaign` wraps it.
struct CrashCampaignCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "crash-campaign",
        abstract: "Run a crash campaign: power losses, I/O errors and SIGKILLs at seeded random points.",
        discussion: "Ends with the line `N passed, M failed`; exit 1 when any run broke an invariant.")

    enum Mode: String, ExpressibleByArgument, CaseIterable { case power, io, kill, all }

    @Option(help: "Stop after this many minutes.")
    var minutes: Double?

    @Option(help: "Stop after this many runs (default 30 when --minutes is not given).")
    var iterations: Int?

    @Option(help: "The first run's seed; run i uses seed + i.")
    var seed: UInt64 = 1

    @Option(help: "power, io, kill or all (taking turns).")
    var mode: Mode = .all

    @Option(help: "Write the campaign's figures, as Markdown, to this file.")
    var report: String?

    func validate() throws {
        if let minutes, minutes <= 0 { throw ValidationError("--minutes must be positive") }
        if let iterations, iterations < 1 { throw ValidationError("--iterations must be at least 1") }
    }

    func run() async throws {
        let modes: [Mode] = mode == .all ? [.power, .io, .kill] : [mode]
        let limit = iterations ?? (minutes == nil ? 30 : Int.max)
        let started = Date()
        var figures = CampaignFigures()
        var index = 0
        var lastProgress = Date.distantPast
        while index < limit, minutes.map({ Date().timeIntervalSince(started) < $0 * 60 }) ?? true {
            let runMode = modes[index % modes.count]
            let runSeed = seed &+ UInt64(index)
            let result = try await CampaignRun.run(runMode, seed: runSeed)
            figures.add(runMode, result)
            if !result.violations.isEmpty {
                let lines =
                    [
                        "FAILED \(runMode.rawValue) run, seed \(runSeed): replay with `ledger-lab crash-run \(result.replay)`"
                    ]
                    + result.violations.map { "  \($0)" }
                FileHandle.standardOutput.write(Data((lines.joined(separator: "\n") + "\n").utf8))
            }
            index += 1
            if Date().timeIntervalSince(lastProgress) >= 5 || index == limit {
                lastProgress = Date()
                FileHandle.standardOutput.write(
                    Data((figures.progressLine(elapsed: Date().timeIntervalSince(started)) + "\n").utf8))
            }
        }
        print(figures.progressLine(elapsed: Date().timeIntervalSince(started)))
        if let report {
            let command = (["tools/crash-campaign"] + CommandLine.arguments.dropFirst(2)).joined(separator: " ")
            try figures.markdown(command: command, elapsed: Date().timeIntervalSince(started))
                .write(toFile: report, atomically: true, encoding: .utf8)
        }
        print("\(figures.passed) passed, \(figures.failed) failed")
        if figures.failed > 0 { throw ExitCode(LedgerExitCode.refused) }
    }
}

/// `ledger-lab crash-run`: one crash run, replayed from the flags a campaign printed.
struct CrashRunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "crash-run", abstract: "Replay one crash run of a campaign.")

    enum FaultName: String, ExpressibleByArgument, CaseIterable {
        case power, io
        case ioPersistent = "io-persistent"
        case diskFull = "disk-full"
        case kill
    }

    @Option var fault: FaultName
    @Option var seed: UInt64
    @Option var operations: Int
    @Option(name: .customLong("at-write")) var atWrite: Int64?
    @Option(name: .customLong("at-sync")) var atSync: Int64?
    @Option(help: "lose-all, lose-random:SEED, torn or keep-all.") var loss = "lose-all"
    @Option var durability: Durability = .full
    @Option(name: .customLong("kill-after-ms")) var killAfter: Int = 100

    func run() async throws {
        let result: CampaignRun.Result
        if fault == .kill {
            result = try await CampaignRun.kill(seed: seed, operations: operations, afterMilliseconds: killAfter)
        } else {
            guard let trigger = atWrite.map(CrashRun.Trigger.write) ?? atSync.map(CrashRun.Trigger.sync) else {
                throw ValidationError("give --at-write N or --at-sync N")
            }
            guard let lossMode = CrashRun.lossMode(loss) else { throw ValidationError("unknown --loss \(loss)") }
            let kind: FaultInjection.Fault =
                switch fault {
                case .power: .powerLoss
                case .diskFull: .diskFull
                default: .ioError
                }
            let run = CrashRun(
                seed: seed, operations: operations, fault: kind, trigger: trigger, lossMode: lossMode,
                durability: durability,
                persistent: fault == .ioPersistent || fault == .diskFull)
            result = await CampaignRun.execute(run)
        }
        for violation in result.violations { print(violation) }
        print(result.violations.isEmpty ? "1 passed, 0 failed" : "0 passed, 1 failed")
        if !result.violations.isEmpty { throw ExitCode(LedgerExitCode.refused) }
    }
}

/// One run of a campaign, in a fresh temporary folder.
enum CampaignRun {
    struct Result {
        var violations: [InvariantViolation]
        var faultFired: Bool
        var faults: Int64
        var acknowledged: Int
        var replay: String
    }

    static func run(_ mode: CrashCampaignCommand.Mode, seed: UInt64) async throws -> Result {
        switch mode {
        case .kill, .all:
            var random = SplitMix64(seed: seed)
            return try await kill(seed: seed, operations: 5_000, afterMilliseconds: 30 + Int(random.next() % 470))
        case .power, .io:
            let campaign = CrashCampaign(progress: nil)
            return await execute(
                try await campaign.plannedRun(
                    mode == .power ? .power : .io, seed: seed, subject: CrashWorkload.storeSubject)
            )
        }
    }

    static func execute(_ run: CrashRun) async -> Result {
        let outcome = await run.runInTemporaryFolder(CrashWorkload.storeSubject)
        return Result(
            violations: outcome.violations, faultFired: outcome.faultFired, faults: FaultInjection.counters.faults,
            acknowledged: outcome.acknowledged, replay: run.description)
    }

    /// The workload in a child `ledger-lab torture` process, killed with SIGKILL after a delay.
    static func kill(seed: UInt64, operations: Int, afterMilliseconds delay: Int) async throws -> Result {
        try await withTemporaryDirectory { folder in
            let database = folder + "/ledger.sqlite"
            let ackLog = folder + "/acks.jsonl"
            let child = Process()
            child.executableURL = URL(
                fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            child.arguments = [
                "torture", "--customers", "--seed", "\(seed)", "--operations", "\(operations)", "--ack-log", ackLog,
                "--database",
                database,
            ]
            child.standardOutput = FileHandle.nullDevice
            child.standardError = FileHandle.nullDevice
            try child.run()
            try await Task.sleep(for: .milliseconds(delay))
            let killed = child.isRunning
            Foundation.kill(child.processIdentifier, SIGKILL)
            child.waitUntilExit()
            let acknowledged = (try? AcknowledgementLog.read(from: ackLog)) ?? []
            var violations: [InvariantViolation] = []
            if FileManager.default.fileExists(atPath: database) {
                violations = await InvariantChecker.check(
                    ledgerAt: database, configuration: LedgerConfiguration(), acknowledged: acknowledged)
            }
            return Result(
                violations: violations, faultFired: killed, faults: killed ? 1 : 0, acknowledged: acknowledged.count,
                replay: "--fault kill --seed \(seed) --operations \(operations) --kill-after-ms \(delay)")
        }
    }
}

/// What a campaign counted.
struct CampaignFigures {
    var runs: [CrashCampaignCommand.Mode: Int] = [:]
    var crashPoints = 0
    var faults: Int64 = 0
    var acknowledged = 0
    var passed = 0
    var failed = 0
    var violations = 0

    mutating func add(_ mode: CrashCampaignCommand.Mode, _ result: CampaignRun.Result) {
        runs[mode, default: 0] += 1
        if result.faultFired { crashPoints += 1 }
        faults += result.faults
        acknowledged += result.acknowledged
        violations += result.violations.count
        if result.violations.isEmpty { passed += 1 } else { failed += 1 }
    }

    func progressLine(elapsed: TimeInterval) -> String {
        let total = runs.values.reduce(0, +)
        let byMode = CrashCampaignCommand.Mode.allCases.compactMap { mode in runs[mode].map { "\(mode.rawValue) \($0)" }
        }
        return "[\(Int(elapsed))s] runs \(total) (\(byMode.joined(separator: ", "))), crash points \(crashPoints), "
            + "faults injected \(faults), acknowledged changes checked \(acknowledged), violations \(violations)"
    }

    func markdown(command: String, elapsed: TimeInterval) -> String {
        let total = runs.values.reduce(0, +)
        var rows = ["| figure | value |", "|---|---|", "| runs | \(total) |"]
        for mode in CrashCampaignCommand.Mode.allCases {
            if let n = runs[mode] { rows.append("| \(mode.rawValue) runs | \(n) |") }
        }
        rows += [
            "| crash points (faults that cut a run, kills that landed mid-run) | \(crashPoints) |",
            "| faults injected | \(faults) |",
            "| acknowledged changes checked | \(acknowledged) |",
            "| invariant violations | \(violations) |",
            "| runs passed / failed | \(passed) / \(failed) |",
            "| duration | \(Int(elapsed)) s |",
        ]
        let date = Date().formatted(Date.ISO8601FormatStyle())
        return """
            Produced by `\(command)` on \(date) (\(ProcessInfo.processInfo.processorCount) cores):

            \(rows.joined(separator: "\n"))

            """
    }
}
