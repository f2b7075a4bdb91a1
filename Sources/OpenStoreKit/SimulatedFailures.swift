import Synchronization

/// The errors a test makes StoreKit 2 calls fail with (StoreKitTest's
/// `SKTestSession.setSimulatedError(_:forAPI:)`), per store. They outlive a relaunch of the
/// store, as the test environment keeps them, until cleared.
package final class SimulatedFailures: Sendable {
    /// The StoreKit 2 calls a simulated error applies to.
    package enum API: Hashable, Sendable {
        /// `Product.products(for:)`.
        case loadProducts
        /// `Product.purchase(options:)`.
        case purchase
        /// Every `VerificationResult` the store hands out becomes `.unverified`.
        case verification
        /// `AppStore.sync()`.
        case appStoreSync
        /// `Product.SubscriptionInfo.status` and `status(for:)`.
        case subscriptionStatus
        /// `AppStore.showManageSubscriptions(in:)`.
        case manageSubscriptions
        /// `AppStore.presentOfferCodeRedeemSheet(in:)`.
        case offerCodeRedeem
        /// `AppTransaction.shared` and `refresh()`.
        case appTransaction
        /// `Transaction.beginRefundRequest`.
        case refundRequest
    }

    private let errors = Mutex<[API: any Error]>([:])

    package init() {}

    /// Sets (or with `nil` clears) the error calls of `api` fail with.
    package func set(_ error: (any Error)?, for api: API) {
        errors.withLock { $0[api] = error }
    }

    package func error(for api: API) -> (any Error)? {
        errors.withLock { $0[api] }
    }

    package func clearAll() {
        errors.withLock { $0 = [:] }
    }

    /// Throws the error simulated for `api`, if any.
    func check(_ api: API) throws {
        if let error = error(for: api) { throw error }
    }

    /// `value` as the store hands it out: `.unverified` with the simulated verification error
    /// when there is one, else what `check` finds.
    func verify<Value>(_ value: Value, check: (Value) -> VerificationResult<Value>) -> VerificationResult<Value> {
        guard let error = error(for: .verification) as? VerificationResult<Any>.VerificationError else {
            return check(value)
        }
        return .unverified(value, VerificationResult<Value>.VerificationError(error))
    }
}
