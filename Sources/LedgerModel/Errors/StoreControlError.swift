public import Foundation

/// A store-side operation the ledger refuses (test controls, subscriptions, refunds,
/// promotions). Nothing was changed.
public enum StoreControlError: DescribedError, Sendable, Equatable {
    /// The product is not an auto-renewable subscription.
    case notAutoRenewable(String)
    /// The identifier names neither a product of the catalog nor a subscription group.
    case unknownSubscriptionGroup(String)
    /// The subscription was never bought, or another product of its group is the current one.
    case noSubscription(String)
    /// The transaction is in `state`: only purchased and restored transactions can be refunded.
    case cannotRefund(UInt64, state: TransactionState)
    /// The transaction was refunded already: a transaction is refunded once.
    case alreadyRefunded(UInt64)
    /// The payment only changed a subscription's next renewal (a downgrade): nothing was charged,
    /// so there is nothing to refund.
    case nothingCharged(UInt64)
    /// The transaction has no issue to resolve: it is not an interrupted purchase (nor a
    /// subscription with a billing issue).
    case notInterrupted(UInt64)
    /// The subscription is not in billing retry (or its retries are over).
    case noBillingIssue(String)
    /// The store clock only moves forward: `requested` is earlier than `current`, the store's time.
    case clockCannotGoBack(current: Date, requested: Date)
    /// The move of `interval` seconds is negative, not finite, or goes past the end of year 9999
    /// (`Ledger.latestStoreDate`).
    case clockOutOfRange(interval: TimeInterval)
    /// The clock move would make more subscription renewals due than one move may create.
    case tooManyRenewals(limit: Int)
    /// The promotion order names this product twice.
    case duplicatePromotion(String)
    /// The App Store signs only purchased and restored transactions.
    case notSigned(UInt64, state: TransactionState)
    /// A refund of the transaction was asked for already, and not decided yet.
    case refundRequestPending(UInt64)
    /// No refund request of the transaction waits for a decision.
    case noRefundRequest(UInt64)
    /// The subscription does not renew (expired, refunded, in billing retry, or auto-renew
    /// off): a price increase applies to a renewal.
    case notRenewing(String)
    /// A price increase of the subscription waits for the subscriber's answer already.
    case priceIncreasePending(String)
    /// No price increase of the subscription waits for the subscriber's answer.
    case noPriceIncrease(String)
    /// The subscriber did not agree to the subscription's price increase: it cannot renew.
    case priceIncreaseNotAgreed(String)
    /// Not a price the ledger keeps exactly (negative, or too many digits).
    case invalidPrice(Decimal)
    /// A prorated refund's part is 1 to 99,999 milliunits of a percent (a full refund is not prorated).
    case invalidRefundPortion(Int)
    /// The product is not family-shareable (a consumable never is).
    case notFamilyShareable(String)
    /// The transaction is not owned through Family Sharing, or its sharing ended already.
    case notFamilyShared(UInt64)
    /// The transaction is not refunded: there is no refund to reverse.
    case notRefunded(UInt64)
    /// The transaction was revoked from the customer as a Family Sharing purchase (its sharing
    /// ended, or the family member was refunded): there is no refund of the customer's to
    /// reverse.
    case revokedByFamilySharing(UInt64)
    /// The refunded subscription period would run beside a later period of the same
    /// subscription, bought after the refund (`by`): a customer has one subscription of a group
    /// at a time, so the refund stays.
    case supersededSinceRefund(UInt64, by: UInt64)

    public var description: String {
        switch self {
        case .unknownSubscriptionGroup(let id):
            "\"\(id)\" is neither a product of the catalog nor a subscription group"
        case .notAutoRenewable(let id):
            "\"\(id)\" is not an auto-renewable subscription"
        case .noSubscription(let id):
            "no subscription to \"\(id)\": it was never bought, or another product of its group replaced it"
        case .cannotRefund(let id, let state):
            "cannot refund transaction \(id): it is \(state.rawValue); only purchased and restored transactions can be refunded"
        case .notSigned(let id, let state):
            "transaction \(id) is \(state.rawValue): only purchased and restored transactions are signed"
        case .alreadyRefunded(let id):
            "transaction \(id) is already refunded"
        case .nothingCharged(let id):
            "transaction \(id) only changed a subscription's next renewal: nothing was charged, nothing can be refunded"
        case .noBillingIssue(let id):
            "the subscription \"\(id)\" has no billing issue to resolve: it is not in billing retry"
        case .notInterrupted(let id):
            "transaction \(id) is not an interrupted purchase"
        case .clockCannotGoBack(let current, let requested):
            "the store clock only moves forward: it is \(current.formatted(.iso8601)), \(requested.formatted(.iso8601)) is earlier"
        case .clockOutOfRange(let interval):
            "cannot move the store clock by \(interval) seconds: it moves forward only, and not past the year 9999"
        case .tooManyRenewals(let limit):
            "refused: this clock move would make more than \(limit) subscription renewals due, the most one move may create; move the clock in smaller steps, slow the time rate, or turn auto-renew off"
        case .duplicatePromotion(let id):
            "\"\(id)\" appears twice in the promotion order"
        case .refundRequestPending(let id):
            "a refund of transaction \(id) was asked for already: the App Store has not decided it yet"
        case .noRefundRequest(let id):
            "no refund request of transaction \(id) waits for a decision"
        case .notRenewing(let id):
            "the subscription \"\(id)\" does not renew (it expired, was refunded, is in billing retry, or its auto-renew is off): a price increase applies to its next renewal"
        case .priceIncreasePending(let id):
            "a price increase of the subscription \"\(id)\" waits for the subscriber's answer already"
        case .noPriceIncrease(let id):
            "no price increase of the subscription \"\(id)\" waits for the subscriber's answer"
        case .priceIncreaseNotAgreed(let id):
            "the subscription \"\(id)\" cannot renew: the subscriber did not agree to its price increase (consent to it, or let it expire)"
        case .invalidRefundPortion(let portion):
            "a prorated refund refunds 1 to 99,999 milliunits of a percent (25000 is 25%), not \(portion)"
        case .notFamilyShareable(let id):
            "\"\(id)\" is not family-shareable: the catalog does not mark it so (a consumable never is)"
        case .notFamilyShared(let id):
            "transaction \(id) is not shared by a family member, or its sharing ended already"
        case .notRefunded(let id):
            "transaction \(id) is not refunded: there is no refund to reverse"
        case .revokedByFamilySharing(let id):
            "transaction \(id) was revoked from the customer as a Family Sharing purchase (FAMILY_REVOKE), not refunded: there is no refund to reverse"
        case .supersededSinceRefund(let id, let later):
            "transaction \(id)'s period would run beside transaction \(later), bought since its refund: a customer has one subscription of a group at a time, so the refund stays"
        case .invalidPrice(let price):
            "\(DecimalText.format(price)) is not a price: a non-negative decimal such as \"0.99\", of at most 18 digits, 15 before the point"
        }
    }
}

/// Keys of the simulated store's settings in the ledger's `store_settings` table.
package enum StoreSettingKey {
    /// The storefront's ISO 3166-1 alpha-3 code (`USA`).
    package static let storefront = "storefront"
    /// The shopper's locale identifier (`en_US`); absent: the storefront's default locale.
    package static let locale = "locale"
    /// `false`: every payment fails with `paymentNotAllowed`; anything else allows payments.
    package static let canMakePayments = "canMakePayments"
    /// `true`: every purchase is deferred until approved or declined (Ask to Buy).
    package static let askToBuy = "askToBuy"
    /// `true`: every purchase is interrupted and fails until its issue is resolved.
    package static let interruptedPurchases = "interruptedPurchases"
    /// The `StoreErrorCode` raw value every purchase fails with; absent when off.
    package static let failTransactions = "failTransactions"
    /// The `TimeRate`, by name (`realTime`) or raw value; absent: real time.
    package static let timeRate = "timeRate"
    /// Milliseconds added to the injected clock: `ledger clock advance` / `set`.
    package static let clockOffset = "clockOffsetMilliseconds"
    /// `true`: every renewal fails on a billing issue and the group enters billing retry.
    package static let billingRetryOnRenewal = "billingRetryOnRenewal"
    /// `true`: a group in billing retry keeps its entitlement for a grace period.
    package static let billingGracePeriod = "billingGracePeriod"
    /// The app's bundle identifier, which promotional offer signatures sign and signed
    /// transactions name.
    package static let bundleID = "bundleID"
    /// Where Server Notifications V2 are sent (`StoreSettings.notificationURL`); absent or
    /// `none`: no notification is recorded.
    package static let notificationURL = "notificationURL"
    /// The environment signed transactions name (`SigningEnvironment`): `Xcode`, `Sandbox` or
    /// `Production`; absent: `Xcode`.
    package static let environment = "environment"
    /// The app's Apple ID, a positive integer; `none` or absent: not set.
    package static let appAppleID = "appAppleID"
    /// The version of the app installed (`1.0`); absent: `1.0`.
    package static let appVersion = "appVersion"
    /// The settings that are each app's own (`app_settings`, and the bundle identifier in
    /// `apps`); the others are the store's, shared by every app.
    package static let appKeys: Set<String> = [bundleID, notificationURL, environment, appAppleID, appVersion]
    /// `true`: the store hands out signed transactions and renewal info whose signature does
    /// not match them (a test of an app's handling of unverified values).
    package static let invalidSignatures = "invalidSignatures"
    /// The subscription offers key (`SubscriptionOffersKey`): its identifier, and its private
    /// key in base64 PKCS #8 DER, as a StoreKit configuration file's `subscriptionOffersKeyPair`.
    package static let subscriptionOffersKeyID = "subscriptionOffersKeyID"
    /// The subscription offers key's private key, PKCS #8 DER in base64.
    package static let subscriptionOffersPrivateKey = "subscriptionOffersPrivateKey"
}
