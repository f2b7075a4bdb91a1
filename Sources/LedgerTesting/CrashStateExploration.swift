import CLedgerFaultVFS
import Foundation
public import StoreLedger
import Synchronization

/// Every crash state of one run of a subject, rebuilt from a trace and checked: the run is made
/// once, with no fault, while the fault VFS records every write, truncate, sync, open and delete
/// of the ledger's files in order. Afterwards, for each write and each sync of the trace (and
/// the run's end), the files are rebuilt as a power loss just before it would leave them: what
/// was synced, plus what each loss mode keeps of what was not (nothing; everything, which is
/// also what a SIGKILL at that moment leaves; everything with the last write of each file torn
/// after its first sector; a seeded random subset). Each distinct state is copied to a folder
/// of its own, reopened and checked (`InvariantChecker`, then the subject's `check`) against
/// the acknowledgements recorded before that point.
///
/// A `CrashRun` checks one crash point per run of the subject; this checks thousands from a
/// single run, so a long campaign reaches hundreds of thousands of states. A state whose files
/// are the same as one checked before is checked again only when more acknowledgements are due
/// by then, or when it is held to a stricter rule (nothing lost). What it cannot rebuild: the
/// code's behaviour after an I/O error (it goes on, so the trace no longer holds): `CrashRun`s
/// with I/O errors cover that. Only the ledger's database, WAL and journal are rebuilt: a
/// subject whose own check reads other files of its folder needs a `CrashCampaign`.
///
/// ```swift
/// let report = await CrashStateExploration(seed: 7, operations: 60).run(MyPurchaseCode())
/// #expect(report.failures.isEmpty, "\(report)")
/// ```
public struct CrashStateExploration: Sendable {
    /// The seed of the subject's run (`CrashTestContext.seed`).
    public var seed: UInt64
    /// How many operations the subject is asked for.
    public var operations: Int
    /// The ledger's durability; with `normal`, a state may lose a suffix of the acknowledgements
    /// (not with nothing lost, nor when checked as `full`).
    public var durability: Durability
    /// The most states checked: the work of one exploration stays bounded whatever the trace's
    /// length; the report says when points were left.
    public var stateLimit: Int
    /// How many states are checked at once (each on its own copy of the files).
    public var parallelChecks: Int
    /// Holds durability `normal` to `full`'s rule: the control that shows the check can fail.
    public var checkingAsFull: Bool

    /// An exploration of the run of `seed` with `operations` operations.
    public init(
        seed: UInt64, operations: Int, durability: Durability = .full, stateLimit: Int = 100_000,
        parallelChecks: Int = 2, checkingAsFull: Bool = false
    ) {
        self.seed = seed
        self.operations = operations
        self.durability = durability
        self.stateLimit = stateLimit
        self.parallelChecks = parallelChecks
        self.checkingAsFull = checkingAsFull
    }

    /// One crash state: the power went just before trace operation `operation`.
    public struct State: Sendable, Hashable, CustomStringConvertible {
        /// The trace operation (0-based) the power went before; the trace's length for its end.
        public var operation: Int
        /// What the power loss kept of the unsynced writes.
        public var loss: FaultInjection.LossMode
        /// What the subject was doing (`FaultInjection.label`).
        public var label: String

        public var description: String {
            "the power lost before trace operation \(operation) (\(label)), \(loss.name)"
        }
    }

    /// What an exploration found.
    public struct Report: Sendable, CustomStringConvertible {
        /// A state that broke an invariant, where its files were kept, and what it broke.
        public struct Failure: Error, Sendable, CustomStringConvertible {
            /// The state.
            public var state: State
            /// A copy of the state's files as rebuilt (before the check opened them), left for a look.
            public var keptAt: String?
            /// The invariants it broke.
            public var violations: [InvariantViolation]

            public var description: String {
                ([state.description + (keptAt.map { ", kept at \($0)" } ?? "")] + violations.map { "  \($0)" })
                    .joined(separator: "\n")
            }
        }

        /// How many operations the trace holds, and of them writes and syncs (the crash points).
        public internal(set) var traceOperations = 0
        /// The trace's writes.
        public internal(set) var writes = 0
        /// The trace's syncs.
        public internal(set) var syncs = 0
        /// Distinct crash states checked.
        public internal(set) var states = 0
        /// States (a point and a loss mode) whose files, acknowledgements due and rule were the
        /// same as a state checked already: not checked again.
        public internal(set) var duplicates = 0
        /// States by loss mode (`lose-all`, `keep-all`, `torn`, `lose-random`).
        public internal(set) var statesByLoss: [String: Int] = [:]
        /// States by what the subject was doing.
        public internal(set) var statesByLabel: [String: Int] = [:]
        /// Acknowledgements checked, over all the states.
        public internal(set) var acknowledgedChecked = 0
        /// Whether every crash point was reached within `stateLimit`.
        public internal(set) var complete = true
        /// The states that broke an invariant.
        public internal(set) var failures: [Failure] = []

        /// An empty report.
        public init() {}

        /// One line: states, duplicates, acknowledgements, failures.
        public var summary: String {
            "\(states) crash states checked (\(duplicates) repeated one), \(traceOperations) trace operations, "
                + "\(acknowledgedChecked) acknowledged changes checked, \(failures.count) failed"
        }

        public var description: String { ([summary] + failures.map(\.description)).joined(separator: "\n") }
    }

    /// Runs `subject` once, traced, with the fault VFS to itself (`FaultInjection.exclusively`),
    /// then checks every crash state of the trace (up to `stateLimit`) on copies of their own,
    /// leaving the VFS to others meanwhile.
    public func run(_ subject: some CrashTestSubject) async -> Report {
        let traced = await FaultInjection.exclusively {
            await CrashRun.withTemporaryFolder { folder in await trace(subject, in: folder) }
        }
        var report = Report()
        switch traced {
        case .failure(let failure):
            report.failures.append(failure)
        case .success(let (traced, acknowledged)):
            var replay = traced
            await check(&replay, subject, acknowledged: acknowledged, into: &report)
        }
        return report
    }

    /// The subject's run, traced; a failure when the ledger could not be prepared or traced.
    private func trace(
        _ subject: some CrashTestSubject, in folder: String
    ) async -> Result<(TraceReplay, [(acknowledgement: Acknowledgement, stamp: Int64)]), Report.Failure> {
        let run = CrashRun(
            seed: seed, operations: operations, fault: .powerLoss, trigger: .write(0), durability: durability)
        let context = run.context(in: folder, file: "ledger.sqlite", log: AcknowledgementLog())
        func failure(_ label: String, _ message: String) -> Report.Failure {
            .init(
                state: State(operation: 0, loss: .keepAll, label: label), keptAt: nil,
                violations: [InvariantViolation(invariant: 6, message: message)])
        }
        do {
            try await CrashRun.prepare(subject, context)
        } catch {
            return .failure(failure("prepare", "could not prepare the ledger: \(error)"))
        }
        let before = TraceReplay.Snapshot(of: context.ledgerPath)
        guard TraceReplay.startTrace() else {
            return .failure(failure("start", "the prepared ledger left unsynced writes to trace"))
        }
        defer { TraceReplay.clearTrace() }
        await CrashRun.runUntilThePowerGoes(subject, context)
        TraceReplay.stopTrace()
        FaultInjection.powerOn()
        if TraceReplay.traceIsIncomplete {
            return .failure(failure("trace", "the trace could not record every operation (memory ran out)"))
        }
        let replay = TraceReplay(snapshot: before, names: FaultInjection.labels.withLock { $0 })
        return .success((replay, context.log.stampedAcknowledgements))
    }

    /// Walks the trace, checking the states of every crash point as it goes.
    private func check(
        _ replay: inout TraceReplay, _ subject: some CrashTestSubject,
        acknowledged: [(acknowledgement: Acknowledgement, stamp: Int64)], into report: inout Report
    ) async {
        report.traceOperations = replay.count
        var seen = Set<Int>()
        var folders = (0..<max(parallelChecks, 1)).map { _ in
            NSTemporaryDirectory() + "storeledger-crash-state-\(UUID().uuidString)"
        }
        for folder in folders {
            try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        }
        defer { for folder in folders { try? FileManager.default.removeItem(atPath: folder) } }
        let checker = StateChecker(exploration: self, subject: subject)
        await withTaskGroup(of: (String, State, Int, [InvariantViolation], String?).self) { group in
            var acknowledgedCount = 0
            func collect(_ result: (String, State, Int, [InvariantViolation], String?)) {
                let (folder, state, acknowledged, violations, kept) = result
                folders.append(folder)
                report.acknowledgedChecked += acknowledged
                if !violations.isEmpty {
                    report.failures.append(.init(state: state, keptAt: kept, violations: violations))
                }
            }
            for index in 0...replay.count {
                let kind = index < replay.count ? replay.kind(of: index) : nil
                if let kind, kind != LFV_TRACE_WRITE.rawValue, kind != LFV_TRACE_SYNC.rawValue {
                    replay.apply(index)
                    continue
                }
                if kind == LFV_TRACE_WRITE.rawValue { report.writes += 1 }
                if kind == LFV_TRACE_SYNC.rawValue { report.syncs += 1 }
                while acknowledgedCount < acknowledged.count, acknowledged[acknowledgedCount].stamp <= index {
                    acknowledgedCount += 1
                }
                let label = index < replay.count ? replay.label(of: index) : "end of run"
                for loss in Self.losses(seed: seed, point: index) {
                    // The same files are checked again when more acknowledgements are due, or
                    // under a stricter rule: either can fail where the first check passed.
                    var key = Hasher()
                    key.combine(replay.identity(loss))
                    key.combine(acknowledgedCount)
                    key.combine(lossAllowed(loss))
                    guard seen.insert(key.finalize()).inserted else {
                        report.duplicates += 1
                        continue
                    }
                    guard report.states < stateLimit else {
                        report.complete = false
                        break
                    }
                    if folders.isEmpty, let done = await group.next() { collect(done) }
                    let folder = folders.removeLast()
                    let files = replay.files(loss)
                    report.states += 1
                    report.statesByLoss[loss.kindName, default: 0] += 1
                    report.statesByLabel[label, default: 0] += 1
                    let state = State(operation: index, loss: loss, label: label)
                    let acks = acknowledged.prefix(acknowledgedCount).map(\.acknowledgement)
                    group.addTask { await checker.check(state, files, in: folder, acknowledged: acks) }
                }
                if !report.complete { break }
                if index < replay.count { replay.apply(index) }
            }
            while let done = await group.next() { collect(done) }
        }
    }

    /// Whether a state of `loss` may lose a suffix of the acknowledgements: with durability
    /// `normal` when the loss lost writes, unless held to `full`'s rule.
    func lossAllowed(_ loss: FaultInjection.LossMode) -> Bool {
        durability == .normal && loss != .keepAll && !checkingAsFull
    }

    /// What a power loss before trace operation `point` may keep: nothing, everything, all with
    /// each file's last write torn, and a random subset seeded by the exploration's seed and the point.
    static func losses(seed: UInt64, point: Int) -> [FaultInjection.LossMode] {
        var random = SplitMix64(seed: seed ^ (UInt64(point) &* 0x9E37_79B9_7F4A_7C15))
        return [.loseAll, .keepAll, .tornLastWrite, .loseRandom(seed: random.next())]
    }
}

/// Checks one rebuilt state: reopens it, runs the invariant checker and the subject's check.
private struct StateChecker<Subject: CrashTestSubject>: Sendable {
    let exploration: CrashStateExploration
    let subject: Subject

    func check(
        _ state: CrashStateExploration.State, _ files: [TraceReplay.File], in folder: String,
        acknowledged: [Acknowledgement]
    ) async -> (String, CrashStateExploration.State, Int, [InvariantViolation], String?) {
        let path = folder + "/ledger.sqlite"
        TraceReplay.write(files, into: folder)
        let configuration = LedgerConfiguration(durability: exploration.durability, headSigningInterval: .zero)
        var violations = await InvariantChecker.check(
            ledgerAt: path, configuration: configuration, acknowledged: acknowledged,
            lossAllowed: exploration.lossAllowed(state.loss))
        let context = CrashTestContext(
            ledgerPath: path, directory: folder, configuration: configuration, seed: exploration.seed,
            operations: exploration.operations, log: AcknowledgementLog())
        violations += await subject.check(context, acknowledged: acknowledged)
        var kept: String?
        if !violations.isEmpty {
            // The state's files as rebuilt, before the check opened them, for a look.
            kept =
                NSTemporaryDirectory()
                + "storeledger-crash-state-\(exploration.seed)-\(state.operation)-\(state.loss.kindName)-"
                + UUID().uuidString.prefix(8)
            try? FileManager.default.createDirectory(atPath: kept!, withIntermediateDirectories: true)
            TraceReplay.write(files, into: kept!)
        }
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] {
            try? FileManager.default.removeItem(atPath: folder + "/" + name)
        }
        return (folder, state, acknowledged.count, violations, kept)
    }
}
