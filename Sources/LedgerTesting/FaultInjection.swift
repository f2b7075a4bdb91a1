import CLedgerFaultVFS
import Foundation
public import StoreLedger
import Synchronization

/// Simulated power losses and injected I/O errors for ledgers opened through the fault VFS.
///
/// The VFS keeps every write to a ledger's files in memory until the file is synced, as an
/// operating system's page cache does. A power loss decides which unsynced writes reach the
/// disk; afterwards every write of the connections open at the time fails, so they can be
/// closed without touching the files; `powerOn()` then lets a fresh open see what a machine
/// would see when the power came back. A SIGKILL cannot test this: the page cache survives a
/// killed process.
///
/// The state is process-wide: a test that uses it takes it for itself with the `.faultInjection`
/// trait (or `FaultInjection.exclusively`), which makes such tests wait for each other.
/// Ledgers opt in through their configuration, so other ledgers of the process are unaffected:
///
/// ```swift
/// FaultInjection.install()
/// var configuration = LedgerConfiguration()
/// configuration.vfs = FaultInjection.vfsName
/// FaultInjection.reset()
/// FaultInjection.arm(.powerLoss, atWrite: 7)        // inside the next commits
/// // ... run the app's code against the ledger until an operation fails ...
/// try? ledger.close()
/// FaultInjection.powerOn()
/// let reopened = try Ledger.open(at: path, configuration: configuration)   // what survived
/// ```
public enum FaultInjection {
    /// The name the fault VFS is registered under.
    public static let vfsName = "storeledger-fault"

    private static let registered: Bool = lfv_register(vfsName, 0) == 0

    /// Registers the VFS (once; later calls do nothing). Ledgers use it when their
    /// configuration's `vfs` is `vfsName`.
    @discardableResult
    public static func install() -> Bool { registered }

    /// A configuration that opens ledgers through the fault VFS.
    public static func configuration(_ base: LedgerConfiguration = .init()) -> LedgerConfiguration {
        install()
        var configuration = base
        configuration.vfs = vfsName
        return configuration
    }

    /// What an armed fault does when its write or sync comes.
    public enum Fault: Sendable, Hashable {
        /// The machine loses power just before that write or sync.
        case powerLoss
        /// That write or sync fails with an I/O error (`SQLITE_IOERR`).
        case ioError
        /// That write fails with `SQLITE_FULL`.
        case diskFull

        var kind: Int32 {
            switch self {
            case .powerLoss: Int32(LFV_FAULT_POWER_LOSS.rawValue)
            case .ioError: Int32(LFV_FAULT_IO_ERROR.rawValue)
            case .diskFull: Int32(LFV_FAULT_DISK_FULL.rawValue)
            }
        }
    }

    /// What a power loss keeps of the writes that were not synced.
    public enum LossMode: Sendable, Hashable {
        /// Every unsynced write (and truncate) is lost: the files hold what was last synced. The default.
        case loseAll
        /// A random subset, decided by the seed: the same seed loses the same writes.
        case loseRandom(seed: UInt64)
        /// All but the last write, of which only the first 512-byte sector survives.
        case tornLastWrite
        /// Nothing is lost: what a killed process leaves behind.
        case keepAll
    }

    /// What the fault VFS saw since the last `reset()`. Only database, WAL and rollback journal
    /// files count, not temporary files.
    public struct Counters: Sendable, Hashable {
        /// Writes, including those a fault failed; none is counted while the power is off.
        public var writes: Int64
        /// Syncs, including those a fault failed; none is counted while the power is off.
        public var syncs: Int64
        /// Armed faults that struck, counting every repeat of a persistent one.
        public var faults: Int64
        /// Power losses, from an armed fault or from `powerLoss()` (not while already off).
        public var powerLosses: Int64
        /// Unsynced writes (and truncates) that power losses discarded.
        public var unsyncedWritesLost: Int64
        /// Unsynced writes (and truncates) that power losses applied to the disk, a torn one included.
        public var unsyncedWritesKept: Int64
    }

    /// Clears the counters and armed faults and turns the power on (unsynced writes stay).
    public static func reset() {
        install()
        lfv_reset()
    }

    /// Arms a fault at the `nth` write to a ledger file from now (1-based). `persistent`: an
    /// I/O error or full disk repeats for every later write too.
    public static func arm(_ fault: Fault, atWrite nth: Int64, persistent: Bool = false) {
        lfv_arm_at_write(fault.kind, nth, persistent ? 1 : 0)
    }

    /// Arms a fault at the `nth` sync from now (1-based).
    public static func arm(_ fault: Fault, atSync nth: Int64, persistent: Bool = false) {
        lfv_arm_at_sync(fault.kind, nth, persistent ? 1 : 0)
    }

    /// Removes the armed write and sync faults; the counters, loss mode and power state stay.
    public static func disarm() {
        lfv_disarm()
    }

    /// Sets what later power losses keep of the unsynced writes, until set again (`reset()` keeps
    /// it); `loseRandom` restarts from its seed.
    public static func setLossMode(_ mode: LossMode) {
        switch mode {
        case .loseAll: lfv_set_loss_mode(Int32(LFV_LOSE_ALL.rawValue), 0)
        case .loseRandom(let seed): lfv_set_loss_mode(Int32(LFV_LOSE_RANDOM.rawValue), seed)
        case .tornLastWrite: lfv_set_loss_mode(Int32(LFV_TORN_LAST.rawValue), 0)
        case .keepAll: lfv_set_loss_mode(Int32(LFV_KEEP_ALL.rawValue), 0)
        }
    }

    /// Loses power now.
    public static func powerLoss() {
        lfv_power_loss()
    }

    /// Whether the power is off: from a power loss until `powerOn()` or `reset()`.
    public static var isPoweredOff: Bool { lfv_is_powered_off() != 0 }

    /// Powers back on, once the connections open at the power loss are closed.
    public static func powerOn() {
        lfv_power_on()
    }

    /// Names what the code under test does from now on, in the trace a `CrashStateExploration`
    /// records (its report counts the crash states by these names). Does nothing else.
    public static func label(_ name: String) {
        let number = labels.withLock { names in
            if let index = names.firstIndex(of: name) { return index }
            names.append(name)
            return names.count - 1
        }
        lfv_trace_label(Int32(number))
    }

    /// The names `label(_:)` was given, by number (0: nothing labelled yet).
    static let labels = Mutex<[String]>(["start"])

    /// How many operations the trace holds now (0 when none is recorded).
    static var traceLength: Int64 { lfv_trace_count() }

    /// The counters since the last `reset()`, read together.
    public static var counters: Counters {
        let c = lfv_get_counters()
        return Counters(
            writes: c.writes, syncs: c.syncs, faults: c.faults, powerLosses: c.power_losses,
            unsyncedWritesLost: c.unsynced_writes_lost, unsyncedWritesKept: c.unsynced_writes_kept)
    }
}

extension FaultInjection.LossMode {
    /// The mode as `CrashRun(replay:)` reads it: `lose-all`, `lose-random:SEED`, `torn`, `keep-all`.
    public var name: String {
        switch self {
        case .loseAll: "lose-all"
        case .loseRandom(let seed): "lose-random:\(seed)"
        case .tornLastWrite: "torn"
        case .keepAll: "keep-all"
        }
    }

    /// The mode without its seed.
    var kindName: String {
        if case .loseRandom = self { return "lose-random" }
        return name
    }
}
