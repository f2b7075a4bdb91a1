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
            var last = UInt64(try Int64.fetchOne(db, sql: "SELECT value FROM ledger_counters WHERE name = 'last_transaction_id'") ?? 0)
            let insert = try db.cachedStatement(sql: """
                INSERT INTO transactions (id, original_id, product_id, product_type, state, quantity, purchase_date,
                    original_purchase_date, reason, storefront, environment, planned_state, created_at, updated_at)
                VALUES (?, ?, ?, ?, 'purchased', 1, ?, ?, 'purchase', 'USA', ?, 'purchased', ?, ?)
                """)
            let event = try db.cachedStatement(sql: """
                INSERT INTO transaction_events (transaction_id, kind, from_state, to_state, at) VALUES (?, ?, ?, ?, ?)
                """)
            var unfinishedIDs: [UInt64] = []
            let first = last
            var lastFinished = last
            for index in 0..<(finished + unfinished) {
                last = configuration.idGenerator.next(after: last)
                let id = Int64(last), done = index < finished
                if done { lastFinished = last }
                try insert.execute(arguments: [id, id, productID, type, now, now, Self.environment, now, now])
                try event.execute(arguments: [id, "created", nil, "purchasing", now])
                try event.execute(arguments: [id, "stateChanged", "purchasing", "purchased", now])
                if done { try event.execute(arguments: [id, "finished", "purchased", "purchased", now]) } else { unfinishedIDs.append(last) }
            }
            // New transactions enter unfinished (a trigger says so); the finished ones are marked after.
            try db.run(
                sql: "UPDATE transactions SET is_finished = 1, finished_at = ? WHERE id > ? AND id <= ?",
                arguments: [now, Int64(first), Int64(lastFinished)])
            try db.run(sql: "UPDATE ledger_counters SET value = ? WHERE name = 'last_transaction_id'", arguments: [Int64(last)])
            return unfinishedIDs
        }
    }
}
