package import GRDB
public import LedgerModel

/// The store's apps: each value of `Ledger` acts in one (`forApp(_:)`), reading and making
/// that app's products, settings, transactions and notifications.
extension Ledger {
    /// The id of the app this value acts in, the key of its rows.
    /// - Throws: `AppError.appNotChosen` when the store has several and none was named.
    package func appID() throws -> Int64 {
        switch appScope {
        case .chosen(let id, _): return id
        case .notChosen(let choices, let count): throw AppError.appNotChosen(choices: choices, count: count)
        }
    }

    /// Whether `transaction` was made in this value's app (every transaction is, for a value
    /// of a store of several apps that names none).
    package func isInApp(_ transaction: PaymentTransaction) -> Bool {
        appScope.id.map { transaction.appID == $0 } ?? true
    }

    /// The bundle identifier of the app this value acts in; `nil` when the store has several
    /// and none was named.
    package var bundleID: String? { appScope.name }

    /// This ledger's file, on the same connections, acting in the app `bundleID` (for this
    /// value's customer).
    /// - Throws: `AppError.unknownApp`.
    public func forApp(_ bundleID: String) throws -> Ledger {
        withScope(
            try read { db in
                let app = try Self.appScope(db, bundleID: bundleID)
                // The customer's only device in that app, if they named one.
                return LedgerScope(
                    customer: customerScope, app: app,
                    device: try Self.deviceScope(db, customer: customerScope, app: app, named: nil))
            })
    }

    /// Adds an app to the store, with its environment and Apple ID. A new store has one,
    /// `StoreSettings.defaultBundleID`.
    /// - Throws: `AppError` (`.invalidBundleID`, `.duplicateBundleID`, `.tooManyApps`); nothing
    ///   is changed.
    @discardableResult
    public func addApp(_ app: App) throws -> App {
        try App.checkBundleID(app.bundleID)
        return try write { db in
            try NamedRows.apps.checkRoom(
                db, for: app.bundleID, limit: App.maximumCount, duplicate: AppError.duplicateBundleID,
                full: AppError.tooManyApps)
            try db.execute(
                sql: "INSERT INTO apps (bundle_id, created_at) VALUES (?, ?)",
                arguments: [app.bundleID, try storeNow(db)])
            let id = db.lastInsertedRowID
            var settings = [StoreSettingKey.environment: app.environment.rawValue]
            if let appleID = app.appAppleID { settings[StoreSettingKey.appAppleID] = String(appleID) }
            try Self.saveAppSettings(db, app: id, settings)
            return app
        }
    }

    /// The store's apps in the order they were added, at most `limit` of them.
    package func apps(limit: Int = App.maximumCount) throws -> [App] {
        try read { db in
            try Row.fetchAll(db, sql: "SELECT id, bundle_id FROM apps ORDER BY id LIMIT ?", arguments: [max(0, limit)])
                .map { row in
                    let settings = StoreSettings(stored: try Self.storedSettings(db, app: row["id"]))
                    return App(
                        bundleID: row["bundle_id"], environment: settings.environment, appAppleID: settings.appAppleID)
                }
        }
    }

    /// The bundle identifier of app `id`, or `nil`.
    package static func bundleID(_ db: Database, app id: Int64) throws -> String? {
        try String.fetchOne(db.cachedStatement(sql: "SELECT bundle_id FROM apps WHERE id = ?"), arguments: [id])
    }

    /// The id of the app `bundleID`, or `nil`.
    package static func appRowID(_ db: Database, bundleID: String) throws -> Int64? {
        try Int64.fetchOne(db.cachedStatement(sql: "SELECT id FROM apps WHERE bundle_id = ?"), arguments: [bundleID])
    }

    /// The app a value opened with `bundleID` (or none) acts in.
    /// - Throws: `AppError.unknownApp` for a bundle the store does not have.
    package static func appScope(_ db: Database, bundleID: String?) throws -> ScopeChoice {
        try NamedRows.apps.choice(db, named: bundleID, unknown: AppError.unknownApp)
            ?? .notChosen(choices: [], count: 0)
    }
}
