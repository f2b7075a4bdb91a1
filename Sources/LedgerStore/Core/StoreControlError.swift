public import Foundation

/// A store-side operation the ledger refuses (test controls, subscriptions, refunds,
/// promotions). Nothing was changed.
public enum StoreControlError: DescribedError, Sendable, Equatable {
    case notAutoRenewable(String)
    case unknownSubscriptionGroup(String)
    /// The subscription was never bought, or another product of its group is the current one.
    case noSubscription(String)
    case cannotRefund(UInt64, state: TransactionState)
    case alreadyRefunded(UInt64)
    case notInterrupted(UInt64)
    /// The subscription is not in billing retry (or its retries are over).
    case noBillingIssue(String)
    case clockCannotGoBack(current: Date, requested: Date)
    case clockOutOfRange(interval: TimeInterval)
    /// The clock move would make more subscription renewals due than one move may create.
    case tooManyRenewals(limit: Int)
    case duplicatePromotion(String)

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
        case .alreadyRefunded(let id):
            "transaction \(id) is already refunded"
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
        }
    }
}

/// Keys of the simulated store's settings in the ledger's `store_settings` table.
public enum StoreSettingKey {
    public static let storefront = "storefront"
    public static let locale = "locale"
    public static let canMakePayments = "canMakePayments"
    public static let askToBuy = "askToBuy"
    public static let interruptedPurchases = "interruptedPurchases"
    /// The `StoreErrorCode` raw value every purchase fails with; absent when off.
    public static let failTransactions = "failTransactions"
    public static let timeRate = "timeRate"
    /// Milliseconds added to the injected clock: `ledger clock advance` / `set`.
    public static let clockOffset = "clockOffsetMilliseconds"
    /// `true`: every renewal fails on a billing issue and the group enters billing retry.
    public static let billingRetryOnRenewal = "billingRetryOnRenewal"
    /// `true`: a group in billing retry keeps its entitlement for a grace period.
    public static let billingGracePeriod = "billingGracePeriod"
    /// The app's bundle identifier, which promotional offer signatures sign.
    public static let bundleID = "bundleID"
    /// The subscription offers key (`SubscriptionOffersKey`): its identifier, and its private
    /// key in base64 PKCS #8 DER, as a StoreKit configuration file's `subscriptionOffersKeyPair`.
    public static let subscriptionOffersKeyID = "subscriptionOffersKeyID"
    public static let subscriptionOffersPrivateKey = "subscriptionOffersPrivateKey"
}
