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
