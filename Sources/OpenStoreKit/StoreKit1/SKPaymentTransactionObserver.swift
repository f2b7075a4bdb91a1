public import Foundation

/// Receives the payment queue's changes (StoreKit 1's `SKPaymentTransactionObserver`).
///
/// Every method but `paymentQueue(_:updatedTransactions:)` is optional, as in StoreKit (here
/// through default implementations that do nothing). The queue calls observers on the main
/// actor, one change at a time, in the order the changes were committed to the ledger.
public protocol SKPaymentTransactionObserver: NSObjectProtocol {
    /// Transactions changed state, or come back because they are unfinished (each observer
    /// added receives every unfinished transaction first). A finished transaction never
    /// comes back here.
    func paymentQueue(_ queue: SKPaymentQueue, updatedTransactions transactions: [SKPaymentTransaction])
    /// Transactions were finished and left the queue for good.
    func paymentQueue(_ queue: SKPaymentQueue, removedTransactions transactions: [SKPaymentTransaction])
    /// A restore failed (the store's ledger could not be opened or read, or the store was
    /// relaunched); no finished call follows.
    func paymentQueue(_ queue: SKPaymentQueue, restoreCompletedTransactionsFailedWithError error: any Error)
    /// A restore ended: every transaction it restored was delivered before this call.
    func paymentQueueRestoreCompletedTransactionsFinished(_ queue: SKPaymentQueue)
    /// Purchases of these products were refunded or revoked: take their content back.
    func paymentQueue(_ queue: SKPaymentQueue, didRevokeEntitlementsForProductIdentifiers productIdentifiers: [String])
    /// The store's storefront changed.
    func paymentQueueDidChangeStorefront(_ queue: SKPaymentQueue)
    /// Downloads of hosted content moved on: hosted content is not simulated, so this is never
    /// called.
    func paymentQueue(_ queue: SKPaymentQueue, updatedDownloads downloads: [SKDownload])
    /// The customer started buying a promoted product on the App Store
    /// (`SKTestSession.startPurchaseFromAppStore(productIdentifier:winBackOfferID:)`): `true`
    /// adds `payment` to the queue now; `false` leaves it to the app, which may add it later.
    /// Not asked when a `PurchaseIntent.intents` sequence listens: that takes the purchase.
    func paymentQueue(_ queue: SKPaymentQueue, shouldAddStorePayment payment: SKPayment, for product: SKProduct) -> Bool
}

extension SKPaymentTransactionObserver {
    /// Does nothing by default: an observer that omits it does not hear finished transactions.
    public func paymentQueue(_ queue: SKPaymentQueue, removedTransactions transactions: [SKPaymentTransaction]) {}
    /// Does nothing by default: an observer that omits it does not hear failed restores.
    public func paymentQueue(_ queue: SKPaymentQueue, restoreCompletedTransactionsFailedWithError error: any Error) {}
    /// Does nothing by default: an observer that omits it does not hear the end of a restore.
    public func paymentQueueRestoreCompletedTransactionsFinished(_ queue: SKPaymentQueue) {}
    public func paymentQueue(
        _ queue: SKPaymentQueue, didRevokeEntitlementsForProductIdentifiers productIdentifiers: [String]
    ) {}
    public func paymentQueueDidChangeStorefront(_ queue: SKPaymentQueue) {}
    public func paymentQueue(_ queue: SKPaymentQueue, updatedDownloads downloads: [SKDownload]) {}
    public func paymentQueue(
        _ queue: SKPaymentQueue, shouldAddStorePayment payment: SKPayment, for product: SKProduct
    ) -> Bool {
        true
    }
}
