import Foundation
public import StoreLedger

/// One crash run: a fresh ledger, a seeded workload cut by a fault, then the invariant check
/// of the reopened ledger. The same parameters replay the same run.
public struct CrashRun: Sendable, Hashable, CustomStringConvertible {
    /// Where the fault strikes: the n-th write to, or sync of, a database, WAL or journal file
    /// opened through the fault VFS, counted from 1 once the subject is prepared.
    public enum Trigger: Sendable, Hashable {
        /// At the n-th write (1-based).
        case write(Int64)
        /// At the n-th sync (1-based).
        case sync(Int64)
    }

    /// The seed the subject's operations follow from (`CrashTestContext.seed`).
    public var seed: UInt64
    /// How many operations the subject is asked for (`CrashTestContext.operations`).
    public var operations: Int
    /// What strikes at the trigger: a power loss, an I/O error or a full disk.
    public var fault: FaultInjection.Fault
    /// The write or sync at which the fault strikes.
    public var trigger: Trigger
    /// What the run's power losses (the fault's, and the one that ends every run) keep of the
    /// unsynced writes.
    public var lossMode: FaultInjection.LossMode
    /// The ledger's durability. With `normal`, the check lets the power loss lose a suffix of the
    /// acknowledged changes (not with loss mode `keepAll`, nor when the run is checked as `full`).
    public var durability: Durability
    /// For I/O errors and a full disk: the error repeats for every later write or sync. Always
    /// `false` for a power loss.
    public var persistent: Bool

    /// A run with these parameters: by default a power loss loses every unsynced write, the
    /// durability is `full` and an I/O error strikes once.
    public init(
        seed: UInt64, operations: Int, fault: FaultInjection.Fault, trigger: Trigger,
        lossMode: FaultInjection.LossMode = .loseAll, durability: Durability = .full, persistent: Bool = false
    ) {
        self.seed = seed
        self.operations = operations
        self.fault = fault
        self.trigger = trigger
        self.lossMode = lossMode
        self.durability = durability
        self.persistent = fault != .powerLoss && persistent  // a power loss has no repeat
    }

    public var description: String {
        let point =
            switch trigger {
            case .write(let n): "--at-write \(n)"
            case .sync(let n): "--at-sync \(n)"
            }
        let kind =
            switch fault {
            case .powerLoss: "power"
            case .ioError: persistent ? "io-persistent" : "io"
            case .diskFull: persistent ? "disk-full" : "disk-full-once"
            }
        return
            "--fault \(kind) --seed \(seed) --operations \(operations) \(point) --loss \(lossMode.name) --durability \(durability.rawValue)"
    }

    /// What happened: whether the fault fired, and the invariants it broke.
    public struct Outcome: Sendable {
        /// Whether the armed fault struck before the subject ended.
        public var faultFired: Bool
        /// How many acknowledgements the subject recorded (each checked against the reopened ledger).
        public var acknowledged: Int
        /// The broken invariants: the `InvariantChecker`'s, then the subject's own `check`'s; empty when
        /// the run passed.
        public var violations: [InvariantViolation]

        /// An outcome with these values.
        public init(faultFired: Bool, acknowledged: Int, violations: [InvariantViolation]) {
            self.faultFired = faultFired
            self.acknowledged = acknowledged
            self.violations = violations
        }
    }

    /// Runs the built-in `CrashWorkload` in `directory` (a fresh folder). With
    /// `checkingAsFull`, a run with durability `normal` is held to `full`'s rule (no
    /// acknowledged change lost): the control that shows the harness can fail.
    public func run(in directory: String, checkingAsFull: Bool = false) async -> Outcome {
        await run(CrashWorkload.subject, in: directory, checkingAsFull: checkingAsFull)
    }

    /// Runs `subject` in `directory` (a fresh folder): prepares a new ledger, arms the fault,
    /// runs the subject until the fault cuts it (or it ends), loses the power, then checks
    /// the reopened ledger (`InvariantChecker`, then the subject's own `check`).
    public func run(
        _ subject: some CrashTestSubject, in directory: String, checkingAsFull: Bool = false
    ) async -> Outcome {
        await FaultInjection.exclusively { await unscopedRun(subject, in: directory, checkingAsFull: checkingAsFull) }
    }

    private func unscopedRun(
        _ subject: some CrashTestSubject, in directory: String, checkingAsFull: Bool
    ) async -> Outcome {
        let context = self.context(in: directory, file: "ledger.sqlite", log: AcknowledgementLog())
        do {
            try await Self.prepare(subject, context)
        } catch {
            return Outcome(
                faultFired: false, acknowledged: 0,
                violations: [
                    InvariantViolation(invariant: 6, message: "could not prepare the ledger: \(error)")
                ])
        }
        FaultInjection.setLossMode(lossMode)
        switch trigger {
        case .write(let n): FaultInjection.arm(fault, atWrite: n, persistent: persistent)
        case .sync(let n): FaultInjection.arm(fault, atSync: n, persistent: persistent)
        }
        await Self.runUntilThePowerGoes(subject, context)
        let fired = FaultInjection.counters.faults > 0
        FaultInjection.powerOn()
        FaultInjection.disarm()
        // Only `normal` may lose a suffix, and only when the power loss loses writes.
        let lossAllowed = durability == .normal && lossMode != .keepAll && !checkingAsFull
        let acknowledged = context.log.acknowledgements
        var violations = await InvariantChecker.check(
            ledgerAt: context.ledgerPath, configuration: context.configuration, acknowledged: acknowledged,
            lossAllowed: lossAllowed)
        violations += await subject.check(context, acknowledged: acknowledged)
        return Outcome(faultFired: fired, acknowledged: acknowledged.count, violations: violations)
    }

    /// How many writes and syncs the built-in workload makes when nothing fails, to place faults.
    public static func measure(
        seed: UInt64, operations: Int, durability: Durability, in directory: String
    ) async -> (writes: Int64, syncs: Int64) {
        await measure(CrashWorkload.subject, seed: seed, operations: operations, durability: durability, in: directory)
    }

    /// How many writes and syncs `subject` makes when nothing fails, to place faults.
    public static func measure(
        _ subject: some CrashTestSubject, seed: UInt64, operations: Int, durability: Durability, in directory: String
    ) async -> (writes: Int64, syncs: Int64) {
        await FaultInjection.exclusively {
            await unscopedMeasure(subject, seed: seed, operations: operations, durability: durability, in: directory)
        }
    }

    private static func unscopedMeasure(
        _ subject: some CrashTestSubject, seed: UInt64, operations: Int, durability: Durability, in directory: String
    ) async -> (writes: Int64, syncs: Int64) {
        let run = CrashRun(
            seed: seed, operations: operations, fault: .powerLoss, trigger: .write(0), durability: durability)
        let context = run.context(in: directory, file: "measure.sqlite", log: AcknowledgementLog())
        do {
            try await prepare(subject, context)
        } catch {
            return (0, 0)
        }
        // As a run ends: the power goes before the close, whose writes then do not count.
        await runUntilThePowerGoes(subject, context)
        let counters = FaultInjection.counters
        FaultInjection.powerOn()
        return (counters.writes, counters.syncs)
    }

    /// Creates the run's ledger and lets the subject prepare it, with no fault armed; the
    /// fault VFS's counters start afterwards.
    static func prepare(_ subject: some CrashTestSubject, _ context: CrashTestContext) async throws {
        FaultInjection.reset()
        try Ledger.open(at: context.ledgerPath, mode: .createIfMissing, configuration: context.configuration).close()
        try await subject.prepare(context)
        FaultInjection.reset()
    }

    /// Runs the subject, then the power goes (again): whatever was not synced is lost whatever
    /// the fault was, so an acknowledged change must have been durable, not merely in the page
    /// cache. (The built-in workload loses it itself, before its ledger closes.)
    static func runUntilThePowerGoes(_ subject: some CrashTestSubject, _ context: CrashTestContext) async {
        try? await subject.run(context)
        if !FaultInjection.isPoweredOff { FaultInjection.powerLoss() }
    }

    func context(in directory: String, file: String, log: AcknowledgementLog) -> CrashTestContext {
        CrashTestContext(
            ledgerPath: directory + "/" + file, directory: directory,
            configuration: FaultInjection.configuration(
                LedgerConfiguration(durability: durability, headSigningInterval: .zero)),
            seed: seed, operations: operations, log: log)
    }
}
