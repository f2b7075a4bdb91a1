import Foundation

/// A request about the App Store server's records that the ledger refuses. Nothing was changed.
package enum ServerRecordError: DescribedError, Sendable, Equatable {
    /// The transaction is not the original transaction of its chain.
    case notOriginal(UInt64)

    package var description: String {
        switch self {
        case .notOriginal(let id): "transaction \(id) is not an original transaction"
        }
    }
}
