import Foundation
public import StoreLedger

/// Code to crash-test: your purchase code (or the built-in `CrashWorkload`) driven by a seed
/// against a ledger, which a `CrashCampaign` cuts with faults at seeded points.
///
/// A run calls `prepare` on a fresh ledger with no fault armed, then `run` with the fault
/// armed: the fault (a power loss, an I/O error, a full disk) surfaces as an error thrown by
/// the ledger, and `run` stops there. The power then goes before anything is closed. The
/// ledger is reopened and checked against what `run` recorded in `context.log` (see
/// `InvariantChecker`), then by your own `check`.
///
/// Everything a run does must follow from `context.seed`: the same seed must make the same
/// calls, so that a failing run replays (`CrashRun(replay:)`). Only the ledger's file (and any
/// SQLite database opened through `FaultInjection.vfsName`) is subject to the faults.
public protocol CrashTestSubject: Sendable {
    /// Readies the new ledger at `context.ledgerPath` (it exists, empty) before the fault is
    /// armed: imports your catalog, say. The default does nothing.
    func prepare(_ context: CrashTestContext) async throws

    /// Runs your code against the ledger, choosing what to do with `context.random()`.
    /// Records in `context.log`, as soon as your code is told so, every change the ledger
    /// acknowledged (a transaction `add`, `finishTransactions`, a restore returned): the check
    /// requires each to survive. Throws the first error (the injected fault, most of the time).
    func run(_ context: CrashTestContext) async throws

    /// Your own checks of the reopened ledger after the crash (your app's promises: each
    /// consumable delivered once, say). The default finds nothing.
    func check(_ context: CrashTestContext, acknowledged: [Acknowledgement]) async -> [InvariantViolation]
}

extension CrashTestSubject {
    public func prepare(_ context: CrashTestContext) async throws {}

    public func check(_ context: CrashTestContext, acknowledged: [Acknowledgement]) async -> [InvariantViolation] { [] }
}

/// What a crash run gives its subject: where the ledger is, how to open it, the seed and the
/// log of acknowledged changes.
public struct CrashTestContext: Sendable {
    /// The ledger's file, in a fresh folder of its own.
    public let ledgerPath: String
    /// The run's folder: a subject may keep other files there.
    public let directory: String
    /// How to open the ledger: through the fault VFS, with the run's durability. Open every
    /// ledger of the run with it (`Ledger.open(at: context.ledgerPath, configuration:
    /// context.configuration)`).
    public let configuration: LedgerConfiguration
    /// The run's seed.
    public let seed: UInt64
    /// How many operations the run asks for.
    public let operations: Int
    /// Where `run` records what the ledger acknowledged.
    public let log: AcknowledgementLog

    /// A context with these values, for running a subject by hand; a `CrashRun` makes its own for
    /// each run.
    public init(
        ledgerPath: String, directory: String, configuration: LedgerConfiguration, seed: UInt64, operations: Int,
        log: AcknowledgementLog
    ) {
        self.ledgerPath = ledgerPath
        self.directory = directory
        self.configuration = configuration
        self.seed = seed
        self.operations = operations
        self.log = log
    }

    /// Ends the run as a power loss: what was not synced is lost. Call it last, before your
    /// ledgers close (closing checkpoints, which syncs what durability `normal` left unsynced
    /// and a crash would lose); without it the power goes once `run` returns.
    public func losePower() {
        FaultInjection.powerLoss()
    }

    /// A generator seeded by the run's seed: the same sequence at every replay.
    public func random() -> SplitMix64 {
        SplitMix64(seed: seed)
    }
}

extension CrashWorkload: CrashTestSubject {
    /// The built-in workload as a subject: the context's seed and operations replace the
    /// workload's own.
    public static var subject: CrashWorkload { CrashWorkload(seed: 0, operations: 0) }

    /// The built-in workload on a store of several customers and devices (`customers`): what
    /// `ledger-lab crash-campaign` runs.
    public static var storeSubject: CrashWorkload { CrashWorkload(seed: 0, operations: 0, customers: true) }

    public func prepare(_ context: CrashTestContext) async throws {
        try Self.prepareLedger(at: context.ledgerPath, configuration: context.configuration, customers: customers)
    }

    public func run(_ context: CrashTestContext) async throws {
        let workload = CrashWorkload(
            seed: context.seed, operations: context.operations, sharesLedger: sharesLedger, customers: customers)
        let failure = await workload.run(
            ledgerAt: context.ledgerPath, configuration: context.configuration, log: context.log, powerLossAtEnd: true)
        if let error = failure {
            throw error
        }
    }
}
