import Foundation
import GRDB
import LedgerModel

/// A subscription group as the customer holds it: their own subscription (everything the
/// customer bought of the group, one period at a time, upgraded, downgraded and renewed), or a
/// family member's purchase shared with them. A customer may hold one group both ways at once;
/// each renews on its own (its row of `subscription_renewal`, migration 23), and the group's
/// rules (upgrades, downgrades, price increases, offers) apply to the customer's own.
struct HeldSubscription: Hashable, Sendable {
    let group: String
    /// The original transaction id of the family member's shared purchase; `nil` for the
    /// customer's own subscription.
    let sharedOriginal: UInt64?
    /// The customer who holds it (`Ledger.customerID()`).
    let customer: Int64

    static func own(_ group: String, customer: Int64) -> HeldSubscription {
        HeldSubscription(group: group, sharedOriginal: nil, customer: customer)
    }

    var isFamilyShared: Bool { sharedOriginal != nil }

    /// Its key in `subscription_renewal.shared_original_id` (0 for the customer's own).
    var sharedKey: Int64 { Int64(clamping: sharedOriginal ?? 0) }

    /// The SQL expression of a transaction row's `sharedKey`: its original id when a family
    /// member shared its chain's purchase, else 0 (the customer's own).
    static let sharedKeyOfRow =
        "IIF(original_id IN (SELECT original_transaction_id FROM family_shares), original_id, 0)"

    /// The arguments of a query of the holding's periods: its group (`:group`), and `sharedKey`
    /// and the customer for `transactionsCondition`.
    var periodArguments: StatementArguments { ["group": group, "shared": sharedKey, "customer": customer] }

    /// The SQL condition that selects its transactions among the group's, with `sharedKey` bound
    /// to `:shared` and the customer to `:customer`: the customer's rows of a shared purchase's
    /// chain, or of every chain no family member shared.
    static let transactionsCondition = """
        customer_id = :customer AND (original_id = :shared
         OR (:shared = 0 AND original_id NOT IN (SELECT original_transaction_id FROM family_shares)))
        """
}

extension HeldSubscription {
    /// The holding a row of `subscription_renewal` (its key columns) is.
    init(_ row: Row) {
        let shared: Int64 = row["shared_original_id"]
        self.init(
            group: row["group_id"], sharedOriginal: shared == 0 ? nil : UInt64(shared), customer: row["customer_id"])
    }
}

/// The subscriptions the customer holds: their own, and those family members share.
extension Ledger {
    /// The SQL condition on a table's `group_id` that selects the subscription groups of the
    /// app bound to `?` (a group is one app's, as its products are).
    static let groupOfApp = "group_id IN (SELECT id FROM subscription_groups WHERE app_id = ?)"

    /// The customer's own subscription to `group`: this value's customer's.
    /// - Throws: `CustomerError.customerNotChosen`.
    func own(_ group: String) throws -> HeldSubscription {
        .own(group, customer: try customerID())
    }

    /// How the transaction's owner holds the subscription `transaction` belongs to (`nil` for
    /// another kind of product): shared, when its chain's purchase was shared by a family member.
    func heldSubscription(_ db: Database, of transaction: PaymentTransaction) throws -> HeldSubscription? {
        guard let group = transaction.subscriptionGroupID else { return nil }
        let shared =
            try Bool.fetchOne(
                try db.cachedStatement(sql: "SELECT 1 FROM family_shares WHERE original_transaction_id = ?"),
                arguments: [Int64(clamping: transaction.originalID)]) == true
        return HeldSubscription(
            group: group, sharedOriginal: shared ? transaction.originalID : nil, customer: transaction.customerID)
    }

    /// Every holding of the group by this value's customer: their own (always, bought or not)
    /// first, then the shares with a renewal state, newest first.
    func heldSubscriptions(_ db: Database, group: String) throws -> [HeldSubscription] {
        let customer = try customerID()
        return [.own(group, customer: customer)]
            + (try heldSubscriptions(
                db, where: "customer_id = ? AND group_id = ? AND shared_original_id <> 0", [customer, group]))
    }

    /// Every holding of this value's customer with a renewal state that `condition` selects.
    func customersHeldSubscriptions(_ db: Database, where condition: String) throws -> [HeldSubscription] {
        try heldSubscriptions(
            db, where: "customer_id = ? AND \(Self.groupOfApp) AND \(condition)", try owner().arguments)
    }

    /// Every holding with a renewal state that `condition` selects, whoever holds it, by
    /// customer and group, the customer's own first, then the shares newest first.
    func heldSubscriptions(
        _ db: Database, where condition: String = "1", _ arguments: StatementArguments = []
    ) throws -> [HeldSubscription] {
        // Cached: the conditions are a few constants, and the renewal walk runs at every launch.
        try Row.fetchAll(
            try db.cachedStatement(
                sql: """
                    SELECT customer_id, group_id, shared_original_id FROM subscription_renewal
                    WHERE \(condition)
                    ORDER BY customer_id, group_id, shared_original_id = 0 DESC, shared_original_id DESC
                    """), arguments: arguments
        ).map(HeldSubscription.init)
    }

    /// The holding of `productID`'s group a store control acts on: one subscribed to
    /// `productID` (its latest period's product, or the one it renews to), a current one first
    /// (in its period, or in billing retry; not refunded), the customer's own first; else the
    /// customer's own, unless the customer holds the group only through Family Sharing (then the
    /// newest share).
    /// - Throws: `UnknownProductError`; `StoreControlError.notAutoRenewable`.
    func heldSubscription(_ db: Database, productID: String) throws -> HeldSubscription {
        let group = try subscriptionGroup(db, productID: productID)
        let held = try heldSubscriptions(db, group: group)
        let now = try storeNow(db)
        var lapsed: HeldSubscription?
        for subscription in held {
            guard let latest = try latestPeriod(db, of: subscription) else { continue }
            let state = try renewalState(db, of: subscription)
            guard latest.productID == productID || state.nextProductID == productID else { continue }
            let inPeriod = (latest.expirationDate?.ledgerMilliseconds ?? 0) > now
            if latest.revocationDate == nil, inPeriod || state.liveBillingIssue(of: latest, at: now) != nil {
                return subscription
            }
            lapsed = lapsed ?? subscription
        }
        if let lapsed { return lapsed }
        if try latestPeriod(db, of: held[0]) == nil, let shared = held.dropFirst().first { return shared }
        return held[0]
    }

    /// The holding a status of the group `group` reports when one is asked for: the customer's
    /// own once bought, else the newest share.
    func principalSubscription(_ db: Database, group: String) throws -> HeldSubscription {
        let held = try heldSubscriptions(db, group: group)
        if try latestPeriod(db, of: held[0]) != nil { return held[0] }
        return held.dropFirst().first ?? held[0]
    }
}
