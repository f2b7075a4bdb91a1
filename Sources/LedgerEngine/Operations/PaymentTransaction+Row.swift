import Foundation
import LedgerModel
import GRDB

extension PaymentTransaction {
    /// The columns `init(_:)` decodes, in its order.
    static let columnNames = [
        "id", "original_id", "product_id", "product_type", "state", "is_finished", "quantity", "purchase_date",
        "original_purchase_date", "expiration_date", "revocation_date", "revocation_reason", "is_upgraded",
        "app_account_token", "error_code", "error_message", "reason", "subscription_group_id", "storefront",
        "environment", "idempotency_key", "restored_from", "created_at", "updated_at", "finished_at", "delivery_count",
        "last_delivered_at", "application_username", "offer_type", "offer_id", "offer_payment_mode", "offer_period",
    ]

    static let selection = "SELECT " + columnNames.joined(separator: ", ") + " FROM transactions"

    /// Decodes a row of `selection`, by column position: the ledger reads many rows (a launch,
    /// a restore's pages), and looking columns up by name is most of that cost.
    init(_ row: FastStatement.Columns) throws {
        func date(_ index: Int32) -> Date? {
            row.optionalInt64(index).map(Date.init(ledgerMilliseconds:))
        }
        func decoded<T: RawRepresentable>(_ index: Int32, as: T.Type) throws -> T where T.RawValue == String {
            let raw = row.string(index)
            guard let value = T(rawValue: raw) else {
                throw DamagedRow(reason: "unexpected value \"\(raw)\" in column \(index) of a transaction")
            }
            return value
        }
        var error: TransactionError?
        if let code = row.optionalInt(14) {
            error = TransactionError(code: StoreErrorCode(rawValue: code) ?? .unknown, message: row.optionalString(15))
        }
        self.init(
            id: UInt64(row.int64(0)),
            originalID: UInt64(row.int64(1)),
            productID: row.string(2),
            productType: try decoded(3, as: ProductType.self),
            state: try decoded(4, as: TransactionState.self),
            isFinished: row.bool(5),
            quantity: row.int(6),
            purchaseDate: date(7)!,
            originalPurchaseDate: date(8)!,
            expirationDate: date(9),
            revocationDate: date(10),
            revocationReason: row.optionalInt(11),
            isUpgraded: row.bool(12),
            appAccountToken: row.optionalString(13).flatMap(UUID.init(uuidString:)),
            applicationUsername: row.optionalString(27),
            error: error,
            reason: try decoded(16, as: Reason.self),
            subscriptionGroupID: row.optionalString(17),
            offer: try Self.offer(row),
            storefront: row.string(18),
            environment: row.string(19),
            idempotencyKey: row.optionalString(20),
            restoredFromID: row.optionalInt64(21).map(UInt64.init),
            createdAt: date(22)!,
            updatedAt: date(23)!,
            finishedAt: date(24),
            deliveryCount: row.int(25),
            lastDeliveredAt: date(26))
    }

    /// The offer columns (28 to 31) of a row of `selection`.
    private static func offer(_ row: FastStatement.Columns) throws -> TransactionOffer? {
        guard let type = row.optionalString(28) else { return nil }
        guard let offerType = TransactionOffer.OfferType(rawValue: type),
            let mode = row.optionalString(30).flatMap(TransactionOffer.PaymentMode.init(rawValue:)),
            let period = row.optionalString(31).flatMap(SubscriptionPeriod.init(iso8601:))
        else { throw DamagedRow(reason: "incomplete offer on transaction \(row.int64(0))") }
        return TransactionOffer(type: offerType, id: row.optionalString(29), paymentMode: mode, period: period)
    }

    private static let byID = LedgerSQL(selection + " WHERE id = ?")

    /// A transaction with the outcome the store planned for it when it was added (for one still
    /// purchasing; `.failed` when none is stored), in one read.
    static func fetchWithPlan(
        _ db: Database, id: UInt64
    ) throws -> (PaymentTransaction, planned: (state: TransactionState, error: TransactionError?))? {
        guard id <= UInt64(Int64.max) else { return nil }
        // The chain's row read: the decoded columns, then the plan (32 to 34).
        let statement = try FastStatement(db, HashChain.selectRow)
        statement.bind(1, Int64(id))
        return try statement.first { row in
            let state = row.optionalString(32).flatMap(TransactionState.init(rawValue:)) ?? .failed
            let error = row.optionalInt(33).map {
                TransactionError(code: StoreErrorCode(rawValue: $0) ?? .unknown, message: row.optionalString(34))
            }
            return (try PaymentTransaction(row), (state, error))
        }
    }

    static func fetchOne(_ db: Database, id: UInt64) throws -> PaymentTransaction? {
        guard id <= UInt64(Int64.max) else { return nil }
        let statement = try FastStatement(db, byID)
        statement.bind(1, Int64(id))
        return try statement.first(PaymentTransaction.init)
    }

    /// Calls `body` with each transaction `selection` + `suffix` reads, one at a time (memory
    /// does not grow with the number of rows).
    static func forEach(
        _ db: Database, sql suffix: String, arguments: StatementArguments = [],
        _ body: (PaymentTransaction) throws -> Void
    ) throws {
        let statement = try FastStatement(db, selection + " " + suffix)
        try statement.bind(arguments)
        try statement.forEachRow { try body(try PaymentTransaction($0)) }
    }

    static func fetchAll(
        _ db: Database, sql suffix: String, arguments: StatementArguments = []
    ) throws -> [PaymentTransaction] {
        let statement = try FastStatement(db, selection + " " + suffix)
        try statement.bind(arguments)
        return try statement.all(PaymentTransaction.init)
    }
}

extension TransactionEvent {
    init(row: Row) throws {
        let kind: String = row["kind"]
        let to: String = row["to_state"]
        guard let kindValue = Kind(rawValue: kind), let toState = TransactionState(rawValue: to) else {
            throw DamagedRow(reason: "unexpected event \(kind) -> \(to)")
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

/// A stored row the ledger cannot read back (edited behind its back). Thrown where the row is
/// decoded, which does not know the file; `Ledger.mapError` makes it a
/// `LedgerError.corrupted` that names the ledger.
struct DamagedRow: Error {
    let reason: String
}
