import ArgumentParser
import Foundation
import StoreLedger

struct InfoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract:
            "Show the ledger's path, schema version, storefront and counts by state, and the durability this command used."
    )

    @OptionGroup var options: GlobalOptions

    func run() async throws {
        let ledger = try options.openLedgerForReading()
        let counts = try ledger.counts()
        let settings = try ledger.storeWideSettings()
        let migrations = try ledger.appliedMigrations()
        let info = Info(
            path: ledger.path, schemaVersion: migrations.last ?? "", migrations: migrations,
            durability: ledger.configuration.durability.rawValue, storefront: settings.storefront.countryCode,
            locale: settings.locale, counts: counts)
        try options.output.emit(info) {
            var lines = [
                "path:          \(info.path)",
                "schema:        \(info.schemaVersion) (\(migrations.count) migration(s))",
                "durability:    \(info.durability) (this command's --durability; not stored in the file)",
                "storefront:    \(info.storefront) (\(info.locale))",
                "products:      \(counts.products)",
                "transactions:  \(counts.transactions) (\(counts.unfinished) unfinished)",
            ]
            for state in TransactionState.allCases {
                lines.append(
                    "  \(state.rawValue.padding(toLength: 12, withPad: " ", startingAt: 0)) \(counts.byState[state.rawValue] ?? 0)"
                )
            }
            lines.append("events:        \(counts.events)")
            return lines.joined(separator: "\n")
        }
    }

    struct Info: Encodable {
        let path: String
        let schemaVersion: String
        let migrations: [String]
        let durability: String
        let storefront: String
        let locale: String
        let counts: LedgerCounts
    }
}
