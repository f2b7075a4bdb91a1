public import Foundation

/// Decides, for the payment queue, whether to go on with a transaction after a storefront
/// change, and when to show a price consent sheet (StoreKit 1's `SKPaymentQueueDelegate`).
///
/// Both methods are optional, as in StoreKit (here through default implementations that
/// answer `true`). The queue calls its delegate on the main actor.
public protocol SKPaymentQueueDelegate: NSObjectProtocol {
    /// Whether to go on with `transaction` now that the storefront is `newStorefront`: never
    /// asked here, as a storefront change never interrupts a transaction in the simulated store.
    func paymentQueue(
        _ paymentQueue: SKPaymentQueue, shouldContinue transaction: SKPaymentTransaction,
        in newStorefront: SKStorefront
    ) -> Bool
    /// Whether to show the price consent sheet of a subscription price increase now: `false`
    /// keeps it for `SKPaymentQueue.showPriceConsentIfNeeded()`. Asked once per consent
    /// request and launch, when the delegate is set or the request is made, whichever is later.
    func paymentQueueShouldShowPriceConsent(_ paymentQueue: SKPaymentQueue) -> Bool
}

extension SKPaymentQueueDelegate {
    public func paymentQueue(
        _ paymentQueue: SKPaymentQueue, shouldContinue transaction: SKPaymentTransaction,
        in newStorefront: SKStorefront
    ) -> Bool {
        true
    }

    /// Shows the sheet at once by default.
    public func paymentQueueShouldShowPriceConsent(_ paymentQueue: SKPaymentQueue) -> Bool {
        true
    }
}
