import Foundation
import LedgerTestSupport
import LedgerTesting
import StoreLedger
import StoreTesting
import Synchronization
import Testing

/// What a purchase reads of its own row, commit by commit, from the statements the ledger's
/// connections run (`LedgerConfiguration.statementTrace`): nothing in the commit that adds it
/// (its image, for the hash chain's digests, is made from the values inserted), and once in the
/// commit that charges it, to vouch for it before it is changed; the digests after its changes
/// come from that read's image (`RowImage`). Its notification, signed, with the subscription's
/// status, reads it no more (it signs the writer's value, and takes it as the latest period when
/// a probe finds none after it). The store's settings are parsed once in a commit.
@Suite struct OneReadTests {
    @Test(arguments: [
        (SampleCatalog.consumable, false, [0, 1]), (SampleCatalog.consumable, true, [0, 1]),
        (SampleCatalog.subscription, false, [0, 1]), (SampleCatalog.subscription, true, [0, 1]),
    ])
    func aPurchaseReadsItsRowOnceToVouchForItBeforeItIsCharged(
        productID: String, notifies: Bool, reads: [Int]
    ) async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/ledger.sqlite"
            try SampleCatalog.ledger(in: directory, configuration: StoreFixture.configuration).close()
            if notifies {
                let ledger = try Ledger.open(at: path, configuration: StoreFixture.configuration)
                try StoreTestSession(ledger: ledger).set(.notificationURL, to: "http://127.0.0.1:9/notifications")
                try ledger.close()
            }
            let statements = Mutex<[String]>([])
            var configuration = StoreFixture.configuration
            configuration.statementTrace = { sql in statements.withLock { $0.append(sql) } }
            let queue = try PaymentQueue(path: path, configuration: configuration)
            let observer = CollectingObserver()  // kept: the queue holds its observers weakly
            try await queue.add(observer)  // so deliveries are recorded in the commits
            statements.withLock { $0.removeAll() }

            let purchase = try await queue.add(Payment(productID: productID))

            #expect(purchase.state == .purchased)
            #expect(purchase.deliveryCount == 2, "purchasing, then purchased: each delivery recorded in its commit")
            let commits = Self.writeCommits(statements.withLock { $0 })
            #expect(commits.count == 2, "the payment's commit, then its charge's")
            #expect(commits.map { Self.readsOfRow(purchase.id, in: $0) } == reads)
            // The store's settings are parsed at most once in a commit (the notification takes
            // the rules' reading).
            #expect(commits.allSatisfy { $0.filter { $0 == "SELECT key, value FROM store_settings" }.count <= 1 })
            let notified = commits.last?.contains { $0.hasPrefix("INSERT INTO notifications") } ?? false
            #expect(notified == notifies)
            #expect(try queue.ledger.verify().isEmpty)
            withExtendedLifetime(observer) {}
        }
    }

    /// The statements of each write transaction, in order.
    static func writeCommits(_ statements: [String]) -> [[String]] {
        var commits: [[String]] = []
        var current: [String]?
        for statement in statements {
            if statement == "BEGIN IMMEDIATE TRANSACTION" {
                current = []
            } else if statement == "COMMIT TRANSACTION", let finished = current {
                commits.append(finished)
                current = nil
            } else {
                current?.append(statement)
            }
        }
        return commits
    }

    /// How many statements of `commit` read transaction `id`'s row whole once it exists: by its
    /// id, or among others (a group's latest period), unless they leave it out (`id <> N`).
    static func readsOfRow(_ id: UInt64, in commit: [String]) -> Int {
        let afterItsInsert = commit.firstIndex { $0.hasPrefix("INSERT INTO transactions") }.map { commit[($0 + 1)...] }
        return (afterItsInsert ?? commit[...]).filter { statement in
            statement.hasPrefix("SELECT") && statement.contains("offer_nonce")
                && statement.contains("FROM transactions")
                && !statement.contains("id <> \(id)")
        }.count
    }
}
