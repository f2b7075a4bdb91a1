import Foundation

/// A Server Notifications V2 request the ledger refuses. Nothing was changed.
package enum NotificationError: DescribedError, Sendable, Equatable {
    /// The store has no notification URL (`ledger store set notificationURL URL`): the App
    /// Store sends nothing then.
    case noURL
    /// The outbox has no notification with this UUID.
    case unknownNotification(String)
    /// The outbox has no notification at this position.
    case unknownSequence(Int64)

    package var description: String {
        switch self {
        case .noURL:
            "the store has no notification URL: set one with `ledger store set notificationURL URL`"
        case .unknownNotification(let uuid):
            "the ledger has no notification \(uuid.prefix(80))"
        case .unknownSequence(let sequence):
            "the ledger has no notification at position \(sequence)"
        }
    }
}
