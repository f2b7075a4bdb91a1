import Foundation
package import GRDB
import LedgerModel

/// The app a request to the App Store Server API is for (its bearer token's `bid`), with its
/// settings as the token's check read them.
package struct ServedApp: Sendable {
    package let id: Int64
    package let bundleID: String
    package let settings: StoreSettings
}

/// The app a server request is for: read with the request's key, in one snapshot.
extension Ledger {
    /// The app of bundle `bundleID` with its settings; `nil` when the store has none (or the
    /// request named none).
    package func servedApp(_ db: Database, bundleID: String?) throws -> ServedApp? {
        guard let bundleID, let app = try Self.appRowID(db, bundleID: bundleID) else { return nil }
        return ServedApp(
            id: app, bundleID: bundleID, settings: StoreSettings(stored: try Self.storedSettings(db, app: app)))
    }

    /// This ledger's file acting in `app` (for this value's customer).
    package func serving(_ app: ServedApp) -> Ledger {
        withScope(LedgerScope(customer: customerScope, app: .chosen(id: app.id, name: app.bundleID)))
    }
}
