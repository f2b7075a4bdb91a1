public import Foundation

/// Where an auto-renewable subscription group stands now (StoreKit 2's
/// `Product.SubscriptionInfo.Status` with its `RenewalInfo`).
public struct SubscriptionStatus: Sendable, Hashable, Codable {
    /// StoreKit's `Product.SubscriptionInfo.RenewalState`.
    public enum RenewalState: String, Sendable, Codable {
        /// In a current period, expired, in billing retry, in billing retry's grace period, or
        /// refunded.
        case subscribed, expired, inBillingRetryPeriod, inGracePeriod, revoked
    }

    /// StoreKit's `RenewalInfo.ExpirationReason`.
    public enum ExpirationReason: String, Sendable, Codable {
        /// Why it expired: auto-renew was off, billing retries ran out, or `unknown`. The ledger
        /// never gives `didNotConsentToPriceIncrease` or `productUnavailable`.
        case autoRenewDisabled, billingError, didNotConsentToPriceIncrease, productUnavailable, unknown
    }

    /// The identifier of the subscription group.
    public var groupID: String
    /// Where the group stands at the store's time now.
    public var state: RenewalState
    /// The group's latest period: the transaction that gives (or gave) the entitlement.
    public var transaction: PaymentTransaction
    /// Whether the subscription renews at the end of its period: auto-renew is on and the
    /// period is current or in billing retry.
    public var willAutoRenew: Bool
    /// The product the next renewal charges: a pending downgrade or crossgrade, else the current one.
    public var autoRenewProductID: String
    /// When the subscription renews, while it will.
    public var renewalDate: Date?
    /// Why it expired, once expired.
    public var expirationReason: ExpirationReason?
    /// Whether a renewal failed on a billing issue and the store still retries it (grace period
    /// included).
    public var isInBillingRetry: Bool
    /// While in billing retry with a grace period: when the grace period ends (or ended); else
    /// `nil`.
    public var gracePeriodExpirationDate: Date?

    enum CodingKeys: String, CodingKey {
        case groupID, state, transaction, willAutoRenew, autoRenewProductID, renewalDate, expirationReason,
            isInBillingRetry, gracePeriodExpirationDate
    }

    /// Encodes every field, absent ones as `null`, so that a JSON reader sees one shape.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(groupID, forKey: .groupID)
        try c.encode(state, forKey: .state)
        try c.encode(transaction, forKey: .transaction)
        try c.encode(willAutoRenew, forKey: .willAutoRenew)
        try c.encode(autoRenewProductID, forKey: .autoRenewProductID)
        try c.encode(renewalDate, forKey: .renewalDate)
        try c.encode(expirationReason, forKey: .expirationReason)
        try c.encode(isInBillingRetry, forKey: .isInBillingRetry)
        try c.encode(gracePeriodExpirationDate, forKey: .gracePeriodExpirationDate)
    }

    /// Every field (the storage engine computes them).
    @inlinable package init(
        groupID: String,
        state: RenewalState,
        transaction: PaymentTransaction,
        willAutoRenew: Bool,
        autoRenewProductID: String,
        renewalDate: Date?,
        expirationReason: ExpirationReason?,
        isInBillingRetry: Bool,
        gracePeriodExpirationDate: Date?
    ) {
        self.groupID = groupID
        self.state = state
        self.transaction = transaction
        self.willAutoRenew = willAutoRenew
        self.autoRenewProductID = autoRenewProductID
        self.renewalDate = renewalDate
        self.expirationReason = expirationReason
        self.isInBillingRetry = isInBillingRetry
        self.gracePeriodExpirationDate = gracePeriodExpirationDate
    }
}
