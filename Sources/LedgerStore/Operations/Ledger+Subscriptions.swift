import Foundation
import GRDB

extension Ledger {
    /// How many renewals one group may get in one call: a long clock jump at a fast time rate
    /// catches up over several calls instead of one huge commit.
    public static let maximumRenewalsPerGroup = 10_000

    /// Creates the renewals that are due: for every group whose auto-renew is on, one new
    /// `purchased` transaction (reason renewal, same originalID) per period that ended by the
    /// store's time, in order, all in one commit. Returns them oldest first.
    public func renewDueSubscriptions() throws -> [PaymentTransaction] {
        try write { db in
            let now = try storeNow(db)
            var renewed: [UInt64] = []
            let groups = try String.fetchAll(db, sql: "SELECT group_id FROM subscription_renewal WHERE auto_renew = 1 ORDER BY group_id")
            for group in groups {
                guard var latest = try latestSubscription(db, group: group) else { continue }
                var count = 0
                while let expiration = latest.expirationDate, expiration.ledgerMilliseconds <= now,
                      count < Self.maximumRenewalsPerGroup {
                    let id = try renew(db, latest, startingAt: expiration.ledgerMilliseconds, at: now)
                    renewed.append(id)
                    latest = try PaymentTransaction.fetchOne(db, id: id)!
                    count += 1
                }
            }
            return try renewed.map { try PaymentTransaction.fetchOne(db, id: $0)! }
        }
    }

    /// Renews the subscription to `productID` now (Xcode's "force renewal"): the current
    /// period ends now and a renewal starts.
    /// - Throws: `StoreControlError.unknownProduct`, `.notAutoRenewable`, `.noSubscription`.
    public func forceRenewal(of productID: String) throws -> PaymentTransaction {
        try write { db in
            let now = try storeNow(db)
            let current = try currentChain(db, productID: productID)
            try endPeriod(db, current, at: now)
            let id = try renew(db, try PaymentTransaction.fetchOne(db, id: current.id)!, startingAt: now, at: now)
            return try PaymentTransaction.fetchOne(db, id: id)!
        }
    }

    /// Expires the subscription to `productID` now and turns its auto-renew off.
    /// - Throws: `StoreControlError.unknownProduct`, `.notAutoRenewable`, `.noSubscription`.
    public func expireSubscription(_ productID: String) throws -> PaymentTransaction {
        try write { db in
            let now = try storeNow(db)
            let current = try currentChain(db, productID: productID)
            try endPeriod(db, current, at: now)
            try setAutoRenew(db, group: current.subscriptionGroupID!, enabled: false)
            return try PaymentTransaction.fetchOne(db, id: current.id)!
        }
    }

    /// Turns auto-renew of `productID`'s subscription group on or off. Off: the subscription
    /// expires at its expiration date.
    /// - Throws: `StoreControlError.unknownProduct`, `.notAutoRenewable`.
    public func setAutoRenew(of productID: String, enabled: Bool) throws {
        try write { db in
            try setAutoRenew(db, group: try subscriptionGroup(db, productID: productID), enabled: enabled)
        }
    }

    /// Whether the subscription group of `productID` renews automatically.
    public func isAutoRenewEnabled(for productID: String) throws -> Bool {
        try read { db in
            let group = try subscriptionGroup(db, productID: productID)
            return try Bool.fetchOne(db, sql: "SELECT auto_renew FROM subscription_renewal WHERE group_id = ?", arguments: [group]) ?? true
        }
    }

    // MARK: - Inside transactions

    /// Sets the dates of a subscription being charged, by the group's rules: an upgrade (a
    /// higher service level) or a crossgrade with the same period replaces the current
    /// subscription now, and marks it `isUpgraded`; a downgrade, or a crossgrade with another
    /// period, starts when the current period ends. Either way the group renews again.
    func startSubscriptionPeriod(_ db: Database, _ transaction: PaymentTransaction, at now: Int64) throws {
        guard let group = transaction.subscriptionGroupID,
              let plan = try subscriptionPlan(db, productID: transaction.productID) else { return }
        var start = now
        if let current = try coveringSubscription(db, group: group, at: now, excluding: transaction.id),
           let currentPlan = try subscriptionPlan(db, productID: current.productID) {
            let immediate = plan.level < currentPlan.level
                || (plan.level == currentPlan.level && plan.period == currentPlan.period)
            if immediate {
                try markUpgraded(db, current, at: now)
            } else {
                start = current.expirationDate!.ledgerMilliseconds
            }
        }
        // A change scheduled for the next renewal is replaced by this one.
        for scheduled in try PaymentTransaction.fetchAll(
            db, sql: "WHERE subscription_group_id = ? AND state = 'purchased' AND is_upgraded = 0 AND purchase_date > ? AND id <> ?",
            arguments: [group, now, Int64(transaction.id)]) {
            try markUpgraded(db, scheduled, at: now)
        }
        let end = try timeRate(db).end(of: plan.period, startingAt: Date(ledgerMilliseconds: start)).ledgerMilliseconds
        try db.execute(
            sql: "UPDATE transactions SET purchase_date = ?, original_purchase_date = ?, expiration_date = ? WHERE id = ?",
            arguments: [start, start, end, Int64(transaction.id)])
        try setAutoRenew(db, group: group, enabled: true)
    }

    private struct SubscriptionPlan {
        let level: Int
        let period: SubscriptionPeriod
    }

    private func subscriptionPlan(_ db: Database, productID: String) throws -> SubscriptionPlan? {
        guard let row = try Row.fetchOne(
            db, sql: "SELECT subscription_group_level, subscription_period FROM products WHERE id = ?", arguments: [productID]),
              let level = row["subscription_group_level"] as Int?,
              let period = (row["subscription_period"] as String?).flatMap(SubscriptionPeriod.init(iso8601:))
        else { return nil }
        return SubscriptionPlan(level: level, period: period)
    }

    /// The subscription of the group whose period covers `now`.
    private func coveringSubscription(_ db: Database, group: String, at now: Int64, excluding id: UInt64) throws -> PaymentTransaction? {
        try PaymentTransaction.fetchAll(
            db,
            sql: """
                WHERE subscription_group_id = ? AND state = 'purchased' AND revocation_date IS NULL AND is_upgraded = 0
                  AND purchase_date <= ? AND expiration_date > ? AND id <> ?
                ORDER BY purchase_date DESC, id DESC LIMIT 1
                """,
            arguments: [group, now, now, Int64(id)]
        ).first
    }

    /// The group's latest subscription transaction: the one a renewal continues.
    private func latestSubscription(_ db: Database, group: String) throws -> PaymentTransaction? {
        try PaymentTransaction.fetchAll(
            db,
            sql: """
                WHERE subscription_group_id = ? AND state = 'purchased' AND revocation_date IS NULL AND is_upgraded = 0
                ORDER BY purchase_date DESC, id DESC LIMIT 1
                """,
            arguments: [group]
        ).first
    }

    private func subscriptionGroup(_ db: Database, productID: String) throws -> String {
        guard let row = try Row.fetchOne(
            db, sql: "SELECT type, subscription_group_id FROM products WHERE id = ?", arguments: [productID])
        else { throw StoreControlError.unknownProduct(productID) }
        guard let group = row["subscription_group_id"] as String?, row["type"] == ProductType.autoRenewable.rawValue else {
            throw StoreControlError.notAutoRenewable(productID)
        }
        return group
    }

    /// The latest transaction of `productID`'s group, which must be of that product.
    private func currentChain(_ db: Database, productID: String) throws -> PaymentTransaction {
        let group = try subscriptionGroup(db, productID: productID)
        guard let latest = try latestSubscription(db, group: group), latest.productID == productID else {
            throw StoreControlError.noSubscription(productID)
        }
        return latest
    }

    private func renew(_ db: Database, _ previous: PaymentTransaction, startingAt start: Int64, at now: Int64) throws -> UInt64 {
        guard let plan = try subscriptionPlan(db, productID: previous.productID) else {
            throw StoreControlError.notAutoRenewable(previous.productID)
        }
        var row = NewTransactionRow(copying: previous, state: .purchased, at: now)
        row.purchaseDate = start
        row.original = (previous.originalID, previous.originalPurchaseDate.ledgerMilliseconds)
        row.expirationDate = try timeRate(db).end(of: plan.period, startingAt: Date(ledgerMilliseconds: start)).ledgerMilliseconds
        row.reason = .renewal
        return try insert(db, row)
    }

    /// Moves a subscription's expiration to `now` when it is later.
    private func endPeriod(_ db: Database, _ transaction: PaymentTransaction, at now: Int64) throws {
        guard let expiration = transaction.expirationDate?.ledgerMilliseconds, expiration > now else { return }
        try db.execute(
            sql: "UPDATE transactions SET expiration_date = ?, updated_at = ? WHERE id = ?",
            arguments: [now, now, Int64(transaction.id)])
        try appendEvent(
            db, id: transaction.id, kind: .expirationChanged, from: transaction.state, to: transaction.state, at: now,
            detail: Date(ledgerMilliseconds: now).formatted(.iso8601))
    }

    private func markUpgraded(_ db: Database, _ transaction: PaymentTransaction, at now: Int64) throws {
        try db.execute(
            sql: "UPDATE transactions SET is_upgraded = 1, updated_at = ? WHERE id = ?", arguments: [now, Int64(transaction.id)])
        try appendEvent(db, id: transaction.id, kind: .upgraded, from: transaction.state, to: transaction.state, at: now)
    }

    private func setAutoRenew(_ db: Database, group: String, enabled: Bool) throws {
        try db.execute(
            sql: """
                INSERT INTO subscription_renewal (group_id, auto_renew) VALUES (?, ?)
                ON CONFLICT (group_id) DO UPDATE SET auto_renew = excluded.auto_renew
                """,
            arguments: [group, enabled])
    }
}
