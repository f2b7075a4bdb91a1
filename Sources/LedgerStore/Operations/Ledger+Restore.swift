import Foundation
import GRDB

extension Ledger {
    /// Creates one new `restored` transaction for every purchase of a non-consumable or an
    /// auto-renewable subscription (renewals included; with `includeNonRenewing`, non-renewing
    /// subscriptions too) that is not revoked, all in one commit: all or none. Each points at
    /// what it restores (`originalID`, `originalPurchaseDate`, `restoredFromID`); its purchase
    /// date is the restore's time. Consumables are never restored.
    ///
    /// - Parameter applicationUsername: when given, only that account's purchases are restored:
    ///   those made with this `applicationUsername`, or, when it is a UUID, with this app
    ///   account token. Any non-empty string of at most 1,024 bytes is an account.
    /// - Returns: the restored transactions, in the order of the purchases; empty when nothing
    ///   was restorable.
    /// - Throws: `PaymentQueueError.invalidApplicationUsername` for an empty or too long name.
    package func restorePurchases(applicationUsername: String? = nil, includeNonRenewing: Bool = false) throws -> [PaymentTransaction] {
        if let applicationUsername { try Self.validateApplicationUsername(applicationUsername) }
        return try write { db in
            let now = try storeNow(db)
            var types = [ProductType.nonConsumable, .autoRenewable].map(\.rawValue)
            if includeNonRenewing { types.append(ProductType.nonRenewable.rawValue) }
            let placeholders = types.map { _ in "?" }.joined(separator: ", ")
            var sql = "WHERE state = 'purchased' AND revocation_date IS NULL AND product_type IN (\(placeholders))"
            var arguments = StatementArguments(types)
            if let name = applicationUsername {
                sql += " AND (application_username = ? OR app_account_token = ?)"
                arguments += [name, UUID(uuidString: name)?.uuidString]
            }
            // Sources are read a page at a time (bounded memory); the restored rows are
            // `restored`, so the pages never see them.
            var restored: [PaymentTransaction] = []
            var ids = try IDBlock(db, generator: configuration.idGenerator)
            var after: Int64 = 0
            while true {
                // In id order from where the last page ended: the rowid range, not an index that
                // would make each page sort every source again.
                let page = try PaymentTransaction.fetchAll(
                    db, sql: "NOT INDEXED " + sql + " AND id > ? ORDER BY id LIMIT 1000", arguments: arguments + [after])
                guard let last = page.last else { break }
                after = Int64(last.id)
                for source in page {
                    var row = NewTransactionRow(copying: source, state: .restored, at: now)
                    row.original = (source.originalID, source.originalPurchaseDate.ledgerMilliseconds)
                    row.expirationDate = source.expirationDate?.ledgerMilliseconds
                    row.isUpgraded = source.isUpgraded
                    row.restoredFrom = source.id
                    restored.append(row.transaction(id: try insert(db, row, id: try ids.next())))
                }
            }
            try ids.save(db)
            return restored
        }
    }
}
