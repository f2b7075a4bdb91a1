import Foundation
import GRDB
public import LedgerModel

/// Which transactions `Ledger.transactions(matching:)` returns: oldest first (ascending id),
/// one page at a time.
public struct TransactionFilter: Sendable, Hashable {
    /// Only transactions in this state; `nil` for any state.
    public var state: TransactionState?
    /// Only transactions of this product; `nil` for any product.
    public var productID: String?
    /// Only transactions not finished yet (the queue).
    public var unfinishedOnly: Bool
    /// Only transactions whose id is greater than this one (the last id of the previous page).
    public var afterID: UInt64?
    /// At most this many transactions (a negative limit counts as 0); `nil` for no limit.
    public var limit: Int?
    /// Only this customer's: the ledger value's own (`Ledger.forCustomer(_:)`).
    var customerID: Int64?
    /// Only this app's: the ledger value's own (`Ledger.forApp(_:)`).
    var appID: Int64?

    /// A filter; the defaults select every transaction, in one page.
    public init(
        state: TransactionState? = nil, productID: String? = nil, unfinishedOnly: Bool = false,
        afterID: UInt64? = nil, limit: Int? = nil
    ) {
        self.state = state
        self.productID = productID
        self.unfinishedOnly = unfinishedOnly
        self.afterID = afterID
        self.limit = limit
    }
}

/// Who owns a page of transactions: customers' names and apps' bundle identifiers, by id.
package struct TransactionOwners: Sendable {
    package var customers: [Int64: String] = [:]
    package var apps: [Int64: String] = [:]

    package init() {}
}

/// How many transactions a ledger holds, for `ledger info`.
package struct LedgerCounts: Sendable, Hashable, Codable {
    /// Every transaction, finished or not.
    package var transactions: Int
    /// The transactions not finished yet: the queue's length.
    package var unfinished: Int
    /// Transactions per state, keyed by its raw value (`purchased`); a state with none is absent.
    package var byState: [String: Int]
    /// The products in the catalog.
    package var products: Int
    /// The entries of every transaction's history (`TransactionEvent`).
    package var events: Int
}

extension Ledger {
    /// The transaction with this id, or `nil`: this value's customer's only (another customer's
    /// is `nil`), any customer's for a value that names none.
    public func transaction(_ id: UInt64) throws -> PaymentTransaction? {
        try read { db in try PaymentTransaction.fetchOne(db, id: id).flatMap { isOwn($0) ? $0 : nil } }
    }

    /// The history of one transaction, in order.
    package func events(of id: UInt64) throws -> [TransactionEvent] {
        guard id <= UInt64(Int64.max) else { return [] }
        return try read { db in
            try Row.fetchAll(
                db,
                sql:
                    "SELECT seq, transaction_id, kind, from_state, to_state, at, detail FROM transaction_events WHERE transaction_id = ? ORDER BY seq",
                arguments: [Int64(id)]
            ).map(TransactionEvent.init(row:))
        }
    }

    /// The number of the history's last event (0 for none): where a listener for what happens
    /// next starts (`PaymentQueue.hearOtherDevices`).
    package func lastEventSequence() throws -> Int64 {
        try read { db in try Int64.fetchOne(db, sql: "SELECT MAX(seq) FROM transaction_events") ?? 0 }
    }

    /// The transactions with an id in `ids` after `after`, in id order, at most `limit` (the
    /// pages of a restore, read back to hand out).
    package func transactions(in ids: ClosedRange<UInt64>, after: UInt64, limit: Int) throws -> [PaymentTransaction] {
        try read { db in
            try PaymentTransaction.fetchAll(
                db, sql: "WHERE id > ? AND id <= ? ORDER BY id LIMIT ?",
                arguments: [Int64(max(after, ids.lowerBound - 1)), Int64(ids.upperBound), limit])
        }
    }

    /// The queue: every unfinished transaction of this value's customer (of every customer,
    /// for a value that names none), oldest first. Reads the partial index only.
    public func unfinishedTransactions() throws -> [PaymentTransaction] {
        let (condition, arguments) = scopeCondition
        return try read { db in
            try PaymentTransaction.fetchAll(
                db, sql: "WHERE \(condition) AND is_finished = 0 ORDER BY id", arguments: arguments)
        }
    }

    /// One page of transactions, oldest first.
    public func transactions(matching filter: TransactionFilter = .init()) throws -> [PaymentTransaction] {
        try read { db in try Self.transactions(db, matching: scoped(filter)) }
    }

    /// `filter`, for this value's customer and app when it names them.
    private func scoped(_ filter: TransactionFilter) -> TransactionFilter {
        var filter = filter
        filter.customerID = customerScope.id
        filter.appID = appScope.id
        return filter
    }

    /// Hands the transactions the filter selects to `page`, oldest first, at most `pageSize`
    /// at a time, all read in one snapshot, with their owners' names and apps' bundle
    /// identifiers and how many more match after the filter's limit (0 for a filter without
    /// one); returns that number. Memory holds one page, whatever the limit (`ledger list`).
    package func readTransactions(
        matching filter: TransactionFilter, pageSize: Int = 1_000,
        _ page: (_ transactions: [PaymentTransaction], _ owners: TransactionOwners, _ more: Int) throws -> Void
    ) throws -> Int {
        let filter = scoped(filter)
        return try read { db in
            let more = try filter.limit.map { max(0, try Self.count(db, matching: filter) - max(0, $0)) } ?? 0
            var remaining = filter.limit.map { max(0, $0) } ?? .max
            var next = filter
            while remaining > 0 {
                next.limit = min(remaining, max(1, pageSize))
                let transactions = try Self.transactions(db, matching: next)
                if !transactions.isEmpty {
                    var owners = TransactionOwners()
                    for customer in Set(transactions.map(\.customerID)) {
                        owners.customers[customer] = try Self.customerName(db, id: customer)
                    }
                    for app in Set(transactions.map(\.appID)) { owners.apps[app] = try Self.bundleID(db, app: app) }
                    try page(transactions, owners, more)
                }
                remaining -= transactions.count
                guard transactions.count == next.limit, let last = transactions.last else { break }
                next.afterID = last.id
            }
            return more
        }
    }

    private static func count(_ db: Database, matching filter: TransactionFilter) throws -> Int {
        let (condition, arguments) = condition(of: filter)
        return try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM transactions" + condition, arguments: arguments) ?? 0
    }

    private static func transactions(_ db: Database, matching filter: TransactionFilter) throws -> [PaymentTransaction]
    {
        var (sql, arguments) = condition(of: filter)
        sql += " ORDER BY id"
        if let limit = filter.limit {
            sql += " LIMIT ?"
            arguments += [max(0, limit)]
        }
        return try PaymentTransaction.fetchAll(db, sql: sql, arguments: arguments)
    }

    /// The filter's `WHERE` clause (empty when it selects everything), without its limit.
    private static func condition(of filter: TransactionFilter) -> (sql: String, arguments: StatementArguments) {
        var clauses: [String] = []
        var arguments: StatementArguments = []
        if let customer = filter.customerID {
            clauses.append("customer_id = ?")
            arguments += [customer]
        }
        if let app = filter.appID {
            clauses.append("app_id = ?")
            arguments += [app]
        }
        if let state = filter.state {
            clauses.append("state = ?")
            arguments += [state.rawValue]
        }
        if let product = filter.productID {
            clauses.append("product_id = ?")
            arguments += [product]
        }
        if filter.unfinishedOnly { clauses.append("is_finished = 0") }
        if let after = filter.afterID {
            clauses.append("id > ?")
            arguments += [Int64(clamping: after)]
        }
        return (clauses.isEmpty ? "" : " WHERE " + clauses.joined(separator: " AND "), arguments)
    }

    /// How many transactions, products and history events the ledger holds, read in one
    /// snapshot.
    package func counts() throws -> LedgerCounts {
        try read { db in
            var byState: [String: Int] = [:]
            for row in try Row.fetchAll(
                try db.cachedStatement(sql: "SELECT state, COUNT(*) AS n FROM transactions GROUP BY state"))
            {
                byState[row["state"]] = row["n"]
            }
            return LedgerCounts(
                transactions: try Int.fetchOne(try db.cachedStatement(sql: "SELECT COUNT(*) FROM transactions")) ?? 0,
                unfinished: try Int.fetchOne(
                    try db.cachedStatement(sql: "SELECT COUNT(*) FROM transactions WHERE is_finished = 0")) ?? 0,
                byState: byState,
                products: try Int.fetchOne(try db.cachedStatement(sql: "SELECT COUNT(*) FROM products")) ?? 0,
                events: try Int.fetchOne(try db.cachedStatement(sql: "SELECT COUNT(*) FROM transaction_events")) ?? 0)
        }
    }
}

extension Ledger {
    /// Every transaction, oldest first, for audits and crash checks (reads the whole history).
    public func allTransactions() throws -> [PaymentTransaction] {
        try transactions(matching: TransactionFilter())
    }
}
