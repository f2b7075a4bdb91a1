package import GRDB
import LedgerModel

extension Database {
    /// Executes one statement from the connection's statement cache: the ledger runs the same
    /// few statements over and over, and preparing them again each time is most of their cost.
    package func run(sql: String, arguments: StatementArguments = []) throws {
        try cachedStatement(sql: sql).execute(arguments: arguments)
    }

    /// Executes one of the ledger's transaction statements (BEGIN, COMMIT, savepoints) straight
    /// through SQLite. GRDB's `execute` adds bookkeeping at each statement (transaction
    /// observers, the transaction's date, suspension checks: 2,700 instructions, six times per
    /// purchase cycle) that the ledger does not use; GRDB asks SQLite itself whether a
    /// transaction is open (`sqlite3_get_autocommit`), so it stays right.
    fileprivate func run(_ sql: LedgerSQL) throws {
        try FastStatement(self, sql).execute()
    }
}

private enum TransactionSQL {
    package static let begin = LedgerSQL("BEGIN IMMEDIATE TRANSACTION")
    package static let beginReading = LedgerSQL("BEGIN DEFERRED TRANSACTION")
    package static let commit = LedgerSQL("COMMIT TRANSACTION")
    package static let savepoint = LedgerSQL("SAVEPOINT change")
    package static let release = LedgerSQL("RELEASE SAVEPOINT change")
    package static let rollbackToSavepoint = LedgerSQL("ROLLBACK TO SAVEPOINT change")
}

extension Database {
    /// Runs `body` in one IMMEDIATE transaction: committed when it returns, rolled back when it
    /// (or the commit) throws. GRDB's `inTransaction` does the same but prepares its BEGIN and
    /// COMMIT again at every transaction; these are prepared once.
    ///
    /// With a `signer`, the hash chain's head is signed after `body`, in the same commit, when
    /// it is due (`HeadSigner.signIfDue`).
    package func immediateTransaction<T>(signing signer: HeadSigner? = nil, _ body: () throws -> T) throws -> T {
        try ensureConnected()
        return try transaction(beginning: TransactionSQL.begin, signing: signer, body)
    }

    /// Runs `body` in one DEFERRED transaction, a consistent snapshot for reading, ended
    /// whether it returns or throws. Its statements are prepared once too: GRDB's
    /// `inTransaction` prepared BEGIN and COMMIT again at every read, most of the cost of the
    /// App Store server's small reads (SQLite's authorizer runs at each preparation).
    package func deferredTransaction<T>(_ body: () throws -> T) throws -> T {
        try transaction(beginning: TransactionSQL.beginReading, signing: nil, body)
    }

    private func transaction<T>(
        beginning begin: LedgerSQL, signing signer: HeadSigner?, _ body: () throws -> T
    )
        throws -> T
    {
        try run(begin)
        do {
            let value = try body()
            try signer?.signIfDue(self)
            try run(TransactionSQL.commit)
            return value
        } catch {
            if isInsideTransaction { try? execute(sql: "ROLLBACK TRANSACTION") }
            // A head signed in this transaction is gone with it: the next commit signs again.
            signer?.rolledBack()
            throw error
        }
    }
}

extension Database {
    /// Throws `LedgerClosed` once the connection was closed (`Ledger.close()`). GRDB treats any
    /// use of a closed connection as a programming error (the process crashes); checked on the
    /// connection's own queue, where the connection is closed, so a call racing `close()` gets
    /// the error too.
    package func ensureConnected() throws {
        if sqliteConnection == nil { throw LedgerClosed() }
    }
}

/// The ledger was closed (`Ledger.mapError` makes it `LedgerError.unusable`).
package struct LedgerClosed: Error {}

extension Database {
    /// Runs `body` in a savepoint of the current transaction: released when it returns, rolled
    /// back (alone) when it throws. GRDB's `inSavepoint` prepares its three statements at every
    /// call; a group commit makes one savepoint per change it holds.
    /// - Throws: `body`'s error; `SavepointRollbackFailed` when its changes could not be undone
    ///   (the whole transaction must then be rolled back).
    package func inCachedSavepoint<T>(_ body: () throws -> T) throws -> T {
        try run(TransactionSQL.savepoint)
        do {
            let value = try body()
            try run(TransactionSQL.release)
            return value
        } catch let failure {
            do {
                try run(TransactionSQL.rollbackToSavepoint)
                try run(TransactionSQL.release)
            } catch {
                // The transaction is gone with its savepoint (a full disk, an I/O error):
                // the job's own error says why.
                throw SavepointRollbackFailed(error: failure)
            }
            throw failure
        }
    }
}

/// A savepoint whose changes could not be rolled back: the transaction holding it cannot be
/// committed. `error` is what made the savepoint fail in the first place.
package struct SavepointRollbackFailed: Error {
    package let error: any Error
}
