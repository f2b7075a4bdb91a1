import GRDB
import LedgerModel

/// The store's settings with what setting them causes (a new notification URL hears of changes from then on).
extension Ledger {
    /// Sets several settings at once, all or none.
    package func setStoreSettings(_ settings: [String: String]) throws {
        try write { db in
            try saveSettings(db, settings)
            // A new notification URL hears of the changes made from now on, not of the past.
            if settings[StoreSettingKey.notificationURL] != nil { try reportPassingTime(db, from: try storeNow(db)) }
        }
    }
}
