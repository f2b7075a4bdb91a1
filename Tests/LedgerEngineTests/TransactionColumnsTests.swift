import GRDB
import LedgerTestSupport
import Testing

@testable import LedgerEngine
@testable import SimulatedStore

/// `TransactionColumns` is the one list of the transaction row: what the decoder reads, the
/// chain digests, an insert binds and a restored copy selects all come from it, so it must be
/// the table's.
@Suite struct TransactionColumnsTests {
    @Test func theListIsTheTablesAndWhatACopyLeavesOutHasADefault() async throws {
        try await withLedger { ledger, _ in
            let columns = try ledger.read { db in try db.columns(in: "transactions") }
            #expect(columns.map(\.name) == TransactionColumns.names)
            for column in columns where TransactionColumns.startAtTheirDefault.contains(column.name) {
                #expect(column.defaultValueSQL != nil || !column.isNotNull, "\(column.name) has no default")
            }
            #expect(TransactionColumns.startAtTheirDefault.isSubset(of: TransactionColumns.names))
            #expect(
                TransactionColumns.inserted.count + TransactionColumns.startAtTheirDefault.count
                    == TransactionColumns.names.count)
        }
    }

    /// Each column has its own position, and the writer's insert gives every one a parameter.
    @Test func everyColumnHasItsOwnPositionAndParameter() {
        let positions = Mirror(reflecting: TransactionColumns.positions).children.compactMap { $0.value as? Int32 }
        #expect(positions.sorted() == Array(0..<Int32(TransactionColumns.names.count)))
        #expect(TransactionColumns.insertion.filter { $0 == "?" }.count == TransactionColumns.names.count)
    }

    /// A restored copy sets only inserted columns of its own; the others it copies.
    @Test func aRestoredCopyOverridesOnlyInsertedColumns() {
        let overridden = ["id", "state", "reason", "purchase_date", "created_at", "updated_at", "environment"]
        for name in TransactionColumns.names {
            let own = TransactionColumns.restoredCopy(name, now: 5, firstID: 9)
            if TransactionColumns.startAtTheirDefault.contains(name) { #expect(own == nil, "\(name)") }
            if overridden.contains(name) { #expect(own != nil, "\(name)") }
        }
        #expect(TransactionColumns.restoredCopy("id", now: 5, firstID: 9)?.values == [9.databaseValue])
        #expect(TransactionColumns.restoredCopy("created_at", now: 5, firstID: 9)?.values == [5.databaseValue])
    }
}
