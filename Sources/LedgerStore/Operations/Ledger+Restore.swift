import Foundation
import GRDB

extension Ledger {
    /// Creates one new `restored` transaction for every purchase of a non-consumable or an
    /// auto-renewable subscription (renewals included; with `includeNonRenewing`, non-renewing
    /// subscriptions too) that is not revoked, all in one commit: all or none. Each points at
    /// what it restores (`originalID`, `originalPurchaseDate`, `restoredFromID`); its purchase
    /// date is the restore's time. Consumables are never restored.
    ///
    /// Nothing is held in memory per restored transaction: the copies are made by SQLite in one
    /// statement when the new ids follow each other (the sequential generator), else one at a
    /// time from pages of sources. With `recordingDelivery`, each copy's delivery to observers
    /// is recorded in the same commit (the caller then hands them out, `transactions(in:after:limit:)`).
    ///
    /// - Parameter applicationUsername: when given, only that account's purchases are restored:
    ///   those made with this `applicationUsername`, or, when it is a UUID, with this app
    ///   account token. Any non-empty string of at most 1,024 bytes is an account.
    /// - Returns: the ids of the restored transactions (in the order of the purchases they
    ///   copy; every transaction with an id in the range is one of them) and how many there are.
    /// - Throws: `PaymentQueueError.invalidApplicationUsername` for an empty or too long name.
    package func restorePurchases(
        applicationUsername: String? = nil, includeNonRenewing: Bool = false, recordingDelivery: Bool = false
    ) throws -> RestoreBatch {
        if let applicationUsername { try Self.validateApplicationUsername(applicationUsername) }
        return try write { db in
            let now = try storeNow(db)
            var types = [ProductType.nonConsumable, .autoRenewable].map(\.rawValue)
            if includeNonRenewing { types.append(ProductType.nonRenewable.rawValue) }
            let placeholders = types.map { _ in "?" }.joined(separator: ", ")
            var sources = "state = 'purchased' AND revocation_date IS NULL AND product_type IN (\(placeholders))"
            var arguments = StatementArguments(types)
            if let name = applicationUsername {
                sources += " AND (application_username = ? OR app_account_token = ?)"
                arguments += [name, UUID(uuidString: name)?.uuidString]
            }
            let count = try Int.fetchOne(db, sql: "SELECT count(*) FROM transactions WHERE " + sources, arguments: arguments) ?? 0
            guard count > 0 else { return RestoreBatch(ids: nil, count: 0) }
            var ids = try IDBlock(db, generator: configuration.idGenerator)
            let copies: ClosedRange<UInt64>
            if let first = ids.contiguousRun(of: count) {
                copies = first...(first + UInt64(count) - 1)
                try copyAll(db, sources: sources, arguments: arguments, firstID: first, at: now)
            } else {
                copies = try copyEach(db, sources: sources, arguments: arguments, ids: &ids, at: now)
            }
            try ids.save(db)
            if recordingDelivery {
                try recordDelivery(
                    db, where: "id BETWEEN ? AND ?", arguments: [Int64(copies.lowerBound), Int64(copies.upperBound)], at: now)
            }
            return RestoreBatch(ids: copies, count: count)
        }
    }

    /// The copies made by one statement: the n-th source (in id order) gets `firstID + n - 1`.
    private func copyAll(_ db: Database, sources: String, arguments: StatementArguments, firstID: UInt64, at now: Int64) throws {
        try db.execute(sql: """
            INSERT INTO transactions (
                id, original_id, product_id, product_type, state, quantity, purchase_date, original_purchase_date,
                expiration_date, app_account_token, reason, subscription_group_id, storefront, environment,
                restored_from, is_upgraded, created_at, updated_at, application_username,
                offer_type, offer_id, offer_payment_mode, offer_period)
            SELECT ? - 1 + ROW_NUMBER() OVER (ORDER BY id), original_id, product_id, product_type, 'restored', quantity,
                ?, original_purchase_date, expiration_date, app_account_token, 'purchase', subscription_group_id,
                storefront, ?, id, is_upgraded, ?, ?, application_username,
                offer_type, offer_id, offer_payment_mode, offer_period
            FROM transactions NOT INDEXED WHERE \(sources) ORDER BY id
            """, arguments: [Int64(firstID), now, Self.environment, now, now] + arguments)
        try db.execute(sql: """
            INSERT INTO transaction_events (transaction_id, kind, from_state, to_state, at)
            SELECT id, 'created', NULL, 'restored', ? FROM transactions WHERE id >= ? ORDER BY id
            """, arguments: [now, Int64(firstID)])
    }

    /// The copies made one at a time (ids that do not follow each other), from pages of sources
    /// read in id order: the copies are `restored`, so the pages never see them.
    private func copyEach(
        _ db: Database, sources: String, arguments: StatementArguments, ids: inout IDBlock, at now: Int64
    ) throws -> ClosedRange<UInt64> {
        var first: UInt64?, last: UInt64 = 0
        var after: Int64 = 0
        while true {
            let page = try PaymentTransaction.fetchAll(
                db, sql: "NOT INDEXED WHERE " + sources + " AND id > ? ORDER BY id LIMIT 1000", arguments: arguments + [after])
            guard let end = page.last else { break }
            after = Int64(end.id)
            for source in page {
                var row = NewTransactionRow(copying: source, state: .restored, at: now)
                row.original = (source.originalID, source.originalPurchaseDate.ledgerMilliseconds)
                row.expirationDate = source.expirationDate?.ledgerMilliseconds
                row.isUpgraded = source.isUpgraded
                row.restoredFrom = source.id
                last = try insert(db, row, id: try ids.next())
                first = first ?? last
            }
        }
        return first!...last
    }
}

/// The transactions one restore created: every transaction whose id is in `ids`.
package struct RestoreBatch: Sendable, Equatable {
    package let ids: ClosedRange<UInt64>?
    package let count: Int

    package init(ids: ClosedRange<UInt64>?, count: Int) {
        self.ids = ids
        self.count = count
    }
}
