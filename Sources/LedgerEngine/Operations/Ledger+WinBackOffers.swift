import Foundation
import LedgerModel
import GRDB

/// Win-back offers: which a churned customer may redeem, by the offers' App Store Connect
/// rules (`WinBackOffer.Eligibility`), and the check of a payment that redeems one.
///
/// A subscription is churned (Apple's word) when its latest period ended, it does not renew,
/// and it is not in billing retry (nor its grace period). Then an offer of a product of the
/// group is for the customer when they paid for at least its months of subscription in the
/// group (free trial periods aside; a period counts its nominal length: a week is 7/30 of a
/// month), the lapse is within its months (from the latest period's end, or its refund, on the
/// calendar), and the wait after their last win-back offer in the group has passed.
extension Ledger {
    /// The offer identifiers, among `plan`'s win-back offers, the customer of `group` may redeem
    /// at `now`, best first (high priority first, then as the catalog lists them). Reads nothing
    /// when the plan has none.
    func eligibleWinBackOfferIDs(
        _ db: Database, plan: SubscriptionPlan, group: String, at now: Int64
    ) throws -> [String] {
        guard !plan.winBackOffers.isEmpty else { return [] }
        var customer = try WinBackCustomer.load(db, ledger: self, group: group, at: now)
        let eligible = try plan.winBackOffers.filter { try customer.refusal(of: $0, db) == nil }
        return (eligible.filter { $0.priority == .high } + eligible.filter { $0.priority == .normal }).map(\.offerID)
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
            db, ledger: self, group: try subscriptionGroup(db, productID: payment.productID), at: now)
        if let why = try customer.refusal(of: offer, db) {
            throw PromotionalOfferError.winBackIneligible(productID: payment.productID, offerID: offerID, why: why)
        }
        return recorded
    }
}

/// Where a customer stands with a subscription group, for its win-back offers: read once, the
/// paid months only when a rule needs them.
private struct WinBackCustomer {
    let group: String
    let now: Int64
    /// Why no win-back offer is for the customer now (never subscribed, subscribed, in billing
    /// retry); `nil` when the subscription is churned.
    let notChurned: String?
    /// When the subscription lapsed: the latest period's end, or its refund if earlier.
    let lapsedAt: Date
    /// When the customer last redeemed a win-back offer in the group (its purchase, not the
    /// renewals charged at the offer after it).
    let lastWinBack: Date?
    private var paidMonths: Double?

    private static let month = SubscriptionPeriod(value: 1, unit: .month)

    static func load(_ db: Database, ledger: Ledger, group: String, at now: Int64) throws -> WinBackCustomer {
        let latest = try ledger.latestPeriod(db, group: group)
        let end = latest?.expirationDate ?? Date(ledgerMilliseconds: now)
        let lapsedAt = min(end, latest?.revocationDate ?? end)
        var notChurned: String?
        if latest == nil {
            notChurned = "the customer never subscribed to its subscription group"
        } else if try ledger.isSubscribed(db, group: group, at: now) {
            notChurned = "the customer is subscribed now; win-back offers are for churned subscribers"
        } else if let issue = try ledger.renewalState(db, group: group).billingIssue,
            issue.concerns(periodEndingAt: end.ledgerMilliseconds), issue.isRetried(at: now)
        {
            notChurned = "the subscription is in billing retry; win-back offers are for churned subscribers"
        }
        let lastWinBack = try Int64.fetchOne(
            db,
            sql: """
                SELECT MAX(purchase_date) FROM transactions
                WHERE subscription_group_id = ? AND offer_type = 'winBack' AND reason = 'purchase'
                  AND state = 'purchased'
                """, arguments: [group]
        ).map(Date.init(ledgerMilliseconds:))
        return WinBackCustomer(
            group: group, now: now, notChurned: notChurned, lapsedAt: lapsedAt, lastWinBack: lastWinBack)
    }

    private init(group: String, now: Int64, notChurned: String?, lapsedAt: Date, lastWinBack: Date?) {
        self.group = group
        self.now = now
        self.notChurned = notChurned
        self.lapsedAt = lapsedAt
        self.lastWinBack = lastWinBack
    }

    /// Why the customer may not redeem `offer` now; `nil` when they may.
    mutating func refusal(of offer: WinBackOffer, _ db: Database) throws -> String? {
        if let notChurned { return notChurned }
        let rules = offer.eligibility
        let date = Date(ledgerMilliseconds: now)
        let since = rules.monthsSinceLapse
        if date < Self.month.advance(lapsedAt, times: since.lowerBound) {
            return "the subscription lapsed less than \(since.lowerBound) month(s) ago"
        }
        if date > Self.month.advance(lapsedAt, times: since.upperBound) {
            return "the subscription lapsed more than \(since.upperBound) month(s) ago"
        }
        if let wait = rules.waitMonths, let last = lastWinBack, date < Self.month.advance(last, times: wait) {
            return "a win-back offer was redeemed less than \(wait) month(s) ago"
        }
        if rules.paidMonths > 0 {
            let paid = try paidMonths ?? Self.paidMonths(db, group: group)
            paidMonths = paid
            if paid < Double(rules.paidMonths) {
                return
                    "the customer paid for \(Self.formatted(paid)) month(s) of subscription; the offer needs \(rules.paidMonths)"
            }
        }
        return nil
    }

    /// The months of subscription the customer paid for in the group: every purchased period
    /// not refunded and not a free trial, at its product's nominal period. One grouped read:
    /// one row per distinct period length.
    private static func paidMonths(_ db: Database, group: String) throws -> Double {
        let rows = try Row.fetchAll(
            db,
            sql: """
                SELECT p.subscription_period, COUNT(*) FROM transactions t JOIN products p ON p.id = t.product_id
                WHERE t.subscription_group_id = ? AND t.state = 'purchased' AND t.revocation_date IS NULL
                  AND t.offer_payment_mode IS NOT 'freeTrial'
                GROUP BY p.subscription_period
                """, arguments: [group])
        return rows.reduce(0) { total, row in
            guard let period = (row[0] as String?).flatMap(SubscriptionPeriod.init(iso8601:)) else { return total }
            return total + period.nominalMonths * Double(row[1] as Int)
        }
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
