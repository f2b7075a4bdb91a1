import Crypto
import Foundation
package import GRDB
import GRDBSQLite
import LedgerModel
import LedgerSigning

/// The byte format the hash chain hashes and signs (docs/HASH-CHAIN.md): each value is a tag
/// byte and its content, so that no two sequences of values encode alike.
///
/// | value | bytes |
/// |---|---|
/// | NULL | `00` |
/// | integer | `01`, then 8 bytes, big-endian two's complement |
/// | text | `02`, then the UTF-8 length in 4 bytes big-endian, then the UTF-8 bytes |
/// | blob | `03`, then the length in 4 bytes big-endian, then the bytes |
/// | real | `04`, then the IEEE 754 double in 8 bytes big-endian (the ledger stores none) |
package struct ChainEncoding {
    private(set) var bytes: [UInt8] = []

    package init(capacity: Int = 512) { bytes.reserveCapacity(capacity) }

    package mutating func null() { bytes.append(0) }

    /// Bytes as they are, without a tag: only for the previous link, which is always 32 bytes.
    package mutating func append(raw: [UInt8]) { bytes += raw }

    package mutating func integer(_ value: Int64) {
        bytes.append(1)
        appendBigEndian(UInt64(bitPattern: value))
    }

    package mutating func integer(_ value: Int64?) {
        if let value { integer(value) } else { null() }
    }

    package mutating func text(_ value: String?) {
        guard var value else { return null() }
        value.withUTF8 { appendCounted(tag: 2, UnsafeRawBufferPointer($0)) }
    }

    package mutating func blob(_ value: [UInt8]) {
        value.withUnsafeBytes { appendCounted(tag: 3, $0) }
    }

    /// Column `index` of the current row, by the storage class SQLite holds it in: a value
    /// edited into another type encodes differently, so its hash changes too.
    package mutating func column(_ columns: FastStatement.Columns, _ index: Int32) {
        let handle = columns.handle
        switch sqlite3_column_type(handle, index) {
        case SQLITE_INTEGER:
            integer(sqlite3_column_int64(handle, index))
        case SQLITE_FLOAT:
            bytes.append(4)
            appendBigEndian(sqlite3_column_double(handle, index).bitPattern)
        case SQLITE_TEXT:
            let text = sqlite3_column_text(handle, index)
            appendCounted(tag: 2, UnsafeRawBufferPointer(start: text, count: Int(sqlite3_column_bytes(handle, index))))
        case SQLITE_BLOB:
            let blob = sqlite3_column_blob(handle, index)
            appendCounted(tag: 3, UnsafeRawBufferPointer(start: blob, count: Int(sqlite3_column_bytes(handle, index))))
        default:
            null()
        }
    }

    private mutating func appendCounted(tag: UInt8, _ content: UnsafeRawBufferPointer) {
        bytes.append(tag)
        withUnsafeBytes(of: UInt32(content.count).bigEndian) { append($0) }
        append(content)
    }

    private mutating func appendBigEndian(_ value: UInt64) {
        withUnsafeBytes(of: value.bigEndian) { append($0) }
    }

    /// As typed bytes: Array's bulk append copies those in one go (raw bytes go one at a time).
    private mutating func append(_ raw: UnsafeRawBufferPointer) {
        bytes.append(contentsOf: raw.assumingMemoryBound(to: UInt8.self))
    }

    /// The bytes of `range` replaced by `other`'s (a `RowImage` changing a column).
    package mutating func replace(_ range: Range<Int>, with other: ChainEncoding) {
        bytes.replaceSubrange(range, with: other.bytes)
    }

    /// The integer encoded at `offset`; `nil` when another tag is there.
    package func integer(at offset: Int) -> Int64? {
        guard bytes[offset] == 1 else { return nil }
        return Int64(bitPattern: bytes[(offset + 1)..<(offset + 9)].reduce(0) { $0 << 8 | UInt64($1) })
    }

    package var sha256: [UInt8] { SHA256.hash(data: bytes).withUnsafeBytes { [UInt8]($0) } }

    /// The SHA-256 of the bytes in `range` only.
    package func sha256(of range: Range<Int>) -> [UInt8] {
        SHA256.hash(data: bytes[range]).withUnsafeBytes { [UInt8]($0) }
    }
}

/// The ledger's history as a hash chain (docs/HASH-CHAIN.md). Each event row stores the digest
/// of its transaction's row right after the event (`rowDigest`) and its link, the SHA-256 of
/// the previous link and of the event's encoding (`link`); the first event follows `genesis`,
/// which the ledger's root certificate determines. Whoever edits, deletes, inserts or reorders
/// an event, or changes a transaction row without an event, breaks a link `Ledger.verify`
/// recomputes; the signed head (`ChainHead`) makes a rewrite of the links themselves, or a
/// truncation, show too, unless it is signed again with the ledger's key.
package enum HashChain {
    /// The columns of `transactions` a row digest covers, in order: all of them, as the table
    /// declares them (`TransactionColumns`; the chain's reads select them in this order).
    package static let rowColumns = TransactionColumns.names

    /// The row digest of a `deleted` event, whose transaction has no row any more.
    package static let noRow = [UInt8](repeating: 0, count: 32)

    /// What the first event's link follows: SHA-256 of the text `StoreLedger hash chain 1` and
    /// the root certificate (DER), encoded. A chain copied under another identity breaks at once.
    package static func genesis(root: [UInt8]) -> [UInt8] {
        var encoding = ChainEncoding()
        encoding.text("StoreLedger hash chain 1")
        encoding.blob(root)
        return encoding.sha256
    }

    /// An event's link: SHA-256 of the previous link (32 bytes, as they are) followed by the
    /// encoding of the event's number, transaction id, kind, states, date, detail and row digest.
    package static func link(previous: [UInt8], _ event: ChainedEvent) -> [UInt8] {
        var encoding = ChainEncoding()
        encoding.append(raw: previous)
        event.encode(into: &encoding)
        return encoding.sha256
    }

    /// The SHA-256 of the encoding of transaction `id`'s row, column by column (`rowColumns`);
    /// `nil` when there is no such row.
    package static func rowDigest(_ db: Database, id: UInt64) throws -> [UInt8]? {
        let select = try FastStatement(db, selectRow)
        select.bind(1, Int64(id))
        return try select.first(rowDigest(of:))
    }

    /// `rowDigest(_:id:)` of a ledger older than schema 25, whose rows have no customer yet (they
    /// are the first customer's, whose column the digest leaves out): migration 10 digests them.
    package static func rowDigestBeforeCustomers(_ db: Database, id: UInt64) throws -> [UInt8]? {
        let select = try FastStatement(db, selectRowBeforeCustomers)
        select.bind(1, Int64(id))
        return try select.first(rowDigest(of:))
    }

    /// The row digest of the current row of a statement that selects `rowColumns`, in order
    /// (`selectRows`).
    package static func rowDigest(of columns: FastStatement.Columns) -> [UInt8] {
        RowImage(columns).digest
    }

    /// Throws `DamagedRow` unless each row `condition` selects is what its last event
    /// recorded: a row edited outside the ledger (its digest differs) is never signed, nor
    /// changed by a writer, whose new event would record the edit as if the ledger had made it.
    package static func vouch(_ db: Database, where condition: String, arguments: StatementArguments) throws {
        let rows = try FastStatement(db, selectVouching(where: condition))
        try rows.bind(arguments)
        try rows.forEachRow { _ = try vouch($0) }
    }

    /// The statement that selects `rowColumns` and the digest the last event recorded
    /// (at `recordedDigestColumn`) of the rows `condition` selects, in id order.
    package static func selectVouching(where condition: String) -> String {
        columnsOnly + ", " + lastDigest + " WHERE \(condition) ORDER BY t.id"
    }

    package static let recordedDigestColumn = Int32(rowColumns.count)

    /// Throws `DamagedRow` unless the current row of a `selectVouching` statement is what its
    /// last event recorded; returns the row's image, which the digest compared was made from.
    @discardableResult
    package static func vouch(_ columns: FastStatement.Columns) throws -> RowImage {
        let image = RowImage(columns)
        guard !matchesHistory(image, columns) else { return image }
        throw DamagedRow(
            reason:
                "transaction \(columns.int64(TransactionColumns.positions.id)) differs from what its history recorded "
                + "(it was edited outside the ledger; verify reports it): it is neither signed nor changed")
    }

    /// Whether `image`, of the current row of a `selectVouching` statement, is what its last
    /// event recorded (a row with no event yet, a migrated one, is).
    package static func matchesHistory(_ image: RowImage, _ columns: FastStatement.Columns) -> Bool {
        columns.isNull(recordedDigestColumn) || image.digest == columns.blob(recordedDigestColumn)
    }

    /// `vouch(_:where:arguments:)` for transaction `id` (prepared once).
    package static func vouch(_ db: Database, id: UInt64) throws {
        let row = try FastStatement(db, vouchRow)
        row.bind(1, Int64(id))
        try row.forEachRow { _ = try vouch($0) }
    }

    /// Transaction `id` read and vouched for in one statement (the server's path: a row read
    /// once); `nil` when the ledger has none.
    /// - Throws: `DamagedRow` as `vouch` does.
    package static func vouchedTransaction(_ db: Database, id: UInt64) throws -> PaymentTransaction? {
        guard id <= UInt64(Int64.max) else { return nil }
        // `vouchRow` selects the columns of `PaymentTransaction.selection`, in its order.
        let row = try FastStatement(db, vouchRow)
        row.bind(1, Int64(id))
        return try row.first { columns in
            try vouch(columns)
            return try PaymentTransaction(columns)
        }
    }

    /// One row by id (`rowColumns`) and the digest its last event recorded (`recordedDigestColumn`).
    static let vouchRow = LedgerSQL(columnsOnly + ", " + lastDigest + " WHERE t.id = ?")

    /// The digest the last event of a `transactions` row (aliased `t`) recorded.
    private static let lastDigest =
        "(SELECT row_digest FROM transaction_events WHERE transaction_id = t.id ORDER BY seq DESC LIMIT 1) FROM transactions t"

    /// The statement that selects `rowColumns` of the rows `condition` selects, in id order.
    package static func selectRows(where condition: String) -> String {
        selection + " WHERE \(condition) ORDER BY id"
    }

    /// Appends events in one write transaction, one (a payment's) or many (a launch's
    /// deliveries, a restore's copies, a clear): the next number and link are read once, then
    /// kept here, and many events are inserted `batchSize` rows per statement (a statement's
    /// own cost, with its trigger frames and AUTOINCREMENT bookkeeping, was most of an
    /// event's). Nothing else may append events while it is used; `finish` inserts the last ones.
    /// Unchained (`ledger-lab bench`'s comparison only), digests and links are zeros.
    package struct Appender {
        private var next: Int64
        private var previous: [UInt8]
        /// The key of the events' MACs; `nil` unchained.
        private let key: [UInt8]?
        private var chained: Bool { key != nil }
        private var pending: [(event: ChainedEvent, hash: [UInt8])] = []

        /// A launch compiles this statement on its fresh connection, and compiling grows with
        /// the rows: 32 costs fewer instructions per launch than 16 or 64 (callgrind,
        /// docs/PERFORMANCE.md).
        package static let batchSize = 32

        /// An appender whose events are chained and authenticated with `key`, or neither
        /// (`nil`: `ledger-lab bench`'s comparison only).
        package init(_ db: Database, key: [UInt8]?) throws {
            (next, previous) = try HashChain.next(db)
            self.key = key
        }

        package mutating func append(_ db: Database, _ event: ChainedEvent.Content, rowDigest: [UInt8]) throws {
            let chainedEvent = ChainedEvent(seq: next, content: event, rowDigest: chained ? rowDigest : noRow)
            let hash = chained ? link(previous: previous, chainedEvent) : noRow
            pending.append((chainedEvent, hash))
            next += 1
            previous = hash
            if pending.count == Self.batchSize {
                let insert = try FastStatement(db, Self.insertBatch)
                for (index, event) in pending.enumerated() { bind(insert, event, at: Int32(index * 10)) }
                try insert.execute()
                pending.removeAll(keepingCapacity: true)
            }
        }

        /// Inserts the events still pending.
        package mutating func finish(_ db: Database) throws {
            for event in pending {
                let insert = try FastStatement(db, Self.insertOne)
                bind(insert, event, at: 0)
                try insert.execute()
            }
            pending.removeAll()
        }

        /// One event's nine values and its MAC after the first `offset` parameters.
        private func bind(_ insert: FastStatement, _ event: (event: ChainedEvent, hash: [UInt8]), at offset: Int32) {
            HashChain.bind(insert, event.event, hash: event.hash, at: offset)
            if let key {
                insert.bind(offset + 10, HashChain.mac(of: event.hash, key: key))
            } else {
                insert.bind(offset + 10, Int64?.none)
            }
        }

        private static let prefix =
            "INSERT INTO transaction_events (seq, transaction_id, kind, from_state, to_state, at, detail, row_digest, hash, mac) VALUES "
        private static let insertOne = LedgerSQL(prefix + "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
        private static let insertBatch = LedgerSQL(
            prefix + Array(repeating: "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", count: batchSize).joined(separator: ", "))
    }

    /// An event's MAC: SHA-256 of the ledger's event key (`SigningIdentity.eventKey`, 32
    /// bytes) followed by the event's link (32 bytes). Every input has that one length, so no
    /// length extension makes another valid MAC; swift-crypto's HMAC made a launch's 1,000
    /// deliveries 4 ms slower (`ledger-lab bench`), this costs about nothing. The link covers
    /// the event and the history before it.
    package static func mac(of hash: [UInt8], key: [UInt8]) -> [UInt8] {
        SHA256.hash(data: key + hash).withUnsafeBytes { [UInt8]($0) }
    }

    /// The first event after event `seq` whose MAC is missing or wrong: one appended without
    /// the key, which no head may be signed over; `nil` when every one checks.
    package static func firstUnauthenticated(_ db: Database, after seq: Int64, key: [UInt8]) throws -> Int64? {
        let events = try FastStatement(db, selectTail)
        events.bind(1, seq)
        var found: Int64?
        try events.forEachRow { columns in
            guard found == nil else { return }
            if columns.isNull(2) || columns.blob(2) != mac(of: columns.blob(1), key: key) { found = columns.int64(0) }
        }
        return found
    }

    private static let selectTail = LedgerSQL(
        "SELECT seq, hash, mac FROM transaction_events WHERE seq > ? ORDER BY seq")

    /// Throws `DamagedRow` unless every event of transaction `id`'s history after the stored
    /// head carries its MAC: what a signer is about to sign rests on the transaction's last
    /// events, and those the head does not cover are authenticated only by their MACs. A row
    /// made to match an event appended without the key (a forged refund) passes `vouch`, its
    /// digest being the forged event's; this refuses it. Events the head covers are vouched for
    /// by its signature (`ledger verify` checks it).
    package static func authenticateUnsigned(_ db: Database, of id: UInt64, key: [UInt8]) throws {
        let events = try FastStatement(db, selectUnsignedOfTransaction)
        events.bind(1, Int64(bitPattern: id))
        var forged: Int64?
        try events.forEachRow { columns in
            guard forged == nil else { return }
            if columns.isNull(2) || columns.blob(2) != mac(of: columns.blob(1), key: key) { forged = columns.int64(0) }
        }
        if let forged {
            throw DamagedRow(
                reason: "transaction \(id)'s history has event \(forged) after the signed head without the ledger's "
                    + "authentication (it was appended without the ledger's key; verify reports it): it is not signed")
        }
    }

    private static let selectUnsignedOfTransaction = LedgerSQL(
        """
        SELECT seq, hash, mac FROM transaction_events
        WHERE transaction_id = ? AND seq > coalesce((SELECT seq FROM chain_head WHERE id = 1), 0) ORDER BY seq
        """)

    /// The last event's number and link; `nil` while the history is empty.
    package static func last(_ db: Database) throws -> (seq: Int64, hash: [UInt8])? {
        try FastStatement(db, selectEnd).first { ($0.int64(0), $0.blob(1)) }
    }

    /// The last event's number and link; `(0, genesis)` while the history is empty.
    package static func end(_ db: Database) throws -> (seq: Int64, hash: [UInt8]) {
        try last(db) ?? (0, try genesis(db))
    }

    /// Every event with its digest and link, in order: the columns a link covers (0 to 7), then
    /// the link (8). What `verify` recomputes and `exportAudit` writes.
    package static let selectEvents = LedgerSQL(
        """
        SELECT seq, transaction_id, kind, from_state, to_state, at, detail, row_digest, hash
        FROM transaction_events ORDER BY seq
        """)

    /// The number the next event takes (after every number ever used, as AUTOINCREMENT counts
    /// them) and the link it follows.
    package static func next(_ db: Database) throws -> (seq: Int64, previous: [UInt8]) {
        let (counter, hash) =
            try FastStatement(db, selectNext).first { ($0.int64(0), $0.isNull(1) ? nil : $0.blob(1)) } ?? (0, nil)
        return (counter + 1, try hash ?? genesis(db))
    }

    /// The ledger's genesis value (`genesis(root:)`).
    package static func genesis(_ db: Database) throws -> [UInt8] {
        guard let root = try FastStatement(db, selectRoot).first({ $0.blob(0) }) else {
            throw DamagedRow(reason: "the ledger has no signing identity")
        }
        return genesis(root: root)
    }

    /// Inserts an event of the history migration 10 chained (there is no MAC column yet).
    private static func insertAdopted(_ db: Database, _ event: ChainedEvent, hash: [UInt8]) throws {
        let insert = try FastStatement(db, insertAdoptedEvent)
        bind(insert, event, hash: hash, at: 0)
        try insert.execute()
    }

    /// Binds one event's nine values after the first `offset` parameters.
    private static func bind(_ insert: FastStatement, _ event: ChainedEvent, hash: [UInt8], at offset: Int32) {
        insert.bind(offset + 1, event.seq)
        insert.bind(offset + 2, Int64(event.content.transactionID))
        insert.bind(offset + 3, event.content.kind.rawValue)
        insert.bind(offset + 4, event.content.from?.rawValue)
        insert.bind(offset + 5, event.content.to.rawValue)
        insert.bind(offset + 6, event.content.at)
        insert.bind(offset + 7, event.content.detail)
        insert.bind(offset + 8, event.rowDigest)
        insert.bind(offset + 9, hash)
    }

    // MARK: - The history written before the chain

    /// Migration 0010's step in Swift: copies every event of `transaction_events_before_chain`
    /// into the new table in order, keeping its number, with its row digest (the row as it is
    /// now: the rows of the past are not kept) and its link; then drops the old table.
    package static func adopt(_ db: Database) throws {
        var end = try end(db)
        let events = try Row.fetchCursor(
            db,
            sql: """
                SELECT seq, transaction_id, kind, from_state, to_state, at, detail
                FROM transaction_events_before_chain ORDER BY seq
                """)
        var digests: (id: UInt64, digest: [UInt8])?
        while let row = try events.next() {
            let old = try TransactionEvent(row: row)
            if digests?.id != old.transactionID {
                // The old table's foreign key kept every event's transaction.
                digests = (old.transactionID, try rowDigestBeforeCustomers(db, id: old.transactionID) ?? noRow)
            }
            let event = ChainedEvent(
                seq: old.sequence,
                content: .init(
                    transactionID: old.transactionID, kind: old.kind, from: old.fromState, to: old.toState,
                    at: old.date.ledgerMilliseconds, detail: old.detail),
                rowDigest: digests!.digest)
            end = (event.seq, link(previous: end.hash, event))
            try insertAdopted(db, event, hash: end.hash)
        }
        try db.execute(sql: "DROP TABLE transaction_events_before_chain")
    }

    // MARK: - Statements

    private static let selection = "SELECT " + rowColumns.joined(separator: ", ") + " FROM transactions"
    private static let columnsOnly = "SELECT " + rowColumns.map { "t." + $0 }.joined(separator: ", ")
    /// One row by id (`rowColumns`).
    package static let selectRow = LedgerSQL(selection + " WHERE id = ?")
    /// One row by id as migration 10 reads it, before transactions had a customer (migration
    /// 25): the first customer's, whose column the digest leaves out.
    private static let selectRowBeforeCustomers = LedgerSQL(
        "SELECT " + rowColumns.map { $0 == "customer_id" || $0 == "app_id" ? "1" : $0 }.joined(separator: ", ")
            + " FROM transactions WHERE id = ?")
    private static let selectEnd = LedgerSQL("SELECT seq, hash FROM transaction_events ORDER BY seq DESC LIMIT 1")
    private static let selectNext = LedgerSQL(
        """
        SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'transaction_events'), 0),
               (SELECT hash FROM transaction_events ORDER BY seq DESC LIMIT 1)
        """)
    private static let selectRoot = LedgerSQL("SELECT root_certificate FROM signing_identity WHERE id = 1")
    private static let insertAdoptedEvent = LedgerSQL(
        "INSERT INTO transaction_events (seq, transaction_id, kind, from_state, to_state, at, detail, row_digest, hash) "
            + "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")
}

/// One event as the chain hashes it.
package struct ChainedEvent {
    /// What the writer says happened.
    package struct Content {
        package var transactionID: UInt64
        package var kind: TransactionEvent.Kind
        package var from: TransactionState?
        package var to: TransactionState
        /// Store time, in milliseconds.
        package var at: Int64
        package var detail: String?
    }

    package var seq: Int64
    package var content: Content
    package var rowDigest: [UInt8]

    package func encode(into encoding: inout ChainEncoding) {
        encoding.integer(seq)
        encoding.integer(Int64(bitPattern: content.transactionID))
        encoding.text(content.kind.rawValue)
        encoding.text(content.from?.rawValue)
        encoding.text(content.to.rawValue)
        encoding.integer(content.at)
        encoding.text(content.detail)
        encoding.blob(rowDigest)
    }
}
