import Foundation
import StoreLedger
import Synchronization

/// What `Transaction.updates` sequences receive: the store's changes to purchased and restored
/// transactions, and revocations, except what a `purchase()` call in progress will return.
///
/// It hears the ledger's queue from the launch on (it is one of its first observers), so no
/// change committed after a sequence starts can be missed.
final class TransactionUpdates: PaymentTransactionObserver, Sendable {
    private let broadcast = Broadcast<VerificationResult<Transaction>>()
    /// The idempotency keys of the `purchase()` calls running now: their outcome is returned
    /// by the call, not emitted.
    private let purchasesInProgress = Mutex<Set<String>>([])
    private let ledger: Ledger

    init(ledger: Ledger) {
        self.ledger = ledger
    }

    /// A new sequence's stream: the unfinished transactions first, then every update.
    func listen() -> AsyncStream<VerificationResult<Transaction>> {
        broadcast.listen {
            ((try? ledger.unfinishedTransactions()) ?? []).filter(HistoryPages.isShown).map { .verified(Transaction($0)) }
        }
    }

    func beginPurchase(key: String) {
        purchasesInProgress.withLock { _ = $0.insert(key) }
    }

    func endPurchase(key: String) {
        purchasesInProgress.withLock { _ = $0.remove(key) }
    }

    func paymentQueue(_ queue: PaymentQueue, updatedTransactions transactions: [PaymentTransaction]) async {
        let inProgress = purchasesInProgress.withLock { $0 }
        let shown = transactions.filter { row in
            HistoryPages.isShown(row) && !(row.idempotencyKey.map(inProgress.contains) ?? false)
        }
        broadcast.send(shown.map { .verified(Transaction($0)) })
    }

    func paymentQueue(_ queue: PaymentQueue, revokedTransactions transactions: [PaymentTransaction]) async {
        broadcast.send(transactions.map { .verified(Transaction($0)) })
    }
}
