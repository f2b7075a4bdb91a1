import Foundation
import GRDB
public import LedgerModel

/// Subscription statuses, as StoreKit and the App Store Server API report them.
extension Ledger {
    /// The status of the subscription of `productID`'s group (an auto-renewable subscription),
    /// or `nil` when the group was never bought. Of a group the customer holds both ways, the
    /// subscription to `productID` (a current one first, the customer's own first), else the
    /// customer's own, else (the group held only through Family Sharing) the newest share
    /// (`subscriptionStatuses(forGroup:)` has them all).
    /// - Throws: `UnknownProductError`; `StoreControlError.notAutoRenewable`.
    public func subscriptionStatus(forProduct productID: String) throws -> SubscriptionStatus? {
        try read { db in try subscriptionStatus(db, of: try heldSubscription(db, productID: productID)) }
    }

    /// The status of a subscription group by its identifier, or `nil` when it was never bought:
    /// of the customer's own subscription, else (a group held only through Family Sharing) of
    /// the newest one a family member shares.
    /// - Throws: `StoreControlError.unknownSubscriptionGroup`.
    public func subscriptionStatus(forGroup groupID: String) throws -> SubscriptionStatus? {
        try read { db in
            try checkSubscriptionGroup(db, groupID)
            return try subscriptionStatus(db, of: try principalSubscription(db, group: groupID))
        }
    }

    /// The statuses of a subscription group by its identifier, one per subscription the customer
    /// holds of it (StoreKit's `Product.SubscriptionInfo.status`): the customer's own first,
    /// then those family members share, newest first; empty when it was never bought. Service is
    /// the highest level among those subscribed.
    /// - Throws: `StoreControlError.unknownSubscriptionGroup`.
    public func subscriptionStatuses(forGroup groupID: String) throws -> [SubscriptionStatus] {
        try read { db in
            try checkSubscriptionGroup(db, groupID)
            return try heldSubscriptions(db, group: groupID).compactMap { try subscriptionStatus(db, of: $0) }
        }
    }

    private func checkSubscriptionGroup(_ db: Database, _ groupID: String) throws {
        guard try appsGroups(db).contains(groupID) else { throw StoreControlError.unknownSubscriptionGroup(groupID) }
    }

    /// The subscription groups of this value's app, in identifier order.
    func appsGroups(_ db: Database) throws -> [String] {
        try String.fetchAll(
            db.cachedStatement(sql: "SELECT id FROM subscription_groups WHERE app_id = ? ORDER BY id"),
            arguments: [try appID()])
    }

    /// The status of every subscription the customer holds, by group identifier (of a group
    /// held both ways, the customer's own first), read in one snapshot (the App Store Server
    /// API's Get All Subscription Statuses).
    public func subscriptionStatuses() throws -> [SubscriptionStatus] {
        try read { db in
            try appsGroups(db).flatMap { group in
                try heldSubscriptions(db, group: group).compactMap { try subscriptionStatus(db, of: $0) }
            }
        }
    }

    /// The offer the renewal of `latest` into `productID` is charged at, if any.
    private func nextRenewalOffer(
        _ db: Database, latest: PaymentTransaction, renewingTo productID: String, _ renewal: RenewalState
    ) throws -> TransactionOffer? {
        guard let plan = try subscriptionPlan(db, productID: productID) else { return nil }
        return try renewalOffer(
            db, chain: latest, renewingTo: productID, plan: plan, pendingOffer: renewal.pendingOffer)?.offer
    }

    /// The statuses of the subscriptions in billing retry (grace period included), by group
    /// identifier: only those with a billing issue recorded are read.
    package func subscriptionsInBillingRetry() throws -> [SubscriptionStatus] {
        try read { db in
            try customersHeldSubscriptions(db, where: "billing_issue_since IS NOT NULL").compactMap { held in
                try subscriptionStatus(db, of: held).flatMap { $0.isInBillingRetry ? $0 : nil }
            }
        }
    }

    /// The status of a subscription the customer holds at `now` (by default the store's time),
    /// inside a transaction; `latest`, its latest period when the caller holds it already.
    func subscriptionStatus(
        _ db: Database, of held: HeldSubscription, at now: Int64? = nil, latest known: PaymentTransaction? = nil
    ) throws
        -> SubscriptionStatus?
    {
        let group = held.group
        // The latest period (a pending downgrade's payment has none of its own: not it).
        guard let latest = try known ?? latestPeriod(db, of: held) else { return nil }
        let now = Date(ledgerMilliseconds: try now ?? storeNow(db))
        let renewal = try renewalState(db, of: held)
        let expired = latest.expirationDate.map { $0 <= now } ?? true
        var state: SubscriptionStatus.RenewalState =
            latest.revocationDate != nil ? .revoked : expired ? .expired : .subscribed
        let renewsTo = renewal.nextProductID ?? latest.productID
        // A price increase of the product it renews to (its price is the renewal's).
        let increase = try renewalPriceIncrease(db, of: held, renewal: renewal, latest: latest)
        // Why it ends without renewing (`lapse`): a renewal that failed on a billing issue is
        // retried (with a grace period, when on) until the retries are over, then expired for a
        // billing error.
        let lapse = Self.lapse(renewal, latest: latest, increase: increase)
        let nowMS = now.ledgerMilliseconds
        let issue: BillingIssue? = if case .billingIssue(let found) = lapse { found } else { nil }
        if state == .expired, let live = renewal.liveBillingIssue(of: latest, at: nowMS) {
            state = live.keepsEntitlement(at: nowMS) ? .inGracePeriod : .inBillingRetryPeriod
        }
        let reason: SubscriptionStatus.ExpirationReason =
            switch lapse {
            case .billingIssue: .billingError
            case .priceIncrease: .didNotConsentToPriceIncrease
            case .voluntary: .autoRenewDisabled
            case .revoked, nil: .unknown
            }
        let retrying = state == .inGracePeriod || state == .inBillingRetryPeriod
        // Only a current period renews: one that lapsed stays expired even with auto-renew on.
        let renews = renewal.autoRenew && (state == .subscribed || retrying)
        let renewalOffer = renews ? try nextRenewalOffer(db, latest: latest, renewingTo: renewsTo, renewal) : nil
        // What the next renewal charges: its offer's price when one applies (0 for a free one),
        // else the increase's, else the price the subscriber pays already, else the catalog's.
        let offerPrice = try renewalOffer.flatMap {
            try Self.products(db, withIDs: [renewsTo]).first?.price(paidWith: $0)
        }
        let renewalPrice =
            try offerPrice ?? increase?.price ?? (latest.productID == renewsTo ? chargedPrice(db, of: latest) : nil)
            ?? Self.catalogPrice(db, of: renewsTo)
        return SubscriptionStatus(
            groupID: group, isFamilyShared: held.isFamilyShared, state: state, transaction: latest,
            willAutoRenew: renews,
            autoRenewProductID: renewsTo,
            renewalDate: state == .subscribed && renews ? latest.expirationDate : nil,
            // Apple's payloads name it during billing retry too (a billing error, still retried).
            expirationReason: state == .expired || retrying ? reason : nil,
            isInBillingRetry: retrying,
            gracePeriodExpirationDate: retrying ? issue?.graceUntil.map(Date.init(ledgerMilliseconds:)) : nil,
            priceIncrease: increase, renewalPrice: renewalPrice, renewalOffer: renewalOffer,
            eligibleWinBackOfferIDs: !held.isFamilyShared && (state == .expired || state == .revoked)
                ? try subscriptionPlan(db, productID: latest.productID).map {
                    try eligibleWinBackOfferIDs(db, plan: $0, own: held, at: nowMS)
                } ?? [] : [])
    }
}

/// Subscription statuses, as StoreKit and the App Store Server API report them.
extension Ledger {
    /// When the holder of a subscription began the run of paid periods that reaches the latest
    /// one with no gap of more than 60 days between them (Apple's
    /// `recentSubscriptionStartDate`); `nil` when it was never bought. Reads the periods newest
    /// first, and stops at the first gap.
    func recentSubscriptionStart(_ db: Database, of held: HeldSubscription) throws -> Date? {
        let gap: Int64 = 60 * 86_400_000
        let periods = try Row.fetchCursor(
            db,
            sql: """
                SELECT purchase_date, expiration_date FROM transactions
                WHERE subscription_group_id = :group AND state = 'purchased' AND expiration_date > purchase_date
                  AND \(HeldSubscription.transactionsCondition)
                ORDER BY purchase_date DESC, id DESC
                """, arguments: held.periodArguments)
        var start: Int64?
        while let period = try periods.next() {
            let (purchased, expires): (Int64, Int64) = (period[0], period[1])
            if let start, start - expires > gap { break }
            start = min(start ?? purchased, purchased)
        }
        return start.map(Date.init(ledgerMilliseconds:))
    }

    /// Whether the group's introductory offer is still open to the user: once per subscription
    /// group, so only while the customer never bought a subscription of the group (one a
    /// family member shares spent the family member's offer, not the customer's).
    public func isEligibleForIntroductoryOffer(group groupID: String) throws -> Bool {
        try read { db in try !hasBought(db, of: try own(groupID), excluding: 0) }
    }
}
