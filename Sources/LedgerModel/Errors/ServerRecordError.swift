import Foundation

/// A request about the App Store server's records that the ledger refuses. Nothing was changed.
package enum ServerRecordError: DescribedError, Sendable, Equatable {
    /// The transaction is not the original transaction of its chain.
    case notOriginal(UInt64)
    /// The customer has the transaction through Family Sharing: its token is the purchaser's
    /// to set (Apple's `FamilyTransactionNotSupportedError`).
    case familyShared(UInt64)

    package var description: String {
        switch self {
        case .notOriginal(let id): "transaction \(id) is not an original transaction"
        case .familyShared(let id):
            "transaction \(id) was shared by a family member: its app account token is the purchaser's to set"
        }
    }
}
