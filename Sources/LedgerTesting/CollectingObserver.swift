public import StoreLedger
import Synchronization

/// An observer that records every callback, and what the ledger held for each transaction at
/// the moment it was notified (to prove notifications come after the commit).
public final class CollectingObserver: PaymentTransactionObserver {
    /// One callback the observer received, with its arguments.
    public enum Callback: Sendable, Equatable {
        /// `updatedTransactions`: the transactions delivered, in order.
        case updated([PaymentTransaction])
        /// `removedTransactions`: the transactions that were finished and left the queue.
        case removed([PaymentTransaction])
        /// `didRevokeEntitlementsForProductIdentifiers`: the products whose entitlements were revoked.
        case revoked([String])
        /// `paymentQueueRestoreCompletedTransactionsFinished`: a restore delivered all its transactions.
        case restoreFinished
        /// `restoreCompletedTransactionsFailedWithError`: a restore failed, with the error's description.
        case restoreFailed(String)
        /// `purchasedOnAnotherDevice`: the customer's purchases made on another of their devices.
        case purchasedOnAnotherDevice([PaymentTransaction])
    }

    private let state = Mutex<(callbacks: [Callback], committedAtNotification: [PaymentTransaction?])>(([], []))

    /// An observer with nothing recorded yet; add it to a `PaymentQueue` to start recording.
    public init() {}

    /// Every callback received so far, in the order received.
    public var callbacks: [Callback] { state.withLock { $0.callbacks } }

    /// Every transaction of every `updated` callback, in order.
    public var updated: [PaymentTransaction] {
        callbacks.flatMap { callback -> [PaymentTransaction] in
            if case .updated(let transactions) = callback { return transactions }
            return []
        }
    }

    /// The ledger's row of each updated transaction, read while the observer was being notified.
    public var committedAtNotification: [PaymentTransaction?] { state.withLock { $0.committedAtNotification } }

    public func paymentQueue(_ queue: PaymentQueue, updatedTransactions transactions: [PaymentTransaction]) async {
        let committed = transactions.map { try? queue.ledger.transaction($0.id) }
        state.withLock {
            $0.callbacks.append(.updated(transactions))
            $0.committedAtNotification += committed
        }
    }

    public func paymentQueue(_ queue: PaymentQueue, removedTransactions transactions: [PaymentTransaction]) async {
        state.withLock { $0.callbacks.append(.removed(transactions)) }
    }

    public func paymentQueue(
        _ queue: PaymentQueue, didRevokeEntitlementsForProductIdentifiers productIdentifiers: [String]
    ) async {
        state.withLock { $0.callbacks.append(.revoked(productIdentifiers)) }
    }

    public func paymentQueue(
        _ queue: PaymentQueue, purchasedOnAnotherDevice transactions: [PaymentTransaction]
    ) async {
        state.withLock { $0.callbacks.append(.purchasedOnAnotherDevice(transactions)) }
    }

    public func paymentQueueRestoreCompletedTransactionsFinished(_ queue: PaymentQueue) async {
        state.withLock { $0.callbacks.append(.restoreFinished) }
    }

    public func paymentQueue(_ queue: PaymentQueue, restoreCompletedTransactionsFailedWithError error: any Error) async
    {
        state.withLock { $0.callbacks.append(.restoreFailed("\(error)")) }
    }
}
