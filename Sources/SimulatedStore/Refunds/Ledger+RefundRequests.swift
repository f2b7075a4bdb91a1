import Foundation
import GRDB
package import LedgerModel

/// Refund requests (migration 14): a customer asks, the App Store grants or declines.
extension Ledger {
    /// The refund requests, by transaction id: at most `limit` (1,000 by default), of the
    /// transactions after `afterID`, one page at a time; this value's customer's (every
    /// customer's, for a value that names none).
    package func refundRequests(after afterID: UInt64 = 0, limit: Int = 1_000) throws -> [RefundRequest] {
        let scope = scopeCondition
        // The whole store's for a value that names no one: no lookup in the transactions.
        let owned =
            scope.arguments.isEmpty ? "" : "AND transaction_id IN (SELECT id FROM transactions WHERE \(scope.sql))"
        return try read { db in
            try Row.fetchAll(
                db,
                sql: """
                    \(Self.refundRequestColumns) WHERE transaction_id > ? \(owned)
                    ORDER BY transaction_id LIMIT ?
                    """,
                arguments: [Int64(clamping: afterID)] + scope.arguments + [max(0, limit)]
            ).map(Self.refundRequest)
        }
    }

    /// The refund request of transaction `id`; `nil` when none was made.
    package func refundRequest(of id: UInt64) throws -> RefundRequest? {
        try read { db in
            try Row.fetchOne(
                db, sql: "\(Self.refundRequestColumns) WHERE transaction_id = ?", arguments: [try Self.storedID(id)]
            ).map(Self.refundRequest)
        }
    }

    private static let refundRequestColumns =
        "SELECT transaction_id, reason, requested_at, outcome, decided_at FROM refund_requests"

    private static func refundRequest(_ row: Row) -> RefundRequest {
        RefundRequest(
            transactionID: UInt64(row[0] as Int64), reason: RefundRequest.Reason(rawValue: row[1]) ?? .other,
            requestedAt: Date(ledgerMilliseconds: row[2]), outcome: RefundRequest.Outcome(rawValue: row[3]) ?? .pending,
            decidedAt: (row[4] as Int64?).map(Date.init(ledgerMilliseconds:)))
    }

    /// Records the customer's request for the refund of transaction `id` (a purchased or
    /// restored one, not refunded), replacing a decided one; a consumable's or an
    /// auto-renewable subscription's notifies `CONSUMPTION_REQUEST`. Returns the transaction.
    /// - Throws: `PaymentQueueError.unknownTransaction`; `StoreControlError.cannotRefund`,
    ///   `.alreadyRefunded`, `.nothingCharged`, `.refundRequestPending`.
    func requestRefund(_ db: Database, _ id: UInt64, reason: RefundRequest.Reason) throws -> PaymentTransaction {
        let transaction = try existingTransaction(db, id: id)
        guard transaction.state.canBeRevoked else { throw StoreControlError.cannotRefund(id, state: transaction.state) }
        guard transaction.revocationDate == nil else { throw StoreControlError.alreadyRefunded(id) }
        guard try !isRenewalChange(db, transaction) else { throw StoreControlError.nothingCharged(id) }
        guard try !hasPendingRefundRequest(db, id) else { throw StoreControlError.refundRequestPending(id) }
        let now = try storeNow(db)
        try db.execute(
            sql: """
                INSERT OR REPLACE INTO refund_requests (transaction_id, reason, requested_at, outcome, decided_at)
                VALUES (?, ?, ?, 'pending', NULL)
                """, arguments: [try Self.storedID(id), reason.rawValue, now])
        if transaction.productType == .consumable || transaction.productType == .autoRenewable {
            try notify(writer(db, at: now), .refundRequested, about: transaction, refundReason: reason)
        }
        return transaction
    }

    /// The App Store's decision on the pending refund request of transaction `id`: granted,
    /// the purchase is refunded (with its other copies, reason `other`: the customer asked);
    /// declined, it stays, and `REFUND_DECLINED` is notified.
    /// - Throws: `StoreControlError.noRefundRequest` when none waits; the refund's errors.
    func decideRefundRequest(
        _ db: Database, _ id: UInt64, _ decision: RefundRequest.Decision
    ) throws -> StoreActionOutcome {
        guard try hasPendingRefundRequest(db, id) else { throw StoreControlError.noRefundRequest(id) }
        // A refund settles the request as granted; 0 is StoreKit's `.other`.
        switch decision {
        case .grant:
            return StoreActionOutcome(transactions: try refund(db, id, reason: 0), notice: .revoked)
        case .grantProrated(let percentage):
            return StoreActionOutcome(
                transactions: try refund(db, id, reason: 0, prorated: percentage), notice: .revoked)
        case .decline:
            break
        }
        let now = try storeNow(db)
        try settleRefundRequests(db, of: [id], as: .declined, at: now)
        let transaction = try existingTransaction(db, id: id)
        try notify(writer(db, at: now), .refundDeclined, about: transaction)
        return StoreActionOutcome(transactions: [transaction], notice: .none)
    }

    private func hasPendingRefundRequest(_ db: Database, _ id: UInt64) throws -> Bool {
        try Bool.fetchOne(
            db, sql: "SELECT 1 FROM refund_requests WHERE transaction_id = ? AND outcome = 'pending'",
            arguments: [try Self.storedID(id)]) != nil
    }

    /// Decides the pending refund requests of `ids`, at `now` (or when asked, if the store's
    /// clock, which follows the system's, went back since).
    func settleRefundRequests(
        _ db: Database, of ids: [UInt64], as outcome: RefundRequest.Outcome, at now: Int64
    )
        throws
    {
        for id in ids {
            try db.execute(
                sql: """
                    UPDATE refund_requests SET outcome = ?, decided_at = MAX(?, requested_at)
                    WHERE transaction_id = ? AND outcome = 'pending'
                    """, arguments: [outcome.rawValue, now, try Self.storedID(id)])
        }
    }
}

/// Refund requests, as the customer's refund sheet and the store's controls make them.
extension Ledger {
    /// The part a prorated refund of transaction `id` refunded, in milliunits of a percent
    /// (Apple's `revocationPercentage`); `nil` when it was not refunded, or fully.
    package func revocationPercentage(of id: UInt64) throws -> Int? {
        try read { db in
            try Int.fetchOne(
                db, sql: "SELECT percentage FROM refund_portions WHERE transaction_id = ?",
                arguments: [try Self.storedID(id)])
        }
    }

    /// The parts of prorated refunds (migration 19) of the refunded transactions among
    /// `transactions`, by transaction id.
    func refundedPortions(_ db: Database, of transactions: [PaymentTransaction]) throws -> [UInt64: Int] {
        var portions: [UInt64: Int] = [:]
        let records = try records(db)
        for transaction in transactions where transaction.revocationDate != nil {
            if let row = try records.row(.refundPortions, key: Int64(transaction.id)) {
                portions[transaction.id] = row["percentage"]
            }
        }
        return portions
    }
}
