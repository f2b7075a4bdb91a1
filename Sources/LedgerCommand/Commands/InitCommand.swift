import ArgumentParser
import StoreLedger

struct InitCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init", abstract: "Create an empty ledger (owner-only file). An existing ledger is left as it is.")

    @OptionGroup var options: GlobalOptions

    func run() async throws {
        let existed = try Ledger.exists(at: options.databasePath)
        let ledger = try options.openLedger(mode: .createIfMissing)
        let migrations = try ledger.appliedMigrations()
        try options.output.emit(InitResult(path: ledger.path, created: !existed, migrations: migrations)) {
            existed ? "ledger \(ledger.path) already exists; left as it is" : "created ledger \(ledger.path)"
        }
    }

    struct InitResult: Encodable {
        let path: String
        let created: Bool
        let migrations: [String]
    }
}
