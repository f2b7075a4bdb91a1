package import Foundation

/// One entry of a transaction's append-only history.
package struct TransactionEvent: Sendable, Hashable, Codable {
    /// What an event records.
    package enum Kind: String, Sendable, Codable, CaseIterable {
        /// The transaction was recorded, in its first state (`toState`).
        case created
        /// The state moved from `fromState` to `toState`.
        case stateChanged
        /// The app finished the transaction; the state stays.
        case finished
        /// The transaction was handed to the app's observers.
        case delivered
        /// The transaction was refunded; `detail` gives the reason (`reason 0`).
        case revoked
        /// A subscription's expiration moved (expired now, or ended by a forced renewal).
        case expirationChanged
        /// A subscription was replaced by a higher (or same-level) one of its group.
        case upgraded
        /// The transaction was deleted (the store's "clear" or "delete" control): its row is
        /// gone, its history stays; the state stays. Always its last event.
        case deleted
        /// The transaction's refund was reversed (Apple's `REFUND_REVERSED`): its revocation
        /// is cleared, it entitles again; the state stays.
        case reinstated
    }

    /// Position in the ledger's whole history; strictly increasing in commit order.
    package var sequence: Int64
    /// The id of the transaction the event is about.
    package var transactionID: UInt64
    /// What happened.
    package var kind: Kind
    /// The state before the event (`nil` for `created`).
    package var fromState: TransactionState?
    /// The state after the event.
    package var toState: TransactionState
    /// When it happened, by the store's time, to the millisecond.
    package var date: Date
    /// More about the event: the refund's reason for `revoked`, the new expiration (ISO 8601)
    /// for `expirationChanged`, the reversed refund's date (ISO 8601) for `reinstated`; `nil`
    /// for the others.
    package var detail: String?

    /// Every field, as the ledger stores them.
    @inlinable package init(
        sequence: Int64,
        transactionID: UInt64,
        kind: Kind,
        fromState: TransactionState?,
        toState: TransactionState,
        date: Date,
        detail: String?
    ) {
        self.sequence = sequence
        self.transactionID = transactionID
        self.kind = kind
        self.fromState = fromState
        self.toState = toState
        self.date = date
        self.detail = detail
    }
}
