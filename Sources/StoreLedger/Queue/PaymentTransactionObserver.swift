/// Receives the payment queue's changes (`SKPaymentTransactionObserver`).
///
/// The queue holds observers weakly and calls them only after the change is committed, in
/// commit order. The callbacks are `async`, so an observer may `await queue.finish(...)`.
public protocol PaymentTransactionObserver: AnyObject, Sendable {
    /// Transactions changed state, or are redelivered at launch because they are unfinished.
    func paymentQueue(_ queue: PaymentQueue, updatedTransactions transactions: [PaymentTransaction]) async
    /// Transactions were finished and left the queue.
    func paymentQueue(_ queue: PaymentQueue, removedTransactions transactions: [PaymentTransaction]) async
    /// A restore delivered all its transactions.
    func paymentQueueRestoreCompletedTransactionsFinished(_ queue: PaymentQueue) async
    /// A restore failed.
    func paymentQueue(_ queue: PaymentQueue, restoreCompletedTransactionsFailedWithError error: any Error) async
}

extension PaymentTransactionObserver {
    public func paymentQueue(_ queue: PaymentQueue, removedTransactions transactions: [PaymentTransaction]) async {}
    public func paymentQueueRestoreCompletedTransactionsFinished(_ queue: PaymentQueue) async {}
    public func paymentQueue(_ queue: PaymentQueue, restoreCompletedTransactionsFailedWithError error: any Error) async {}
}

/// One change of the queue, as the `AsyncSequence` from `PaymentQueue.updates()` carries it.
public enum PaymentQueueUpdate: Sendable {
    case updated([PaymentTransaction])
    case removed([PaymentTransaction])
    case restoreFinished
    case restoreFailed(any Error)
}
