package import GRDB
import LedgerModel

extension Ledger {
    /// Every stored setting of the simulated store.
    public func storeSettings() throws -> [String: String] {
        try read { db in try Self.storedSettings(db) }
    }

    package static func storedSettings(_ db: Database) throws -> [String: String] {
        Dictionary(uniqueKeysWithValues: try FastStatement(db, allSettings).all { ($0.string(0), $0.string(1)) })
    }

    private static let allSettings = LedgerSQL("SELECT key, value FROM store_settings")

    /// Saves settings inside a transaction, nothing else (the store's rules on what a setting
    /// changes are their callers').
    package static func saveSettings(_ db: Database, _ settings: [String: String]) throws {
        for (key, value) in settings.sorted(by: { $0.key < $1.key }) {
            try db.run(
                sql:
                    "INSERT INTO store_settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                arguments: [key, value])
        }
    }
}
