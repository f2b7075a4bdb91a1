package import GRDB
package import LedgerModel

extension Ledger {
    /// Every stored setting of the simulated store, as the app this value acts in sees them:
    /// the store's test switches with the app's own settings.
    /// - Throws: `AppError.appNotChosen` in a store of several apps when none was named.
    package func storeSettings() throws -> [String: String] {
        try read { db in try storedSettings(db) }
    }

    /// The settings this value's app sees (`storeSettings()`), inside a transaction.
    package func storedSettings(_ db: Database) throws -> [String: String] {
        try Self.storedSettings(db, app: try appID())
    }

    /// The settings every app shares (the time rate, the storefront, the test switches), with
    /// the defaults for the app's own: what reads the whole store (`ledger info`, `clock show`)
    /// shows in a store of several apps.
    package func storeWideSettings() throws -> StoreSettings {
        try read { db in StoreSettings(stored: try Self.storeWideSettings(db)) }
    }

    /// The settings app `app` sees (a sender sends each app's notifications to its own URL).
    package func settings(ofApp app: Int64) throws -> StoreSettings {
        try read { db in StoreSettings(stored: try Self.storedSettings(db, app: app)) }
    }

    /// The settings as this value's app sees them, inside a transaction.
    package func settings(_ db: Database) throws -> StoreSettings {
        StoreSettings(stored: try storedSettings(db))
    }

    /// The settings app `app` sees: the store's, with the app's own and its bundle identifier.
    /// One statement: a purchase and a verified token's request read them each time.
    package static func storedSettings(_ db: Database, app: Int64) throws -> [String: String] {
        var settings: [String: String] = [:]
        let all = try FastStatement(db, appsSettings)
        all.bind(1, app)
        // The app's own come after the store's: the same key in both (never written so) is the app's.
        try all.forEachRow { settings[$0.string(0)] = $0.string(1) }
        return settings
    }

    /// The settings every app shares (the test switches, the clock, the time rate): what a
    /// value that names no app reads.
    package static func storeWideSettings(_ db: Database) throws -> [String: String] {
        Dictionary(uniqueKeysWithValues: try FastStatement(db, allSettings).all { ($0.string(0), $0.string(1)) })
    }

    private static let allSettings = LedgerSQL("SELECT key, value FROM store_settings")
    private static let appsSettings = LedgerSQL(
        """
        SELECT key, value FROM store_settings
        UNION ALL SELECT key, value FROM app_settings WHERE app_id = ?1
        UNION ALL SELECT '\(StoreSettingKey.bundleID)', bundle_id FROM apps WHERE id = ?1
        """)

    /// Saves settings inside a transaction, nothing else (the store's rules on what a setting
    /// changes are their callers'): an app's own (`StoreSettingKey.appKeys`, the bundle
    /// identifier) for this value's app, the others for the store.
    /// - Throws: `AppError.appNotChosen` for an app's setting in a store of several apps when
    ///   none was named; `AppError.duplicateBundleID` for another app's bundle identifier.
    package func saveSettings(_ db: Database, _ settings: [String: String]) throws {
        var storeWide: [String: String] = [:]
        var own: [String: String] = [:]
        for (key, value) in settings {
            if StoreSettingKey.appKeys.contains(key) { own[key] = value } else { storeWide[key] = value }
        }
        if !own.isEmpty { try Self.saveAppSettings(db, app: try appID(), own) }
        try Self.saveStoreWideSettings(db, storeWide)
    }

    /// Saves settings every app shares, inside a transaction.
    package static func saveStoreWideSettings(_ db: Database, _ settings: [String: String]) throws {
        for (key, value) in settings.sorted(by: { $0.key < $1.key }) {
            precondition(!StoreSettingKey.appKeys.contains(key), "\(key) is an app's setting")
            try db.run(
                sql:
                    "INSERT INTO store_settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                arguments: [key, value])
        }
    }

    /// Saves app `app`'s own settings (`StoreSettingKey.appKeys`), inside a transaction.
    package static func saveAppSettings(_ db: Database, app: Int64, _ settings: [String: String]) throws {
        for (key, value) in settings.sorted(by: { $0.key < $1.key }) {
            if key == StoreSettingKey.bundleID {
                if let other = try appRowID(db, bundleID: value), other != app {
                    throw AppError.duplicateBundleID(value)
                }
                try db.run(sql: "UPDATE apps SET bundle_id = ? WHERE id = ?", arguments: [value, app])
                continue
            }
            try db.run(
                sql: """
                    INSERT INTO app_settings (app_id, key, value) VALUES (?, ?, ?)
                    ON CONFLICT (app_id, key) DO UPDATE SET value = excluded.value
                    """,
                arguments: [app, key, value])
        }
    }
}
