import ArgumentParser
import Foundation
import LedgerCommand
import LedgerTesting
import StoreLedger

/// `ledger-lab crash-campaign`: seeded crash runs against the crash invariants (`InvariantChecker`), until a
/// number of runs, minutes or crash states is reached. Every failing run prints the command that replays it.
/// `tools/crash-campaign` wraps it.
struct CrashCampaignCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "crash-campaign",
        abstract: "Run a crash campaign: power losses, I/O errors and SIGKILLs at seeded random points.",
        discussion: """
            Ends with the line `N passed, M failed`; exit 1 when any run broke an invariant. `--mode states` \
            traces each run once and checks every crash state of its trace (`CrashStateExploration`); \
            `--mode every` takes turns with states, power, io and kill runs.
            """)

    enum Mode: String, ExpressibleByArgument, CaseIterable, Codable { case power, io, kill, all, states, every }

    @Option(help: "Stop after this many minutes.")
    var minutes: Double?

    @Option(help: "Stop after this many runs (default 30 when neither --minutes nor --states is given).")
    var iterations: Int?

    @Option(help: "Stop once this many crash states were checked.")
    var states: Int?

    @Option(help: "The first run's seed; run i uses seed + i.")
    var seed: UInt64 = 1

    @Option(help: "power, io, kill, all (taking turns), states, or every (states, power, io and kill in turn).")
    var mode: Mode = .all

    @Option(help: "Write the campaign's figures, as Markdown, to this file.")
    var report: String?

    @Option(help: "Keep the campaign's progress in this file after every run, and go on from it when it exists.")
    var resume: String?

    func validate() throws {
        if let minutes, minutes <= 0 { throw ValidationError("--minutes must be positive") }
        if let iterations, iterations < 1 { throw ValidationError("--iterations must be at least 1") }
        if let states, states < 1 { throw ValidationError("--states must be at least 1") }
    }

    /// What `--resume` keeps: the campaign it belongs to, the next run and the figures so far.
    struct Progress: Codable {
        var seed: UInt64
        var mode: Mode
        var next: Int
        var elapsed: TimeInterval
        var figures: CampaignFigures
    }

    func run() async throws {
        let modes: [Mode] =
            switch mode {
            case .all: [.power, .io, .kill]
            case .every: [.states, .power, .io, .kill]
            default: [mode]
            }
        let limit = iterations ?? (minutes == nil && states == nil ? 30 : Int.max)
        var progress = Progress(seed: seed, mode: mode, next: 0, elapsed: 0, figures: CampaignFigures())
        if let resume, let data = FileManager.default.contents(atPath: resume) {
            let saved = try JSONDecoder().decode(Progress.self, from: data)
            guard saved.seed == seed, saved.mode == mode else {
                throw ValidationError(
                    "\(resume) holds the campaign of --seed \(saved.seed) --mode \(saved.mode.rawValue), not this one")
            }
            progress = saved
            print("resuming at run \(saved.next + 1), after \(Int(saved.elapsed)) s")
        }
        let started = Date().addingTimeInterval(-progress.elapsed)
        var lastProgress = Date.distantPast
        func elapsed() -> TimeInterval { Date().timeIntervalSince(started) }
        while progress.next < limit, minutes.map({ elapsed() < $0 * 60 }) ?? true,
            states.map({ progress.figures.crashStates < $0 }) ?? true
        {
            let index = progress.next
            let runMode = modes[index % modes.count]
            let runSeed = seed &+ UInt64(index)
            let result = try await CampaignRun.run(runMode, seed: runSeed)
            progress.figures.add(runMode, result)
            if !result.violations.isEmpty {
                let lines =
                    [
                        "FAILED \(runMode.rawValue) run, seed \(runSeed): replay with `ledger-lab \(result.replay)`"
                    ]
                    + result.violations.map { "  \($0)" }
                FileHandle.standardOutput.write(Data((lines.joined(separator: "\n") + "\n").utf8))
            }
            progress.next += 1
            progress.elapsed = elapsed()
            if let resume { try JSONEncoder().encode(progress).write(to: URL(fileURLWithPath: resume)) }
            if Date().timeIntervalSince(lastProgress) >= 5 || progress.next == limit {
                lastProgress = Date()
                FileHandle.standardOutput.write(Data((progress.figures.progressLine(elapsed: elapsed()) + "\n").utf8))
            }
        }
        print(progress.figures.progressLine(elapsed: elapsed()))
        if let report {
            let command = (["tools/crash-campaign"] + CommandLine.arguments.dropFirst(2)).joined(separator: " ")
            try progress.figures.markdown(command: command, elapsed: elapsed())
                .write(toFile: report, atomically: true, encoding: .utf8)
        }
        print("\(progress.figures.passed) passed, \(progress.figures.failed) failed")
        if progress.figures.failed > 0 { throw ExitCode(LedgerExitCode.refused) }
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
        /// A states run's exploration (`nil` for the other runs).
        var exploration: CrashStateExploration.Report? = nil
    }

    static func run(_ mode: CrashCampaignCommand.Mode, seed: UInt64) async throws -> Result {
        switch mode {
        case .kill, .all, .every:
            var random = SplitMix64(seed: seed)
            return try await kill(seed: seed, operations: 5_000, afterMilliseconds: 30 + Int(random.next() % 470))
        case .states:
            return await explore(seed: seed)
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

    /// Every crash state of one traced run of the store's workload: 20 to 120 operations,
    /// durability `normal` one run in four.
    static func explore(seed: UInt64) async -> Result {
        var random = SplitMix64(seed: seed)
        let operations = 20 + Int(random.next() % 101)
        let durability: Durability = random.next() % 4 == 0 ? .normal : .full
        let report = await CrashStateExploration(seed: seed, operations: operations, durability: durability)
            .run(CrashWorkload.storeSubject)
        return Result(
            violations: report.failures.flatMap { failure in
                failure.violations.map {
                    InvariantViolation(invariant: $0.invariant, message: "\(failure.state): \($0.message)")
                }
            },
            faultFired: report.states > 0, faults: 0, acknowledged: report.acknowledgedChecked,
            replay: "crash-campaign --mode states --seed \(seed) --iterations 1", exploration: report)
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
struct CampaignFigures: Codable {
    var runs: [CrashCampaignCommand.Mode: Int] = [:]
    var crashPoints = 0
    var faults: Int64 = 0
    var acknowledged = 0
    var passed = 0
    var failed = 0
    var violations = 0
    /// The states runs' figures: distinct states checked, states that repeated one, trace
    /// operations, and the states by loss mode and by what the workload was doing.
    var states = 0
    var repeatedPoints = 0
    var traceOperations = 0
    var statesByLoss: [String: Int] = [:]
    var statesByLabel: [String: Int] = [:]

    /// Crash states checked: every state of the states runs, and each other run's crash point.
    var crashStates: Int { states + crashPoints }

    mutating func add(_ mode: CrashCampaignCommand.Mode, _ result: CampaignRun.Result) {
        runs[mode, default: 0] += 1
        if let exploration = result.exploration {
            states += exploration.states
            repeatedPoints += exploration.duplicates
            traceOperations += exploration.traceOperations
            statesByLoss.merge(exploration.statesByLoss, uniquingKeysWith: +)
            statesByLabel.merge(exploration.statesByLabel, uniquingKeysWith: +)
        } else if result.faultFired {
            crashPoints += 1
        }
        faults += result.faults
        acknowledged += result.acknowledged
        violations += result.violations.count
        if result.violations.isEmpty { passed += 1 } else { failed += 1 }
    }

    func progressLine(elapsed: TimeInterval) -> String {
        let total = runs.values.reduce(0, +)
        let byMode = CrashCampaignCommand.Mode.allCases.compactMap { mode in runs[mode].map { "\(mode.rawValue) \($0)" }
        }
        return "[\(Int(elapsed))s] runs \(total) (\(byMode.joined(separator: ", "))), crash states \(crashStates) "
            + "(\(states) traced, \(crashPoints) crash points), "
            + "faults injected \(faults), acknowledged changes checked \(acknowledged), violations \(violations)"
    }

    func markdown(command: String, elapsed: TimeInterval) -> String {
        let total = runs.values.reduce(0, +)
        var rows = ["| figure | value |", "|---|---|", "| runs | \(total) |"]
        for mode in CrashCampaignCommand.Mode.allCases {
            if let n = runs[mode] { rows.append("| \(mode.rawValue) runs | \(n) |") }
        }
        rows += [
            "| crash states checked | \(crashStates) |",
            "| of them, states rebuilt from traces (distinct; states that repeated one checked: \(repeatedPoints)) | \(states) |",
            "| of them, crash points (faults that cut a run, kills that landed mid-run) | \(crashPoints) |",
            "| trace operations recorded | \(traceOperations) |",
            "| faults injected | \(faults) |",
            "| acknowledged changes checked | \(acknowledged) |",
            "| invariant violations | \(violations) |",
            "| runs passed / failed | \(passed) / \(failed) |",
            "| duration | \(Int(elapsed)) s |",
        ]
        let date = Date().formatted(Date.ISO8601FormatStyle())
        var text = """
            Produced by `\(command)` on \(date) (\(ProcessInfo.processInfo.processorCount) cores):

            \(rows.joined(separator: "\n"))

            """
        if states > 0 {
            let byLoss = statesByLoss.sorted { $0.key < $1.key }.map { "| \($0.key) | \($0.value) |" }
            let byLabel = statesByLabel.sorted { $0.value > $1.value }.map { "| \($0.key) | \($0.value) |" }
            text += """

                The traced states by what the power loss kept (`keep-all` is also what a SIGKILL leaves):

                | loss | states |
                |---|---|
                \(byLoss.joined(separator: "\n"))

                The traced states by what the workload was doing when the power went:

                | operation | states |
                |---|---|
                \(byLabel.joined(separator: "\n"))

                """
        }
        return text
    }
}
