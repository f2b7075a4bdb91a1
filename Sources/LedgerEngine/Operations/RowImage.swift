package import GRDB
import LedgerModel

/// A transaction's row as the hash chain encodes it (`ChainEncoding`, column by column in
/// `HashChain.rowColumns`' order), with where each column's bytes end: taken from a read of the
/// row or from the values it is inserted with, then changed as the writer's statements change
/// the row (`set`, `recordDelivery`), so that the digest after a change needs no read of the row.
///
/// The table's columns are INTEGER or TEXT and the writer binds each value with its column's
/// type, so SQLite keeps the storage class the image encodes (`ColumnValue`); every test that
/// verifies a ledger compares the digests so made with the rows (`Ledger.verify`).
package struct RowImage {
    private var encoding = ChainEncoding()
    /// The end of each column's bytes in `encoding`; a column starts where the one before it ends.
    private var ends = InlineArray<38, Int>(repeating: 0)

    /// The current row of a statement that selects `HashChain.rowColumns`, in order.
    package init(_ columns: FastStatement.Columns) {
        precondition(Self.columnCount == ends.count, "RowImage keeps \(ends.count) columns")
        precondition(
            Int(Self.customerID) == Self.columnCount - 2 && Int(Self.appID) == Self.columnCount - 1,
            "the customer's and the app's columns are the last")
        for index in 0..<Int32(Self.columnCount) {
            encoding.column(columns, index)
            ends[Int(index)] = encoding.bytes.count
        }
    }

    /// A row made of `values`, one per column in `HashChain.rowColumns`' order.
    package init(_ values: [ColumnValue]) {
        precondition(values.count == Self.columnCount && Self.columnCount == ends.count, "one value per column")
        for (index, value) in values.enumerated() {
            value.encode(into: &encoding)
            ends[index] = encoding.bytes.count
        }
    }

    private static let columnCount = HashChain.rowColumns.count

    /// The row digest the chain records (`HashChain.rowDigest(of:)`), of every column but the
    /// last ones that are 1, as every row made before them was: without the app's when the
    /// row is the first app's (every row made before apps, migration 26, is), and without the
    /// customer's too when it is also the first customer's (every row made before customers,
    /// migration 25, is), so that the digests recorded then stay right.
    package var digest: [UInt8] {
        let customerStart = ends[Int(Self.customerID) - 1]
        let appStart = ends[Int(Self.appID) - 1]
        guard encoding.integer(at: appStart) == 1 else { return encoding.sha256 }
        guard encoding.integer(at: customerStart) == 1 else { return encoding.sha256(of: 0..<appStart) }
        return encoding.sha256(of: 0..<customerStart)
    }

    /// Column `column` set to `value`, as an UPDATE binding it leaves the row.
    package mutating func set(_ column: Int32, _ value: ColumnValue) {
        var encoded = ChainEncoding(capacity: 16)
        value.encode(into: &encoded)
        let index = Int(column)
        let range = (index == 0 ? 0 : ends[index - 1])..<ends[index]
        encoding.replace(range, with: encoded)
        let shift = encoded.bytes.count - range.count
        guard shift != 0 else { return }
        for later in index..<ends.count { ends[later] += shift }
    }

    /// One more delivery at `date`, as `TransactionWriter`'s delivery leaves the row
    /// (`delivery_count = delivery_count + 1, last_delivered_at = date`).
    /// - Throws: `DamagedRow` when the count is not an integer (a row the chain vouched for
    ///   always has one: the table declares it NOT NULL and the writer binds integers).
    package mutating func recordDelivery(at date: Int64) throws {
        let count = Int(Self.deliveryCount)
        let start = count == 0 ? 0 : ends[count - 1]
        guard let current = encoding.integer(at: start) else {
            throw DamagedRow(reason: "a transaction's delivery count is not an integer")
        }
        set(Self.deliveryCount, .integer(current + 1))
        set(Self.lastDeliveredAt, .integer(date))
    }

    private static let deliveryCount = TransactionColumns.positions.deliveryCount
    private static let customerID = TransactionColumns.positions.customerID
    private static let appID = TransactionColumns.positions.appID
    private static let lastDeliveredAt = TransactionColumns.positions.lastDeliveredAt
}

/// A value the writer stores in a transaction's column, bound with the column's type: the
/// row's statement binds it and its `RowImage` encodes it alike.
package enum ColumnValue {
    case integer(Int64?)
    case text(String?)

    package static func flag(_ value: Bool) -> ColumnValue { .integer(value ? 1 : 0) }

    func encode(into encoding: inout ChainEncoding) {
        switch self {
        case .integer(let value): encoding.integer(value)
        case .text(let value): encoding.text(value)
        }
    }

    func bind(to statement: FastStatement, at index: Int32) {
        switch self {
        case .integer(let value): statement.bind(index, value)
        case .text(let value): statement.bind(index, value)
        }
    }
}

/// An UPDATE of one transaction's row by id, its columns named once: the statement sets them
/// from the values given, in order, and the writer's `RowImage` of the row takes the same values.
package struct RowUpdate: Sendable {
    private let columns: [Int32]
    private let sql: LedgerSQL

    package init(_ names: String...) {
        columns = names.map(TransactionColumns.position)
        sql = LedgerSQL(
            "UPDATE transactions SET " + names.map { $0 + " = ?" }.joined(separator: ", ") + " WHERE id = ?")
    }

    /// Sets transaction `id`'s columns to `values` (one per column, in order), and `image`'s.
    package func run(_ db: Database, id: UInt64, _ values: [ColumnValue], image: inout RowImage?) throws {
        precondition(values.count == columns.count, "one value per column")
        let update = try FastStatement(db, sql)
        for (index, value) in values.enumerated() { value.bind(to: update, at: Int32(index + 1)) }
        update.bind(Int32(values.count + 1), Int64(id))
        try update.execute()
        // Unchained, the writer reads no image first: a missing row shows here.
        guard db.changesCount == 1 else { throw DamagedRow(reason: "transaction \(id) has no row to change") }
        guard image != nil else { return }
        for (column, value) in zip(columns, values) { image?.set(column, value) }
    }
}
