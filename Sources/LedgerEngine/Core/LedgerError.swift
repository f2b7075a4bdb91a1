import Foundation
public import LedgerModel

/// Why a ledger file cannot be opened or used. Every error names the file, has a `code` a caller
/// can match, and keeps the error it comes from (`underlyingError`: SQLite's, the system's).
///
/// Match a kind of failure by its code, as with GRDB's `DatabaseError`:
///
/// ```swift
/// do {
///     try await queue.add(payment)
/// } catch LedgerError.busy {
///     // another process held the ledger's lock too long: nothing was changed, try again later
/// } catch let error as LedgerError {
///     print(error.code, error.path, error.reason, error.underlyingError as Any)
/// }
/// ```
///
/// The message (`description`, also `localizedDescription`) quotes the SQL statement that
/// failed, where there was one, but never the values bound to it: they can hold an app's data.
public struct LedgerError: DescribedError, Sendable, Equatable {
    /// What kind of failure it is: `catch LedgerError.busy` matches the errors whose code is
    /// `.busy`.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// No ledger at the path, and the operation does not create one.
        public static let missingLedger = Code(rawValue: "missingLedger")
        /// A zero-length file: SQLite would take it for an empty database, losing every
        /// transaction.
        public static let emptyFile = Code(rawValue: "emptyFile")
        /// Not a SQLite database at all (random bytes, another format).
        public static let notADatabase = Code(rawValue: "notADatabase")
        /// A SQLite database whose header, pages or rows are damaged.
        public static let corrupted = Code(rawValue: "corrupted")
        /// A SQLite database that another application owns (`applicationID` says whose).
        public static let notALedger = Code(rawValue: "notALedger")
        /// Written by a newer StoreLedger: it has migrations this build does not know
        /// (`unknownMigrations`).
        public static let newerSchema = Code(rawValue: "newerSchema")
        /// Written by an older StoreLedger and opened read-only: a read never upgrades it. Open
        /// it for writing, or `Ledger.upgrade(at:)`, to upgrade it.
        public static let olderSchema = Code(rawValue: "olderSchema")
        /// An upgrade to this build's schema failed (a migration's statement, the invariants of
        /// the result, or events it cannot vouch for: `reason` says which); nothing was changed.
        public static let upgradeFailed = Code(rawValue: "upgradeFailed")
        /// The file or its folder cannot be read or written (permissions, read-only file
        /// system, a ledger opened read-only...).
        public static let unusable = Code(rawValue: "unusable")
        /// Another process held the ledger's lock for longer than the configuration's
        /// `busyTimeout`. Nothing was changed; trying again later may succeed.
        public static let busy = Code(rawValue: "busy")
        /// A backup's destination is taken: a backup never replaces a file.
        public static let destinationExists = Code(rawValue: "destinationExists")
        /// A file the ledger writes elsewhere (a backup, an export) cannot be written there
        /// (a missing folder, permissions, a full disk): the ledger itself is fine.
        public static let cannotWrite = Code(rawValue: "cannotWrite")
        /// SQLite failed during an operation (I/O error, disk full, ...): `sqliteResultCode`.
        public static let storage = Code(rawValue: "storage")

        /// Whether `error` is a `LedgerError` with this code (what makes `catch LedgerError.busy`
        /// work).
        public static func ~= (code: Code, error: any Error) -> Bool {
            (error as? LedgerError)?.code == code
        }
    }

    /// The kind of failure.
    public let code: Code
    /// The ledger file (or a backup's destination) it is about.
    public let path: String
    /// What went wrong, in words; empty when the code says it all.
    public let reason: String
    /// SQLite's extended result code, when SQLite reported the failure.
    public let sqliteResultCode: Int32?
    /// The SQL statement that failed, without its arguments, when there was one.
    public let sql: String?
    /// The error this one comes from: GRDB's `DatabaseError` for SQLite's failures, a
    /// `POSIXError` for the system's. Not compared by `==`.
    public let underlyingError: (any Error & Sendable)?
    /// With `.newerSchema`: the migrations this build does not know.
    public let unknownMigrations: [String]
    /// With `.notALedger`: the file's `PRAGMA application_id`.
    public let applicationID: Int32?
    /// With `.upgradeFailed`: the events after the last signed head that the upgrade cannot
    /// vouch for (`Ledger.upgrade(at:vouchingForEvents:)` signs over them when told to).
    public internal(set) var unvouchedEvents: ClosedRange<Int64>?

    /// An error of kind `code` about the file at `path`, with the details that apply to it.
    package init(
        _ code: Code, path: String, reason: String = "", sqliteResultCode: Int32? = nil, sql: String? = nil,
        underlyingError: (any Error & Sendable)? = nil, unknownMigrations: [String] = [], applicationID: Int32? = nil
    ) {
        self.code = code
        self.path = path
        self.reason = reason
        self.sqliteResultCode = sqliteResultCode
        self.sql = sql
        self.underlyingError = underlyingError
        self.unknownMigrations = unknownMigrations
        self.applicationID = applicationID
    }

    public static func == (lhs: LedgerError, rhs: LedgerError) -> Bool {
        lhs.code == rhs.code && lhs.path == rhs.path && lhs.reason == rhs.reason
            && lhs.sqliteResultCode == rhs.sqliteResultCode && lhs.sql == rhs.sql
            && lhs.unknownMigrations == rhs.unknownMigrations && lhs.applicationID == rhs.applicationID
            && lhs.unvouchedEvents == rhs.unvouchedEvents
    }

    public var description: String {
        switch code {
        case .missingLedger:
            "no ledger at \(path)"
        case .emptyFile:
            "\(path) is an empty file, not a ledger (refusing to treat it as a new, empty ledger)"
        case .notADatabase:
            "\(path) is not a SQLite database: \(reason)"
        case .corrupted:
            "\(path) is a damaged SQLite database: \(reason)"
        case .notALedger:
            "\(path) is a SQLite database but not a StoreLedger ledger (application_id \(applicationID ?? 0))"
        case .newerSchema:
            "\(path) was written by a newer version of StoreLedger (unknown migrations: "
                + unknownMigrations.joined(separator: ", ") + "); it was left untouched"
        case .olderSchema:
            "\(path) was written by an older version of StoreLedger (\(reason)); it was opened read-only, "
                + "so it was left untouched: opening it for writing upgrades it"
        case .upgradeFailed:
            "cannot upgrade \(path) to this version's schema: \(reason); nothing was changed"
        case .unusable:
            "cannot use the ledger \(path): \(reason)"
        case .busy:
            "\(path) is busy: another process held its lock for longer than this one would wait; nothing was changed"
        case .destinationExists:
            "\(path) exists: a backup or an export never replaces a file"
        case .cannotWrite:
            "cannot write \(path): \(reason)"
        case .storage where (sqliteResultCode ?? 0) & 0xFF == 13:  // SQLITE_FULL
            "\(path): the disk is full (SQLite error \(sqliteResultCode ?? 0)): free some space and try again"
        case .storage where (sqliteResultCode ?? 0) & 0xFF == 10:  // SQLITE_IOERR and its kinds
            "\(path): an I/O error (SQLite error \(sqliteResultCode ?? 0), \(reason)): the disk may be full or failing"
        default:
            "SQLite error \(sqliteResultCode ?? 0) on \(path): \(reason)"
                + (sql.map { " (while executing \($0))" } ?? "")
        }
    }
}

extension LedgerError {
    // The same names as the codes, to make an error of each kind.

    /// The `missingLedger` code, for `catch LedgerError.missingLedger`: no ledger at the path.
    public static let missingLedger = Code.missingLedger
    /// The `emptyFile` code, for `catch LedgerError.emptyFile`: a zero-length file.
    public static let emptyFile = Code.emptyFile
    /// The `notADatabase` code, for `catch LedgerError.notADatabase`: not a SQLite database.
    public static let notADatabase = Code.notADatabase
    /// The `corrupted` code, for `catch LedgerError.corrupted`: a damaged SQLite database.
    public static let corrupted = Code.corrupted
    /// The `notALedger` code, for `catch LedgerError.notALedger`: another application's database.
    public static let notALedger = Code.notALedger
    /// The `newerSchema` code, for `catch LedgerError.newerSchema`: written by a newer StoreLedger.
    public static let newerSchema = Code.newerSchema
    /// The `unusable` code, for `catch LedgerError.unusable`: the file cannot be read or written.
    public static let unusable = Code.unusable
    /// The `busy` code, for `catch LedgerError.busy`: another process held the lock too long.
    public static let busy = Code.busy
    /// The `destinationExists` code, for `catch LedgerError.destinationExists`: a backup's destination is taken.
    public static let destinationExists = Code.destinationExists
    /// The `storage` code, for `catch LedgerError.storage`: SQLite failed during an operation.
    public static let storage = Code.storage
    /// The `cannotWrite` code, for `catch LedgerError.cannotWrite`: a backup or an export cannot
    /// be written where it was asked.
    public static let cannotWrite = Code.cannotWrite

    /// A `.missingLedger` error: no ledger at `path`.
    package static func missingLedger(path: String) -> LedgerError { LedgerError(.missingLedger, path: path) }
    /// An `.emptyFile` error: `path` is a zero-length file.
    package static func emptyFile(path: String) -> LedgerError { LedgerError(.emptyFile, path: path) }
    /// A `.notADatabase` error: `path` is not a SQLite database, for `reason`.
    package static func notADatabase(
        path: String, reason: String, underlyingError: (any Error & Sendable)? = nil
    ) -> LedgerError {
        LedgerError(.notADatabase, path: path, reason: reason, underlyingError: underlyingError)
    }
    /// A `.corrupted` error: `path` is a damaged SQLite database, as `reason` says.
    package static func corrupted(
        path: String, reason: String, underlyingError: (any Error & Sendable)? = nil
    ) -> LedgerError {
        LedgerError(.corrupted, path: path, reason: reason, underlyingError: underlyingError)
    }
    /// A `.notALedger` error: `path` is the database of the application `applicationID` names.
    package static func notALedger(path: String, applicationID: Int32) -> LedgerError {
        LedgerError(.notALedger, path: path, applicationID: applicationID)
    }
    /// The `olderSchema` code, for `catch LedgerError.olderSchema`: an older ledger opened read-only.
    public static let olderSchema = Code.olderSchema
    /// The `upgradeFailed` code, for `catch LedgerError.upgradeFailed`: an upgrade changed nothing.
    public static let upgradeFailed = Code.upgradeFailed

    /// An `.olderSchema` error: `path` is at schema `applied` of `current` (`reason` says which).
    package static func olderSchema(path: String, applied: [String]) -> LedgerError {
        LedgerError(
            .olderSchema, path: path,
            reason: "schema \(applied.count) (\(applied.last ?? "none")) of this version's "
                + "\(Ledger.knownMigrations.count) (\(Ledger.knownMigrations.last ?? ""))")
    }

    /// An `.upgradeFailed` error: upgrading `path` failed, for `reason`.
    package static func upgradeFailed(
        path: String, reason: String, unvouchedEvents: ClosedRange<Int64>? = nil
    ) -> LedgerError {
        var error = LedgerError(.upgradeFailed, path: path, reason: reason)
        error.unvouchedEvents = unvouchedEvents
        return error
    }

    /// A `.newerSchema` error: `path` has migrations this build does not know.
    package static func newerSchema(path: String, unknownMigrations: [String]) -> LedgerError {
        LedgerError(.newerSchema, path: path, unknownMigrations: unknownMigrations)
    }
    /// An `.unusable` error: `path` cannot be read or written, for `reason`.
    package static func unusable(
        path: String, reason: String, underlyingError: (any Error & Sendable)? = nil
    ) -> LedgerError {
        LedgerError(.unusable, path: path, reason: reason, underlyingError: underlyingError)
    }
    /// A `.busy` error: another process held the lock of `path` too long; nothing was changed.
    package static func busy(path: String, underlyingError: (any Error & Sendable)? = nil) -> LedgerError {
        LedgerError(.busy, path: path, underlyingError: underlyingError)
    }
    /// A `.destinationExists` error: the destination `path` of a backup or an export is taken.
    package static func destinationExists(path: String) -> LedgerError { LedgerError(.destinationExists, path: path) }

    /// `errno` as a `LedgerError.unusable` on `path`, keeping it as a `POSIXError`.
    /// A backup's or an export's `destination` cannot be written, for the system's `code`.
    package static func cannotWrite(_ code: Int32, destination: String) -> LedgerError {
        LedgerError(
            .cannotWrite, path: destination, reason: String(cString: strerror(code)),
            underlyingError: POSIXErrorCode(rawValue: code).map { POSIXError($0) })
    }

    package static func system(_ code: Int32, path: String, doing action: String? = nil) -> LedgerError {
        let words = String(cString: strerror(code))
        return unusable(
            path: path, reason: action.map { "\($0): \(words)" } ?? words,
            underlyingError: POSIXErrorCode(rawValue: code).map { POSIXError($0) })
    }
}
