import Foundation
public import OpenStoreKit

/// An error a test makes a StoreKit API fail with (StoreKitTest's `SKTestFailure`).
public protocol SKTestFailure: Equatable, Sendable {}

/// A StoreKit 2 API whose calls a test can make fail (StoreKitTest's `FailableStoreKitAPI`):
/// `.loadProducts`, `.purchase`, `.verification`, `.appStoreSync`, `.subscriptionStatus`,
/// `.manageSubscriptions`, `.offerCodeRedeem`, `.appTransaction`, `.refundRequest`.
public protocol FailableStoreKitAPI<Failure>: Sendable {
    /// The errors a test can make this API's calls fail with.
    associatedtype Failure: SKTestFailure
}

/// The errors each failable API can be given (StoreKitTest's `SKTestFailures`).
public enum SKTestFailures {
    /// `Product.products(for:)` throws the error.
    public enum LoadProducts: SKTestFailure, SimulatedError {
        /// `Product.products(for:)` throws this `StoreKitError`.
        case generic(StoreKitError)
    }

    /// `Product.purchase(options:)` throws the error.
    public enum Purchase: SKTestFailure, SimulatedError {
        /// The purchase throws this `StoreKitError`.
        case generic(StoreKitError)
        /// The purchase throws this `Product.PurchaseError` (`.productUnavailable`, say).
        case purchase(Product.PurchaseError)
    }

    /// Every `VerificationResult` the store hands out is `.unverified` with the error.
    public enum Verification: SKTestFailure, SimulatedError {
        /// Every verification result is `.unverified` with this error.
        case verification(VerificationResult<Any>.VerificationError)
    }

    /// `AppStore.sync()` throws the error.
    public enum AppStoreSync: SKTestFailure, SimulatedError {
        /// `AppStore.sync()` throws this `StoreKitError`.
        case generic(StoreKitError)
    }

    /// `Product.SubscriptionInfo.status` and `status(for:)` throw the error.
    public enum SubscriptionStatus: SKTestFailure, SimulatedError {
        /// The subscription status calls throw this `StoreKitError`.
        case generic(StoreKitError)
    }

    /// `AppStore.showManageSubscriptions(in:)` throws the error.
    public enum ManageSubscriptions: SKTestFailure, SimulatedError {
        /// `AppStore.showManageSubscriptions(in:)` throws this `StoreKitError`.
        case generic(StoreKitError)
    }

    /// `AppStore.presentOfferCodeRedeemSheet(in:)` throws the error.
    public enum OfferCodeRedeem: SKTestFailure, SimulatedError {
        /// `AppStore.presentOfferCodeRedeemSheet(in:)` throws this `StoreKitError`.
        case generic(StoreKitError)
    }

    /// `Transaction.beginRefundRequest` throws the error.
    public enum RefundRequest: SKTestFailure, SimulatedError {
        /// The refund request throws this `StoreKitError`.
        case generic(StoreKitError)
        /// The refund request throws this `Transaction.RefundRequestError`.
        case refundRequest(Transaction.RefundRequestError)
    }

    /// `AppTransaction.shared` and `refresh()` throw the error.
    public enum AppTransaction: SKTestFailure, SimulatedError {
        /// `AppTransaction.shared` and `refresh()` throw this `StoreKitError`.
        case generic(StoreKitError)
    }
}

/// `Product.products(for:)`.
public struct StoreKitLoadProductsAPI: FailableStoreKitAPI, SimulatedAPI {
    /// The errors `Product.products(for:)` can be made to fail with: `SKTestFailures.LoadProducts`.
    public typealias Failure = SKTestFailures.LoadProducts
    static let target = SimulatedFailures.API.loadProducts
    /// The API, to pass to `setSimulatedError(_:forAPI:)` (or write `.loadProducts`).
    public init() {}
}

/// `Product.purchase(options:)`.
public struct StoreKitPurchaseAPI: FailableStoreKitAPI, SimulatedAPI {
    /// The errors `Product.purchase(options:)` can be made to fail with: `SKTestFailures.Purchase`.
    public typealias Failure = SKTestFailures.Purchase
    static let target = SimulatedFailures.API.purchase
    /// The API, to pass to `setSimulatedError(_:forAPI:)` (or write `.purchase`).
    public init() {}
}

/// The verification of what the store hands out.
public struct StoreKitVerificationAPI: FailableStoreKitAPI, SimulatedAPI {
    /// The errors the verification of what the store hands out can be made to fail with:
    /// `SKTestFailures.Verification`.
    public typealias Failure = SKTestFailures.Verification
    static let target = SimulatedFailures.API.verification
    /// The API, to pass to `setSimulatedError(_:forAPI:)` (or write `.verification`).
    public init() {}
}

/// `AppStore.sync()`.
public struct StoreKitAppStoreSyncAPI: FailableStoreKitAPI, SimulatedAPI {
    /// The errors `AppStore.sync()` can be made to fail with: `SKTestFailures.AppStoreSync`.
    public typealias Failure = SKTestFailures.AppStoreSync
    static let target = SimulatedFailures.API.appStoreSync
    /// The API, to pass to `setSimulatedError(_:forAPI:)` (or write `.appStoreSync`).
    public init() {}
}

/// `Product.SubscriptionInfo.status`.
public struct StoreKitSubscriptionStatusAPI: FailableStoreKitAPI, SimulatedAPI {
    /// The errors the subscription status calls can be made to fail with:
    /// `SKTestFailures.SubscriptionStatus`.
    public typealias Failure = SKTestFailures.SubscriptionStatus
    static let target = SimulatedFailures.API.subscriptionStatus
    /// The API, to pass to `setSimulatedError(_:forAPI:)` (or write `.subscriptionStatus`).
    public init() {}
}

/// `AppStore.showManageSubscriptions(in:)`.
public struct StoreKitManageSubscriptionsAPI: FailableStoreKitAPI, SimulatedAPI {
    /// The errors `AppStore.showManageSubscriptions(in:)` can be made to fail with:
    /// `SKTestFailures.ManageSubscriptions`.
    public typealias Failure = SKTestFailures.ManageSubscriptions
    static let target = SimulatedFailures.API.manageSubscriptions
    /// The API, to pass to `setSimulatedError(_:forAPI:)` (or write `.manageSubscriptions`).
    public init() {}
}

/// `AppStore.presentOfferCodeRedeemSheet(in:)`.
public struct StoreKitOfferCodeRedeemAPI: FailableStoreKitAPI, SimulatedAPI {
    /// The errors `AppStore.presentOfferCodeRedeemSheet(in:)` can be made to fail with:
    /// `SKTestFailures.OfferCodeRedeem`.
    public typealias Failure = SKTestFailures.OfferCodeRedeem
    static let target = SimulatedFailures.API.offerCodeRedeem
    /// The API, to pass to `setSimulatedError(_:forAPI:)` (or write `.offerCodeRedeem`).
    public init() {}
}

/// `Transaction.beginRefundRequest`.
public struct StoreKitRefundRequestAPI: FailableStoreKitAPI, SimulatedAPI {
    /// The errors `Transaction.beginRefundRequest` can be made to fail with:
    /// `SKTestFailures.RefundRequest`.
    public typealias Failure = SKTestFailures.RefundRequest
    static let target = SimulatedFailures.API.refundRequest
    /// The API, to pass to `setSimulatedError(_:forAPI:)` (or write `.refundRequest`).
    public init() {}
}

extension FailableStoreKitAPI where Self == StoreKitRefundRequestAPI {
    /// Names `Transaction.beginRefundRequest`, for `setSimulatedError(_:forAPI:)` and
    /// `simulatedError(forAPI:)`.
    public static var refundRequest: StoreKitRefundRequestAPI { .init() }
}

/// `AppTransaction.shared` and `refresh()`.
public struct StoreKitAppTransactionAPI: FailableStoreKitAPI, SimulatedAPI {
    /// The errors `AppTransaction.shared` and `refresh()` can be made to fail with:
    /// `SKTestFailures.AppTransaction`.
    public typealias Failure = SKTestFailures.AppTransaction
    static let target = SimulatedFailures.API.appTransaction
    /// The API, to pass to `setSimulatedError(_:forAPI:)` (or write `.appTransaction`).
    public init() {}
}

extension FailableStoreKitAPI where Self == StoreKitAppTransactionAPI {
    /// Names `AppTransaction.shared` and `refresh()`, for `setSimulatedError(_:forAPI:)` and
    /// `simulatedError(forAPI:)`.
    public static var appTransaction: StoreKitAppTransactionAPI { .init() }
}

extension FailableStoreKitAPI where Self == StoreKitManageSubscriptionsAPI {
    /// Names `AppStore.showManageSubscriptions(in:)`, for `setSimulatedError(_:forAPI:)` and
    /// `simulatedError(forAPI:)`.
    public static var manageSubscriptions: StoreKitManageSubscriptionsAPI { .init() }
}

extension FailableStoreKitAPI where Self == StoreKitOfferCodeRedeemAPI {
    /// Names `AppStore.presentOfferCodeRedeemSheet(in:)`, for `setSimulatedError(_:forAPI:)` and
    /// `simulatedError(forAPI:)`.
    public static var offerCodeRedeem: StoreKitOfferCodeRedeemAPI { .init() }
}

extension FailableStoreKitAPI where Self == StoreKitLoadProductsAPI {
    /// Names `Product.products(for:)`, for `setSimulatedError(_:forAPI:)` and
    /// `simulatedError(forAPI:)`.
    public static var loadProducts: StoreKitLoadProductsAPI { .init() }
}

extension FailableStoreKitAPI where Self == StoreKitPurchaseAPI {
    /// Names `Product.purchase(options:)`, for `setSimulatedError(_:forAPI:)` and
    /// `simulatedError(forAPI:)`.
    public static var purchase: StoreKitPurchaseAPI { .init() }
}

extension FailableStoreKitAPI where Self == StoreKitVerificationAPI {
    /// Names the verification of what the store hands out, for `setSimulatedError(_:forAPI:)`
    /// and `simulatedError(forAPI:)`.
    public static var verification: StoreKitVerificationAPI { .init() }
}

extension FailableStoreKitAPI where Self == StoreKitAppStoreSyncAPI {
    /// Names `AppStore.sync()`, for `setSimulatedError(_:forAPI:)` and `simulatedError(forAPI:)`.
    public static var appStoreSync: StoreKitAppStoreSyncAPI { .init() }
}

extension FailableStoreKitAPI where Self == StoreKitSubscriptionStatusAPI {
    /// Names the subscription status calls, for `setSimulatedError(_:forAPI:)` and
    /// `simulatedError(forAPI:)`.
    public static var subscriptionStatus: StoreKitSubscriptionStatusAPI { .init() }
}

/// One of this module's failable APIs: which of the store's calls it names.
protocol SimulatedAPI {
    static var target: SimulatedFailures.API { get }
}

/// One of this module's failures: the error the calls throw, and back.
protocol SimulatedError {
    var error: any Error { get }
    init?(error: any Error)
}

extension SKTestFailures.LoadProducts {
    var error: any Error {
        switch self {
        case .generic(let error): error
        }
    }
    init?(error: any Error) {
        guard let error = error as? StoreKitError else { return nil }
        self = .generic(error)
    }
}

extension SKTestFailures.AppStoreSync {
    var error: any Error {
        switch self {
        case .generic(let error): error
        }
    }
    init?(error: any Error) {
        guard let error = error as? StoreKitError else { return nil }
        self = .generic(error)
    }
}

extension SKTestFailures.SubscriptionStatus {
    var error: any Error {
        switch self {
        case .generic(let error): error
        }
    }
    init?(error: any Error) {
        guard let error = error as? StoreKitError else { return nil }
        self = .generic(error)
    }
}

extension SKTestFailures.ManageSubscriptions {
    var error: any Error {
        switch self {
        case .generic(let error): error
        }
    }
    init?(error: any Error) {
        guard let error = error as? StoreKitError else { return nil }
        self = .generic(error)
    }
}

extension SKTestFailures.OfferCodeRedeem {
    var error: any Error {
        switch self {
        case .generic(let error): error
        }
    }
    init?(error: any Error) {
        guard let error = error as? StoreKitError else { return nil }
        self = .generic(error)
    }
}

extension SKTestFailures.RefundRequest {
    var error: any Error {
        switch self {
        case .generic(let error): error
        case .refundRequest(let error): error
        }
    }

    init?(error: any Error) {
        if let error = error as? StoreKitError {
            self = .generic(error)
        } else if let error = error as? Transaction.RefundRequestError {
            self = .refundRequest(error)
        } else {
            return nil
        }
    }
}

extension SKTestFailures.AppTransaction {
    var error: any Error {
        switch self {
        case .generic(let error): error
        }
    }
    init?(error: any Error) {
        guard let error = error as? StoreKitError else { return nil }
        self = .generic(error)
    }
}

extension SKTestFailures.Verification {
    var error: any Error {
        switch self {
        case .verification(let error): error
        }
    }
    init?(error: any Error) {
        guard let error = error as? VerificationResult<Any>.VerificationError else { return nil }
        self = .verification(error)
    }
}

extension SKTestFailures.Purchase {
    var error: any Error {
        switch self {
        case .generic(let error): error
        case .purchase(let error): error
        }
    }

    init?(error: any Error) {
        if let error = error as? StoreKitError {
            self = .generic(error)
        } else if let error = error as? Product.PurchaseError {
            self = .purchase(error)
        } else {
            return nil
        }
    }
}

extension SKTestSession {
    /// Makes the calls of `api` fail with `error` from now on (`nil`: they work again), in this
    /// session's store, across relaunches, until `resetToDefaultState()`.
    /// - Throws: `SKTestSessionError.unsupportedAPI` for an API type defined outside OpenStoreKitTest.
    public func setSimulatedError<API: FailableStoreKitAPI>(_ error: API.Failure?, forAPI api: API) async throws {
        guard let target = (API.self as? any SimulatedAPI.Type)?.target else {
            throw SKTestSessionError.unsupportedAPI(String(describing: API.self))
        }
        failures.set((error as? any SimulatedError)?.error, for: target)
    }

    /// The error the calls of `api` fail with, if any.
    public func simulatedError<API: FailableStoreKitAPI>(forAPI api: API) async -> API.Failure? {
        guard let target = (API.self as? any SimulatedAPI.Type)?.target,
            let error = failures.error(for: target),
            let failure = API.Failure.self as? any SimulatedError.Type
        else { return nil }
        return failure.init(error: error) as? API.Failure
    }
}
