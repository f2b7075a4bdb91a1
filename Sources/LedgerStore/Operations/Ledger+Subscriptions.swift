import Foundation
import GRDB

extension Ledger {
    /// Renewals are committed in batches of this size, so that a long clock jump at a fast time
    /// rate catches up in several bounded commits instead of one huge one.
    public static let renewalsPerCommit = 10_000

    /// Creates the renewals that are due: for every group whose auto-renew is on and whose
    /// subscription did not lapse, one new `purchased` transaction (reason renewal, same
    /// originalID) per period that ended by the store's time, in order. Returns them oldest
    /// first.
    public func renewDueSubscriptions() throws -> [PaymentTransaction] {
        var renewed: [PaymentTransaction] = []
        while true {
            let batch = try write { db in try renewDue(db, limit: Self.renewalsPerCommit) }
            renewed += batch
            if batch.count < Self.renewalsPerCommit { return renewed }
        }
    }

    /// Renews the subscription of `productID`'s group now (Xcode's "force renewal"): the
    /// current period ends now and the next one starts, with the product the group renews to.
    /// - Throws: `StoreControlError.unknownProduct`, `.notAutoRenewable`, `.noSubscription`.
    public func forceRenewal(of productID: String) throws -> PaymentTransaction {
        try write { db in
            let now = try storeNow(db)
            let group = try subscriptionGroup(db, productID: productID)
            let state = try renewalState(db, group: group)
            guard let latest = try latestPeriod(db, group: group), latest.revocationDate == nil,
                  latest.productID == productID || state.nextProductID == productID
            else { throw StoreControlError.noSubscription(productID) }
            try endPeriod(db, latest, at: now)
            let id = try renew(db, latest, state: state, startingAt: now, realign: true, at: now)
            return try PaymentTransaction.fetchOne(db, id: id)!
        }
    }

    /// Expires the subscription of `productID`'s group now and turns its auto-renew off (a
    /// pending change of product is dropped).
    /// - Throws: `StoreControlError.unknownProduct`, `.notAutoRenewable`, `.noSubscription`.
    @discardableResult
    public func expireSubscription(_ productID: String) throws -> PaymentTransaction {
        try write { db in
            let now = try storeNow(db)
            let group = try subscriptionGroup(db, productID: productID)
            let state = try renewalState(db, group: group)
            guard let latest = try latestPeriod(db, group: group),
                  latest.productID == productID || state.nextProductID == productID
            else { throw StoreControlError.noSubscription(productID) }
            try endPeriod(db, latest, at: now)
            try saveRenewalState(db, group: group, RenewalState(autoRenew: false, resumedAt: state.resumedAt, nextProductID: nil, periodAnchor: state.periodAnchor))
            return try PaymentTransaction.fetchOne(db, id: latest.id)!
        }
    }

    /// Turns auto-renew of `productID`'s subscription group on or off. Off: the subscription
    /// expires at its expiration date. Turned on after that date, it stays expired.
    /// - Throws: `StoreControlError.unknownProduct`, `.notAutoRenewable`.
    public func setAutoRenew(of productID: String, enabled: Bool) throws {
        try write { db in
            let group = try subscriptionGroup(db, productID: productID)
            var state = try renewalState(db, group: group)
            if enabled, !state.autoRenew { state.resumedAt = try storeNow(db) }
            state.autoRenew = enabled
            try saveRenewalState(db, group: group, state)
        }
    }

    /// Whether the subscription group of `productID` renews automatically.
    public func isAutoRenewEnabled(for productID: String) throws -> Bool {
        try read { db in try renewalState(db, group: try subscriptionGroup(db, productID: productID)).autoRenew }
    }

    /// The product the group of `productID` switches to at its next renewal, if any.
    public func pendingProductChange(for productID: String) throws -> String? {
        try read { db in try renewalState(db, group: try subscriptionGroup(db, productID: productID)).nextProductID }
    }

    // MARK: - Inside transactions

    /// Why a subscription purchase is refused when the payment is added: buying the
    /// subscription that is active already (StoreKit: "already subscribed").
    func alreadySubscribed(_ db: Database, productID: String, at now: Int64) throws -> TransactionError? {
        guard let group = try String.fetchOne(
            try db.cachedStatement(sql: "SELECT subscription_group_id FROM products WHERE id = ? AND type = 'autoRenewable'"), arguments: [productID]),
              let covering = try coveringSubscription(db, group: group, at: now, excluding: 0),
              covering.productID == productID
        else { return nil }
        let until = covering.expirationDate.map { $0.formatted(.iso8601) } ?? "now"
        return TransactionError(code: .unknown, message: "Already subscribed to \(productID) until \(until).")
    }

    /// Sets the dates of a subscription being charged, by the group's rules: an upgrade (a
    /// higher service level) or a crossgrade with the same period replaces the current
    /// subscription now and marks it `isUpgraded`; a downgrade, or a crossgrade with another
    /// period, takes effect at the next renewal: the payment completes with no period of its
    /// own (its expiration is its purchase date) and the group renews to its product.
    func startSubscriptionPeriod(_ db: Database, _ transaction: PaymentTransaction, at now: Int64) throws {
        guard let group = transaction.subscriptionGroupID,
              let plan = try subscriptionPlan(db, productID: transaction.productID) else { return }
        var state = try renewalState(db, group: group)
        var end: Int64
        if let current = try coveringSubscription(db, group: group, at: now, excluding: transaction.id),
           let currentPlan = try subscriptionPlan(db, productID: current.productID) {
            let immediate = current.productID != transaction.productID
                && (plan.level < currentPlan.level || (plan.level == currentPlan.level && plan.period == currentPlan.period))
            if immediate {
                try markUpgraded(db, current, at: now)
                end = try periodEnd(db, plan.period, anchor: now, after: now)
                state = RenewalState(autoRenew: true, resumedAt: now, nextProductID: nil, periodAnchor: now)
            } else {
                end = now
                if current.productID != transaction.productID { state.nextProductID = transaction.productID }
            }
        } else {
            end = try periodEnd(db, plan.period, anchor: now, after: now)
            state = RenewalState(autoRenew: true, resumedAt: now, nextProductID: nil, periodAnchor: now)
        }
        try db.run(
            sql: "UPDATE transactions SET purchase_date = ?, original_purchase_date = ?, expiration_date = ? WHERE id = ?",
            arguments: [now, now, end, Int64(transaction.id)])
        try saveRenewalState(db, group: group, state)
    }

    private func renewDue(_ db: Database, limit: Int) throws -> [PaymentTransaction] {
        let now = try storeNow(db)
        var renewed: [UInt64] = []
        let groups = try String.fetchAll(try db.cachedStatement(sql: "SELECT group_id FROM subscription_renewal WHERE auto_renew = 1 ORDER BY group_id"))
        for group in groups {
            var state = try renewalState(db, group: group)
            guard var latest = try latestPeriod(db, group: group), latest.revocationDate == nil,
                  let firstEnd = latest.expirationDate?.ledgerMilliseconds, firstEnd >= state.resumedAt
            else { continue }
            while let end = latest.expirationDate?.ledgerMilliseconds, end <= now, renewed.count < limit {
                let id = try renew(db, latest, state: state, startingAt: end, realign: false, at: now)
                renewed.append(id)
                latest = try PaymentTransaction.fetchOne(db, id: id)!
                state = try renewalState(db, group: group)
            }
        }
        return try renewed.map { try PaymentTransaction.fetchOne(db, id: $0)! }
    }

    /// A renewal of `previous`'s chain starting at `start`, with the product the group renews to.
    private func renew(
        _ db: Database, _ previous: PaymentTransaction, state: RenewalState, startingAt start: Int64, realign: Bool,
        at now: Int64
    ) throws -> UInt64 {
        let productID = state.nextProductID ?? previous.productID
        guard let plan = try subscriptionPlan(db, productID: productID) else {
            throw StoreControlError.notAutoRenewable(productID)
        }
        let anchor = realign || productID != previous.productID ? start : state.periodAnchor ?? start
        var row = try NewTransactionRow(db, productID: productID, state: .purchased, at: now)
        row.quantity = previous.quantity
        row.appAccountToken = previous.appAccountToken
        row.storefront = previous.storefront
        row.purchaseDate = start
        row.original = (previous.originalID, previous.originalPurchaseDate.ledgerMilliseconds)
        row.expirationDate = try periodEnd(db, plan.period, anchor: anchor, after: start)
        row.reason = .renewal
        let id = try insert(db, row)
        try saveRenewalState(db, group: previous.subscriptionGroupID!, RenewalState(
            autoRenew: state.autoRenew, resumedAt: state.resumedAt, nextProductID: nil, periodAnchor: anchor))
        return id
    }

    /// The end of the period that starts at `start`. In real time, periods are counted on the
    /// calendar from `anchor`, so that month ends do not drift; accelerated rates use fixed lengths.
    private func periodEnd(_ db: Database, _ period: SubscriptionPeriod, anchor: Int64, after start: Int64) throws -> Int64 {
        let rate = try timeRate(db)
        let startDate = Date(ledgerMilliseconds: start)
        guard rate == .realTime else { return rate.end(of: period, startingAt: startDate).ledgerMilliseconds }
        let anchorDate = Date(ledgerMilliseconds: anchor)
        let nominal = period.days * 86_400
        var count = max(1, Int(startDate.timeIntervalSince(anchorDate) / nominal) - 2)
        while period.advance(anchorDate, times: count) <= startDate { count += 1 }
        return period.advance(anchorDate, times: count).ledgerMilliseconds
    }

    private struct SubscriptionPlan {
        let level: Int
        let period: SubscriptionPeriod
    }

    private func subscriptionPlan(_ db: Database, productID: String) throws -> SubscriptionPlan? {
        guard let row = try Row.fetchOne(
            try db.cachedStatement(sql: "SELECT subscription_group_level, subscription_period FROM products WHERE id = ?"), arguments: [productID]),
              let level = row["subscription_group_level"] as Int?,
              let period = (row["subscription_period"] as String?).flatMap(SubscriptionPeriod.init(iso8601:))
        else { return nil }
        return SubscriptionPlan(level: level, period: period)
    }

    /// The group's subscription whose period covers `now`.
    private func coveringSubscription(_ db: Database, group: String, at now: Int64, excluding id: UInt64) throws -> PaymentTransaction? {
        try PaymentTransaction.fetchAll(
            db,
            sql: """
                WHERE subscription_group_id = ? AND state = 'purchased' AND revocation_date IS NULL AND is_upgraded = 0
                  AND purchase_date <= ? AND expiration_date > ? AND id <> ?
                ORDER BY expiration_date DESC, id DESC LIMIT 1
                """,
            arguments: [group, now, now, Int64(id)]
        ).first
    }

    /// The group's latest period (refunded ones included: a refund ends the chain).
    private func latestPeriod(_ db: Database, group: String) throws -> PaymentTransaction? {
        try PaymentTransaction.fetchAll(
            db,
            sql: """
                WHERE subscription_group_id = ? AND state = 'purchased' AND is_upgraded = 0 AND expiration_date > purchase_date
                ORDER BY expiration_date DESC, id DESC LIMIT 1
                """,
            arguments: [group]
        ).first
    }

    private func subscriptionGroup(_ db: Database, productID: String) throws -> String {
        guard let row = try Row.fetchOne(
            try db.cachedStatement(sql: "SELECT type, subscription_group_id FROM products WHERE id = ?"), arguments: [productID])
        else { throw StoreControlError.unknownProduct(productID) }
        guard let group = row["subscription_group_id"] as String?, row["type"] == ProductType.autoRenewable.rawValue else {
            throw StoreControlError.notAutoRenewable(productID)
        }
        return group
    }

    private struct RenewalState {
        var autoRenew = true
        var resumedAt: Int64 = 0
        var nextProductID: String?
        var periodAnchor: Int64?
    }

    private func renewalState(_ db: Database, group: String) throws -> RenewalState {
        guard let row = try Row.fetchOne(
            try db.cachedStatement(sql: "SELECT auto_renew, resumed_at, next_product_id, period_anchor FROM subscription_renewal WHERE group_id = ?"),
            arguments: [group])
        else { return RenewalState() }
        return RenewalState(
            autoRenew: row["auto_renew"], resumedAt: row["resumed_at"], nextProductID: row["next_product_id"],
            periodAnchor: row["period_anchor"])
    }

    private func saveRenewalState(_ db: Database, group: String, _ state: RenewalState) throws {
        try db.run(
            sql: """
                INSERT INTO subscription_renewal (group_id, auto_renew, resumed_at, next_product_id, period_anchor)
                VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (group_id) DO UPDATE SET
                    auto_renew = excluded.auto_renew, resumed_at = excluded.resumed_at,
                    next_product_id = excluded.next_product_id, period_anchor = excluded.period_anchor
                """,
            arguments: [group, state.autoRenew, state.resumedAt, state.nextProductID, state.periodAnchor])
    }

    /// A transaction with the restored copies that mirror it.
    private func withRestoredCopies(_ db: Database, _ transaction: PaymentTransaction) throws -> [PaymentTransaction] {
        [transaction] + (try PaymentTransaction.fetchAll(db, sql: "WHERE restored_from = ? ORDER BY id", arguments: [Int64(transaction.id)]))
    }

    /// Moves a subscription's expiration to `now` when it is later, with its restored copies.
    private func endPeriod(_ db: Database, _ transaction: PaymentTransaction, at now: Int64) throws {
        for period in try withRestoredCopies(db, transaction) {
            guard let expiration = period.expirationDate?.ledgerMilliseconds, expiration > now else { continue }
            try db.run(
                sql: "UPDATE transactions SET expiration_date = ?, updated_at = ? WHERE id = ?",
                arguments: [now, now, Int64(period.id)])
            try appendEvent(
                db, id: period.id, kind: .expirationChanged, from: period.state, to: period.state, at: now,
                detail: Date(ledgerMilliseconds: now).formatted(.iso8601))
        }
    }

    private func markUpgraded(_ db: Database, _ transaction: PaymentTransaction, at now: Int64) throws {
        for period in try withRestoredCopies(db, transaction) where !period.isUpgraded {
            try db.run(
                sql: "UPDATE transactions SET is_upgraded = 1, updated_at = ? WHERE id = ?", arguments: [now, Int64(period.id)])
            try appendEvent(db, id: period.id, kind: .upgraded, from: period.state, to: period.state, at: now)
        }
    }
}
