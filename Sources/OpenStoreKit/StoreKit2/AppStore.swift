import Foundation
import StoreLedger

/// The App Store as StoreKit 2 reaches it (`AppStore`): here, the store's ledger.
public enum AppStore {
    /// Where a transaction was made (`AppStore.Environment`). The ledger's store is local
    /// testing: `.xcode`.
    public struct Environment: RawRepresentable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public static let production = Environment(rawValue: "Production")
        public static let sandbox = Environment(rawValue: "Sandbox")
        public static let xcode = Environment(rawValue: "Xcode")
    }

    /// Whether the user may make payments (the store's `canMakePayments` control).
    public static var canMakePayments: Bool {
        SKPaymentQueue.canMakePayments()
    }

    /// Brings the app's transactions up to date with the store. The ledger is the store, so
    /// there is nothing to download: this makes the subscription renewals that fell due and
    /// delivers them (`Transaction.updates`).
    /// - Throws: `StoreKitError.systemError` when the ledger cannot be read or written.
    public static func sync() async throws {
        do {
            let context = try StoreContext.current()
            try await context.queue.processSubscriptionRenewals()
        } catch {
            throw StoreKitError.systemError(error)
        }
    }
}

/// StoreKit 2's general errors (`StoreKitError`).
public enum StoreKitError: Error, Sendable, LocalizedError {
    case unknown
    case userCancelled
    case networkError(URLError)
    case systemError(any Error)
    case notAvailableInStorefront
    case notEntitled
    case unsupported

    public var errorDescription: String? {
        switch self {
        case .unknown: "An unknown error occurred."
        case .userCancelled: "The user cancelled."
        case .networkError(let error): "A network error occurred: \(error.localizedDescription)"
        case .systemError(let error): "A system error occurred: \(error.localizedDescription)"
        case .notAvailableInStorefront: "The product is not available in the current storefront."
        case .notEntitled: "The app is not entitled to this."
        case .unsupported: "This is not supported."
        }
    }
}
