import Crypto
import Foundation
import GRDB
import LedgerTestSupport
import LedgerTesting
import Testing

@testable import LedgerEngine
@testable import SimulatedStore

/// The hash chain's byte format (docs/HASH-CHAIN.md), when heads are signed, and the chain a
/// migration gives an old history.
@Suite struct HashChainTests {
    /// Known answers, computed from the format's description with Python's hashlib
    /// (`tools/verify-audit` implements the same): a change of the format breaks them.
    @Test func theEncodingGenesisLinkAndHeadMessageAreTheDocumentedOnes() {
        let genesis = HashChain.genesis(root: [1, 2, 3])
        #expect(Hex.string(genesis) == "22edc57e7a1832bd6918a7bd8cf01442956d47454310289e80fa288790db5ed5")
        let event = ChainedEvent(
            seq: 1,
            content: .init(
                transactionID: 7, kind: .created, from: nil, to: .purchasing, at: 1_800_000_000_000, detail: nil),
            rowDigest: HashChain.noRow)
        let link = HashChain.link(previous: genesis, event)
        #expect(Hex.string(link) == "47ba1f101d3bcbf212fc1248ba89fefb119bb898635b4bbb9df4006f740a1ad0")
        #expect(
            Hex.string(ChainHead.message(sequence: 1, hash: link)) == """
                020000001853746f72654c656467657220636861696e20686561642031010000000000000001\
                030000002047ba1f101d3bcbf212fc1248ba89fefb119bb898635b4bbb9df4006f740a1ad0
                """)
        var row = ChainEncoding()
        row.integer(1)
        row.text("x")
        row.null()
        row.integer(-2)
        #expect(Hex.string(row.sha256) == "731f913c4960b0ec7b73f066c0d890f888ea7de2697fe9b44b98115e66803563")
    }

    /// A row digest covers every column of `transactions`: a column added by a later migration
    /// and forgotten here would be editable without breaking the chain.
    @Test func aRowDigestCoversEveryColumnOfTheTable() async throws {
        try await withLedger { ledger, _ in
            let columns = try ledger.read { db in try db.columns(in: "transactions").map(\.name) }
            #expect(columns == HashChain.rowColumns)
        }
    }

    /// The chain and the decoder read a row's columns in one order, the table's
    /// (`TransactionColumns`: one scan both digests and decodes a row): the digest of a row is
    /// the SHA-256 of its columns encoded in that order.
    @Test func aRowIsDigestedInTheTablesOrderWhateverItsSelectionOrder() async throws {
        #expect(HashChain.rowColumns == TransactionColumns.names)
        try await withLedger { ledger, _ in
            let bought = try ledger.addPayment(NewPayment(productID: "consumable")).transaction
            let (digest, inTableOrder) = try ledger.read { db in
                let digest = try HashChain.rowDigest(db, id: bought.id)
                let select = try FastStatement(
                    db, "SELECT " + HashChain.rowColumns.joined(separator: ", ") + " FROM transactions WHERE id = ?")
                select.bind(1, Int64(bought.id))
                // The first customer's row in the first app: every column but the customer's and
                // the app's, the last two.
                let inTableOrder = try select.first { columns in
                    var encoding = ChainEncoding()
                    for index in 0..<Int32(HashChain.rowColumns.count - 2) { encoding.column(columns, index) }
                    return encoding.sha256
                }
                return (digest, inTableOrder)
            }
            #expect(digest != nil)
            #expect(digest == inTableOrder)
        }
    }

    /// With an interval of zero, every commit that adds events signs the head; the head's
    /// signature is the leaf key's over the documented message, and a head changed in any byte
    /// no longer verifies.
    @Test func everyCommitSignsWithAZeroInterval() async throws {
        try await withTemporaryDirectory { directory in
            let ledger = try Self.ledger(in: directory, interval: .zero)
            defer { try? ledger.close() }
            for _ in 0..<3 {
                let added = try ledger.addPayment(NewPayment(productID: "consumable")).transaction
                let status = try ledger.chainStatus()
                #expect(status.head?.sequence == status.lastSequence && status.unsignedEventCount == 0)
                _ = try ledger.applyPlannedOutcome(of: added.id)
                #expect(try ledger.chainStatus().head?.sequence == ledger.chainStatus().lastSequence)
            }
            let head = try #require(try ledger.chainStatus().head)
            let certificates = try ledger.signingCertificates()
            let lastHash = try ledger.chainStatus().lastHash
            #expect(head.isSigned(by: certificates) && head.hash == lastHash)
            var forged = head
            forged.sequence += 1
            #expect(!forged.isSigned(by: certificates))
            forged = head
            forged.hash[0] ^= 1
            #expect(!forged.isSigned(by: certificates))
            // Another ledger's chain does not certify this head.
            let other = try Ledger.open(at: directory + "/other.sqlite", mode: .createIfMissing)
            #expect(!head.isSigned(by: try other.signingCertificates()))
            try other.close()
            #expect(try ledger.verify() == [])
        }
    }

    /// With a long interval, only the first commit signs; the events after it are chained but
    /// not signed (verify accepts that: it is what a crash leaves), and `close()` signs them.
    @Test func aLongIntervalSignsTheFirstCommitAndCloseSignsTheRest() async throws {
        try await withTemporaryDirectory { directory in
            let ledger = try Self.ledger(in: directory, interval: .seconds(3_600))
            let first = try ledger.addPayment(NewPayment(productID: "consumable")).transaction
            let signedFirst = try #require(try ledger.chainStatus().head)
            _ = try ledger.applyPlannedOutcome(of: first.id)
            _ = try ledger.finish([first.id])
            let before = try ledger.chainStatus()
            #expect(before.head == signedFirst && before.unsignedEventCount == 2 && before.lastSequence == 3)
            #expect(try ledger.verify() == [])
            try ledger.close()
            let reopened = try Ledger.open(at: directory + "/ledger.sqlite", access: .readOnly)
            defer { try? reopened.close() }
            let after = try reopened.chainStatus()
            #expect(after.head?.sequence == 3 && after.unsignedEventCount == 0)
            #expect(try reopened.verify() == [])
        }
    }

    /// When `close()` cannot sign (another process holds the write lock too long), it throws
    /// that error and closes the connections all the same; the events it could not sign stay
    /// chained and unsigned, which verify accepts, and the next writer signs them.
    @Test func closeThatCannotSignThrowsClosesAndLosesNothing() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/ledger.sqlite"
            let ledger = try Ledger.open(
                at: path, mode: .createIfMissing,
                configuration: LedgerConfiguration(
                    busyTimeout: 0.05, clock: .fixed(testEpoch), headSigningInterval: .seconds(3_600)))
            try ledger.saveProducts([Product(id: "consumable", type: .consumable, price: 0.99)])
            let added = try ledger.addPayment(NewPayment(productID: "consumable")).transaction
            _ = try ledger.applyPlannedOutcome(of: added.id)
            let before = try ledger.chainStatus()
            #expect(before.unsignedEventCount == 1)
            let holder = try DatabaseQueue(path: path)
            try holder.inTransaction(.immediate) { _ in
                #expect { try ledger.close() } throws: { ($0 as? LedgerError)?.code == .busy }
                return .rollback
            }
            try holder.close()
            #expect { try ledger.chainStatus() } throws: { ($0 as? LedgerError)?.code == .unusable }

            let reopened = try Ledger.open(at: path, configuration: LedgerConfiguration(clock: .fixed(testEpoch)))
            defer { try? reopened.close() }
            #expect(try reopened.chainStatus() == before)
            #expect(try reopened.verify() == [])
            #expect(try reopened.transaction(added.id)?.state == .purchased)
            _ = try reopened.addPayment(NewPayment(productID: "consumable"))  // its first commit signs
            #expect(try reopened.chainStatus().unsignedEventCount == 0)
            #expect(try reopened.verify() == [])
        }
    }

    /// An event appended without the key, correctly linked, sits after the signed head: verify
    /// names it, and no writer signs a head over it (the next write refuses and changes
    /// nothing), where it used to be signed over and made permanent. A forged MAC does no better.
    @Test(arguments: [false, true])
    func anEventAppendedWithoutTheKeyIsNeverSignedOver(withForgedMAC: Bool) async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/ledger.sqlite"
            let configuration = LedgerConfiguration(clock: .fixed(testEpoch))
            let ledger = try Ledger.open(at: path, mode: .createIfMissing, configuration: configuration)
            try ledger.saveProducts([Product(id: "level", type: .nonConsumable, price: 0.99)])
            let bought = try ledger.addPayment(NewPayment(productID: "level")).transaction
            _ = try ledger.applyPlannedOutcome(of: bought.id)
            try ledger.close()

            // A refund that never happened, linked as the chain links, by someone without the key.
            let forger = try DatabaseQueue(path: path)
            try forger.write { db in
                let end = try HashChain.end(db)
                let event = ChainedEvent(
                    seq: end.seq + 1,
                    content: .init(
                        transactionID: bought.id, kind: .revoked, from: .purchased, to: .purchased,
                        at: testEpoch.ledgerMilliseconds, detail: nil),
                    rowDigest: try #require(try HashChain.rowDigest(db, id: bought.id)))
                let hash = HashChain.link(previous: end.hash, event)
                let mac: [UInt8]? = withForgedMAC ? HashChain.mac(of: hash, key: [UInt8](repeating: 7, count: 32)) : nil
                try db.execute(
                    sql: """
                        INSERT INTO transaction_events (seq, transaction_id, kind, from_state, to_state, at, detail, row_digest, hash, mac)
                        VALUES (?, ?, 'revoked', 'purchased', 'purchased', ?, NULL, ?, ?, ?)
                        """,
                    arguments: [
                        event.seq, Int64(bought.id), testEpoch.ledgerMilliseconds, Data(event.rowDigest), Data(hash),
                        mac.map { Data($0) },
                    ])
            }
            try forger.close()

            let reopened = try Ledger.open(at: path, configuration: configuration)
            defer { try? reopened.close() }
            #expect(try reopened.chainStatus().unsignedEventCount == 1)
            let problems = try reopened.verify().map(\.message)
            #expect(
                problems.contains { $0.contains("follows the signed head without the ledger's authentication") },
                "\(problems)")
            let before = try reopened.chainStatus()
            #expect { _ = try reopened.addPayment(NewPayment(productID: "level")) } throws: {
                ($0 as? LedgerError)?.code == .corrupted && "\($0)".contains("without the ledger's authentication")
            }
            #expect(try reopened.chainStatus() == before, "nothing was written, nothing signed")
            #expect(try reopened.allTransactions().count == 1)
            // Nor does any signer sign the transaction the forged event is about: `ledger jws`,
            // Get Transaction Info and Refund History, and the notifications all sign through
            // `signing`, which authenticates the events after the head.
            let isUnauthenticated: (any Error) -> Bool = {
                ($0 as? LedgerError)?.code == .corrupted
                    && "\($0)".contains(
                        "has event \(before.lastSequence ?? 0) after the signed head without the ledger's authentication"
                    )
            }
            #expect { _ = try reopened.signedTransaction(bought.id) } throws: { isUnauthenticated($0) }
            #expect { _ = try reopened.signedPurchase(bought.id) } throws: { isUnauthenticated($0) }
            let purchased = try #require(try reopened.transaction(bought.id))
            #expect { _ = try reopened.signedTransactions([purchased]) } throws: { isUnauthenticated($0) }
        }
    }

    /// An event whose value was edited into another type (its CHECKs and triggers switched
    /// off) makes `verify` report it or refuse the ledger as damaged; it never stops the process.
    @Test(
        arguments: ["transaction_id", "kind", "from_state", "to_state", "at", "detail", "row_digest", "hash"],
        ["X'00ff'", "7", "'x'"])
    func anEventEditedIntoAnotherTypeIsFoundNotACrash(column: String, value: String) async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/ledger.sqlite"
            let written = try Self.ledger(in: directory, interval: .zero)
            let added = try written.addPayment(NewPayment(productID: "consumable")).transaction
            _ = try written.applyPlannedOutcome(of: added.id)
            try written.close()
            let database = try DatabaseQueue(path: path)
            try database.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA ignore_check_constraints = ON")
                for trigger in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'trigger'") {
                    try db.execute(sql: "DROP TRIGGER \(trigger)")
                }
                try db.execute(sql: "UPDATE transaction_events SET \(column) = \(value) WHERE seq = 2")
            }
            try database.close()
            let ledger = try Ledger.open(at: path, access: .readOnly)
            defer { try? ledger.close() }
            do {
                #expect(try !ledger.verify().isEmpty)
            } catch let error as LedgerError {
                #expect(error.code == .corrupted)
            }
        }
    }

    /// A commit that fails after the head was signed in it rolls the head back with it; the
    /// signer then signs again at the next commit, even inside its interval.
    @Test func aRolledBackSignatureIsMadeAgainAtTheNextCommit() async throws {
        try await withTemporaryDirectory { directory in
            let ledger = try Self.ledger(in: directory, interval: .seconds(3_600))
            defer { try? ledger.close() }
            let first = try ledger.addPayment(NewPayment(productID: "consumable")).transaction
            struct Refused: Error {}
            #expect(throws: Refused.self) {
                try ledger.write { db in
                    var delivered = try #require(try PaymentTransaction.fetchOne(db, id: first.id))
                    try ledger.writer(db).recordDelivery(of: &delivered)
                    try ledger.headSigner?.sign(db)
                    throw Refused()
                }
            }
            #expect(try ledger.chainStatus().head?.sequence == 1)
            _ = try ledger.applyPlannedOutcome(of: first.id)
            #expect(try ledger.chainStatus().head?.sequence == 2)
        }
    }

    /// A ledger of schema 9 with history (deliveries, a refund, a restore, and a transaction
    /// deleted with its events, as schema 9 did) gets its chain when opened: links from the
    /// genesis, row digests of the rows as they are, a signed head; the numbers continue after
    /// the deleted events'.
    @Test func aLedgerOfSchema9GetsItsChainWhenItIsMigrated() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/old.sqlite"
            let old = try olderLedger(at: path, migrations: Migration.embedded.filter { $0.identifier < "0010" })
            try old.write { db in
                try db.execute(sql: CheapChecksMigrationTests.history)
                try SigningIdentity.create(db, at: Date(timeIntervalSince1970: 1_800_000_000))
            }
            let eventsBefore = try old.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM transaction_events")
            }
            try old.close()

            let ledger = try Ledger.open(at: path, configuration: LedgerConfiguration(clock: .fixed(testEpoch)))
            defer { try? ledger.close() }
            #expect(try ledger.appliedMigrations() == Ledger.knownMigrations)
            let status = try ledger.chainStatus()
            #expect(status.eventCount == eventsBefore && status.lastSequence == 13)
            #expect(status.head?.sequence == 13 && status.unsignedEventCount == 0)
            #expect(try ledger.verify() == [])
            let genesis = HashChain.genesis(root: try ledger.signingCertificates().root)
            let firstLink = try ledger.read { db in
                try Data.fetchOne(db, sql: "SELECT hash FROM transaction_events WHERE seq = 1")
            }
            let firstRow = try ledger.read { db in
                try Row.fetchOne(db, sql: "SELECT * FROM transaction_events WHERE seq = 1")
            }!
            let recomputed = HashChain.link(
                previous: genesis,
                ChainedEvent(
                    seq: 1,
                    content: .init(transactionID: 1, kind: .created, from: nil, to: .purchasing, at: 10, detail: nil),
                    rowDigest: [UInt8](firstRow["row_digest"] as Data)))
            #expect(firstLink.map([UInt8].init) == recomputed)
            _ = try ledger.finish([4])
            #expect(try ledger.chainStatus().lastSequence == 15)  // 14 was the deleted transaction's
            #expect(try ledger.verify() == [])
        }
    }

    /// The bulk paths insert `HashChain.Appender.batchSize` (32) events per statement and the
    /// rest one by one: a restore of 150, a launch's deliveries and a clear of every
    /// transaction chain every event, in order.
    @Test func bulkPathsChainEveryEventAcrossTheirBatches() async throws {
        try await withLedger { ledger, _ in
            for _ in 0..<150 {
                let added = try ledger.addPayment(NewPayment(productID: "nonconsumable")).transaction
                _ = try ledger.applyPlannedOutcome(of: added.id)
            }
            let restored = try ledger.restorePurchases(delivery: .recorded)
            #expect(restored.count == 150)
            // The launch hands out the rows its events' scan read: as stored after the delivery.
            let delivered = try ledger.recordDeliveryOfUnfinishedTransactions()
            let stored = try ledger.read { db in
                try PaymentTransaction.fetchAll(db, sql: "WHERE is_finished = 0 ORDER BY id")
            }
            #expect(delivered.count == 300 && delivered == stored)
            #expect(delivered.allSatisfy { $0.deliveryCount >= 1 && $0.lastDeliveredAt != nil })
            let beforeClear = try ledger.chainStatus().eventCount
            #expect(try ledger.perform(.clearTransactions).deletedCount == 300)
            let status = try ledger.chainStatus()
            #expect(status.eventCount == beforeClear + 300 && status.lastSequence == Int64(status.eventCount))
            #expect(try ledger.verify() == [])
            let kinds = try ledger.read { db in
                try String.fetchAll(
                    db, sql: "SELECT kind FROM transaction_events WHERE seq > ? ORDER BY seq", arguments: [beforeClear])
            }
            #expect(kinds == Array(repeating: "deleted", count: 300))
        }
    }

    static func ledger(in directory: String, interval: Duration) throws -> Ledger {
        let ledger = try Ledger.open(
            at: directory + "/ledger.sqlite", mode: .createIfMissing,
            configuration: LedgerConfiguration(clock: .fixed(testEpoch), headSigningInterval: interval))
        try ledger.saveProducts([Product(id: "consumable", type: .consumable, price: 0.99)])
        return ledger
    }
}

/// Seeded: one random edit of a history made by every kind of write (payments of each type,
/// deliveries, finishes, a refund, renewals, a forced renewal and expiry, a restore, a
/// deletion) is always found by `verify`, whatever the row and the column.
@Suite struct HashChainTamperingPropertyTests {
    @Test(arguments: [UInt64(1), 2, 3])
    func noSingleEditGoesUnnoticed(seed: UInt64) async throws {
        try await withLedger { ledger, directory in
            try Self.writeHistory(ledger)
            #expect(try ledger.verify() == [])
            try ledger.close()
            let original = directory + "/ledger.sqlite"
            var random = SplitMix64(seed: seed)
            for trial in 0..<60 {
                let copy = directory + "/trial-\(trial).sqlite"
                try FileManager.default.copyItem(atPath: original, toPath: copy)
                let edit = try Self.editAtRandom(copy, &random)
                let tampered = try Ledger.open(at: copy, access: .readOnly)
                let problems = (try? tampered.verify()).map { $0.map(\.message) } ?? ["verify refused a damaged value"]
                try tampered.close()
                #expect(
                    problems.contains { $0.hasPrefix("hash chain") || $0 == "verify refused a damaged value" },
                    "seed \(seed) trial \(trial): \(edit) -> \(problems)")
                Ledger.removeDatabaseFiles(copy)
            }
        }
    }

    static func writeHistory(_ ledger: Ledger) throws {
        for product in ["consumable", "nonconsumable", "monthly"] {
            let added = try ledger.addPayment(NewPayment(productID: product)).transaction
            _ = try ledger.applyPlannedOutcome(of: added.id, delivery: .recorded)
        }
        _ = try ledger.finish([1, 2])
        try ledger.perform(.refund(2, reason: 0))
        _ = try ledger.advanceClock(by: 65 * 86_400)
        try ledger.perform(.renewDueSubscriptions)
        try ledger.perform(.forceRenewal(productID: "monthly"))
        try ledger.perform(.expireSubscription(productID: "monthly"))
        _ = try ledger.restorePurchases()
        let consumable = try ledger.addPayment(NewPayment(productID: "consumable")).transaction
        try ledger.perform(.deleteTransaction(consumable.id))
        _ = try ledger.recordDeliveryOfUnfinishedTransactions()
    }

    /// Changes one value of one event or transaction row (or deletes or swaps events), past the
    /// triggers and checks, to a value different from the one there. Returns what it did.
    static func editAtRandom(_ path: String, _ random: inout SplitMix64) throws -> String {
        let database = try DatabaseQueue(path: path)
        defer { try? database.close() }
        return try database.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA ignore_check_constraints = ON")
            for trigger in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'trigger'") {
                try db.execute(sql: "DROP TRIGGER \(trigger)")
            }
            let eventCount = try Int.fetchOne(db, sql: "SELECT count(*) FROM transaction_events")!
            let seq = Int64(random.next() % UInt64(eventCount)) + 1
            switch random.next() % 4 {
            case 0:
                try db.execute(sql: "DELETE FROM transaction_events WHERE seq = ?", arguments: [seq])
                return "deleted event \(seq)"
            case 1:
                let other = seq == Int64(eventCount) ? seq - 1 : seq + 1
                try db.execute(
                    sql: """
                        UPDATE transaction_events SET seq = -seq WHERE seq IN (?, ?);
                        UPDATE transaction_events SET seq = CASE seq WHEN -? THEN ? ELSE ? END WHERE seq < 0;
                        """, arguments: [seq, other, seq, other, seq])
                return "swapped events \(seq) and \(other)"
            case 2:
                let columns = [
                    "transaction_id", "kind", "from_state", "to_state", "at", "detail", "row_digest", "hash",
                ]
                let column = columns[Int(random.next() % UInt64(columns.count))]
                try change(db, table: "transaction_events", key: "seq", id: seq, column: column, &random)
                return "event \(seq).\(column)"
            default:
                let ids = try Int64.fetchAll(db, sql: "SELECT id FROM transactions ORDER BY id")
                let id = ids[Int(random.next() % UInt64(ids.count))]
                let column = HashChain.rowColumns[Int(random.next() % UInt64(HashChain.rowColumns.count))]
                try change(db, table: "transactions", key: "id", id: id, column: column, &random)
                return "transaction \(id).\(column)"
            }
        }
    }

    /// Sets `column` of one row to another value of the same storage class (NULL becomes a number).
    static func change(
        _ db: Database, table: String, key: String, id: Int64, column: String, _ random: inout SplitMix64
    ) throws {
        let value = try DatabaseValue.fetchOne(
            db, sql: "SELECT \(column) FROM \(table) WHERE \(key) = ?", arguments: [id])!
        let replacement: DatabaseValue =
            switch value.storage {
            case .int64(let number): (number + Int64(random.next() % 1_000) + 1).databaseValue
            case .string(let text): (text + "x").databaseValue
            case .blob(let bytes): Data(bytes.map { $0 ^ UInt8(truncatingIfNeeded: random.next() | 1) }).databaseValue
            case .double(let number): (number + 1).databaseValue
            case .null: Int64(random.next() % 1_000).databaseValue
            }
        try db.execute(sql: "UPDATE \(table) SET \(column) = ? WHERE \(key) = ?", arguments: [replacement, id])
    }
}
