import GRDB

extension Database {
    /// Executes one statement from the connection's statement cache: the ledger runs the same
    /// few statements over and over, and preparing them again each time is most of their cost.
    func run(sql: String, arguments: StatementArguments = []) throws {
        try cachedStatement(sql: sql).execute(arguments: arguments)
    }
}
