import Foundation
import GRDB
package import LedgerModel

/// Win-back offers: which a churned customer may redeem, by the offers' App Store Connect
/// rules (`WinBackOffer.Eligibility`), and the check of a payment that redeems one.
///
/// A subscription is churned (Apple's word) when its latest period ended, it does not renew,
/// and it is not in billing retry (nor its grace period). Then an offer of the latest period's
/// product (the customer's most recent subscription in the group) is for the customer when they
/// paid for at least its months of subscription in the group (free trial periods aside; a
/// period counts its nominal length: a week is 7/30 of a month), the lapse is within its months (from the latest period's end, or its refund; months
/// on the calendar, or the store's time rate's), and the wait after their last win-back offer in
/// the group has passed.
extension Ledger {
    /// The offer identifiers, among `plan`'s win-back offers, the holder of `own` (a customer's
    /// own subscription) may redeem at `now`, best first (high priority first, then as the
    /// catalog lists them). Reads nothing when the plan has none.
    func eligibleWinBackOfferIDs(
        _ db: Database, plan: SubscriptionPlan, own: HeldSubscription, at now: Int64
    ) throws -> [String] {
        guard !plan.winBackOffers.isEmpty else { return [] }
        var customer = try WinBackCustomer.load(db, ledger: self, held: own, at: now)
        let eligible = try plan.winBackOffers.filter { try customer.refusal(of: $0, db) == nil }
        return (eligible.filter { $0.priority == .high } + eligible.filter { $0.priority == .normal }).map(\.offerID)
    }

    /// The statuses of the subscription groups whose churned subscriber may redeem a win-back
    /// offer now, by group identifier (the App Store's win-back messages). A group is read whole
    /// only when its latest period's product has win-back offers.
    package func subscriptionsWithWinBackOffersOpen() throws -> [SubscriptionStatus] {
        try read { db in
            try appsGroups(db).compactMap { group in
                guard let latest = try latestPeriod(db, of: try own(group)),
                    try subscriptionPlan(db, productID: latest.productID)?.winBackOffers.isEmpty == false
                else { return nil }
                return try subscriptionStatus(db, of: try own(group)).flatMap {
                    $0.eligibleWinBackOfferIDs.isEmpty ? nil : $0
                }
            }
        }
    }

    /// The win-back offer `offerID` of `payment`'s product, when the customer may redeem it now
    /// (see the type's rules). Returns the offer as the transaction records it.
    /// - Throws: `PromotionalOfferError.unknownWinBackOffer`, `.winBackIneligible`.
    func redeemableWinBack(
        _ db: Database, _ payment: NewPayment, offerID: String, at now: Int64
    ) throws -> TransactionOffer {
        guard let plan = try subscriptionPlan(db, productID: payment.productID),
            let offer = plan.winBackOffers.first(where: { $0.offerID == offerID }),
            let recorded = plan.redeemable(.winBack, offerID)?.offer
        else { throw PromotionalOfferError.unknownWinBackOffer(productID: payment.productID, offerID: offerID) }
        var customer = try WinBackCustomer.load(
            db, ledger: self, held: try own(try subscriptionGroup(db, productID: payment.productID)), at: now)
        // The offers a churned customer may redeem are those of their most recent subscription in
        // the group, as `eligibleWinBackOfferIDs` lists them (Apple: "the available offers you
        // configure in App Store Connect for the customer's most recent subscription"): said
        // before the offer's own rules, which are not the reason then.
        if customer.notChurned == nil, let latest = customer.latestProductID, latest != payment.productID {
            throw PromotionalOfferError.winBackIneligible(
                productID: payment.productID, offerID: offerID,
                why: "win-back offers are those of the customer's most recent subscription in the group, \(latest)")
        }
        if let why = try customer.refusal(of: offer, db) {
            throw PromotionalOfferError.winBackIneligible(productID: payment.productID, offerID: offerID, why: why)
        }
        return recorded
    }
}

/// Where a customer stands with a subscription group, for its win-back offers. Read once: what
/// every offer needs (churned or not, when the subscription lapsed); what only some rules need
/// (the paid months, the last win-back redemption), when one does, each read bounded by the
/// rule (at most 120 months back).
private struct WinBackCustomer {
    /// The customer's own subscription of the group.
    let held: HeldSubscription
    var group: String { held.group }
    let now: Date
    let rate: TimeRate
    /// Why no win-back offer is for the customer now (never subscribed, subscribed, in billing
    /// retry); `nil` when the subscription is churned.
    let notChurned: String?
    /// When the subscription lapsed: the latest period's end, or its refund if earlier.
    let lapsedAt: Date
    /// The product of the latest period: the subscription whose win-back offers are the
    /// customer's.
    let latestProductID: String?
    /// The paid months counted so far, and whether they are all the group has.
    private var paid: (months: Double, all: Bool) = (0, false)

    private static let month = SubscriptionPeriod(value: 1, unit: .month)

    static func load(_ db: Database, ledger: Ledger, held: HeldSubscription, at now: Int64) throws -> WinBackCustomer {
        let latest = try ledger.latestPeriod(db, of: held)
        let end = latest?.expirationDate ?? Date(ledgerMilliseconds: now)
        var notChurned: String?
        if latest == nil {
            notChurned = "the customer never subscribed to its subscription group"
        } else if try ledger.isSubscribed(db, of: held, at: now) {
            notChurned = "the customer is subscribed now; win-back offers are for churned subscribers"
        } else if let latest, try ledger.renewalState(db, of: held).liveBillingIssue(of: latest, at: now) != nil {
            notChurned = "the subscription is in billing retry; win-back offers are for churned subscribers"
        }
        return WinBackCustomer(
            held: held, now: Date(ledgerMilliseconds: now), rate: try ledger.timeRate(db),
            notChurned: notChurned, lapsedAt: min(end, latest?.revocationDate ?? end),
            latestProductID: latest?.productID)
    }

    private init(
        held: HeldSubscription, now: Date, rate: TimeRate, notChurned: String?, lapsedAt: Date,
        latestProductID: String?
    ) {
        self.held = held
        self.now = now
        self.rate = rate
        self.notChurned = notChurned
        self.lapsedAt = lapsedAt
        self.latestProductID = latestProductID
    }

    /// `count` months after `date` (before it, for a negative count) at the store's time rate:
    /// on the calendar in real time, else `count` of the rate's months (as periods are).
    private func months(_ count: Int, after date: Date) -> Date {
        guard rate != .realTime else { return Self.month.advance(date, times: count) }
        let month = rate.end(of: Self.month, startingAt: date).timeIntervalSince(date)
        return date.addingTimeInterval(month * Double(count))
    }

    /// Why the customer may not redeem `offer` now; `nil` when they may.
    mutating func refusal(of offer: WinBackOffer, _ db: Database) throws -> String? {
        if let notChurned { return notChurned }
        let rules = offer.eligibility
        let since = rules.monthsSinceLapse
        if now < months(since.lowerBound, after: lapsedAt) {
            return "the subscription lapsed less than \(since.lowerBound) month(s) ago"
        }
        if now > months(since.upperBound, after: lapsedAt) {
            return "the subscription lapsed more than \(since.upperBound) month(s) ago"
        }
        if let wait = rules.waitMonths, try redeemedWinBack(db, after: months(-wait, after: now)) {
            return "a win-back offer was redeemed less than \(wait) month(s) ago"
        }
        if rules.paidMonths > 0 {
            let paid = try paidMonths(db, atLeast: Double(rules.paidMonths))
            if paid < Double(rules.paidMonths) {
                return
                    "the customer paid for \(Self.formatted(paid)) month(s) of subscription; the offer needs \(rules.paidMonths)"
            }
        }
        return nil
    }

    /// Whether the customer redeemed a win-back offer in the group after `date`: its payment
    /// (not the renewals charged at the offer after it), charged or still waiting (Ask to Buy,
    /// an interrupted purchase). Reads the group's payments after `date` only.
    private func redeemedWinBack(_ db: Database, after date: Date) throws -> Bool {
        try Bool.fetchOne(
            db,
            sql: """
                SELECT 1 FROM transactions
                WHERE subscription_group_id = :group AND purchase_date > :date AND offer_type = 'winBack'
                  AND reason = 'purchase' AND state <> 'failed' AND \(HeldSubscription.transactionsCondition)
                LIMIT 1
                """, arguments: held.periodArguments + ["date": date.ledgerMilliseconds]) == true
    }

    /// The months of the customer's own subscription they paid for in the group (a family
    /// member's shared one was not theirs to pay), counted newest first
    /// until `needed` (or all of them): every purchased period not refunded and not a free
    /// trial (nor a payment that only changed a renewal: nothing was charged), at its product's
    /// nominal length. So a check reads at most the periods it needs.
    private mutating func paidMonths(_ db: Database, atLeast needed: Double) throws -> Double {
        if paid.all || paid.months >= needed { return paid.months }
        var months = 0.0
        let periods = try String.fetchCursor(
            db,
            sql: """
                SELECT p.subscription_period FROM transactions t JOIN products p ON p.id = t.product_id
                WHERE t.subscription_group_id = :group AND t.state = 'purchased' AND t.revocation_date IS NULL
                  AND NOT (t.expiration_date IS t.purchase_date AND t.id IN (SELECT transaction_id FROM renewal_changes))
                  AND t.offer_payment_mode IS NOT 'freeTrial' AND \(HeldSubscription.transactionsCondition)
                ORDER BY t.purchase_date DESC, t.id DESC
                """, arguments: held.periodArguments)
        var exhausted = true
        while let text = try periods.next() {
            months += SubscriptionPeriod(iso8601: text)?.nominalMonths ?? 0
            if months >= needed {
                exhausted = false
                break
            }
        }
        paid = (months, exhausted)
        return months
    }

    private static func formatted(_ months: Double) -> String {
        months == months.rounded() ? String(Int(months)) : String(format: "%.2f", months)
    }
}

extension SubscriptionPeriod {
    /// The period's length in months, nominally: a year is 12, a week 7/30, a day 1/30.
    fileprivate var nominalMonths: Double {
        switch unit {
        case .day: Double(value) / 30
        case .week: Double(value) * 7 / 30
        case .month: Double(value)
        case .year: Double(value) * 12
        }
    }
}
