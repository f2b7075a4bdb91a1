import Foundation
import GRDB
package import LedgerModel
import LedgerSigning

/// Renewal-date extensions, as the App Store's server makes them: the active period of a
/// subscription ends later (its `expirationChanged` event says when), and its next renewal
/// starts then. Each is notified (`RENEWAL_EXTENDED`; a mass extension also `RENEWAL_EXTENSION`
/// / `SUMMARY`) in its commit.
extension Ledger {
    /// Extends the renewal date of the subscription of original transaction `originalID` by
    /// `days` (Extend a Subscription Renewal Date). The same `requestIdentifier` again returns
    /// the first extension and extends nothing more.
    /// - Throws: `RenewalExtensionError`: days outside 1...90, a reason outside 0...3, a bad
    ///   request identifier, an unknown subscription, one shared by a family member, one not
    ///   active, one in a free offer period, one extended twice in the last 365 days.
    package func extendRenewalDate(
        originalTransactionID originalID: UInt64, days: Int, reason: Int, requestIdentifier: String
    ) throws -> RenewalExtension {
        try Self.checkExtension(days: days, reason: reason, requestIdentifier: requestIdentifier)
        return try write { db in
            if let done = try Self.renewalExtension(db, request: requestIdentifier, original: originalID),
                try PaymentTransaction.fetchOne(db, id: originalID).map(isInApp) ?? true
            {
                return done
            }
            return try extend(
                db, originalID: originalID, days: days, reason: reason, request: requestIdentifier,
                at: try storeNow(db))
        }
    }

    /// Extends by `days` the renewal date of every active subscription of `productID` (each
    /// customer's own subscription of the group, when its period of that product runs now, not
    /// refunded, and, with `storefronts`, bought in one of them; one that cannot be extended, in
    /// a free offer period say, counts as failed; a family member's share is not extended)
    /// (Extend Subscription Renewal Dates for All Active Subscribers), whatever customer this
    /// value acts for. It goes over the customers in batches of `massExtensionBatch`, one commit
    /// each, as the App Store's runs asynchronously: the request is recorded with the first
    /// batch; after the last, it is complete and its summary is notified. At most `batches` are
    /// run here (`nil`: until it is complete); `continueMassRenewalExtension()` runs the rest.
    /// The same `requestIdentifier` again runs no new request: it returns the first as it
    /// stands, after running up to `batches` of it.
    /// - Throws: `RenewalExtensionError` for bad days, reason or identifier;
    ///   `UnknownProductError`; `StoreControlError.notAutoRenewable`.
    package func extendRenewalDatesForActiveSubscribers(
        productID: String, days: Int, reason: Int, requestIdentifier: String, storefronts: [String] = [],
        batches: Int? = nil
    ) throws -> MassRenewalExtension {
        try Self.checkExtension(days: days, reason: reason, requestIdentifier: requestIdentifier)
        let app = try appID()
        var running = try write { db in
            // The product first: another app's is unknown to this one, even for a request made.
            _ = try subscriptionGroup(db, productID: productID)
            if let made = try Self.massRenewalExtension(db, app: app, request: requestIdentifier) {
                return made.completeDate == nil ? try extendOneBatch(db, app: app, request: requestIdentifier) : made
            }
            try db.execute(
                sql: """
                    INSERT INTO mass_renewal_extensions
                        (app_id, request_identifier, product_id, days, reason, storefronts, at, succeeded, failed)
                    VALUES (?, ?, ?, ?, ?, ?, ?, 0, 0)
                    """,
                arguments: [
                    app, requestIdentifier, productID, days, reason, storefronts.joined(separator: ","),
                    try storeNow(db),
                ])
            return try extendOneBatch(db, app: app, request: requestIdentifier)
        }
        var left = (batches ?? .max) - 1
        while running.completeDate == nil, left > 0 {
            running = try write { db in try extendOneBatch(db, app: app, request: requestIdentifier) }
            left -= 1
        }
        return running
    }

    /// Runs one batch of the mass extension that has run longest without completing, of any
    /// app (`ledger serve` runs them one after the other, between its other work). Returns
    /// whether one ran.
    @discardableResult
    package func continueMassRenewalExtension() throws -> Bool {
        // A read first: with none running (nearly always), the write lock is not taken.
        let running = try read { db in
            try Bool.fetchOne(db, sql: "SELECT 1 FROM mass_renewal_extensions WHERE completed_at IS NULL LIMIT 1")
        }
        guard running == true else { return false }
        return try write { db in
            guard
                let row = try Row.fetchOne(
                    db,
                    sql: """
                        SELECT app_id, request_identifier FROM mass_renewal_extensions
                        WHERE completed_at IS NULL ORDER BY at LIMIT 1
                        """)
            else { return false }
            _ = try extendOneBatch(db, app: row["app_id"], request: row["request_identifier"])
            return true
        }
    }

    /// How many customers one batch of a mass extension goes over: the write lock is held for
    /// one batch at a time (about 0.4 s of a store where each is a subscriber).
    static let massExtensionBatch = 500

    /// The next batch of mass extension `request` of app `app`, still running: the customers
    /// after the last it went over, at most `massExtensionBatch`; when none is left, it is
    /// complete and its summary notified. Returns it as it stands after the batch.
    private func extendOneBatch(_ db: Database, app: Int64, request: String) throws -> MassRenewalExtension {
        guard var made = try Self.massRenewalExtension(db, app: app, request: request), made.completeDate == nil,
            let bundleID = try String.fetchOne(db, sql: "SELECT bundle_id FROM apps WHERE id = ?", arguments: [app])
        else { throw LedgerError.corrupted(path: path, reason: "the mass extension \(request) is not running") }
        // Acting in the request's app: its product, its subscribers, its notifications.
        let inApp = withScope(LedgerScope(customer: customerScope, app: .chosen(id: app, name: bundleID)))
        let group = try inApp.subscriptionGroup(db, productID: made.productID)
        let now = try storeNow(db)
        let through =
            try Int64.fetchOne(
                db,
                sql: "SELECT through_customer FROM mass_renewal_extensions WHERE app_id = ? AND request_identifier = ?",
                arguments: [app, request]) ?? 0
        let customers = try Int64.fetchAll(
            db, sql: "SELECT id FROM customers WHERE id > ? ORDER BY id LIMIT ?",
            arguments: [through, Self.massExtensionBatch])
        for customer in customers {
            // A subscriber of the product whose period runs now (one read); `extend` checks
            // the rest of what makes one eligible, and counts a failure.
            guard let latest = try latestPeriod(db, of: .own(group, customer: customer)),
                latest.productID == made.productID, latest.revocationDate == nil,
                (latest.expirationDate?.ledgerMilliseconds ?? 0) > now,
                made.storefronts.isEmpty || made.storefronts.contains(latest.storefront)
            else { continue }
            do {
                _ = try inApp.extend(
                    db, originalID: latest.originalID, days: made.days, reason: made.reason, request: request, at: now)
                made.succeededCount += 1
            } catch is RenewalExtensionError {
                made.failedCount += 1
            }
        }
        // A batch short of the limit was the last one.
        if customers.count < Self.massExtensionBatch { made.completeDate = Date(ledgerMilliseconds: now) }
        try db.execute(
            sql: """
                UPDATE mass_renewal_extensions SET succeeded = ?, failed = ?, through_customer = ?, completed_at = ?
                WHERE app_id = ? AND request_identifier = ?
                """,
            arguments: [
                made.succeededCount, made.failedCount, customers.last ?? through, made.completeDate?.ledgerMilliseconds,
                app, request,
            ])
        if made.completeDate != nil {
            try inApp.notify(
                inApp.writer(db, at: now), .renewalExtensionSummary, about: nil,
                summary: NotificationPayload.Summary(
                    requestIdentifier: request, productID: made.productID, storefronts: made.storefronts,
                    failed: made.failedCount, succeeded: made.succeededCount))
        }
        return made
    }

    /// The mass extension `requestIdentifier` names in this value's app, if it was made.
    package func massRenewalExtension(requestIdentifier: String) throws -> MassRenewalExtension? {
        let app = try appID()
        return try read { db in try Self.massRenewalExtension(db, app: app, request: requestIdentifier) }
    }

    /// The extensions of the subscription of original transaction `originalID`, oldest first.
    package func renewalExtensions(originalTransactionID originalID: UInt64) throws -> [RenewalExtension] {
        try read { db in
            try Row.fetchAll(
                db, sql: "SELECT * FROM renewal_extensions WHERE original_transaction_id = ? ORDER BY at",
                arguments: [Int64(originalID)]
            ).map(Self.renewalExtension)
        }
    }

    // MARK: - Inside a write

    private static func checkExtension(days: Int, reason: Int, requestIdentifier: String) throws {
        guard (1...RenewalExtension.maximumDays).contains(days) else { throw RenewalExtensionError.invalidDays(days) }
        guard (0...3).contains(reason) else { throw RenewalExtensionError.invalidReason(reason) }
        guard RenewalExtension.isValidRequestIdentifier(requestIdentifier) else {
            throw RenewalExtensionError.invalidRequestIdentifier
        }
    }

    /// Moves the end of the active period of `originalID`'s subscription (and of its restored
    /// copies) `days` later, records the extension and notifies it.
    private func extend(
        _ db: Database, originalID: UInt64, days: Int, reason: Int, request: String, at now: Int64
    ) throws -> RenewalExtension {
        guard let original = try PaymentTransaction.fetchOne(db, id: originalID), original.originalID == originalID,
            isInApp(original), original.productType == .autoRenewable, let held = try heldSubscription(db, of: original)
        else { throw RenewalExtensionError.unknownOriginalTransaction(originalID) }
        guard !held.isFamilyShared else { throw RenewalExtensionError.familyShared(originalID) }
        guard let status = try subscriptionStatus(db, of: held, at: now), status.state == .subscribed,
            status.transaction.originalID == originalID, let end = status.transaction.expirationDate
        else { throw RenewalExtensionError.ineligible(originalID) }
        guard status.transaction.offer?.paymentMode != .freeTrial else {
            throw RenewalExtensionError.inFreeOfferPeriod(originalID)
        }
        let recent = try Int.fetchOne(
            db, sql: "SELECT count(*) FROM renewal_extensions WHERE original_transaction_id = ? AND at > ?",
            arguments: [Int64(originalID), now - Int64(RenewalExtension.window * 1000)])
        guard (recent ?? 0) < RenewalExtension.maximumPerWindow else {
            throw RenewalExtensionError.maximumReached(originalID)
        }
        let effective = end.ledgerMilliseconds + Int64(days) * 86_400_000
        let writer = writer(db, at: now)
        for period in try withRestoredCopies(db, status.transaction) {
            try writer.moveExpiration(of: period, to: effective)
        }
        let done = RenewalExtension(
            requestIdentifier: request, originalTransactionID: originalID, periodID: status.transaction.id,
            days: days, reason: reason, effectiveDate: Date(ledgerMilliseconds: effective))
        try db.execute(
            sql: """
                INSERT INTO renewal_extensions
                    (request_identifier, original_transaction_id, period_id, days, reason, at, effective_date)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [request, Int64(originalID), Int64(done.periodID), days, reason, now, effective])
        try notify(writer, .renewalExtended, about: try PaymentTransaction.fetchOne(db, id: done.periodID))
        return done
    }

    private static func renewalExtension(_ db: Database, request: String, original: UInt64) throws -> RenewalExtension?
    {
        try Row.fetchOne(
            db, sql: "SELECT * FROM renewal_extensions WHERE request_identifier = ? AND original_transaction_id = ?",
            arguments: [request, Int64(original)]
        ).map(renewalExtension)
    }

    private static func renewalExtension(_ row: Row) -> RenewalExtension {
        RenewalExtension(
            requestIdentifier: row["request_identifier"],
            originalTransactionID: UInt64(row["original_transaction_id"] as Int64),
            periodID: UInt64(row["period_id"] as Int64), days: row["days"], reason: row["reason"],
            effectiveDate: Date(ledgerMilliseconds: row["effective_date"]))
    }

    private static func massRenewalExtension(
        _ db: Database, app: Int64, request: String
    ) throws -> MassRenewalExtension? {
        try Row.fetchOne(
            db, sql: "SELECT * FROM mass_renewal_extensions WHERE app_id = ? AND request_identifier = ?",
            arguments: [app, request]
        ).map { row in
            let storefronts: String = row["storefronts"] ?? ""
            return MassRenewalExtension(
                requestIdentifier: row["request_identifier"], productID: row["product_id"], days: row["days"],
                reason: row["reason"],
                storefronts: storefronts.isEmpty ? [] : storefronts.split(separator: ",").map(String.init),
                date: Date(ledgerMilliseconds: row["at"]), succeededCount: row["succeeded"],
                failedCount: row["failed"],
                completeDate: (row["completed_at"] as Int64?).map(Date.init(ledgerMilliseconds:)))
        }
    }
}
