import Foundation

/// What the simulated store does with one payment (Xcode's StoreKit testing outcomes).
public enum SimulatedOutcome: Sendable, Hashable {
    /// The payment goes through: purchased.
    case success
    /// The user cancelled: failed with `paymentCancelled`, a normal outcome.
    case userCancelled
    /// The payment fails with this code, and `message` or else the code's default message.
    case failed(StoreErrorCode, message: String? = nil)
    /// Ask to Buy: waits for `approve` or `decline`.
    case deferred
    /// Fails until the user resolves an issue outside the app; then a new purchase arrives.
    case interrupted

    package var plannedOutcome: PlannedOutcome {
        switch self {
        case .success: .purchased
        case .deferred: .deferred
        case .interrupted: .interrupted
        case .userCancelled: .failed(TransactionError(code: .paymentCancelled))
        case .failed(let code, let message): .failed(TransactionError(code: code, message: message))
        }
    }
}

/// What the simulated store decided for a payment when it was added. Stored with the payment,
/// so that a process killed while the transaction is `purchasing` resumes with the same outcome.
package enum PlannedOutcome: Sendable, Hashable {
    case purchased
    case deferred
    case failed(TransactionError)
    /// The purchase fails until the user resolves an issue outside the app; once the failed
    /// transaction is finished and the issue resolved, a new purchase arrives.
    case interrupted
}
