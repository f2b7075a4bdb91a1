public import Foundation

/// One entry of a transaction's append-only history.
public struct TransactionEvent: Sendable, Hashable, Codable {
    public enum Kind: String, Sendable, Codable, CaseIterable {
        case created
        case stateChanged
        case finished
        case delivered
        case revoked
        /// A subscription's expiration moved (expired now, or ended by a forced renewal).
        case expirationChanged
        /// A subscription was replaced by a higher (or same-level) one of its group.
        case upgraded
    }

    /// Position in the ledger's whole history; strictly increasing in commit order.
    public var sequence: Int64
    public var transactionID: UInt64
    public var kind: Kind
    /// The state before the event (`nil` for `created`).
    public var fromState: TransactionState?
    /// The state after the event.
    public var toState: TransactionState
    public var date: Date
    public var detail: String?
}
