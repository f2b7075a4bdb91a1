import Foundation
import StoreLedger

/// One crash run: a fresh ledger, a seeded workload cut by a fault, then the invariant check
/// of the reopened ledger. The same parameters replay the same run.
public struct CrashRun: Sendable, Hashable, CustomStringConvertible {
    public enum Trigger: Sendable, Hashable {
        case write(Int64)
        case sync(Int64)
    }

    public var seed: UInt64
    public var operations: Int
    public var fault: FaultInjection.Fault
    public var trigger: Trigger
    public var lossMode: FaultInjection.LossMode
    public var durability: Durability
    /// For I/O errors: the error repeats for every later write or sync (a full disk).
    public var persistent: Bool

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
        self.persistent = persistent
    }

    public var description: String {
        let point = switch trigger {
        case .write(let n): "--at-write \(n)"
        case .sync(let n): "--at-sync \(n)"
        }
        let loss = switch lossMode {
        case .loseAll: "lose-all"
        case .loseRandom(let seed): "lose-random:\(seed)"
        case .tornLastWrite: "torn"
        case .keepAll: "keep-all"
        }
        let kind = switch fault {
        case .powerLoss: "power"
        case .ioError: persistent ? "io-persistent" : "io"
        case .diskFull: "disk-full"
        }
        return "--fault \(kind) --seed \(seed) --operations \(operations) \(point) --loss \(loss) --durability \(durability.rawValue)"
    }

    /// What happened: whether the fault fired, and the invariants it broke.
    public struct Outcome: Sendable {
        public var faultFired: Bool
        public var acknowledged: Int
        public var violations: [InvariantViolation]

        public init(faultFired: Bool, acknowledged: Int, violations: [InvariantViolation]) {
            self.faultFired = faultFired
            self.acknowledged = acknowledged
            self.violations = violations
        }
    }

    /// Runs in `directory` (a fresh folder). With `checkingAsFull`, a run with durability
    /// `normal` is held to `full`'s rule (no acknowledged change lost): the control that shows
    /// the harness can fail.
    public func run(in directory: String, checkingAsFull: Bool = false) async -> Outcome {
        let path = directory + "/ledger.sqlite"
        let configuration = FaultInjection.configuration(LedgerConfiguration(durability: durability))
        FaultInjection.reset()
        do {
            try CrashWorkload.prepareLedger(at: path, configuration: configuration)
        } catch {
            return Outcome(faultFired: false, acknowledged: 0, violations: [
                InvariantViolation(invariant: 6, message: "could not prepare the ledger: \(error)"),
            ])
        }
        FaultInjection.reset()
        FaultInjection.setLossMode(lossMode)
        switch trigger {
        case .write(let n): FaultInjection.arm(fault, atWrite: n, persistent: persistent)
        case .sync(let n): FaultInjection.arm(fault, atSync: n, persistent: persistent)
        }
        let log = AcknowledgementLog()
        // Every run ends with the power going (again) while the ledger is still open, so that
        // whatever was not synced is lost whatever the fault was: an acknowledged change must
        // have been durable, not merely in the page cache.
        _ = await CrashWorkload(seed: seed, operations: operations)
            .run(ledgerAt: path, configuration: configuration, log: log, powerLossAtEnd: true)
        let fired = FaultInjection.counters.faults > 0
        FaultInjection.powerOn()
        FaultInjection.disarm()
        // Only `normal` may lose a suffix, and only when the power loss loses writes.
        let lossAllowed = durability == .normal && lossMode != .keepAll && !checkingAsFull
        let violations = await InvariantChecker.check(
            ledgerAt: path, configuration: configuration, acknowledged: log.acknowledgements, lossAllowed: lossAllowed)
        return Outcome(faultFired: fired, acknowledged: log.acknowledgements.count, violations: violations)
    }

    /// How many writes and syncs the workload makes when nothing fails, to place faults.
    public static func measure(seed: UInt64, operations: Int, durability: Durability, in directory: String) async -> (writes: Int64, syncs: Int64) {
        let path = directory + "/measure.sqlite"
        let configuration = FaultInjection.configuration(LedgerConfiguration(durability: durability))
        FaultInjection.reset()
        guard (try? CrashWorkload.prepareLedger(at: path, configuration: configuration)) != nil else { return (0, 0) }
        FaultInjection.reset()
        // As a run ends: the power goes before the close, whose writes then do not count.
        _ = await CrashWorkload(seed: seed, operations: operations)
            .run(ledgerAt: path, configuration: configuration, log: AcknowledgementLog(), powerLossAtEnd: true)
        let counters = FaultInjection.counters
        FaultInjection.powerOn()
        return (counters.writes, counters.syncs)
    }
}
