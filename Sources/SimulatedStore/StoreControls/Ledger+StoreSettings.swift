import GRDB
import LedgerModel

/// The store's settings with what setting them causes (a new notification URL hears of changes from then on).
extension Ledger {
    /// Sets several settings at once, all or none.
    package func setStoreSettings(_ settings: [String: String]) throws {
        try write { db in
            guard settings[StoreSettingKey.notificationURL] != nil else { return try saveSettings(db, settings) }
            // A new notification URL hears of the changes made from now on, not of the past. The
            // mark is the store's: what passing time made for the apps that had a URL is
            // recorded first, so that moving it loses none of theirs: every holding's, beyond
            // what one look at the clock handles.
            let now = try storeNow(db)
            try notifyPassingTime(db, at: now, holdings: try dueHoldings(db, at: now, limit: nil))
            try saveSettings(db, settings)
            try reportPassingTime(db, from: now)
        }
    }
}
