import Foundation
import GRDB
import LedgerModel
import LedgerTestSupport
import LedgerTesting
import Testing

@testable import LedgerEngine

/// The writer digests a row after its change from the row's image (`RowImage`), not from a read
/// of it: the image must be the row as SQLite stores it, whatever the values, whatever the
/// changes, and whichever writer of the transaction made them.
@Suite struct RowImageTests {
    /// A new row's image, made from the values inserted, is the row read back (and after its
    /// delivery, when one follows): for rows with and without each optional value, texts of
    /// any script among them. Seeded.
    @Test func aNewRowsImageIsTheRowAsStored() async throws {
        var random = SplitMix64(seed: 0x5EED_1A6E)
        try await withLedger { ledger, _ in
            try ledger.write { db in
                let writer = try ledger.writer(db)
                var ids = try writer.ids()
                for _ in 0..<60 {
                    let id = try ids.next()
                    let row = try Self.randomRow(db, &random)
                    let delivered = Bool.random(using: &random)
                    _ = try writer.insert(row, id: id, recordingDelivery: delivered)
                    var image = RowImage(row.columnValues(id: id))
                    if delivered { try image.recordDelivery(at: writer.now) }
                    let stored = try #require(try HashChain.rowDigest(db, id: id))
                    #expect(image.digest == stored, "row \(id)")
                }
                try ids.save(db)
            }
            #expect(try ledger.verify().isEmpty)
        }
    }

    /// Every change the writer makes, in any order, several in one commit and over several
    /// commits, leaves each row as its last event's digest recorded it (what `verify` checks).
    /// Seeded.
    @Test(arguments: [1, 2, 3, 4])
    func everyChangeOfTheWriterKeepsTheImageTheRow(seed: UInt64) async throws {
        var random = SplitMix64(seed: seed)
        try await withLedger { ledger, _ in
            for _ in 0..<8 {
                try ledger.write { db in
                    let writer = try ledger.writer(db, delivery: Bool.random(using: &random) ? .recorded : .notRecorded)
                    var ids = try writer.ids()
                    for _ in 0..<Int.random(in: 1...3, using: &random) {
                        var row = try Self.randomRow(db, &random)
                        row.state = .purchased
                        row.planned = nil
                        _ = try writer.insert(row, id: try ids.next())
                    }
                    try ids.save(db)
                    let rows = try PaymentTransaction.fetchAll(db, sql: "ORDER BY id")
                    for _ in 0..<6 { try Self.randomChange(writer, rows.randomElement(using: &random)!, &random) }
                }
            }
            let issues = try ledger.verify()
            #expect(issues.isEmpty, "\(issues)")
        }
    }

    /// A row another writer of the same transaction changed is read again, not digested from
    /// the image the first writer kept of it: without that, the first writer's next event would
    /// record a row without the second writer's change.
    @Test func aRowChangedByAnotherWriterOfTheTransactionIsReadAgain() async throws {
        try await withLedger { ledger, _ in
            try ledger.write { db in
                let first = try ledger.writer(db)
                var row = try NewTransactionRow(
                    db, productID: "nonconsumable", owner: Owner(customer: 1, app: 1), state: .purchased, at: first.now)
                row.planned = nil
                var bought = try first.insert(row)  // the first writer keeps its image
                _ = try ledger.writer(db).finish(bought)  // a second writer changes the row
                try first.recordDelivery(of: &bought)
            }
            #expect(try ledger.verify().isEmpty)
            let finished = try ledger.read { db in try PaymentTransaction.fetchOne(db, id: 1) }
            #expect(finished?.isFinished == true)
            #expect(finished?.deliveryCount == 1)
        }
    }

    /// The images hold because only the writer changes a transaction's row: no other source
    /// file holds SQL that inserts, updates or deletes one (the migrations run before any writer).
    @Test func onlyTheWriterChangesTransactionRows() throws {
        let sources = Repository.root + "/Sources"
        let allowed: Set = [
            "LedgerEngine/Operations/TransactionWriter.swift", "LedgerEngine/Operations/TransactionColumns.swift",
            "LedgerEngine/Operations/RowImage.swift", "LedgerEngine/Schema/EmbeddedMigrations.swift",
        ]
        let change = try Regex(
            #"(?i)(UPDATE|INSERT\s+(OR\s+\w+\s+)?INTO|REPLACE\s+INTO|DELETE\s+FROM)\s+"?transactions\b"#)
        var found: [String] = []
        for case let file as String in FileManager.default.enumerator(atPath: sources)!
        where file.hasSuffix(".swift") && !allowed.contains(file) {
            let text = try String(contentsOfFile: sources + "/" + file, encoding: .utf8)
            if text.contains(change) { found.append(file) }
        }
        #expect(found == [])
        #expect(allowed.allSatisfy { FileManager.default.fileExists(atPath: sources + "/" + $0) })
    }

    // MARK: - Random rows and changes

    static func randomRow(_ db: Database, _ random: inout SplitMix64) throws -> NewTransactionRow {
        let product = ["consumable", "nonconsumable", "monthly"].randomElement(using: &random)!
        var row = try NewTransactionRow(
            db, productID: product, owner: Owner(customer: 1, app: 1), state: .purchasing,
            at: testEpoch.ledgerMilliseconds)
        let texts = ["a", "é", "日本語", "🙂 x", "a\u{0}b", String(repeating: "z", count: 300)]
        row.planned =
            Bool.random(using: &random)
            ? (.purchased, nil)
            : (.failed, TransactionError(code: .paymentCancelled, message: texts.randomElement(using: &random)))
        row.quantity = Int.random(in: 1...10, using: &random)
        row.purchaseDate += Int64.random(in: -1_000_000...1_000_000, using: &random)
        if Bool.random(using: &random) { row.expirationDate = row.purchaseDate + 86_400_000 }
        if Bool.random(using: &random) { row.appAccountToken = UUID() }
        if Bool.random(using: &random) { row.applicationUsername = texts.randomElement(using: &random) }
        if Bool.random(using: &random) { row.idempotencyKey = UUID().uuidString + texts.randomElement(using: &random)! }
        if Bool.random(using: &random) { row.storefront = ["FRA", "JPN", "TWN"].randomElement(using: &random)! }
        if product == "monthly", Bool.random(using: &random) {
            row.offer = TransactionOffer(
                type: .introductory, id: Bool.random(using: &random) ? nil : "intro",
                paymentMode: .freeTrial, period: SubscriptionPeriod(iso8601: "P1W")!)
            row.offerNonce = Bool.random(using: &random) ? UUID() : nil
        }
        return row
    }

    /// One of the writer's changes that `transaction`'s row allows as the row is now.
    static func randomChange(
        _ writer: TransactionWriter, _ transaction: PaymentTransaction, _ random: inout SplitMix64
    ) throws {
        guard var current = try PaymentTransaction.fetchOne(writer.db, id: transaction.id) else { return }
        switch Int.random(in: 0..<5, using: &random) {
        case 0 where !current.isFinished:
            _ = try writer.finish(current)
        case 1 where current.productType == .autoRenewable:
            let after = max(writer.now, current.purchaseDate.ledgerMilliseconds)
            try writer.moveExpiration(of: current, to: after + Int64.random(in: 0...9_000_000, using: &random))
        case 2 where current.productType == .autoRenewable && !current.isUpgraded:
            try writer.markUpgraded(current)
        case 3 where current.revocationDate == nil:
            try writer.revoke(current, reason: Int.random(in: 0...1, using: &random))
        case 3:
            try writer.reinstate(current)
        default:
            try writer.recordDelivery(of: &current)
        }
    }
}
