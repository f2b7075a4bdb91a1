package import GRDB
public import LedgerModel

/// The settings a ledger stores.
extension StoreSettings {
    /// The settings stored in `ledger`, with defaults (USA, en_US, payments allowed, real
    /// time, no test switch on) for what is not set.
    public init(ledger: Ledger) throws {
        self.init(stored: try ledger.storeSettings())
    }

    /// The settings as a write transaction sees them.
    package init(_ db: Database) throws {
        self.init(stored: try Ledger.storedSettings(db))
    }
}
