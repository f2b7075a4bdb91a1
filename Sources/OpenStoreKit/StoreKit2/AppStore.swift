public import Foundation
import StoreLedger

/// The App Store as StoreKit 2 reaches it (`AppStore`): here, the store's ledger.
public enum AppStore {
    /// Where a transaction was made (`AppStore.Environment`). The ledger's store is local
    /// testing: `.xcode`.
    public struct Environment: RawRepresentable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The live App Store; no transaction of the ledger's store carries it.
        public static let production = Environment(rawValue: "Production")
        /// Apple's sandbox test environment: what the ledger's store signs when its
        /// `environment` setting is `Sandbox`.
        public static let sandbox = Environment(rawValue: "Sandbox")
        /// Local StoreKit testing: what the ledger's store signs by default (its `environment`
        /// setting is `Xcode`).
        public static let xcode = Environment(rawValue: "Xcode")
    }

    /// Whether the user may make payments (the store's `canMakePayments` control).
    public static var canMakePayments: Bool {
        SKPaymentQueue.canMakePayments()
    }

    /// Brings the app's transactions up to date with the store. The ledger is the store, so
    /// there is nothing to download: this makes the subscription renewals that fell due and
    /// delivers them (`Transaction.updates`).
    /// - Throws: `StoreKitError.systemError` when the ledger cannot be read or written; the
    ///   error a test simulates for `.appStoreSync`.
    public static func sync() async throws {
        let context: StoreContext
        do { context = try StoreContext.current() } catch { throw StoreKitError.systemError(error) }
        try context.failures.check(.appStoreSync)
        do {
            try await context.queue.processSubscriptionRenewals()
        } catch {
            throw StoreKitError.systemError(error)
        }
    }
}

/// StoreKit 2's general errors (`StoreKitError`).
public enum StoreKitError: Error, Sendable, LocalizedError {
    /// A failure of no known cause; a test can also simulate it.
    case unknown
    /// The user cancelled the action; here only a test's simulated error (a cancelled purchase
    /// returns `.userCancelled` instead).
    case userCancelled
    /// The App Store could not be reached over the network; the ledger is local, so only a test's
    /// simulated error raises it.
    case networkError(URLError)
    /// A system failure, with its cause: here the ledger could not be opened, read or written, or the
    /// store failed a purchase with a code StoreKit 2 has no error for.
    case systemError(any Error)
    /// The product is not sold in the current storefront; only a test's simulated error raises it here.
    case notAvailableInStorefront
    /// The app lacks the entitlement the call needs; only a test's simulated error raises it here.
    case notEntitled
    /// The call is not supported in this configuration; only a test's simulated error raises it here.
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

extension StoreKitError: Equatable {
    /// Same case; network errors with equal `URLError`s; system errors that describe themselves
    /// alike (an `any Error` has no equality of its own).
    public static func == (lhs: StoreKitError, rhs: StoreKitError) -> Bool {
        switch (lhs, rhs) {
        case (.unknown, .unknown), (.userCancelled, .userCancelled),
            (.notAvailableInStorefront, .notAvailableInStorefront),
            (.notEntitled, .notEntitled), (.unsupported, .unsupported):
            true
        case (.networkError(let left), .networkError(let right)):
            left == right
        case (.systemError(let left), .systemError(let right)):
            String(reflecting: left) == String(reflecting: right)
        default:
            false
        }
    }
}
