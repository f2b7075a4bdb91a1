import Foundation
package import GRDB
import LedgerModel

extension PaymentTransaction {
    package static let selection = TransactionColumns.selection

    /// Decodes a row of `selection`, by column position: the ledger reads many rows (a launch,
    /// a restore's pages), and looking columns up by name is most of that cost.
    package init(_ row: FastStatement.Columns) throws {
        let c = TransactionColumns.positions
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
        if let code = row.optionalInt(c.errorCode) {
            error = TransactionError(
                code: StoreErrorCode(rawValue: code) ?? .unknown, message: row.optionalString(c.errorMessage))
        }
        self.init(
            id: UInt64(row.int64(c.id)),
            originalID: UInt64(row.int64(c.originalID)),
            productID: row.string(c.productID),
            productType: try decoded(c.productType, as: ProductType.self),
            state: try decoded(c.state, as: TransactionState.self),
            isFinished: row.bool(c.isFinished),
            quantity: row.int(c.quantity),
            purchaseDate: date(c.purchaseDate)!,
            originalPurchaseDate: date(c.originalPurchaseDate)!,
            expirationDate: date(c.expirationDate),
            revocationDate: date(c.revocationDate),
            revocationReason: row.optionalInt(c.revocationReason),
            isUpgraded: row.bool(c.isUpgraded),
            appAccountToken: row.optionalString(c.appAccountToken).flatMap(UUID.init(uuidString:)),
            applicationUsername: row.optionalString(c.applicationUsername),
            error: error,
            reason: try decoded(c.reason, as: Reason.self),
            subscriptionGroupID: row.optionalString(c.subscriptionGroupID),
            offer: try Self.offer(row),
            storefront: row.string(c.storefront),
            environment: row.string(c.environment),
            idempotencyKey: row.optionalString(c.idempotencyKey),
            restoredFromID: row.optionalInt64(c.restoredFrom).map(UInt64.init),
            createdAt: date(c.createdAt)!,
            updatedAt: date(c.updatedAt)!,
            finishedAt: date(c.finishedAt),
            deliveryCount: row.int(c.deliveryCount),
            lastDeliveredAt: date(c.lastDeliveredAt),
            customerID: row.int64(c.customerID), appID: row.int64(c.appID))
    }

    /// The offer columns of a row of `selection`.
    private static func offer(_ row: FastStatement.Columns) throws -> TransactionOffer? {
        let c = TransactionColumns.positions
        guard let type = row.optionalString(c.offerType) else { return nil }
        guard let offerType = TransactionOffer.OfferType(rawValue: type),
            let mode = row.optionalString(c.offerPaymentMode).flatMap(TransactionOffer.PaymentMode.init(rawValue:)),
            let period = row.optionalString(c.offerPeriod).flatMap(SubscriptionPeriod.init(iso8601:))
        else { throw DamagedRow(reason: "incomplete offer on transaction \(row.int64(c.id))") }
        return TransactionOffer(type: offerType, id: row.optionalString(c.offerID), paymentMode: mode, period: period)
    }

    private static let byID = LedgerSQL(selection + " WHERE id = ?")

    /// A transaction with the outcome the store planned for it when it was added (for one still
    /// purchasing; `.failed` when none is stored), in one read; `vouching`: the row checked
    /// against its history in the same statement (`HashChain.vouch`).
    static func fetchWithPlan(
        _ db: Database, id: UInt64, vouching: Bool
    ) throws -> (
        transaction: PaymentTransaction, planned: (state: TransactionState, error: TransactionError?), image: RowImage?
    )? {
        guard id <= UInt64(Int64.max) else { return nil }
        // The chain's row read: every column, the plan among them (and the digest its last
        // event recorded, after them).
        let statement = try FastStatement(db, vouching ? HashChain.vouchRow : HashChain.selectRow)
        statement.bind(1, Int64(id))
        let c = TransactionColumns.positions
        return try statement.first { row in
            let image = vouching ? try HashChain.vouch(row) : nil
            let state = row.optionalString(c.plannedState).flatMap(TransactionState.init(rawValue:)) ?? .failed
            let error = row.optionalInt(c.plannedErrorCode).map {
                TransactionError(
                    code: StoreErrorCode(rawValue: $0) ?? .unknown, message: row.optionalString(c.plannedErrorMessage))
            }
            return (try PaymentTransaction(row), (state, error), image)
        }
    }

    package static func fetchOne(_ db: Database, id: UInt64) throws -> PaymentTransaction? {
        guard id <= UInt64(Int64.max) else { return nil }
        let statement = try FastStatement(db, byID)
        statement.bind(1, Int64(id))
        return try statement.first(PaymentTransaction.init)
    }

    /// Calls `body` with each transaction `selection` + `suffix` reads, one at a time (memory
    /// does not grow with the number of rows).
    package static func forEach(
        _ db: Database, sql suffix: String, arguments: StatementArguments = [],
        _ body: (PaymentTransaction) throws -> Void
    ) throws {
        let statement = try FastStatement(db, selection + " " + suffix)
        try statement.bind(arguments)
        try statement.forEachRow { try body(try PaymentTransaction($0)) }
    }

    package static func fetchAll(
        _ db: Database, sql suffix: String, arguments: StatementArguments = []
    ) throws -> [PaymentTransaction] {
        let statement = try FastStatement(db, selection + " " + suffix)
        try statement.bind(arguments)
        return try statement.all(PaymentTransaction.init)
    }
}

extension TransactionEvent {
    package init(row: Row) throws {
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
package struct DamagedRow: Error {
    package let reason: String
}
