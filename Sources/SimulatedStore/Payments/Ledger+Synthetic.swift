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
            var template = try NewTransactionRow(
                db, productID: productID, customerID: try customerID(), state: .purchasing, at: writer.now)
            template.planned = (.purchased, nil)
            var ids = try writer.ids()
            var unfinishedIDs: [UInt64] = []
            for index in 0..<(finished + unfinished) {
                let id = try writer.insert(template, id: try ids.next())
                let purchased = try moveState(writer, template.transaction(id: id), to: .purchased, error: nil)
                // Finished already: a payment that only changed a renewal, or one refused as
                // "already subscribed" (callers buy no subscription; a second one would be either).
                if purchased.isFinished { continue }
                if index < finished { _ = try writer.finish(purchased) } else { unfinishedIDs.append(id) }
            }
            try ids.save(db)
            return unfinishedIDs
        }
    }
}
