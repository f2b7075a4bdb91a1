public import Foundation
import GRDB

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
}

extension Ledger {
    /// The status of the subscription group of `productID` (an auto-renewable subscription),
    /// or `nil` when the group was never bought.
    /// - Throws: `UnknownProductError`; `StoreControlError.notAutoRenewable`.
    public func subscriptionStatus(forProduct productID: String) throws -> SubscriptionStatus? {
        try read { db in try subscriptionStatus(db, group: try subscriptionGroup(db, productID: productID)) }
    }

    /// The status of the group `id` names: an auto-renewable subscription's product
    /// identifier, else a subscription group's identifier; `nil` when the group was never bought.
    /// - Throws: `StoreControlError.notAutoRenewable` for another kind of product,
    ///   `.unknownSubscriptionGroup` when `id` is neither.
    public func subscriptionStatus(forProductOrGroup id: String) throws -> SubscriptionStatus? {
        do {
            return try subscriptionStatus(forProduct: id)
        } catch is UnknownProductError {
            return try subscriptionStatus(forGroup: id)
        }
    }

    /// The status of a subscription group by its identifier, or `nil` when it was never bought.
    /// - Throws: `StoreControlError.unknownSubscriptionGroup`.
    public func subscriptionStatus(forGroup groupID: String) throws -> SubscriptionStatus? {
        try read { db in
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM subscription_groups WHERE id = ?", arguments: [groupID]) != nil
            else { throw StoreControlError.unknownSubscriptionGroup(groupID) }
            return try subscriptionStatus(db, group: groupID)
        }
    }

    private func subscriptionStatus(_ db: Database, group: String) throws -> SubscriptionStatus? {
        // The latest period (a pending downgrade's payment has none of its own: not it).
        guard let latest = try latestPeriod(db, group: group) else { return nil }
        let now = Date(ledgerMilliseconds: try storeNow(db))
        let renewal = try renewalState(db, group: group)
        let expired = latest.expirationDate.map { $0 <= now } ?? true
        var state: SubscriptionStatus.RenewalState = latest.revocationDate != nil ? .revoked : expired ? .expired : .subscribed
        var reason: SubscriptionStatus.ExpirationReason? = renewal.autoRenew ? .unknown : .autoRenewDisabled
        // A renewal that failed on a billing issue: retried (with a grace period, when on) until
        // the retries are over, then expired for a billing error.
        let issue = renewal.billingIssue.flatMap { $0.since == latest.expirationDate?.ledgerMilliseconds ? $0 : nil }
        let nowMS = now.ledgerMilliseconds
        if state == .expired, let issue {
            if nowMS < issue.retryUntil {
                state = issue.graceUntil.map { nowMS < $0 } == true ? .inGracePeriod : .inBillingRetryPeriod
            } else {
                reason = .billingError
            }
        }
        let retrying = state == .inGracePeriod || state == .inBillingRetryPeriod
        // Only a current period renews: one that lapsed stays expired even with auto-renew on.
        let renews = renewal.autoRenew && (state == .subscribed || retrying)
        return SubscriptionStatus(
            groupID: group, state: state, transaction: latest, willAutoRenew: renews,
            autoRenewProductID: renewal.nextProductID ?? latest.productID,
            renewalDate: state == .subscribed && renews ? latest.expirationDate : nil,
            expirationReason: state == .expired ? reason : nil,
            isInBillingRetry: retrying, gracePeriodExpirationDate: retrying ? issue?.graceUntil.map(Date.init(ledgerMilliseconds:)) : nil)
    }
}

extension Ledger {
    /// Whether the group's introductory offer is still open to the user: once per subscription
    /// group, so only while no subscription of the group was ever bought.
    public func isEligibleForIntroductoryOffer(group groupID: String) throws -> Bool {
        try read { db in
            try Bool.fetchOne(
                db, sql: "SELECT 1 FROM transactions WHERE subscription_group_id = ? AND state IN ('purchased', 'restored') LIMIT 1",
                arguments: [groupID]) == nil
        }
    }
}
