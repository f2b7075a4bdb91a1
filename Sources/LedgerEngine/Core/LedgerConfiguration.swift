public import Foundation
import LedgerModel

/// How strongly a committed change is kept.
public enum Durability: String, Sendable, CaseIterable, Codable {
    /// The default. `synchronous=FULL`: a committed change survives a power loss.
    case full
    /// `synchronous=NORMAL`: a committed change survives a killed process, but the last commits
    /// may be lost on a power loss (never corrupted, reordered or half-applied). Faster.
    case normal

    var synchronousPragma: String {
        switch self {
        case .full: "FULL"
        case .normal: "NORMAL"
        }
    }

    /// The value `PRAGMA synchronous` reads back.
    var synchronousValue: Int {
        switch self {
        case .full: 2
        case .normal: 1
        }
    }
}

/// Everything a ledger needs from its surroundings, injected so that tests are deterministic.
public struct LedgerConfiguration: Sendable {
    /// How strongly a commit is kept; `.full` by default.
    public var durability: Durability
    /// How long an operation waits for another process's lock before failing with
    /// `LedgerError.busy` (seconds; default 30).
    public var busyTimeout: TimeInterval
    /// Called once when an operation has waited a second for another process's lock (the
    /// `ledger` tool says so on stderr); `nil` for silence.
    public var onLockWait: (@Sendable () -> Void)?
    /// The source of time (`.system` by default); the store's time adds the ledger's clock offset to it.
    public var clock: LedgerClock
    /// Chooses each new transaction's id (`.sequential` by default).
    public var idGenerator: TransactionIDGenerator
    /// The SQLite VFS to open the ledger's files through, by registered name; `nil` for the
    /// default. `LedgerTesting.FaultInjection` uses this to simulate power losses and I/O errors.
    public var vfs: String?
    /// The most subscription renewals one clock move or one launch may create (at least 1):
    /// a clock move that would make more due is refused, changing nothing; a launch makes this
    /// many and leaves the rest to the next. The default is `defaultRenewalLimit`.
    public var renewalLimit: Int
    /// How often the hash chain's head is signed while this ledger value writes: the first
    /// commit after this much time since its last signature signs the head, in that commit,
    /// and `Ledger.close()` signs the rest (docs/HASH-CHAIN.md). `.zero` signs at every commit
    /// that adds to the history. The default is `defaultHeadSigningInterval`.
    public var headSigningInterval: Duration
    /// The customer a ledger opened with this configuration acts for, by name: what it buys,
    /// restores, finishes and reads is theirs. `nil`: the store's only customer (a store of
    /// several then refuses what acts for a customer, `CustomerError.customerNotChosen`).
    public var customer: String?
    /// The app a ledger opened with this configuration acts in, by bundle identifier: its
    /// settings, products, transactions and notifications. `nil`: the store's only app (a
    /// store of several then refuses what acts in an app, `AppError.appNotChosen`).
    public var app: String?
    /// The customer's device a ledger opened with this configuration runs on, by name (one
    /// install of the app: `Ledger.addDevice(_:)`). `nil`: the customer's only device in the
    /// app (a customer with several then has what runs on a device refused,
    /// `CustomerError.deviceNotChosen`).
    public var device: String?
    /// Whether history events are chained (`true`): `ledger-lab bench` turns it off, in a scratch
    /// ledger, to measure what the chain costs. A ledger written without it fails `verify`.
    package var keepsHashChain = true
    /// Called with each statement the ledger's connections run, its parameters in the text, for
    /// the tests that check what an operation reads (`OneReadTests`); `nil`, as always outside
    /// them, traces nothing.
    package var statementTrace: (@Sendable (String) -> Void)?

    /// 10 milliseconds: one signature (about 70 microseconds on our machine: signing at every
    /// commit adds 212 microseconds to a three-commit purchase cycle, docs/PERFORMANCE.md) per
    /// 10 milliseconds of writing costs at most 0.7 % of the time; a crash leaves at most the
    /// last 10 milliseconds of events chained but not yet signed.
    public static let defaultHeadSigningInterval = Duration.milliseconds(10)

    /// 10,000 renewals: a 2-second subscription catches up 5.5 hours in one move, a monthly one
    /// 833 years, in one commit of about 5 MB.
    public static let defaultRenewalLimit = 10_000

    /// A configuration; the defaults are the production ones (full durability, a 30-second busy
    /// timeout, the system clock, sequential ids). A `renewalLimit` below 1 counts as 1, a
    /// negative `headSigningInterval` as zero.
    public init(
        durability: Durability = .full, busyTimeout: TimeInterval = 30,
        clock: LedgerClock = .system, idGenerator: TransactionIDGenerator = .sequential, vfs: String? = nil,
        renewalLimit: Int = defaultRenewalLimit, headSigningInterval: Duration = defaultHeadSigningInterval,
        onLockWait: (@Sendable () -> Void)? = nil
    ) {
        self.durability = durability
        self.busyTimeout = busyTimeout
        self.onLockWait = onLockWait
        self.clock = clock
        self.idGenerator = idGenerator
        self.vfs = vfs
        self.renewalLimit = max(1, renewalLimit)
        self.headSigningInterval = max(.zero, headSigningInterval)
    }

    /// The name SQLite opens for `path`: a URI naming the VFS when one is set, and marking the
    /// file immutable when asked.
    func sqlitePath(_ path: String, immutable: Bool = false) -> String {
        let parameters = (vfs.map { ["vfs=\($0)"] } ?? []) + (immutable ? ["immutable=1"] : [])
        guard !parameters.isEmpty else { return path }
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "?#%")
        let encoded = path.addingPercentEncoding(withAllowedCharacters: allowed) ?? path
        return "file:\(encoded)?" + parameters.joined(separator: "&")
    }
}

/// The ledger's source of time. Dates are kept to the millisecond, as they are stored.
public struct LedgerClock: Sendable {
    private let read: @Sendable () -> Date

    /// A clock that calls `read` each time the ledger needs the time.
    public init(_ read: @escaping @Sendable () -> Date) {
        self.read = read
    }

    /// The current time, truncated to whole milliseconds.
    public func now() -> Date {
        Date(ledgerMilliseconds: read().ledgerMilliseconds)
    }

    /// The machine's clock.
    public static let system = LedgerClock { Date() }

    /// A clock that always answers `date`: for deterministic tests.
    public static func fixed(_ date: Date) -> LedgerClock {
        LedgerClock { date }
    }
}

/// Chooses the next transaction id. The ledger keeps the last id it issued (never reused, even
/// after a deletion) and refuses a generator that does not move forward.
public struct TransactionIDGenerator: Sendable {
    private let step: @Sendable (UInt64) -> UInt64

    /// `next` receives the last id issued (0 at first) and returns a larger one.
    public init(next: @escaping @Sendable (_ lastIssued: UInt64) -> UInt64) {
        self.step = next
    }

    func next(after lastIssued: UInt64) -> UInt64 {
        step(lastIssued)
    }

    /// 1, 2, 3, ...
    public static let sequential = TransactionIDGenerator { $0 + 1 }

    /// Increasing ids with seeded gaps: the same seed gives the same ids, for replayable runs.
    public static func seeded(_ seed: UInt64) -> TransactionIDGenerator {
        TransactionIDGenerator { last in
            // SplitMix64 of (seed, last): a pure function, so a replay issues the same ids.
            var z = seed &+ last &* 0x9E37_79B9_7F4A_7C15
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            z ^= z >> 31
            return last + 1 + z % 1_000
        }
    }
}
