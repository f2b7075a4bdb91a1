import GRDB
import LedgerModel

extension Ledger {
    /// Every stored setting of the simulated store.
    public func storeSettings() throws -> [String: String] {
        try read { db in try Self.storedSettings(db) }
    }

    static func storedSettings(_ db: Database) throws -> [String: String] {
        Dictionary(uniqueKeysWithValues: try FastStatement(db, allSettings).all { ($0.string(0), $0.string(1)) })
    }

    private static let allSettings = LedgerSQL("SELECT key, value FROM store_settings")

    /// Sets several settings at once, all or none.
    package func setStoreSettings(_ settings: [String: String]) throws {
        try write { db in
            try Self.saveSettings(db, settings)
            // A new notification URL hears of the changes made from now on, not of the past.
            if settings[StoreSettingKey.notificationURL] != nil { try reportPassingTime(db, from: try storeNow(db)) }
        }
    }

    static func saveSettings(_ db: Database, _ settings: [String: String]) throws {
        for (key, value) in settings.sorted(by: { $0.key < $1.key }) {
            try db.run(
                sql:
                    "INSERT INTO store_settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                arguments: [key, value])
        }
    }
}
