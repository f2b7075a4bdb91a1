public import Foundation

/// Where a subscription the customer holds of an auto-renewable subscription group stands now
/// (StoreKit 2's `Product.SubscriptionInfo.Status` with its `RenewalInfo`). A customer may hold
/// a group twice: their own subscription, and one a family member shares (`isFamilyShared`).
public struct SubscriptionStatus: Sendable, Hashable, Codable {
    /// StoreKit's `Product.SubscriptionInfo.RenewalState`.
    public enum RenewalState: String, Sendable, Codable {
        /// In a current period, expired, in billing retry, in billing retry's grace period, or
        /// refunded.
        case subscribed, expired, inBillingRetryPeriod, inGracePeriod, revoked
    }

    /// StoreKit's `RenewalInfo.ExpirationReason`.
    public enum ExpirationReason: String, Sendable, Codable {
        /// Why it expired: auto-renew was off, billing retries ran out, the subscriber did not
        /// agree to a price increase, or `unknown`. The ledger never gives `productUnavailable`.
        case autoRenewDisabled, billingError, didNotConsentToPriceIncrease, productUnavailable, unknown
    }

    /// The identifier of the subscription group.
    public var groupID: String
    /// Whether a family member holds it and shares it with the customer (its transactions are
    /// owned FAMILY_SHARED); `false` for the customer's own subscription.
    public var isFamilyShared: Bool
    /// Which subscription of the group it is: the original transaction of the family member's
    /// shared purchase, `nil` for the customer's own.
    package var sharedOriginalID: UInt64? { isFamilyShared ? transaction.originalID : nil }
    /// Where the subscription stands at the store's time now.
    public var state: RenewalState
    /// The subscription's latest period: the transaction that gives (or gave) the entitlement.
    public var transaction: PaymentTransaction
    /// Whether the subscription renews at the end of its period: auto-renew is on and the
    /// period is current or in billing retry.
    public var willAutoRenew: Bool
    /// The product the next renewal charges: a pending downgrade or crossgrade, else the current one.
    public var autoRenewProductID: String
    /// When the subscription renews, while it will.
    public var renewalDate: Date?
    /// Why it expired, once expired; `.billingError` during billing retry too (its period
    /// ended, and the store retries the renewal), as Apple's renewal info shows `expirationIntent`.
    public var expirationReason: ExpirationReason?
    /// Whether a renewal failed on a billing issue and the store still retries it (grace period
    /// included).
    public var isInBillingRetry: Bool
    /// While in billing retry with a grace period: when the grace period ends (or ended); else
    /// `nil`.
    public var gracePeriodExpirationDate: Date?
    /// A price increase of `autoRenewProductID` waiting for the next renewal; `nil` when none.
    public var priceIncrease: PriceIncrease?
    /// The price of one period at the next renewal (an offer the renewal is charged at aside):
    /// a price increase's, else the price the subscriber pays already (one agreed to in an
    /// increase), else the catalog's; `nil` when the catalog no longer has the product.
    public var renewalPrice: Decimal?
    /// The offer the next renewal is charged at, while the subscription will renew: the rest
    /// of a pay-as-you-go offer, or a promotional offer or offer code redeemed while
    /// subscribed; `nil` when none.
    public var renewalOffer: TransactionOffer?
    /// The win-back offers the customer may redeem now, best first (high priority first, then
    /// as the catalog lists them): those of the latest period's product, while the
    /// subscription is churned (expired, not renewing, not in billing retry); empty otherwise.
    public var eligibleWinBackOfferIDs: [String]

    enum CodingKeys: String, CodingKey {
        case groupID, isFamilyShared, state, transaction, willAutoRenew, autoRenewProductID, renewalDate,
            expirationReason, isInBillingRetry, gracePeriodExpirationDate, priceIncrease, renewalPrice,
            renewalOffer, eligibleWinBackOfferIDs
    }

    /// Encodes every field, absent ones as `null`, so that a JSON reader sees one shape.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(groupID, forKey: .groupID)
        try c.encode(isFamilyShared, forKey: .isFamilyShared)
        try c.encode(state, forKey: .state)
        try c.encode(transaction, forKey: .transaction)
        try c.encode(willAutoRenew, forKey: .willAutoRenew)
        try c.encode(autoRenewProductID, forKey: .autoRenewProductID)
        try c.encode(renewalDate, forKey: .renewalDate)
        try c.encode(expirationReason, forKey: .expirationReason)
        try c.encode(isInBillingRetry, forKey: .isInBillingRetry)
        try c.encode(gracePeriodExpirationDate, forKey: .gracePeriodExpirationDate)
        try c.encode(priceIncrease, forKey: .priceIncrease)
        // A string keeps the decimal exact for every JSON reader, as a product's price.
        try c.encode(renewalPrice.map(DecimalText.format), forKey: .renewalPrice)
        try c.encode(renewalOffer, forKey: .renewalOffer)
        try c.encode(eligibleWinBackOfferIDs, forKey: .eligibleWinBackOfferIDs)
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            groupID: try c.decode(String.self, forKey: .groupID),
            isFamilyShared: try c.decodeIfPresent(Bool.self, forKey: .isFamilyShared) ?? false,
            state: try c.decode(RenewalState.self, forKey: .state),
            transaction: try c.decode(PaymentTransaction.self, forKey: .transaction),
            willAutoRenew: try c.decode(Bool.self, forKey: .willAutoRenew),
            autoRenewProductID: try c.decode(String.self, forKey: .autoRenewProductID),
            renewalDate: try c.decodeIfPresent(Date.self, forKey: .renewalDate),
            expirationReason: try c.decodeIfPresent(ExpirationReason.self, forKey: .expirationReason),
            isInBillingRetry: try c.decode(Bool.self, forKey: .isInBillingRetry),
            gracePeriodExpirationDate: try c.decodeIfPresent(Date.self, forKey: .gracePeriodExpirationDate),
            priceIncrease: try c.decodeIfPresent(PriceIncrease.self, forKey: .priceIncrease),
            renewalPrice: try DecimalText.decodePrice(in: c, forKey: .renewalPrice),
            renewalOffer: try c.decodeIfPresent(TransactionOffer.self, forKey: .renewalOffer),
            eligibleWinBackOfferIDs: try c.decodeIfPresent([String].self, forKey: .eligibleWinBackOfferIDs) ?? [])
    }

    /// Every field (the storage engine computes them).
    @inlinable package init(
        groupID: String,
        isFamilyShared: Bool = false,
        state: RenewalState,
        transaction: PaymentTransaction,
        willAutoRenew: Bool,
        autoRenewProductID: String,
        renewalDate: Date?,
        expirationReason: ExpirationReason?,
        isInBillingRetry: Bool,
        gracePeriodExpirationDate: Date?,
        priceIncrease: PriceIncrease? = nil,
        renewalPrice: Decimal? = nil,
        renewalOffer: TransactionOffer? = nil,
        eligibleWinBackOfferIDs: [String] = []
    ) {
        self.groupID = groupID
        self.isFamilyShared = isFamilyShared
        self.state = state
        self.transaction = transaction
        self.willAutoRenew = willAutoRenew
        self.autoRenewProductID = autoRenewProductID
        self.renewalDate = renewalDate
        self.expirationReason = expirationReason
        self.isInBillingRetry = isInBillingRetry
        self.gracePeriodExpirationDate = gracePeriodExpirationDate
        self.priceIncrease = priceIncrease
        self.renewalPrice = renewalPrice
        self.renewalOffer = renewalOffer
        self.eligibleWinBackOfferIDs = eligibleWinBackOfferIDs
    }
}
