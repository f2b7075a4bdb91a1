import Foundation
import GRDB
public import LedgerModel

/// Subscription price increases (migration 16): the App Store raises the price a subscriber
/// renews at, with or without their consent, and the renewal charges it or does not happen.
/// They concern the customer's own subscription of a group: one a family member shares renews
/// at the price the family member agreed to, which is not the customer's to answer.
extension Ledger {
    /// The price increase waiting for the next renewal of the group of `productID` (an
    /// auto-renewable subscription); `nil` when none waits.
    /// - Throws: `UnknownProductError`; `StoreControlError.notAutoRenewable`.
    public func priceIncrease(forProduct productID: String) throws -> PriceIncrease? {
        try read { db in try priceIncrease(db, of: try own(try subscriptionGroup(db, productID: productID))) }
    }

    /// The price increases that wait for the subscriber's consent, of subscriptions still in
    /// their period (once it ended, it is too late to ask), with the group's latest period (what
    /// the App Store's consent message is about), by group identifier.
    package func pendingPriceIncreases() throws -> [(increase: PriceIncrease, transaction: PaymentTransaction)] {
        let owner = try owner()
        return try read { db in
            try String.fetchAll(
                db,
                sql: """
                    SELECT group_id FROM price_increases WHERE customer_id = ? AND status = 'pending'
                      AND \(Self.groupOfApp) ORDER BY group_id
                    """,
                arguments: owner.arguments
            ).compactMap { group in
                guard let status = try subscriptionStatus(db, of: try own(group)), status.state == .subscribed,
                    let increase = status.priceIncrease, increase.status == .pending
                else { return nil }
                return (increase, status.transaction)
            }
        }
    }

    /// The price increase of the holder's group (the customer's own subscription's).
    func priceIncrease(_ db: Database, of held: HeldSubscription) throws -> PriceIncrease? {
        // What the renewal info says the next renewal charges: the row must be the ledger's.
        guard let row = try records(db).row(.priceIncreases, keys: Self.priceIncreaseKey(held)) else { return nil }
        return PriceIncrease(
            productID: row["product_id"], price: DecimalText.parse(row["price"]) ?? 0,
            needsConsent: row["needs_consent"], status: PriceIncrease.Status(rawValue: row["status"]) ?? .pending,
            requestedAt: Date(ledgerMilliseconds: row["requested_at"]),
            answeredAt: (row["answered_at"] as Int64?).map(Date.init(ledgerMilliseconds:)))
    }

    /// Raises the price the subscription of `productID`'s group renews at, from its next
    /// renewal: to `price` (by default the catalog's price of the product it renews to).
    /// Needing consent, the increase waits for the subscriber's answer and notifies
    /// `PRICE_INCREASE` `PENDING`; otherwise it is agreed at once (`ACCEPTED`). An increase
    /// agreed to but not charged yet is replaced. Returns the group's latest period.
    /// - Throws: `UnknownProductError`; `StoreControlError.notAutoRenewable`, `.noSubscription`,
    ///   `.notRenewing` (expired, refunded, in billing retry, or auto-renew off),
    ///   `.priceIncreasePending`, `.invalidPrice`.
    func requestPriceIncrease(
        _ db: Database, productID: String, price: Decimal?, needsConsent: Bool
    ) throws -> PaymentTransaction {
        let (held, status) = try renewingSubscription(db, productID: productID)
        guard status.state == .subscribed, status.willAutoRenew else { throw StoreControlError.notRenewing(productID) }
        if try priceIncrease(db, of: held)?.status == .pending {
            throw StoreControlError.priceIncreasePending(productID)
        }
        let renewsTo = status.autoRenewProductID
        guard let price = try price ?? Self.catalogPrice(db, of: renewsTo) else {
            throw UnknownProductError(productIdentifier: renewsTo)
        }
        guard DecimalText.isExactPrice(DecimalText.format(price)) else { throw StoreControlError.invalidPrice(price) }
        let now = try storeNow(db)
        try records(db).write(.priceIncreases, keys: Self.priceIncreaseKey(held)) {
            try db.execute(
                sql: """
                    INSERT OR REPLACE INTO price_increases
                        (customer_id, group_id, product_id, price, needs_consent, status, requested_at, answered_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    held.customer, held.group, renewsTo, DecimalText.format(price), needsConsent,
                    needsConsent ? "pending" : "agreed", now,
                    needsConsent ? nil : now,
                ])
        }
        try notify(
            writer(db, at: now), needsConsent ? .priceIncreasePending : .priceIncreaseAccepted,
            about: status.transaction)
        return status.transaction
    }

    /// The subscriber's answer to the pending price increase of `productID`'s group: agreed,
    /// the next renewal charges it (`PRICE_INCREASE` `ACCEPTED`); declined, auto-renew turns off
    /// (as StoreKitTest's `declinePriceIncreaseForTransaction` does) and the subscription
    /// expires at the end of its period. Returns the group's latest period.
    /// - Throws: `UnknownProductError`; `StoreControlError.notAutoRenewable`, `.noSubscription`,
    ///   `.noPriceIncrease` (none waits for an answer, or its period ended).
    func answerPriceIncrease(_ db: Database, productID: String, agree: Bool) throws -> PaymentTransaction {
        let (held, status) = try renewingSubscription(db, productID: productID)
        guard status.state == .subscribed, try priceIncrease(db, of: held)?.status == .pending else {
            throw StoreControlError.noPriceIncrease(productID)
        }
        let now = try storeNow(db)
        try settlePriceIncrease(db, of: held, from: .pending, to: agree ? .agreed : .declined, at: now)
        if agree {
            try notify(writer(db, at: now), .priceIncreaseAccepted, about: status.transaction)
        } else {
            try setAutoRenew(db, productID: productID, enabled: false)
        }
        return status.transaction
    }

    /// Moves the group's increase from `old` to `new`, answered `now` (or when asked, if the
    /// store's clock, which follows the system's, went back since); nothing when it is not `old`.
    func settlePriceIncrease(
        _ db: Database, of held: HeldSubscription, from old: PriceIncrease.Status, to new: PriceIncrease.Status,
        at now: Int64
    ) throws {
        try records(db).write(.priceIncreases, keys: Self.priceIncreaseKey(held)) {
            try db.execute(
                sql: """
                    UPDATE price_increases SET status = ?, answered_at = MAX(?, requested_at)
                    WHERE customer_id = ? AND group_id = ? AND status = ?
                    """, arguments: [new.rawValue, now, held.customer, held.group, old.rawValue])
        }
    }

    /// The key of the holder's price increase: the customer and the group.
    private static func priceIncreaseKey(_ held: HeldSubscription) -> [DatabaseValue] {
        [held.customer.databaseValue, held.group.databaseValue]
    }

    /// The group's price increase of the product the holding renews to, if any: the customer's
    /// own subscription's only (a family member agrees to the price of a share).
    func renewalPriceIncrease(
        _ db: Database, of held: HeldSubscription, renewal: RenewalState, latest: PaymentTransaction
    ) throws -> PriceIncrease? {
        guard !held.isFamilyShared, let increase = try priceIncrease(db, of: held),
            increase.productID == (renewal.nextProductID ?? latest.productID)
        else { return nil }
        return increase
    }

    /// The group's increase when it ends the subscription at the end of its latest period
    /// instead of renewing it (`PriceIncrease.endsSubscription`): one of the product the group
    /// renews to, declined, or not answered with auto-renew on.
    func priceIncreaseEndingSubscription(
        _ db: Database, of held: HeldSubscription, renewal: RenewalState, latest: PaymentTransaction
    ) throws -> PriceIncrease? {
        try renewalPriceIncrease(db, of: held, renewal: renewal, latest: latest).flatMap {
            $0.endsSubscription(autoRenew: renewal.autoRenew) ? $0 : nil
        }
    }

    /// Removes the group's price increase when a new period of the customer's own subscription
    /// charged it, or made it moot.
    func dropPriceIncrease(_ db: Database, of held: HeldSubscription) throws {
        guard !held.isFamilyShared else { return }
        try records(db).write(.priceIncreases, keys: Self.priceIncreaseKey(held)) {
            try db.cachedStatement(sql: "DELETE FROM price_increases WHERE customer_id = ? AND group_id = ?").execute(
                arguments: [held.customer, held.group])
        }
    }

    /// The group of `productID` and the status of the customer's own subscription of it, when
    /// `productID` is the product of its latest period or the one it renews to.
    private func renewingSubscription(
        _ db: Database, productID: String
    ) throws -> (held: HeldSubscription, status: SubscriptionStatus) {
        let held = try own(try subscriptionGroup(db, productID: productID))
        guard let status = try subscriptionStatus(db, of: held),
            status.transaction.productID == productID || status.autoRenewProductID == productID
        else { throw StoreControlError.noSubscription(productID) }
        return (held, status)
    }

    // MARK: - Charged prices

    /// The price a renewal of `chain` (the latest period of `held`) into `productID` is charged
    /// when it is not the catalog's: an agreed increase of that product (of the customer's own
    /// subscription), else the price the chain's latest period was charged when it renews the
    /// same product.
    func renewalCharge(
        _ db: Database, of held: HeldSubscription, chain: PaymentTransaction, productID: String
    ) throws -> Decimal? {
        if !held.isFamilyShared, let increase = try priceIncrease(db, of: held),
            increase.productID == productID, increase.status == .agreed
        {
            return increase.price
        }
        return chain.productID == productID ? try chargedPrice(db, of: chain) : nil
    }

    /// What `transaction` was charged when it is not the catalog's price (a restored copy, as
    /// its purchase).
    func chargedPrice(_ db: Database, of transaction: PaymentTransaction) throws -> Decimal? {
        let charged = Int64(transaction.restoredFromID ?? transaction.id)
        // A price a signature carries: the row must be the ledger's.
        return try records(db).row(.chargedPrices, key: charged).flatMap { DecimalText.parse($0["price"]) }
    }

    /// The charged prices of `transactions` that have one, by transaction id.
    func chargedPrices(_ db: Database, of transactions: [PaymentTransaction]) throws -> [UInt64: Decimal] {
        var prices: [UInt64: Decimal] = [:]
        for transaction in transactions where transaction.productType == .autoRenewable {
            if let price = try chargedPrice(db, of: transaction) { prices[transaction.id] = price }
        }
        return prices
    }

    func recordCharge(_ db: Database, of id: UInt64, price: Decimal) throws {
        try records(db).write(.chargedPrices, key: Int64(id)) {
            try db.cachedStatement(sql: "INSERT INTO charged_prices (transaction_id, price) VALUES (?, ?)").execute(
                arguments: [Int64(id), DecimalText.format(price)])
        }
    }
}
