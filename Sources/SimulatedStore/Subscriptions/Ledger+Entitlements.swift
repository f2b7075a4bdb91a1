import Foundation
import GRDB
public import LedgerModel

/// What the customer is entitled to now (StoreKit's current entitlements).
extension Ledger {
    /// StoreKit 2's current entitlements at the store's time: the latest transaction of each
    /// non-consumable owned, of each auto-renewable subscription whose period covers now (and
    /// was not upgraded away), and of each non-renewing subscription (even when finished).
    /// Never consumables, never revoked transactions. Purchased and restored transactions count.
    /// A product the customer holds both ways (bought, and shared by a family member) has an
    /// entitlement for each, as StoreKit's `currentEntitlements(for:)` may yield several.
    /// The customer's own: this value's.
    public func currentEntitlements() throws -> [PaymentTransaction] {
        let owner = try owner()
        return try read { db in
            let now = try storeNow(db)
            return try PaymentTransaction.fetchAll(
                db,
                sql: """
                    WHERE id IN (
                        SELECT MAX(id) FROM transactions
                        WHERE \(Owner.condition) AND state IN ('purchased', 'restored') AND revocation_date IS NULL
                          AND (product_type IN ('nonConsumable', 'nonRenewable')
                               OR (product_type = 'autoRenewable' AND is_upgraded = 0
                                   AND purchase_date <= ? AND expiration_date > ?)
                               -- A subscription in its billing grace period keeps its entitlement
                               -- (liveBillingIssue: BillingIssue.concerns(periodEndingAt:) and
                               -- isRetried(at:); then keepsEntitlement(at:)); the state is the
                               -- holding's: shared, or the customer's own (0). Only a period
                               -- covering time can be the one that failed to renew, as only such
                               -- a period is a holding's latest (latestPeriodOfHolding).
                               OR (product_type = 'autoRenewable' AND is_upgraded = 0
                                   AND expiration_date > purchase_date AND EXISTS (
                                   SELECT 1 FROM subscription_renewal r
                                   WHERE r.customer_id = transactions.customer_id
                                     AND r.group_id = subscription_group_id
                                     AND r.shared_original_id = \(HeldSubscription.sharedKeyOfRow)
                                     AND r.billing_issue_since = expiration_date AND r.retry_until > ?
                                     AND r.grace_until > ?)))
                        GROUP BY product_id, \(HeldSubscription.sharedKeyOfRow))
                    ORDER BY product_id, id
                    """,
                arguments: owner.arguments + [now, now, now, now])
        }
    }

    /// The latest purchased or restored transaction of a product (revoked ones included, as
    /// StoreKit's `Transaction.latest(for:)`; a payment that only changed a subscription's
    /// renewal is none), or `nil`.
    public func latestTransaction(for productID: String) throws -> PaymentTransaction? {
        let owner = try owner()
        return try read { db in
            try PaymentTransaction.fetchAll(
                db,
                sql: "WHERE \(Owner.condition) AND product_id = ? AND state IN ('purchased', 'restored') "
                    + "AND \(Self.notARenewalChange) ORDER BY id DESC LIMIT 1",
                arguments: owner.arguments + [productID]
            ).first
        }
    }
}
