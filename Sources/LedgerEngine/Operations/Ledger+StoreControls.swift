import Foundation
package import LedgerModel
import GRDB

extension Ledger {
    /// Refunds a purchased or restored transaction (finished or not): sets its revocation date
    /// and reason; its state does not change. A refund is of the purchase, so the purchase and
    /// every restored copy of it are revoked together, in one commit.
    /// - Parameter reason: StoreKit's `Transaction.RevocationReason` raw value (0 other, 1 developer issue).
    /// - Returns: the transaction asked for first, then the others the refund revoked.
    /// - Throws: `PaymentQueueError.unknownTransaction`, `StoreControlError.cannotRefund`, `.alreadyRefunded`.
    package func refund(_ id: UInt64, reason: Int) throws -> [PaymentTransaction] {
        try write { db in
            let transaction = try existingTransaction(db, id: id)
            guard transaction.state.canBeRevoked else {
                throw StoreControlError.cannotRefund(id, state: transaction.state)
            }
            guard transaction.revocationDate == nil else { throw StoreControlError.alreadyRefunded(id) }
            let writer = try writer(db)
            let purchase = transaction.restoredFromID ?? transaction.id
            let related = try PaymentTransaction.fetchAll(
                db, sql: "WHERE (id = ? OR restored_from = ?) AND revocation_date IS NULL AND id <> ? ORDER BY id",
                arguments: [Int64(purchase), Int64(purchase), Int64(id)])
            for revoked in [transaction] + related { try writer.revoke(revoked, reason: reason) }
            return try ([transaction] + related).map { try PaymentTransaction.fetchOne(db, id: $0.id)! }
        }
    }

    /// Resolves the issue of an interrupted purchase. When its failed transaction is finished
    /// already, the replacement purchase is created now (`isNew`); otherwise it is created when
    /// the app finishes the failed one. Resolving again returns the replacement made before (or
    /// none, if it was deleted) and creates nothing.
    /// - Throws: `StoreControlError.notInterrupted`.
    package func resolveInterruptedPurchase(_ id: UInt64) throws -> (replacement: PaymentTransaction?, isNew: Bool) {
        try write { db in try resolveInterruptedPurchase(db, id: id) }
    }

    /// Resolves the issue of transaction `id` (Xcode's "resolve issue"), in one commit: an
    /// interrupted purchase as `resolveInterruptedPurchase(_:)` does; an auto-renewable
    /// subscription whose latest period failed on a billing issue as `resolveBillingIssue(of:)`
    /// does (its renewal is new).
    /// - Throws: `StoreControlError.notInterrupted` for a transaction with neither issue,
    ///   `.noBillingIssue` when its billing retries are over.
    package func resolveIssue(ofTransaction id: UInt64) throws -> (replacement: PaymentTransaction?, isNew: Bool) {
        try write { db in
            if try !isInterruptedPurchase(db, id: id), let transaction = try PaymentTransaction.fetchOne(db, id: id),
                transaction.productType == .autoRenewable, try hasBillingIssue(db, productID: transaction.productID)
            {
                return (try resolveBillingIssue(db, productID: transaction.productID), true)
            }
            return try resolveInterruptedPurchase(db, id: id)
        }
    }

    private func resolveInterruptedPurchase(
        _ db: Database, id: UInt64
    ) throws -> (replacement: PaymentTransaction?, isNew: Bool) {
        guard
            let row = try Row.fetchOne(
                try db.cachedStatement(
                    sql: "SELECT replacement_id FROM interrupted_purchases WHERE transaction_id = ?"),
                arguments: [try Self.storedID(id)])
        else { throw StoreControlError.notInterrupted(id) }
        if let existing = row["replacement_id"] as Int64? {
            return (try PaymentTransaction.fetchOne(db, id: UInt64(existing)), false)
        }
        try db.run(
            sql: "UPDATE interrupted_purchases SET resolved = 1 WHERE transaction_id = ?", arguments: [Int64(id)])
        let replacement = try replaceInterruptedPurchaseIfReady(try writer(db), id: id)
        return (replacement, replacement != nil)
    }

    /// Whether transaction `id` is an interrupted purchase (its failure waits for the user).
    public func isInterruptedPurchase(_ id: UInt64) throws -> Bool {
        try read { db in try isInterruptedPurchase(db, id: id) }
    }

    private func isInterruptedPurchase(_ db: Database, id: UInt64) throws -> Bool {
        guard let stored = Int64(exactly: id) else { return false }  // no transaction has it
        let lookup = try FastStatement(db, Self.interruptedLookup)
        lookup.bind(1, stored)
        return try lookup.first { _ in true } != nil
    }

    private static let interruptedLookup = LedgerSQL("SELECT 1 FROM interrupted_purchases WHERE transaction_id = ?")
    private static let replacementLookup = LedgerSQL(
        "SELECT resolved, replacement_id FROM interrupted_purchases WHERE transaction_id = ?")

    /// The ids of interrupted purchases and whether each is resolved.
    public func interruptedPurchases() throws -> [(transactionID: UInt64, resolved: Bool, replacementID: UInt64?)] {
        try read { db in
            try Row.fetchAll(
                try db.cachedStatement(
                    sql:
                        "SELECT transaction_id, resolved, replacement_id FROM interrupted_purchases ORDER BY transaction_id"
                )
            )
            .map {
                (
                    UInt64($0["transaction_id"] as Int64), $0["resolved"],
                    ($0["replacement_id"] as Int64?).map(UInt64.init)
                )
            }
        }
    }

    /// Creates the replacement of an interrupted purchase once it is finished and resolved.
    func replaceInterruptedPurchaseIfReady(_ writer: TransactionWriter, id: UInt64) throws -> PaymentTransaction? {
        let db = writer.db
        let lookup = try FastStatement(db, Self.replacementLookup)
        lookup.bind(1, Int64(id))
        guard let ready = try lookup.first({ $0.bool(0) && $0.isNull(1) }), ready,
            let interrupted = try PaymentTransaction.fetchOne(db, id: id), interrupted.isFinished
        else { return nil }
        // Through `purchasing`, like any payment, so that subscriptions follow their group's rules.
        var replacement = NewTransactionRow(copying: interrupted, state: .purchasing, at: writer.now)
        replacement.planned = (.purchased, nil)
        let replacementID = try writer.insert(replacement).id
        try db.run(
            sql: "UPDATE interrupted_purchases SET replacement_id = ? WHERE transaction_id = ?",
            arguments: [Int64(replacementID), Int64(id)])
        return try applyPlannedOutcome(writer, id: replacementID)
    }

    /// Deletes every transaction, unfinished ones included (unlike Xcode's reset): their rows
    /// go, their histories stay, each closed by a `deleted` event. Ids are not reused
    /// afterwards. Returns how many were deleted.
    @discardableResult
    package func clearTransactions() throws -> Int {
        try write { db in
            let count = try Int.fetchOne(try db.cachedStatement(sql: "SELECT COUNT(*) FROM transactions")) ?? 0
            try writer(db).delete(where: "1")
            return count
        }
    }

    /// Deletes one transaction: its row goes, its history stays, closed by a `deleted` event.
    /// Like Xcode's `deleteTransaction`, it leaves the
    /// renewals and restored copies that point at it (their `originalID`) as they are.
    /// - Throws: `PaymentQueueError.unknownTransaction`.
    package func deleteTransaction(_ id: UInt64) throws {
        try write { db in
            _ = try existingTransaction(db, id: id)
            try writer(db).delete(where: "id = ?", arguments: [Int64(id)])
        }
    }
}
