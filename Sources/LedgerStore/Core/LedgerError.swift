import Foundation

/// Why a ledger file cannot be opened or used. Every case names the file.
public enum LedgerError: DescribedError, Sendable, Equatable {
    /// No ledger at the path, and the operation does not create one.
    case missingLedger(path: String)
    /// A zero-length file: SQLite would take it for an empty database, losing every transaction.
    case emptyFile(path: String)
    /// Not a SQLite database at all (random bytes, another format).
    case notADatabase(path: String, reason: String)
    /// A SQLite database whose header or pages are damaged.
    case corrupted(path: String, reason: String)
    /// A SQLite database that another application owns.
    case notALedger(path: String, applicationID: Int32)
    /// Written by a newer StoreLedger: it has migrations this build does not know.
    case newerSchema(path: String, unknownMigrations: [String])
    /// The file or its folder cannot be read or written (permissions, read-only file system...).
    case unusable(path: String, reason: String)
    /// Another process held the ledger's lock for longer than the configuration's
    /// `busyTimeout`. Nothing was changed; trying again later may succeed.
    case busy(path: String)
    /// A backup's destination is taken: a backup never replaces a file.
    case destinationExists(path: String)
    /// SQLite failed during an operation (I/O error, disk full, ...).
    case storage(path: String, resultCode: Int32, message: String, sql: String?)

    public var path: String {
        switch self {
        case .missingLedger(let path), .emptyFile(let path), .notADatabase(let path, _),
             .corrupted(let path, _), .notALedger(let path, _), .newerSchema(let path, _),
             .unusable(let path, _), .busy(let path), .destinationExists(let path), .storage(let path, _, _, _):
            path
        }
    }

    public var description: String {
        switch self {
        case .missingLedger(let path):
            "no ledger at \(path)"
        case .emptyFile(let path):
            "\(path) is an empty file, not a ledger (refusing to treat it as a new, empty ledger)"
        case .notADatabase(let path, let reason):
            "\(path) is not a SQLite database: \(reason)"
        case .corrupted(let path, let reason):
            "\(path) is a damaged SQLite database: \(reason)"
        case .notALedger(let path, let applicationID):
            "\(path) is a SQLite database but not a StoreLedger ledger (application_id \(applicationID))"
        case .newerSchema(let path, let unknown):
            "\(path) was written by a newer version of StoreLedger (unknown migrations: "
                + unknown.joined(separator: ", ") + "); it was left untouched"
        case .unusable(let path, let reason):
            "cannot use the ledger \(path): \(reason)"
        case .busy(let path):
            "\(path) is busy: another process held its lock for longer than this one would wait; nothing was changed"
        case .destinationExists(let path):
            "\(path) exists: a backup never replaces a file"
        case .storage(let path, let code, let message, let sql):
            "SQLite error \(code) on \(path): \(message)" + (sql.map { " (while executing \($0))" } ?? "")
        }
    }
}
