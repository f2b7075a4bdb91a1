import Foundation
import GRDB
import LedgerModel

/// Synthetic purchases for benchmarks and tests, written as payments are.
extension Ledger {
    /// Appends synthetic purchases of `productID` with their histories (created, purchased,
    /// and finished for the first `finished` ones), in one commit: for benchmarks and tests
    /// that need a large ledger in seconds. Each goes through `TransactionWriter` as a payment
    /// does (the same rows, events and rules). Returns the ids of the unfinished ones.
    @discardableResult
    package func appendSyntheticPurchases(productID: String, finished: Int, unfinished: Int) throws -> [UInt64] {
        try write { db in
            let writer = try writer(db)
            let owner = try owner()
            var template = try NewTransactionRow(
                db, productID: productID, owner: owner, state: .purchasing, at: writer.now)
            template.planned = (.purchased, nil)
            var ids = try writer.ids()
            let sharing = try Self.hasFamily(db, owner.customer)
            var unfinishedIDs: [UInt64] = []
            for index in 0..<(finished + unfinished) {
                let purchased = try chargeSynthetic(writer, template, ids: &ids, sharing: sharing)
                let id = purchased.id
                // Finished already: a payment that only changed a renewal, or one refused as
                // "already subscribed" (callers buy no subscription; a second one would be either).
                if purchased.isFinished { continue }
                if index < finished { _ = try writer.finish(purchased) } else { unfinishedIDs.append(id) }
            }
            try ids.save(db)
            return unfinishedIDs
        }
    }

    /// Adds `count` customers named `prefix-1`, `prefix-2`..., each with `purchasesEach`
    /// synthetic purchases of `productID`, finished (for benchmarks: a store of many
    /// customers in one commit). Each purchase goes through `TransactionWriter` and the store's
    /// rules, as a payment does, for its customer. Returns the customers' names.
    /// - Throws: `CustomerError.tooManyCustomers` past `Customer.maximumCount`;
    ///   `CustomerError.duplicateName`; `UnknownProductError`.
    @discardableResult
    package func appendSyntheticCustomers(
        count: Int, purchasesEach: Int, productID: String, prefix: String = "customer"
    ) throws -> [String] {
        try write { db in
            let existing = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM customers") ?? 0
            guard existing + count <= Customer.maximumCount else {
                throw CustomerError.tooManyCustomers(limit: Customer.maximumCount)
            }
            let writer = try writer(db)
            var ids = try writer.ids()
            let insert = try db.makeStatement(sql: "INSERT INTO customers (name, created_at) VALUES (?, ?)")
            var names: [String] = []
            for number in 0..<count {
                let name = "\(prefix)-\(number + 1)"
                if try Bool.fetchOne(db, sql: "SELECT 1 FROM customers WHERE name = ?", arguments: [name]) == true {
                    throw CustomerError.duplicateName(name)
                }
                try insert.execute(arguments: [name, writer.now])
                let customer = db.lastInsertedRowID
                let store = withCustomerScope(.chosen(id: customer, name: name))
                var template = try NewTransactionRow(
                    db, productID: productID, owner: Owner(customer: customer, app: try appID()), state: .purchasing,
                    at: writer.now)
                template.planned = (.purchased, nil)
                // A new customer has no family yet: nothing of theirs is shared.
                for _ in 0..<purchasesEach {
                    let purchased = try store.chargeSynthetic(writer, template, ids: &ids, sharing: false)
                    if !purchased.isFinished { _ = try writer.finish(purchased) }
                }
                names.append(name)
            }
            try ids.save(db)
            return names
        }
    }

    /// One synthetic purchase, inserted with the block's next id and charged by the store's
    /// rules. A purchase its buyer's family shares (`sharing`) takes ids for the shares through
    /// the ledger's counter (`shareWithFamily`): the block is saved before the charge and read
    /// again after it, so that no id is taken twice.
    private func chargeSynthetic(
        _ writer: TransactionWriter, _ template: NewTransactionRow, ids: inout TransactionWriter.IDBlock,
        sharing: Bool
    ) throws -> PaymentTransaction {
        let id = try writer.insert(template, id: try ids.next())
        guard sharing else { return try moveState(writer, template.transaction(id: id), to: .purchased, error: nil) }
        try ids.save(writer.db)
        let purchased = try moveState(writer, template.transaction(id: id), to: .purchased, error: nil)
        ids = try writer.ids()
        return purchased
    }

    /// Whether customer `id` belongs to a family (their purchases may be shared).
    private static func hasFamily(_ db: Database, _ id: Int64) throws -> Bool {
        try String.fetchOne(db, sql: "SELECT family FROM customers WHERE id = ?", arguments: [id]) != nil
    }
}
