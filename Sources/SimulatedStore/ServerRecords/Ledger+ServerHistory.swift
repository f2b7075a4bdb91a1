package import Foundation
import GRDB
package import LedgerModel

/// Which of a customer's transactions the App Store's server lists (the App Store Server API's
/// history and refund history), one page at a time.
///
/// The server records what the App Store charged or refunded: purchased transactions
/// (purchases and renewals, refunded or not). A payment that failed, waits for Ask to Buy or is
/// still purchasing never reached it, one that only changed a subscription's next renewal (a
/// downgrade) was no transaction of the App Store's, and a restored transaction is the device's copy of a
/// purchase the list has already. Pages follow when each transaction was last modified, then the
/// id, as Apple's history sorts by "recently modified" date: a server that syncs by revision finds
/// a refund made after it read a transaction, listed again after its revision. When is the
/// sequence of the transaction's last event in the hash chain (every change of a row is followed
/// by its event: charged, refunded or reinstated, upgraded, its expiration moved, delivered or
/// finished on the device), which only grows, whatever the store's clock does (a fixed clock, two
/// changes in one millisecond).
package struct ServerHistoryQuery: Sendable, Hashable {
    /// A place in the list: the last transaction of a page.
    package struct Position: Sendable, Hashable {
        /// When that transaction was last modified: the sequence of its last event.
        package var modified: Int64
        /// Its id.
        package var id: UInt64

        /// The place of the transaction `id` whose last event is `modified`.
        package init(modified: Int64, id: UInt64) {
            self.modified = modified
            self.id = id
        }
    }

    /// Only the transactions after this place (before it, when `descending`).
    package var after: Position?
    /// Newest first instead of oldest first.
    package var descending = false
    /// Only transactions bought at or after this date.
    package var startDate: Date?
    /// Only transactions bought before this date.
    package var endDate: Date?
    /// Only these products (any, when empty).
    package var productIDs: [String] = []
    /// Only these product types (any, when empty).
    package var productTypes: [ProductType] = []
    /// Only these subscription groups (any, when empty).
    package var subscriptionGroupIDs: [String] = []
    /// Only refunded transactions (`true`), or only the others (`false`); both when `nil`.
    package var revoked: Bool?
    /// Only the purchases a family member shared (`true`: `inAppOwnershipType` FAMILY_SHARED), or
    /// only the customer's own (`false`: PURCHASED); both when `nil`.
    package var familyShared: Bool?
    /// Leave out consumables the app finished and that were not refunded (Get Transaction
    /// History's first version).
    package var excludingFinishedConsumables = false
    /// At most this many (1 to 1,000).
    package var limit = 20

    /// A query of every transaction the server records, oldest first, 20 at a time.
    package init() {}
}

/// The histories the App Store Server API answers (Get Transaction History, Look Up Order ID).
extension Ledger {
    /// One page of a history: its transactions, whether more follow, and the place of its last
    /// (what a revision after it names), read in one snapshot.
    package struct Page {
        package var transactions: [PaymentTransaction]
        package var hasMore: Bool
        package var last: ServerHistoryQuery.Position?
    }

    /// The transactions of this value's customer `query` selects, in its order: at most
    /// `query.limit` of them.
    package func serverHistory(_ query: ServerHistoryQuery) throws -> Page {
        let modified = Self.lastModified
        let owner = try owner()
        var conditions = [Owner.condition, "state = 'purchased'", Self.notARenewalChange]
        var arguments: [(any DatabaseValueConvertible)?] = [owner.customer, owner.app]
        if let after = query.after {
            conditions.append(
                query.descending
                    ? "(\(modified) < ? OR (\(modified) = ? AND id < ?))"
                    : "(\(modified) > ? OR (\(modified) = ? AND id > ?))")
            arguments += [after.modified, after.modified, Int64(clamping: after.id)]
        }
        if let start = query.startDate {
            conditions.append("purchase_date >= ?")
            arguments.append(start.ledgerMilliseconds)
        }
        if let end = query.endDate {
            conditions.append("purchase_date < ?")
            arguments.append(end.ledgerMilliseconds)
        }
        func any(_ column: String, _ values: [String]) {
            guard !values.isEmpty else { return }
            conditions.append(column + " IN (" + values.map { _ in "?" }.joined(separator: ", ") + ")")
            arguments += values.map { $0 }
        }
        any("product_id", query.productIDs)
        any("product_type", query.productTypes.map(\.rawValue))
        any("subscription_group_id", query.subscriptionGroupIDs)
        if let revoked = query.revoked {
            conditions.append(revoked ? "revocation_date IS NOT NULL" : "revocation_date IS NULL")
        }
        if let familyShared = query.familyShared {
            conditions.append(
                (familyShared ? "" : "NOT ") + "original_id IN (SELECT original_transaction_id FROM family_shares)")
        }
        if query.excludingFinishedConsumables {
            conditions.append("NOT (product_type = 'consumable' AND is_finished = 1 AND revocation_date IS NULL)")
        }
        let order = query.descending ? "DESC" : "ASC"
        let limit = min(max(query.limit, 1), 1_000)
        return try read { db in
            // One more than the page: whether more follow.
            let read = try PaymentTransaction.fetchAll(
                db,
                sql: "WHERE " + conditions.joined(separator: " AND ")
                    + " ORDER BY \(modified) \(order), id \(order) LIMIT \(limit + 1)",
                arguments: StatementArguments(arguments))
            let page = Array(read.prefix(limit))
            let last = try page.last.map { transaction in
                ServerHistoryQuery.Position(
                    modified: try Int64.fetchOne(
                        db, sql: "SELECT MAX(seq) FROM transaction_events WHERE transaction_id = ?",
                        arguments: [Int64(transaction.id)]) ?? 0,
                    id: transaction.id)
            }
            return Page(transactions: page, hasMore: read.count > limit, last: last)
        }
    }

    /// When a row of `transactions` was last modified: the sequence of its last event (an index
    /// seek, `transaction_events_by_transaction`).
    private static let lastModified =
        "(SELECT MAX(seq) FROM transaction_events WHERE transaction_id = transactions.id)"
}
