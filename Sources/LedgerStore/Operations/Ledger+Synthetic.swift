import Foundation
import GRDB

extension Ledger {
    /// Appends synthetic purchases of `productID` with their histories (created, purchased,
    /// and finished for the first `finished` ones), in one commit: for benchmarks and tests
    /// that need a large ledger in seconds. Returns the ids of the unfinished ones.
    @discardableResult
    package func appendSyntheticPurchases(productID: String, finished: Int, unfinished: Int) throws -> [UInt64] {
        try write { db in
            let now = try storeNow(db)
            let type = try String.fetchOne(db, sql: "SELECT type FROM products WHERE id = ?", arguments: [productID])
            guard let type else { throw PaymentQueueError.unknownProduct(productID) }
            var ids = try IDBlock(db, generator: configuration.idGenerator)
            let insert = try db.cachedStatement(sql: """
                INSERT INTO transactions (id, original_id, product_id, product_type, state, quantity, purchase_date,
                    original_purchase_date, reason, storefront, environment, planned_state, created_at, updated_at)
                VALUES (?, ?, ?, ?, 'purchased', 1, ?, ?, 'purchase', 'USA', ?, 'purchased', ?, ?)
                """)
            let event = try db.cachedStatement(sql: """
                INSERT INTO transaction_events (transaction_id, kind, from_state, to_state, at) VALUES (?, ?, ?, ?, ?)
                """)
            var unfinishedIDs: [UInt64] = []
            var finishedIDs: (first: UInt64, last: UInt64)?
            for index in 0..<(finished + unfinished) {
                let next = try ids.next()
                let id = Int64(next), done = index < finished
                if done { finishedIDs = (finishedIDs?.first ?? next, next) }
                try insert.execute(arguments: [id, id, productID, type, now, now, Self.environment, now, now])
                try event.execute(arguments: [id, "created", nil, "purchasing", now])
                try event.execute(arguments: [id, "stateChanged", "purchasing", "purchased", now])
                if done { try event.execute(arguments: [id, "finished", "purchased", "purchased", now]) } else { unfinishedIDs.append(next) }
            }
            // New transactions enter unfinished (a trigger says so); the finished ones are marked after.
            if let finishedIDs {
                try db.run(
                    sql: "UPDATE transactions SET is_finished = 1, finished_at = ? WHERE id >= ? AND id <= ?",
                    arguments: [now, Int64(finishedIDs.first), Int64(finishedIDs.last)])
            }
            try ids.save(db)
            return unfinishedIDs
        }
    }
}
