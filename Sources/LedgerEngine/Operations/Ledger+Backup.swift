import Foundation
import GRDB
import LedgerModel

extension Ledger {
    /// Writes a consistent copy of the ledger to `destination`: its committed state, the part
    /// still in `-wal` included (a ledger is its file plus `-wal`; copying the file alone can
    /// lose the last commits). The copy is built under a temporary name (owner-only), checked
    /// with `verify()`, synced, then linked into place: `destination` ends up holding nothing
    /// or a whole, verified ledger. It never replaces an existing file.
    /// - Throws: `LedgerError.destinationExists`; `.cannotWrite` when `destination` cannot be
    ///   written; `.unusable` (about this ledger) when the copy does not verify (it is removed).
    public func backup(to destination: String) throws {
        guard !FileManager.default.fileExists(atPath: destination) else {
            throw LedgerError.destinationExists(path: destination)
        }
        let (temporary, directory) = try Self.makeTemporaryFile(beside: destination, purpose: .backup)
        defer { Self.removeDatabaseFiles(temporary) }
        do {
            // VACUUM INTO reads one snapshot of the committed data, -wal included.
            try reader.inDatabase { db in
                try db.ensureConnected()
                try db.execute(sql: "VACUUM INTO ?", arguments: [temporary])
            }
            let copy = try DatabaseQueue(path: temporary)
            try copy.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA journal_mode = WAL") }
            try copy.close()
        } catch {
            // A damaged ledger fails its own read; anything else is the copy's to blame.
            let damaged =
                (error as? DatabaseError).map { [.SQLITE_CORRUPT, .SQLITE_NOTADB].contains($0.resultCode) } ?? false
            throw Self.mapError(error, path: error is LedgerClosed || damaged ? path : destination)
        }
        let checked = try Ledger.open(at: temporary, access: .readOnly, configuration: configuration)
        let problems = try checked.verify()
        try checked.close()
        guard problems.isEmpty else {
            // The copy is the ledger as it is: what fails to verify is the ledger's.
            throw LedgerError.unusable(
                path: path,
                reason:
                    "it does not verify, so no backup was written: \(problems.map(\.description).joined(separator: "; "))"
            )
        }
        let copyDescriptor = Foundation.open(temporary, O_RDONLY | O_CLOEXEC)
        if copyDescriptor >= 0 {
            fsync(copyDescriptor)
            Foundation.close(copyDescriptor)
        }
        guard link(temporary, destination) == 0 else {
            if errno == EEXIST { throw LedgerError.destinationExists(path: destination) }
            throw LedgerError.cannotWrite(errno, destination: destination)
        }
        Self.syncDirectory(directory)
    }
}
