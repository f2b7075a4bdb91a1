import Foundation
import GRDB
public import LedgerModel

/// Family Sharing (migration 17): a family member's purchase of a family-shareable product,
/// shared with the customer, and the end of that sharing.
extension Ledger {
    /// Whether `transaction` is owned through Family Sharing (a family member bought it): its
    /// chain's original transaction was shared.
    public func isFamilyShared(_ transaction: PaymentTransaction) throws -> Bool {
        try read { db in try !familySharedOriginals(db, of: [transaction]).isEmpty }
    }

    /// The original transaction ids, among those of `transactions`, that were shared by a family
    /// member.
    func familySharedOriginals(_ db: Database, of transactions: [PaymentTransaction]) throws -> Set<UInt64> {
        var shared: Set<UInt64> = []
        for original in Set(transactions.map(\.originalID)) where try sharingEnded(db, original: original) != nil {
            shared.insert(original)
        }
        return shared
    }

    /// Whether the sharing of `original`'s purchase ended; `nil` when it was never shared.
    private func sharingEnded(_ db: Database, original: UInt64) throws -> Bool? {
        // What a signature says of the purchase's owner: the row must be the ledger's.
        try records(db).row(.familyShares, key: Int64(clamping: original)).map { ($0["revoked_at"] as Int64?) != nil }
    }

    /// A family member bought `payment`'s product and shares it: the customer's purchase of it,
    /// owned FAMILY_SHARED, made as a purchase outside the app (whatever the store's switches)
    /// and notified as one. A subscription starts on its own (`HeldSubscription`), beside the
    /// customer's own subscription of the group if there is one. Returns the transaction.
    /// - Throws: `UnknownProductError`; `StoreControlError.notFamilyShareable` for a product
    ///   the catalog does not mark family-shareable (never a consumable); the purchase's errors.
    func shareFamilyPurchase(_ db: Database, _ payment: NewPayment) throws -> PaymentTransaction {
        guard let product = try Self.products(db, withIDs: [payment.productID]).first else {
            throw UnknownProductError(productIdentifier: payment.productID)
        }
        guard product.isFamilyShareable, product.type != .consumable else {
            throw StoreControlError.notFamilyShareable(payment.productID)
        }
        var payment = payment
        payment.isOutsideTheApp = true
        payment.isSharedByFamily = true
        let created = try addPayment(db, payment, delivery: .notRecorded).transaction
        // Recorded before the charge, so that the purchase's notification says FAMILY_SHARED.
        try records(db).write(.familyShares, key: Int64(created.originalID)) {
            try db.execute(
                sql: "INSERT INTO family_shares (original_transaction_id, shared_at) VALUES (?, ?)",
                arguments: [Int64(created.originalID), try storeNow(db)])
        }
        return try applyPlannedOutcome(try writer(db), id: created.id)
    }

    /// Shares `purchase` with the other members of its buyer's family, in the caller's commit:
    /// each gets it owned FAMILY_SHARED, as a purchase outside the app of their own
    /// (`shareFamilyPurchase`), linked to the purchase so that its refund ends their sharing.
    /// Only a charged purchase that begins its chain (a subscription's first: its renewals and
    /// changes of product are the same subscription) of a family-shareable product, bought by
    /// a customer of a family; never a share itself.
    func shareWithFamily(_ db: Database, _ purchase: PaymentTransaction) throws {
        guard purchase.state == .purchased, purchase.id == purchase.originalID, purchase.restoredFromID == nil,
            purchase.productType != .consumable,
            let family = try String.fetchOne(
                db.cachedStatement(sql: "SELECT family FROM customers WHERE id = ?"), arguments: [purchase.customerID]),
            try Bool.fetchOne(
                db.cachedStatement(sql: "SELECT family_shareable FROM products WHERE id = ?"),
                arguments: [purchase.productID]) == true,
            try sharingEnded(db, original: purchase.originalID) == nil
        else { return }
        let members = try Row.fetchAll(
            db, sql: "SELECT id, name FROM customers WHERE family = ? AND id <> ? ORDER BY id",
            arguments: [family, purchase.customerID])
        for member in members {
            // In the purchase's app, whatever app the caller (the store's hand) acts in.
            let share = try forOwner(Owner(customer: member["id"], app: purchase.appID), db)
                .shareFamilyPurchase(db, NewPayment(productID: purchase.productID))
            try db.execute(
                sql: "INSERT INTO family_share_sources (original_transaction_id, purchase_original_id) VALUES (?, ?)",
                arguments: [Int64(share.originalID), Int64(purchase.originalID)])
        }
    }

    /// Customer `name` leaves their family: every live share they hold of another member's
    /// purchase, and every live share another member holds of theirs, is revoked, reason 0,
    /// with `REVOKE` to each holder (Apple: "the revocation reason value is 0 if the customer
    /// leaves the family group or the owner stops sharing"), and they belong to no family from
    /// then on, all in one commit. Their own purchases stay theirs. Returns what was revoked.
    /// - Throws: `CustomerError.unknownCustomer`, `.noFamily`; nothing is changed.
    package func leaveFamily(_ name: String) throws -> [PaymentTransaction] {
        try write { db in
            guard
                let member = try Row.fetchOne(
                    db, sql: "SELECT id, family FROM customers WHERE name = ?", arguments: [name])
            else {
                let (names, count) = try NamedRows.customers.someNames(db)
                throw CustomerError.unknownCustomer(name, choices: names, count: count)
            }
            guard (member["family"] as String?) != nil else { throw CustomerError.noFamily(name) }
            let id: Int64 = member["id"]
            // The shares on either side of the member: theirs of others' purchases, others' of theirs.
            let shares = try Int64.fetchAll(
                db,
                sql: """
                    SELECT s.original_transaction_id FROM family_share_sources s
                    JOIN transactions held ON held.id = s.original_transaction_id
                    JOIN transactions bought ON bought.id = s.purchase_original_id
                    WHERE held.customer_id = ? OR bought.customer_id = ? ORDER BY 1
                    """, arguments: [id, id])
            var revoked: [PaymentTransaction] = []
            for share in shares {
                guard try sharingIsLive(db, original: UInt64(share)),
                    let shared = try PaymentTransaction.fetchOne(db, id: UInt64(share))
                else { continue }
                revoked += try forOwner(of: shared, db).revokeFamilySharing(db, shared.id)
            }
            try db.execute(sql: "UPDATE customers SET family = NULL WHERE id = ?", arguments: [id])
            return revoked
        }
    }

    /// Ends every live share of `purchase`'s chain with the buyer's family (a refund of it), as
    /// `revokeFamilySharing` does for each member: their entitling transactions revoked, and
    /// `REVOKE` notified to each.
    func endFamilySharing(_ db: Database, of purchase: PaymentTransaction) throws {
        let shares = try Int64.fetchAll(
            db.cachedStatement(
                sql:
                    "SELECT original_transaction_id FROM family_share_sources WHERE purchase_original_id = ? ORDER BY 1"
            ),
            arguments: [Int64(purchase.originalID)])
        for share in shares {
            guard try sharingIsLive(db, original: UInt64(share)),
                let shared = try PaymentTransaction.fetchOne(db, id: UInt64(share))
            else { continue }
            _ = try forOwner(of: shared, db).revokeFamilySharing(db, shared.id)
        }
    }

    /// The family member stops sharing the purchase of transaction `id` (or leaves the family):
    /// the transactions of its chain that still entitle the customer (the purchase and its
    /// restored copies; a subscription's current period) are revoked, reason `other`, and
    /// `REVOKE` is notified. Returns them, `id`'s first (none when nothing entitled any more).
    /// - Throws: `PaymentQueueError.unknownTransaction`; `StoreControlError.notFamilyShared`
    ///   for a purchase that is not shared, or whose sharing ended.
    func revokeFamilySharing(_ db: Database, _ id: UInt64) throws -> [PaymentTransaction] {
        let writer = try writer(db)
        let transaction = try existingTransaction(writer, id: id)
        guard try sharingIsLive(db, original: transaction.originalID) else {
            throw StoreControlError.notFamilyShared(id)
        }
        // The chain's purchased and restored transactions still entitling, `id`'s first.
        let revoked = try PaymentTransaction.fetchAll(
            db,
            sql: """
                WHERE original_id = ? AND revocation_date IS NULL AND state IN ('purchased', 'restored')
                  AND (expiration_date IS NULL OR expiration_date > ?)
                ORDER BY id = ? DESC, id
                """, arguments: [Int64(transaction.originalID), writer.now, Int64(id)])
        for period in revoked { try writer.revoke(period, reason: 0) }  // StoreKit's `.other`
        try endSharing(db, original: transaction.originalID, at: writer.now)
        let stored = try revoked.map { try PaymentTransaction.fetchOne(db, id: $0.id)! }
        try notify(writer, .familySharingRevoked, about: stored.first ?? transaction)
        return stored
    }

    /// Whether the purchase of `original` is shared and its sharing has not ended.
    func sharingIsLive(_ db: Database, original: UInt64) throws -> Bool {
        try sharingEnded(db, original: original) == false
    }

    /// Records the end of the sharing of `original`'s purchase (a revocation or a refund). A
    /// shared subscription renews no more for the customer, nor waits in billing retry.
    func endSharing(_ db: Database, original: UInt64, at now: Int64) throws {
        try records(db).write(.familyShares, key: Int64(clamping: original)) {
            try db.execute(
                sql: """
                    UPDATE family_shares SET revoked_at = MAX(?, shared_at)
                    WHERE original_transaction_id = ? AND revoked_at IS NULL
                    """, arguments: [now, Int64(clamping: original)])
        }
        try db.execute(
            sql: """
                UPDATE subscription_renewal
                SET auto_renew = 0, billing_issue_since = NULL, grace_until = NULL, retry_until = NULL
                WHERE shared_original_id = ?
                """, arguments: [Int64(clamping: original)])
    }
}
