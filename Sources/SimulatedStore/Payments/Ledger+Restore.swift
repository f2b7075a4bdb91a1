import Foundation
import GRDB
import LedgerModel

/// Restores: the restorable purchases copied as `restored` transactions.
extension Ledger {
    /// Creates one new `restored` transaction for every purchase of a non-consumable or an
    /// auto-renewable subscription (renewals included; with `includeNonRenewing`, non-renewing
    /// subscriptions too) that is not revoked, all in one commit: all or none. Each points at
    /// what it restores (`originalID`, `originalPurchaseDate`, `restoredFromID`); its purchase
    /// date is the restore's time. Consumables are never restored.
    ///
    /// Nothing is held in memory per restored transaction: the copies are made by SQLite in one
    /// statement when the new ids follow each other (the sequential generator), else one at a
    /// time from pages of sources. With deliveries recorded, each copy's delivery to observers
    /// is recorded in the same commit (the caller then hands them out, `transactions(in:after:limit:)`).
    ///
    /// - Parameters:
    ///   - applicationUsername: when given, only that account's purchases are restored: those
    ///     made with this `applicationUsername`, or, when it is a UUID, with this app account
    ///     token. Any string of at most 1,024 bytes is an account, "" included.
    ///   - includeNonRenewing: whether non-renewing subscriptions are restored too.
    ///   - delivery: whether each copy's delivery to observers is recorded.
    /// - Returns: the ids of the restored transactions (in the order of the purchases they
    ///   copy; every transaction with an id in the range is one of them) and how many there are.
    /// - Throws: `PaymentQueueError.invalidApplicationUsername` for a name over 1,024 bytes.
    package func restorePurchases(
        applicationUsername: String? = nil, includeNonRenewing: Bool = false, delivery: DeliveryRecording = .notRecorded
    ) throws -> RestoreBatch {
        if let applicationUsername { try Self.validateApplicationUsername(applicationUsername) }
        return try write { db in
            try restorePurchases(
                db, applicationUsername: applicationUsername, includeNonRenewing: includeNonRenewing, delivery: delivery
            )
        }
    }

    /// `restorePurchases(applicationUsername:includeNonRenewing:delivery:)` in the next group commit.
    package func restorePurchases(
        applicationUsername: String? = nil, includeNonRenewing: Bool = false, delivery: DeliveryRecording = .notRecorded
    ) async throws -> RestoreBatch {
        if let applicationUsername { try Self.validateApplicationUsername(applicationUsername) }
        return try await grouped { db in
            try self.restorePurchases(
                db, applicationUsername: applicationUsername, includeNonRenewing: includeNonRenewing, delivery: delivery
            )
        }
    }

    private func restorePurchases(
        _ db: Database, applicationUsername: String?, includeNonRenewing: Bool, delivery: DeliveryRecording
    ) throws -> RestoreBatch {
        let writer = try writer(db, delivery: delivery)
        var types = [ProductType.nonConsumable, .autoRenewable].map(\.rawValue)
        if includeNonRenewing { types.append(ProductType.nonRenewable.rawValue) }
        let placeholders = types.map { _ in "?" }.joined(separator: ", ")
        // The customer's own purchases in this app, on whatever device they were made.
        var sources =
            "\(Owner.condition) AND state = 'purchased' AND revocation_date IS NULL AND product_type IN (\(placeholders)) "
            + "AND " + Self.notARenewalChange
        var arguments = try owner().arguments
        arguments += StatementArguments(types)
        if let name = applicationUsername {
            sources += " AND (application_username = ? OR app_account_token = ?)"
            arguments += [name, UUID(uuidString: name)?.uuidString]
        }
        let count =
            try Int.fetchOne(db, sql: "SELECT count(*) FROM transactions WHERE " + sources, arguments: arguments)
            ?? 0
        guard count > 0 else { return RestoreBatch(ids: nil, count: 0) }
        // A copy of a row edited outside the ledger would carry the edit into a new history.
        try writer.vouch(where: sources, arguments: arguments)
        var ids = try writer.ids()
        let copies: ClosedRange<UInt64>
        if let first = ids.contiguousRun(of: count) {
            copies = first...(first + UInt64(count) - 1)
            try writer.insertRestoredCopies(sources: sources, arguments: arguments, firstID: first, count: count)
        } else {
            copies = try copyEach(writer, sources: sources, arguments: arguments, ids: &ids)
        }
        try ids.save(db)
        if delivery == .recorded {
            try writer.recordDelivery(
                where: "id BETWEEN ? AND ?", arguments: [Int64(copies.lowerBound), Int64(copies.upperBound)])
        }
        return RestoreBatch(ids: copies, count: count)
    }

    /// The copies made one at a time (ids that do not follow each other), from pages of sources
    /// read in id order: the copies are `restored`, so the pages never see them.
    private func copyEach(
        _ writer: TransactionWriter, sources: String, arguments: StatementArguments,
        ids: inout TransactionWriter.IDBlock
    ) throws -> ClosedRange<UInt64> {
        var first: UInt64?
        var last: UInt64 = 0
        var after: Int64 = 0
        while true {
            let page = try PaymentTransaction.fetchAll(
                writer.db, sql: "NOT INDEXED WHERE " + sources + " AND id > ? ORDER BY id LIMIT 1000",
                arguments: arguments + [after])
            guard let end = page.last else { break }
            after = Int64(end.id)
            for source in page {
                var row = NewTransactionRow(copying: source, state: .restored, at: writer.now)
                row.original = (source.originalID, source.originalPurchaseDate.ledgerMilliseconds)
                row.expirationDate = source.expirationDate?.ledgerMilliseconds
                row.isUpgraded = source.isUpgraded
                row.restoredFrom = source.id
                last = try writer.insert(row, id: try ids.next())
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
