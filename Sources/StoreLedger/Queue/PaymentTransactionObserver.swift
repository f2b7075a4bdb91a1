/// Receives the payment queue's changes (`SKPaymentTransactionObserver`).
///
/// The queue holds observers weakly and calls them only after the change is committed, in
/// commit order. The callbacks are `async`, so an observer may `await queue.finish(...)`.
public protocol PaymentTransactionObserver: AnyObject, Sendable {
    /// Transactions changed state, or are redelivered because they are unfinished. A finished
    /// transaction never comes back here.
    func paymentQueue(_ queue: PaymentQueue, updatedTransactions transactions: [PaymentTransaction]) async
    /// Transactions were finished and left the queue.
    func paymentQueue(_ queue: PaymentQueue, removedTransactions transactions: [PaymentTransaction]) async
    /// Purchases of these products were refunded or revoked: the app takes their content back
    /// (`paymentQueue(_:didRevokeEntitlementsForProductIdentifiers:)`).
    func paymentQueue(
        _ queue: PaymentQueue, didRevokeEntitlementsForProductIdentifiers productIdentifiers: [String]) async
    /// The transactions a refund or revocation changed, as stored after it (finished ones
    /// included: this is not a redelivery). By default, tells
    /// `didRevokeEntitlementsForProductIdentifiers` their products.
    func paymentQueue(_ queue: PaymentQueue, revokedTransactions transactions: [PaymentTransaction]) async
    /// The transactions whose refund the App Store reversed (`REFUND_REVERSED`): they entitle
    /// again, as stored after it (finished ones included). StoreKit 1 has no callback for it:
    /// by default, nothing.
    func paymentQueue(_ queue: PaymentQueue, reinstatedTransactions transactions: [PaymentTransaction]) async
    /// Purchases the customer made on another of their devices (another queue acting for the
    /// same customer, in this process or another), and renewals the store made meanwhile, as
    /// StoreKit 2's `Transaction.updates` hears them; only while the queue hears other devices
    /// (`PaymentQueue.startHearingOtherDevices`). StoreKit 1 has no callback for it: by default,
    /// nothing.
    func paymentQueue(_ queue: PaymentQueue, purchasedOnAnotherDevice transactions: [PaymentTransaction]) async
    /// A restore delivered all its transactions.
    func paymentQueueRestoreCompletedTransactionsFinished(_ queue: PaymentQueue) async
    /// A restore failed.
    func paymentQueue(_ queue: PaymentQueue, restoreCompletedTransactionsFailedWithError error: any Error) async
}

extension PaymentTransactionObserver {
    public func paymentQueue(_ queue: PaymentQueue, removedTransactions transactions: [PaymentTransaction]) async {}
    public func paymentQueue(
        _ queue: PaymentQueue, didRevokeEntitlementsForProductIdentifiers productIdentifiers: [String]
    ) async {}
    public func paymentQueue(_ queue: PaymentQueue, revokedTransactions transactions: [PaymentTransaction]) async {
        await paymentQueue(queue, didRevokeEntitlementsForProductIdentifiers: transactions.productIDs)
    }
    public func paymentQueue(_ queue: PaymentQueue, reinstatedTransactions transactions: [PaymentTransaction]) async {}
    public func paymentQueue(
        _ queue: PaymentQueue, purchasedOnAnotherDevice transactions: [PaymentTransaction]
    ) async {}
    public func paymentQueueRestoreCompletedTransactionsFinished(_ queue: PaymentQueue) async {}
    public func paymentQueue(_ queue: PaymentQueue, restoreCompletedTransactionsFailedWithError error: any Error) async
    {}
}

/// One change of the queue, as the `AsyncSequence` from `PaymentQueue.updates()` carries it.
public enum PaymentQueueUpdate: Sendable {
    /// Transactions changed state, or unfinished ones are delivered again (`updatedTransactions`).
    case updated([PaymentTransaction])
    /// Transactions were finished and left the queue (`removedTransactions`).
    case removed([PaymentTransaction])
    /// Refunded or revoked transactions, as stored after the revocation (finished ones
    /// included: this is not a redelivery).
    case revoked([PaymentTransaction])
    /// Transactions whose refund was reversed, as stored after it (`reinstatedTransactions`).
    case reinstated([PaymentTransaction])
    /// Purchases made on another of the customer's devices, and the store's renewals, as
    /// stored when this queue heard of them (`purchasedOnAnotherDevice`).
    case purchasedOnAnotherDevice([PaymentTransaction])
    /// A restore delivered all its transactions; also when there was nothing to restore.
    case restoreFinished
    /// A restore failed with this error; it restored nothing.
    case restoreFailed(any Error)
}
