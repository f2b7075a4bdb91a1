package import Foundation
import GRDB
package import LedgerModel

/// What the team's server tells the App Store through the App Store Server API, kept beside
/// the transactions (migration 13), never in their rows: order ids (derived, `OrderID`),
/// consumption information, app account tokens set by the server.
extension Ledger {
    // MARK: - Orders

    /// The charged transaction (a purchase or a renewal) whose order id is `orderID`; `nil` for
    /// an order id the store never gave, or a payment that only changed a subscription's renewal.
    package func transaction(forOrder orderID: String) throws -> PaymentTransaction? {
        guard let id = OrderID.transactionID(of: orderID) else { return nil }
        return try read { db in
            guard let transaction = try PaymentTransaction.fetchOne(db, id: id), isInApp(transaction),
                transaction.state == .purchased,
                try !isRenewalChange(db, transaction)
            else { return nil }
            return transaction
        }
    }

    // MARK: - Consumption information

    /// What Send Consumption Information last sent for a transaction.
    package struct ConsumptionInformation: Sendable, Hashable {
        /// The endpoint's version: 1 (`ConsumptionRequestV1`) or 2 (`ConsumptionRequest`).
        package var version: Int
        /// The request's body, as JSON.
        package var json: String
        /// When it was received, by the store's clock.
        package var date: Date
    }

    /// The longest consumption body kept, in bytes.
    package static let consumptionBodyLimit = 65_536

    /// Keeps `json` (a body of Send Consumption Information, checked by the caller) as what the
    /// server last sent for transaction `id`.
    /// - Throws: `PaymentQueueError.unknownTransaction`.
    package func recordConsumption(_ json: String, version: Int, for id: UInt64) throws {
        precondition((version == 1 || version == 2) && json.utf8.count <= Self.consumptionBodyLimit)
        try write { db in
            guard try PaymentTransaction.fetchOne(db, id: id) != nil else {
                throw PaymentQueueError.unknownTransaction(id)
            }
            try db.execute(
                sql: """
                    INSERT INTO consumption_information (transaction_id, version, body, received_at) VALUES (?, ?, ?, ?)
                    ON CONFLICT (transaction_id) DO UPDATE SET
                        version = excluded.version, body = excluded.body, received_at = excluded.received_at
                    """, arguments: [Int64(id), version, json, try storeNow(db)])
        }
    }

    /// What Send Consumption Information last sent for transaction `id`, if anything.
    package func consumptionInformation(for id: UInt64) throws -> ConsumptionInformation? {
        try read { db in
            try Row.fetchOne(
                db, sql: "SELECT version, body, received_at FROM consumption_information WHERE transaction_id = ?",
                arguments: [Int64(id)]
            ).map {
                ConsumptionInformation(version: $0[0], json: $0[1], date: Date(ledgerMilliseconds: $0[2]))
            }
        }
    }

    // MARK: - App account tokens

    /// Sets the app account token of original transaction `originalID` and its chain (Set App
    /// Account Token): the server-signed transactions and renewal info carry it from now on;
    /// `nil` clears it. The transactions' rows keep what the app sent.
    /// - Throws: `PaymentQueueError.unknownTransaction`; `ServerRecordError.notOriginal` for a
    ///   transaction that is not its chain's original, `.familyShared` for one a family member
    ///   shared.
    package func setAppAccountToken(_ token: UUID?, originalTransactionID originalID: UInt64) throws {
        try write { db in
            guard let transaction = try PaymentTransaction.fetchOne(db, id: originalID) else {
                throw PaymentQueueError.unknownTransaction(originalID)
            }
            guard transaction.originalID == originalID else { throw ServerRecordError.notOriginal(originalID) }
            guard try familySharedOriginals(db, of: [transaction]).isEmpty else {
                throw ServerRecordError.familyShared(originalID)
            }
            try records(db).write(.appAccountTokens, key: Int64(originalID)) {
                try db.execute(
                    sql: """
                        INSERT INTO app_account_tokens (original_transaction_id, token, set_at) VALUES (?, ?, ?)
                        ON CONFLICT (original_transaction_id) DO UPDATE SET token = excluded.token, set_at = excluded.set_at
                        """, arguments: [Int64(originalID), token?.uuidString.lowercased(), try storeNow(db)])
            }
        }
    }

    /// The app account token the server set on the chain of original transaction `originalID`:
    /// `nil` when it set none, `.some(nil)` when it cleared it.
    package func serverAppAccountToken(originalTransactionID originalID: UInt64) throws -> UUID?? {
        try read { db in try serverAppAccountTokens(db, originals: [originalID])[originalID] }
    }

    /// `transactions` as the App Store's server signs them: with the app account token its
    /// server set on their chain, where it set one.
    func withServerAccountTokens(
        _ db: Database, _ transactions: [PaymentTransaction]
    ) throws
        -> [PaymentTransaction]
    {
        let tokens = try serverAppAccountTokens(db, originals: Set(transactions.map(\.originalID)))
        guard !tokens.isEmpty else { return transactions }
        return transactions.map { transaction in
            var signed = transaction
            if let token = tokens[transaction.originalID] { signed.appAccountToken = token }
            return signed
        }
    }

    /// The tokens set on `originals`' chains, each row checked (`AuthenticatedRecords`): a
    /// token a signature would carry must be the ledger's.
    private func serverAppAccountTokens(
        _ db: Database, originals: Set<UInt64>
    ) throws -> [UInt64: UUID?] {
        var tokens: [UInt64: UUID?] = [:]
        let records = try records(db)
        for original in originals {
            // Every signed transaction the server answers with asks: one cached statement.
            if let row = try records.row(.appAccountTokens, key: Int64(original)) {
                tokens[original] = (row["token"] as String?).flatMap(UUID.init(uuidString:))
            }
        }
        return tokens
    }
}
