import Foundation
import GRDB

extension PaymentTransaction {
    static let selection = """
        SELECT id, original_id, product_id, product_type, state, is_finished, quantity, purchase_date,
               original_purchase_date, expiration_date, revocation_date, revocation_reason, is_upgraded,
               app_account_token, error_code, error_message, reason, subscription_group_id, storefront,
               environment, idempotency_key, restored_from, created_at, updated_at, finished_at, delivery_count,
               last_delivered_at
        FROM transactions
        """

    init(row: Row) throws {
        func date(_ column: String) -> Date? {
            (row[column] as Int64?).map(Date.init(ledgerMilliseconds:))
        }
        func decoded<T: RawRepresentable>(_ column: String, as: T.Type) throws -> T where T.RawValue == String {
            let raw: String = row[column]
            guard let value = T(rawValue: raw) else {
                throw LedgerError.corrupted(path: "", reason: "unexpected \(column) \"\(raw)\"")
            }
            return value
        }
        var error: TransactionError?
        if let code = row["error_code"] as Int? {
            error = TransactionError(
                code: StoreErrorCode(rawValue: code) ?? .unknown, message: row["error_message"] as String?)
        }
        self.init(
            id: UInt64(row["id"] as Int64),
            originalID: UInt64(row["original_id"] as Int64),
            productID: row["product_id"],
            productType: try decoded("product_type", as: ProductType.self),
            state: try decoded("state", as: TransactionState.self),
            isFinished: row["is_finished"],
            quantity: row["quantity"],
            purchaseDate: date("purchase_date")!,
            originalPurchaseDate: date("original_purchase_date")!,
            expirationDate: date("expiration_date"),
            revocationDate: date("revocation_date"),
            revocationReason: row["revocation_reason"],
            isUpgraded: row["is_upgraded"],
            appAccountToken: (row["app_account_token"] as String?).flatMap(UUID.init(uuidString:)),
            error: error,
            reason: try decoded("reason", as: Reason.self),
            subscriptionGroupID: row["subscription_group_id"],
            storefront: row["storefront"],
            environment: row["environment"],
            idempotencyKey: row["idempotency_key"],
            restoredFromID: (row["restored_from"] as Int64?).map(UInt64.init),
            createdAt: date("created_at")!,
            updatedAt: date("updated_at")!,
            finishedAt: date("finished_at"),
            deliveryCount: row["delivery_count"],
            lastDeliveredAt: date("last_delivered_at"))
    }

    static func fetchOne(_ db: Database, id: UInt64) throws -> PaymentTransaction? {
        guard id <= UInt64(Int64.max) else { return nil }
        return try Row.fetchOne(try db.cachedStatement(sql: selection + " WHERE id = ?"), arguments: [Int64(id)])
            .map(PaymentTransaction.init(row:))
    }

    static func fetchCursor(_ db: Database, sql suffix: String) throws -> some Cursor<PaymentTransaction> {
        try Row.fetchCursor(db, sql: selection + " " + suffix).map(PaymentTransaction.init(row:))
    }

    static func fetchAll(_ db: Database, sql suffix: String, arguments: StatementArguments = []) throws -> [PaymentTransaction] {
        try Row.fetchAll(try db.cachedStatement(sql: selection + " " + suffix), arguments: arguments).map(PaymentTransaction.init(row:))
    }
}

extension TransactionEvent {
    init(row: Row) throws {
        let kind: String = row["kind"]
        let to: String = row["to_state"]
        guard let kindValue = Kind(rawValue: kind), let toState = TransactionState(rawValue: to) else {
            throw LedgerError.corrupted(path: "", reason: "unexpected event \(kind) -> \(to)")
        }
        self.init(
            sequence: row["seq"],
            transactionID: UInt64(row["transaction_id"] as Int64),
            kind: kindValue,
            fromState: (row["from_state"] as String?).flatMap(TransactionState.init(rawValue:)),
            toState: toState,
            date: Date(ledgerMilliseconds: row["at"]),
            detail: row["detail"])
    }
}
