import Foundation
public import StoreLedger

/// Seeded crash runs against a `CrashTestSubject`: run `i` uses seed `seed + i` to pick how many
/// operations the subject makes, the durability, the fault (a power loss; an I/O error or a full
/// disk), where it strikes (the n-th write or sync the run would make) and what a power loss
/// keeps of the unsynced writes. Every failing run comes with the line that replays it
/// (`CrashRun(replay:)`).
///
/// ```swift
/// let report = try await CrashCampaign(seed: 1, runs: 40).run(MyPurchaseCode())
/// #expect(report.failures.isEmpty, "\(report)")
/// ```
///
/// The faults are the process's (`FaultInjection`): a campaign has them to itself while it runs
/// (`FaultInjection.exclusively`), and so do tests marked `.faultInjection`.
public struct CrashCampaign: Sendable {
    /// Which faults the runs take turns with.
    public enum Fault: String, Sendable, CaseIterable {
        /// A power loss at a write or a sync (with durability `full`, or `normal` one run in four).
        case power
        /// An I/O error or a full disk at a write or a sync, once or from then on.
        case io
    }

    /// The first run's seed.
    public var seed: UInt64
    /// How many runs.
    public var runs: Int
    /// The faults, in turn.
    public var faults: [Fault]
    /// The number of operations a run asks its subject for, picked in this range.
    public var operations: ClosedRange<Int>
    /// Where the progress line goes: standard error when it is a terminal, by default.
    public var progress: (@Sendable (String) -> Void)?

    /// A campaign of `runs` runs from `seed`, taking turns with `faults`, each run asking its subject
    /// for a number of operations picked in `operations`; `progress` gets the progress line (`nil`:
    /// none). Requires `runs` of 0 or more, at least one fault and at least 1 operation.
    public init(
        seed: UInt64 = 1, runs: Int = 30, faults: [Fault] = Fault.allCases, operations: ClosedRange<Int> = 20...199,
        progress: (@Sendable (String) -> Void)? = CrashCampaign.terminalProgress
    ) {
        self.seed = seed
        self.runs = runs
        self.faults = faults
        self.operations = operations
        self.progress = progress
    }

    /// Runs the campaign: each run in a fresh temporary folder, removed afterwards; the fault
    /// VFS to itself meanwhile (`FaultInjection.exclusively`).
    /// - Throws: `CrashCampaign.InvalidCampaign` (before any run) when `runs` is negative,
    ///   `faults` is empty, or `operations` is not within `1...operationLimit`.
    public func run(_ subject: some CrashTestSubject) async throws -> Report {
        try validate()
        return try await FaultInjection.exclusively { try await unscopedRun(subject) }
    }

    private func validate() throws {
        if runs < 0 { throw InvalidCampaign(reason: "runs is \(runs): it cannot be negative") }
        if faults.isEmpty { throw InvalidCampaign(reason: "faults is empty: give at least one") }
        guard operations.lowerBound >= 1, operations.upperBound <= Self.operationLimit else {
            throw InvalidCampaign(reason: "operations \(operations) is not within 1...\(Self.operationLimit)")
        }
    }

    /// The most operations one run may ask for: a run's work, and the time to measure where its
    /// fault goes, stay bounded.
    public static let operationLimit = 100_000

    /// A campaign `run` refuses; nothing ran.
    public struct InvalidCampaign: DescribedError, Sendable, Equatable {
        /// What is wrong with the campaign's settings.
        public var reason: String

        /// An error saying `reason`.
        public init(reason: String) {
            self.reason = reason
        }

        /// "invalid crash campaign: " and the reason.
        public var description: String { "invalid crash campaign: \(reason)" }
    }

    private func unscopedRun(_ subject: some CrashTestSubject) async throws -> Report {
        var report = Report()
        let started = ContinuousClock.now
        for index in 0..<runs {
            let fault = faults[index % faults.count]
            let runSeed = seed &+ UInt64(index)
            let run = try await plannedRun(fault, seed: runSeed, subject: subject)
            let outcome = await run.runInTemporaryFolder(subject)
            report.add(run, outcome)
            progress?(
                "\r[\(Int((ContinuousClock.now - started).components.seconds))s] run \(index + 1)/\(runs): \(report.summary)"
            )
        }
        progress?("\n")
        return report
    }

    /// The run of `seed` with `fault`. Where the fault strikes is drawn among the writes and
    /// syncs the subject makes in a run without faults, so the run is the same at every call
    /// when the subject's writes follow from the seed alone (the built-in workload's bursts of
    /// concurrent payments share commits as timing allows: their count of syncs varies).
    /// - Throws: `CrashCampaign.InvalidCampaign` as `run` does.
    public func plannedRun(_ fault: Fault, seed: UInt64, subject: some CrashTestSubject) async throws -> CrashRun {
        try validate()
        var random = SplitMix64(seed: seed)
        // The range's size in UInt64 (0 standing for all 2^64 values), so that no range traps.
        let span = UInt64(bitPattern: Int64(operations.upperBound &- operations.lowerBound)) &+ 1
        let operations =
            operations.lowerBound &+ Int(truncatingIfNeeded: span == 0 ? random.next() : random.next() % span)
        let durability: Durability = fault == .power && random.next() % 4 == 0 ? .normal : .full
        let (writes, syncs) = await CrashRun.withTemporaryFolder {
            await CrashRun.measure(subject, seed: seed, operations: operations, durability: durability, in: $0)
        }
        let onSync = random.next() % 10 < 3 && syncs > 0
        let trigger: CrashRun.Trigger =
            onSync
            ? .sync(1 + Int64(random.next() % UInt64(syncs)))
            : .write(1 + Int64(random.next() % UInt64(max(writes, 1))))
        let losses: [FaultInjection.LossMode] = [.loseAll, .loseRandom(seed: random.next()), .tornLastWrite, .keepAll]
        let kind: FaultInjection.Fault = fault == .power ? .powerLoss : (random.next() % 3 == 0 ? .diskFull : .ioError)
        return CrashRun(
            seed: seed, operations: operations, fault: kind, trigger: trigger,
            lossMode: losses[Int(random.next() % UInt64(losses.count))], durability: durability,
            persistent: kind == .diskFull || (kind == .ioError && random.next() % 2 == 0))
    }

    /// Writes the progress line on standard error when it is a terminal (rewriting one line).
    public static var terminalProgress: (@Sendable (String) -> Void)? {
        guard isatty(STDERR_FILENO) != 0 else { return nil }
        return { line in FileHandle.standardError.write(Data(line.utf8)) }
    }

    /// What a campaign found.
    public struct Report: Sendable, CustomStringConvertible {
        /// A run that broke an invariant, and the line that replays it.
        public struct Failure: Sendable, CustomStringConvertible {
            /// The run that failed: its parameters replay it.
            public var run: CrashRun
            /// The invariants the run broke, as its checks reported them.
            public var violations: [InvariantViolation]

            /// `CrashRun(replay:)` takes it back.
            public var replay: String { run.description }

            public var description: String {
                (["run \(replay)"] + violations.map { "  \($0)" }).joined(separator: "\n")
            }
        }

        /// How many runs were made.
        public private(set) var runs = 0
        /// Runs whose fault struck before the subject ended.
        public private(set) var faultsFired = 0
        /// Acknowledged changes checked after the crashes.
        public private(set) var acknowledgedChecked = 0
        /// The runs that broke an invariant.
        public private(set) var failures: [Failure] = []

        /// An empty report: no runs yet.
        public init() {}

        mutating func add(_ run: CrashRun, _ outcome: CrashRun.Outcome) {
            runs += 1
            if outcome.faultFired { faultsFired += 1 }
            acknowledgedChecked += outcome.acknowledged
            if !outcome.violations.isEmpty { failures.append(Failure(run: run, violations: outcome.violations)) }
        }

        /// One line: runs, faults, acknowledged changes checked, failures.
        public var summary: String {
            "\(runs - failures.count) passed, \(failures.count) failed (faults struck in \(faultsFired) runs, "
                + "\(acknowledgedChecked) acknowledged changes checked)"
        }

        public var description: String {
            ([summary] + failures.map(\.description)).joined(separator: "\n")
        }
    }
}

extension CrashRun {
    /// Runs `subject` in a fresh temporary folder, removed afterwards.
    public func runInTemporaryFolder(_ subject: some CrashTestSubject) async -> Outcome {
        await Self.withTemporaryFolder { await run(subject, in: $0) }
    }

    /// Reads back a run from its `description` (what a campaign prints for a failing run):
    /// `--fault power --seed 7 --operations 40 --at-write 12 --loss lose-all --durability full`.
    /// - Throws: `CrashRun.ReplayError` naming the part it cannot read.
    public init(replay line: String) throws {
        var values: [String: String] = [:]
        let words = line.split(separator: " ").map(String.init)
        var index = 0
        while index < words.count {
            let name = words[index]
            guard name.hasPrefix("--"), index + 1 < words.count, values[name] == nil else {
                throw ReplayError(line: line, part: name)
            }
            values[name] = words[index + 1]
            index += 2
        }
        func value<T>(_ name: String, _ parse: (String) -> T?) throws -> T {
            guard let text = values.removeValue(forKey: name), let value = parse(text) else {
                throw ReplayError(line: line, part: name)
            }
            return value
        }
        let (fault, persistent): (FaultInjection.Fault, Bool) = try value("--fault") {
            switch $0 {
            case "power": (.powerLoss, false)
            case "io": (.ioError, false)
            case "io-persistent": (.ioError, true)
            case "disk-full": (.diskFull, true)
            case "disk-full-once": (.diskFull, false)
            default: nil
            }
        }
        let seed = try value("--seed") { UInt64($0) }
        let operations = try value("--operations") { Int($0).flatMap { $0 >= 1 ? $0 : nil } }
        let trigger: Trigger =
            if values["--at-write"] != nil {
                .write(try value("--at-write") { Int64($0).flatMap { $0 >= 1 ? $0 : nil } })
            } else {
                .sync(try value("--at-sync") { Int64($0).flatMap { $0 >= 1 ? $0 : nil } })
            }
        let lossMode = try value("--loss") { Self.lossMode($0) }
        let durability = try value("--durability") { Durability(rawValue: $0) }
        if let extra = values.keys.sorted().first { throw ReplayError(line: line, part: extra) }
        self.init(
            seed: seed, operations: operations, fault: fault, trigger: trigger, lossMode: lossMode,
            durability: durability,
            persistent: persistent)
    }

    /// A replay line `CrashRun(replay:)` cannot read.
    public struct ReplayError: DescribedError, Sendable, Equatable {
        /// The replay line, as given.
        public var line: String
        /// The flag that is missing, repeated, unknown or has a bad value.
        public var part: String

        /// The error for `line`, naming in `part` the flag that could not be read.
        public init(line: String, part: String) {
            self.line = line
            self.part = part
        }

        public var description: String { "cannot replay \"\(line)\": \(part) is missing, repeated, unknown or invalid" }
    }

    /// `lose-all`, `lose-random:SEED`, `torn` or `keep-all`.
    public static func lossMode(_ text: String) -> FaultInjection.LossMode? {
        switch text {
        case "lose-all": .loseAll
        case "torn": .tornLastWrite
        case "keep-all": .keepAll
        default:
            text.hasPrefix("lose-random:")
                ? UInt64(text.dropFirst("lose-random:".count)).map { .loseRandom(seed: $0) } : nil
        }
    }

    static func withTemporaryFolder<T>(_ body: (String) async -> T) async -> T {
        let folder = NSTemporaryDirectory() + "storeledger-crash-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        return await body(folder)
    }
}
