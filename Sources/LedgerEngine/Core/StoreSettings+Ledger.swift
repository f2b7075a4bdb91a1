public import LedgerModel

/// The settings a ledger stores.
extension StoreSettings {
    /// The settings stored in `ledger`, as the app it acts in sees them, with defaults (USA,
    /// en_US, payments allowed, real time, no test switch on) for what is not set.
    /// - Throws: `AppError.appNotChosen` in a store of several apps when `ledger` names none.
    public init(ledger: Ledger) throws {
        self.init(stored: try ledger.storeSettings())
    }
}
