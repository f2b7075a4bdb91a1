import Foundation

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
    public var durability: Durability
    /// How long a write waits for another process's write before failing.
    public var busyTimeout: TimeInterval
    public var clock: LedgerClock
    public var idGenerator: TransactionIDGenerator
    /// The SQLite VFS to open the ledger's files through, by registered name; `nil` for the
    /// default. `LedgerTesting.FaultInjection` uses this to simulate power losses and I/O errors.
    public var vfs: String?

    public init(
        durability: Durability = .full, busyTimeout: TimeInterval = 30,
        clock: LedgerClock = .system, idGenerator: TransactionIDGenerator = .sequential, vfs: String? = nil
    ) {
        self.durability = durability
        self.busyTimeout = busyTimeout
        self.clock = clock
        self.idGenerator = idGenerator
        self.vfs = vfs
    }

    /// The name SQLite opens for `path`: a URI naming the VFS when one is set.
    func sqlitePath(_ path: String) -> String {
        guard let vfs else { return path }
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "?#%")
        let encoded = path.addingPercentEncoding(withAllowedCharacters: allowed) ?? path
        return "file:\(encoded)?vfs=\(vfs)"
    }
}

/// The ledger's source of time. Dates are kept to the millisecond, as they are stored.
public struct LedgerClock: Sendable {
    private let read: @Sendable () -> Date

    public init(_ read: @escaping @Sendable () -> Date) {
        self.read = read
    }

    /// The current time, truncated to whole milliseconds.
    public func now() -> Date {
        Date(ledgerMilliseconds: read().ledgerMilliseconds)
    }

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

extension Date {
    /// Milliseconds since 1970, the ledger's storage form.
    var ledgerMilliseconds: Int64 {
        Int64((timeIntervalSince1970 * 1000).rounded(.down))
    }

    init(ledgerMilliseconds ms: Int64) {
        self.init(timeIntervalSince1970: Double(ms) / 1000)
    }
}
