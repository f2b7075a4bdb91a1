import Foundation
import GRDB

extension PaymentTransaction {
    static let selection = """
        SELECT id, original_id, product_id, product_type, state, is_finished, quantity, purchase_date,
               original_purchase_date, expiration_date, revocation_date, revocation_reason, is_upgraded,
               app_account_token, error_code, error_message, reason, subscription_group_id, storefront,
               environment, idempotency_key, restored_from, created_at, updated_at, finished_at, delivery_count,
               last_delivered_at, application_username, offer_type, offer_id, offer_payment_mode, offer_period
        FROM transactions
        """

    /// Decodes a row of `selection`, by column position: the ledger reads many rows (a launch,
    /// a restore's pages), and looking columns up by name is most of that cost.
    init(row: Row) throws {
        func date(_ index: Int) -> Date? {
            (row[index] as Int64?).map(Date.init(ledgerMilliseconds:))
        }
        func decoded<T: RawRepresentable>(_ index: Int, as: T.Type) throws -> T where T.RawValue == String {
            let raw: String = row[index]
            guard let value = T(rawValue: raw) else {
                throw LedgerError.corrupted(path: "", reason: "unexpected value \"\(raw)\" in column \(index) of a transaction")
            }
            return value
        }
        var error: TransactionError?
        if let code = row[14] as Int? {
            error = TransactionError(code: StoreErrorCode(rawValue: code) ?? .unknown, message: row[15] as String?)
        }
        self.init(
            id: UInt64(row[0] as Int64),
            originalID: UInt64(row[1] as Int64),
            productID: row[2],
            productType: try decoded(3, as: ProductType.self),
            state: try decoded(4, as: TransactionState.self),
            isFinished: row[5],
            quantity: row[6],
            purchaseDate: date(7)!,
            originalPurchaseDate: date(8)!,
            expirationDate: date(9),
            revocationDate: date(10),
            revocationReason: row[11],
            isUpgraded: row[12],
            appAccountToken: (row[13] as String?).flatMap(UUID.init(uuidString:)),
            applicationUsername: row[27],
            error: error,
            reason: try decoded(16, as: Reason.self),
            subscriptionGroupID: row[17],
            offer: try Self.offer(row),
            storefront: row[18],
            environment: row[19],
            idempotencyKey: row[20],
            restoredFromID: (row[21] as Int64?).map(UInt64.init),
            createdAt: date(22)!,
            updatedAt: date(23)!,
            finishedAt: date(24),
            deliveryCount: row[25],
            lastDeliveredAt: date(26))
    }

    /// The offer columns (28 to 31) of a row of `selection`.
    private static func offer(_ row: Row) throws -> TransactionOffer? {
        guard let type = row[28] as String? else { return nil }
        guard let offerType = TransactionOffer.OfferType(rawValue: type),
              let mode = (row[30] as String?).flatMap(TransactionOffer.PaymentMode.init(rawValue:)),
              let period = (row[31] as String?).flatMap(SubscriptionPeriod.init(iso8601:))
        else { throw LedgerError.corrupted(path: "", reason: "incomplete offer on transaction \(row[0] as Int64)") }
        return TransactionOffer(type: offerType, id: row[29], paymentMode: mode, period: period)
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
