import ArgumentParser
import StoreLedger

struct VerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check the ledger: SQLite's integrity check, the schema version and the ledger's own invariants.",
        discussion: """
            Every history must be a legal path through the state machine and end in its transaction's row; no \
            transaction finished in a state that cannot be finished; no idempotency key naming two transactions; \
            no id above the last one issued; every subscription expiration after its purchase date, and every \
            renewal starting where its chain's previous period ended and lasting one period of its product. \
            Exit 0 when all hold, 2 with one line (or JSON object) per problem.
            Nothing is written to a ledger of this version; a ledger from an older version is first migrated \
            to this version's schema (its only write), as every command does.
            """)

    @OptionGroup var options: GlobalOptions

    func run() async throws {
        let ledger = try options.openLedgerForReading()
        let problems = try ledger.verify()
        let migrations = try ledger.appliedMigrations()
        let report = Report(
            path: ledger.path, schemaVersion: migrations.last ?? "", ok: problems.isEmpty,
            problems: problems.map { Problem(transactionID: $0.transactionID, message: $0.message) })
        try options.output.emit(report) {
            problems.isEmpty ? "ok: \(ledger.path) (schema \(report.schemaVersion)) holds every invariant"
                : problems.map(\.description).joined(separator: "\n")
        }
        if !problems.isEmpty { throw ExitCode(LedgerExitCode.problemsFound) }
    }

    struct Report: Encodable {
        let path: String
        let schemaVersion: String
        let ok: Bool
        let problems: [Problem]
    }

    struct Problem: Encodable {
        let transactionID: UInt64?
        let message: String

        enum CodingKeys: String, CodingKey { case transactionID, message }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(transactionID, forKey: .transactionID)
            try container.encode(message, forKey: .message)
        }
    }
}
