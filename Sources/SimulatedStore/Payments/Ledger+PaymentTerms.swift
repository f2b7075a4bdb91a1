import Foundation
import GRDB
import LedgerModel

/// A payment's terms, kept from its commit to its charge (migration 15): a back-dated test
/// purchase (StoreKitTest's `purchaseDate(_:renewalBehavior:)`), and the app's server's say on
/// the introductory offer (`introductoryOfferEligibility(compactJWS:)`).
struct PaymentTerms {
    var backdating: BackdatedPurchase?
    /// Whether the charge gives the introductory offer (`nil`: by the customer's history).
    var introductoryOffer: Bool?
}

/// The terms a payment was taken on (offers, back-dating, the introductory offer's say), kept with it.
extension Ledger {
    /// The terms of transaction `id`'s payment, if it had any: one prepared lookup, as every
    /// charge asks.
    func paymentTerms(_ db: Database, of id: UInt64) throws -> PaymentTerms? {
        let lookup = try FastStatement(db, Self.termsLookup)
        lookup.bind(1, Int64(id))
        return try lookup.first { row in
            PaymentTerms(
                backdating: row.optionalInt64(0).map {
                    BackdatedPurchase(date: Date(ledgerMilliseconds: $0), renews: row.optionalInt64(1) != 0)
                },
                introductoryOffer: row.optionalInt64(2).map { $0 != 0 })
        }
    }

    private static let termsLookup = LedgerSQL(
        "SELECT purchase_date, renews, introductory_offer FROM payment_terms WHERE transaction_id = ?")

    /// Keeps the terms of the payment just stored as transaction `id`, when it has any.
    func savePaymentTerms(
        _ db: Database, of id: UInt64, backdating: BackdatedPurchase?, introductoryOffer: (allow: Bool, nonce: UUID)?
    ) throws {
        guard backdating != nil || introductoryOffer != nil else { return }
        try db.run(
            sql: """
                INSERT INTO payment_terms (transaction_id, purchase_date, renews, introductory_offer, introductory_offer_nonce)
                VALUES (?, ?, ?, ?, ?)
                """,
            arguments: [
                Int64(id), backdating?.date.ledgerMilliseconds, backdating?.renews, introductoryOffer?.allow,
                introductoryOffer?.nonce.uuidString.lowercased(),
            ])
    }

    /// Refuses a back-dating the store cannot make: a date after the store's time `now`; for an
    /// auto-renewable subscription, a group bought before (a back-dated subscription begins its
    /// group's history), or, renewing up to now, more periods than one clock move may renew
    /// (`configuration.renewalLimit`: the renewals are made as a clock move makes them),
    /// counted as the charge and the renewals count them: `offer` first, else the introductory
    /// offer unless the app's server withheld it (`introductoryOffer` false; `nil`: the server
    /// said nothing, and a first purchase has it).
    /// - Throws: `PaymentQueueError.invalidPurchaseDate`; `StoreControlError.tooManyRenewals`.
    func checkBackdating(
        _ db: Database, _ backdating: BackdatedPurchase, productID: String, offer: TransactionOffer?,
        introductoryOffer: Bool?, settings: StoreSettings, now: Int64
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
        if try hasBought(db, of: try own(group), excluding: 0) {
            throw PaymentQueueError.invalidPurchaseDate(
                backdating.date,
                reason: "its subscription group was bought before; only a first purchase may be back-dated")
        }
        guard backdating.renews else { return }
        let limit = configuration.renewalLimit
        var run =
            offer.flatMap { $0.type != .introductory ? plan.offerRun($0, pending: true) : nil }
            ?? (introductoryOffer ?? true
                ? plan.introductoryOffer.flatMap { plan.offerRun($0.offer, pending: true) } : nil)
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
