import GRDB

extension Database {
    /// Executes one statement from the connection's statement cache: the ledger runs the same
    /// few statements over and over, and preparing them again each time is most of their cost.
    func run(sql: String, arguments: StatementArguments = []) throws {
        try cachedStatement(sql: sql).execute(arguments: arguments)
    }
}

extension Database {
    /// Runs `body` in one IMMEDIATE transaction: committed when it returns, rolled back when it
    /// (or the commit) throws. GRDB's `inTransaction` does the same but prepares its BEGIN and
    /// COMMIT again at every transaction; these come from the statement cache.
    func immediateTransaction<T>(_ body: () throws -> T) throws -> T {
        try cachedStatement(sql: "BEGIN IMMEDIATE TRANSACTION").execute()
        do {
            let value = try body()
            try cachedStatement(sql: "COMMIT TRANSACTION").execute()
            return value
        } catch {
            if isInsideTransaction { try? execute(sql: "ROLLBACK TRANSACTION") }
            throw error
        }
    }
}

extension Database {
    /// Runs `body` in a savepoint of the current transaction: released when it returns, rolled
    /// back (alone) when it throws. GRDB's `inSavepoint` prepares its three statements at every
    /// call; a group commit makes one savepoint per change it holds.
    /// - Throws: `body`'s error; `SavepointRollbackFailed` when its changes could not be undone
    ///   (the whole transaction must then be rolled back).
    func inCachedSavepoint<T>(_ body: () throws -> T) throws -> T {
        try cachedStatement(sql: "SAVEPOINT change").execute()
        do {
            let value = try body()
            try cachedStatement(sql: "RELEASE SAVEPOINT change").execute()
            return value
        } catch let failure {
            do {
                try cachedStatement(sql: "ROLLBACK TO SAVEPOINT change").execute()
                try cachedStatement(sql: "RELEASE SAVEPOINT change").execute()
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
struct SavepointRollbackFailed: Error {
    let error: any Error
}
