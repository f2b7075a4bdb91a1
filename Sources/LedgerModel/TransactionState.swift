/// Where a payment transaction stands, as in StoreKit's `SKPaymentTransactionState`.
public enum TransactionState: String, Sendable, Codable, CaseIterable {
    /// The store is processing the payment.
    case purchasing
    /// Paid: the app must deliver the content, then finish the transaction.
    case purchased
    /// Did not go through; the transaction's `error` says why.
    case failed
    /// A replay of an earlier purchase, made by a restore.
    case restored
    /// Waiting for someone else to approve it (Ask to Buy).
    case deferred

    /// Whether a transaction in this state may be finished (`TransactionRules.finishable`).
    public var canBeFinished: Bool {
        TransactionRules.finishable.contains(self)
    }

    /// Whether a transaction in this state may be refunded (`TransactionRules.revocable`).
    public var canBeRevoked: Bool {
        TransactionRules.revocable.contains(self)
    }

    /// Whether a transaction may move from this state to `next` (`TransactionRules.transitions`;
    /// the database enforces the same table with a trigger, so that no caller can bypass it).
    public func canMove(to next: TransactionState) -> Bool {
        TransactionRules.transitions.contains(TransactionRules.Transition(self, next))
    }
}
