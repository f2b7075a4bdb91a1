import Foundation
import LedgerModel
import GRDB

/// Back-dated test purchases (migration 15): StoreKitTest's `purchaseDate(_:renewalBehavior:)`.
extension Ledger {
    /// The back-dating of transaction `id`'s payment, if it was back-dated: one prepared lookup,
    /// as every charge asks.
    func backdating(_ db: Database, of id: UInt64) throws -> BackdatedPurchase? {
        let lookup = try FastStatement(db, Self.backdatingLookup)
        lookup.bind(1, Int64(id))
        return try lookup.first { row in
            BackdatedPurchase(date: Date(ledgerMilliseconds: row.int64(0)), renews: row.int64(1) != 0)
        }
    }

    private static let backdatingLookup = LedgerSQL(
        "SELECT purchase_date, renews FROM backdated_purchases WHERE transaction_id = ?")

    /// Refuses a back-dating the store cannot make: a date after the store's time `now`; for an
    /// auto-renewable subscription, a group bought before (a back-dated subscription begins its
    /// group's history), or, renewing up to now, more periods than one clock move may renew
    /// (`configuration.renewalLimit`: the renewals are made as a clock move makes them),
    /// counted as the charge and the renewals count them (the introductory offer, or `offer`,
    /// first).
    /// - Throws: `PaymentQueueError.invalidPurchaseDate`; `StoreControlError.tooManyRenewals`.
    func checkBackdating(
        _ db: Database, _ backdating: BackdatedPurchase, productID: String, offer: TransactionOffer?,
        settings: StoreSettings, now: Int64
    ) throws {
        let date = backdating.date.ledgerMilliseconds
        guard date <= now else {
            throw PaymentQueueError.invalidPurchaseDate(
                backdating.date,
                reason: "it is after the store's time, \(Date(ledgerMilliseconds: now).formatted(.iso8601))")
        }
        guard date >= 0 else {
            throw PaymentQueueError.invalidPurchaseDate(backdating.date, reason: "it is before 1970")
        }
        guard let plan = try subscriptionPlan(db, productID: productID) else { return }
        let group = try subscriptionGroup(db, productID: productID)
        if try hasBought(db, group: group, excluding: 0) {
            throw PaymentQueueError.invalidPurchaseDate(
                backdating.date,
                reason: "its subscription group was bought before; only a first purchase may be back-dated")
        }
        guard backdating.renews else { return }
        let limit = configuration.renewalLimit
        var run =
            offer.flatMap { $0.type == .promotional ? plan.offerRun($0, pending: true) : nil }
            ?? plan.introductoryOffer.flatMap { plan.offerRun($0.offer, pending: true) }
        var (anchor, end, renewals) = (date, date, 0)
        while renewals <= limit {
            end = periodsEnd(run, plan: plan, rate: settings.timeRate, anchor: &anchor, start: end)
            if end > now { return }
            renewals += 1
            run = run?.afterOneRenewal
        }
        throw StoreControlError.tooManyRenewals(limit: limit)
    }
}
