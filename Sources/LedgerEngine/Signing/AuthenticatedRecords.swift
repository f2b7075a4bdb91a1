import Crypto
import Foundation
package import GRDB
import LedgerModel

/// The facts kept beside the hash chain that reach a signature or an access decision, each row
/// authenticated by a MAC made with the ledger's event key (migration 22; `renewal_changes`,
/// migration 24), each table sealed
/// by its row count and the XOR of its rows' MACs, authenticated the same way.
///
/// A row inserted or edited without the key has no valid MAC: `check` refuses it where it is
/// used (a signer, the server's key check, the sender), and `problems` reports it. A row
/// deleted, added or put back as it was before leaves its MAC valid or absent but changes the
/// table's seal: `problems` reports it (and the API key check reads the seal of its small
/// table every time). Every write of these tables goes through `write`, which checks the row
/// it replaces before it stamps the new one: a forged row is never authenticated by a later
/// write over it.
package struct AuthenticatedRecords {
    /// One authenticated table: its name, its key column, and the columns its MAC covers (in
    /// this order; a notification's delivery status is not a fact it vouches for).
    package struct Table: Sendable, Hashable {
        package let name: String
        /// The columns of its key, the first of `columns`, in order.
        package let keys: [String]
        package let columns: [String]
        /// The row of one key, its columns by name then its MAC: built once, as signers ask for
        /// every transaction they sign.
        package let selectByKey: String
        /// The condition that selects one row by its key, bound in `keys`' order.
        package let keyCondition: String

        package init(name: String, keys: [String], columns: [String]) {
            precondition(Array(columns.prefix(keys.count)) == keys, "a table's key is its first columns")
            (self.name, self.keys, self.columns) = (name, keys, columns)
            keyCondition = keys.map { "\($0) = ?" }.joined(separator: " AND ")
            selectByKey = "SELECT \(columns.joined(separator: ", ")), mac FROM \(name) WHERE \(keyCondition)"
        }

        package init(name: String, key: String, columns: [String]) {
            self.init(name: name, keys: [key], columns: columns)
        }

        package static let apiKeys = Table(
            name: "api_keys", key: "key_id", columns: ["key_id", "issuer_id", "public_key", "created_at", "revoked_at"])
        package static let familyShares = Table(
            name: "family_shares", key: "original_transaction_id",
            columns: ["original_transaction_id", "shared_at", "revoked_at"])
        package static let appAccountTokens = Table(
            name: "app_account_tokens", key: "original_transaction_id",
            columns: ["original_transaction_id", "token", "set_at"])
        package static let refundPortions = Table(
            name: "refund_portions", key: "transaction_id", columns: ["transaction_id", "percentage"])
        /// A subscriber's price increase, keyed by customer and group (migration 25).
        package static let priceIncreases = Table(
            name: "price_increases", keys: ["customer_id", "group_id"],
            columns: [
                "customer_id", "group_id", "product_id", "price", "needs_consent", "status", "requested_at",
                "answered_at",
            ])
        /// The price increases as migrations 22 to 24 kept them, one per group, before customers.
        package static let priceIncreasesBeforeCustomers = Table(
            name: "price_increases", key: "group_id",
            columns: ["group_id", "product_id", "price", "needs_consent", "status", "requested_at", "answered_at"])
        package static let chargedPrices = Table(
            name: "charged_prices", key: "transaction_id", columns: ["transaction_id", "price"])
        /// A notification, with the app it is for (migration 26): which URL it goes to and which
        /// app's server sees it.
        package static let notifications = Table(
            name: "notifications", key: "seq",
            columns: [
                "seq", "uuid", "type", "subtype", "transaction_id", "original_transaction_id", "event_key",
                "created_at", "signed_payload", "app_id",
            ])
        /// The notifications as migrations 22 to 25 kept them, before apps.
        package static let notificationsBeforeApps = Table(
            name: "notifications", key: "seq",
            columns: [
                "seq", "uuid", "type", "subtype", "transaction_id", "original_transaction_id", "event_key",
                "created_at", "signed_payload",
            ])

        /// Which payments only changed a subscription's next renewal (migration 24): a row
        /// deleted would let the server sign such a payment, one added would hide a purchase.
        package static let renewalChanges = Table(
            name: "renewal_changes", key: "transaction_id", columns: ["transaction_id", "subscription_id"])

        /// The tables migration 22 authenticated.
        package static let sinceSchema22: [Table] = [
            apiKeys, familyShares, appAccountTokens, refundPortions, priceIncreasesBeforeCustomers, chargedPrices,
            notificationsBeforeApps,
        ]

        package static let all: [Table] = [
            apiKeys, familyShares, appAccountTokens, refundPortions, priceIncreases, chargedPrices, notifications,
            renewalChanges,
        ]

        /// What describes a row in a message: `table key`.
        package func describe(_ key: [DatabaseValue]) -> String {
            "\(name) row \(key.map(\.description).joined(separator: " "))"
        }
    }

    package let db: Database
    /// The event key (`SigningIdentity.eventKey`); `nil` on an unchained ledger (the bench's
    /// comparison), where nothing is stamped or checked.
    package let key: [UInt8]?

    // MARK: - MACs

    /// A row's MAC: SHA-256 of the event key and of the row's encoding (a fixed 64-byte input,
    /// as an event's MAC).
    package static func mac(_ table: Table, _ values: [DatabaseValue], key: [UInt8]) -> [UInt8] {
        var encoding = ChainEncoding()
        encoding.text("StoreLedger record 1")
        encoding.text(table.name)
        for value in values { encoding.value(value) }
        return HashChain.mac(of: encoding.sha256, key: key)
    }

    /// A seal's MAC, over its table, count and digest.
    package static func sealMAC(_ table: Table, count: Int64, digest: [UInt8], key: [UInt8]) -> [UInt8] {
        var encoding = ChainEncoding()
        encoding.text("StoreLedger seal 1")
        encoding.text(table.name)
        encoding.integer(count)
        encoding.blob(digest)
        return HashChain.mac(of: encoding.sha256, key: key)
    }

    // MARK: - Writes

    /// Runs `change`, a write of `table`'s row `key` (an insert, an update, an upsert or a
    /// delete), and authenticates what it leaves: the row's MAC (or its absence) and the
    /// table's seal. The row it replaces must check first.
    /// - Throws: `DamagedRow` for a row there before that does not check; nothing is written.
    package func write(_ table: Table, key rowKey: some DatabaseValueConvertible, _ change: () throws -> Void) throws {
        try write(table, keys: [rowKey.databaseValue], change)
    }

    /// `write(_:key:_:)` for a table whose key has several columns, bound in its `keys`' order.
    package func write(_ table: Table, keys rowKey: [DatabaseValue], _ change: () throws -> Void) throws {
        guard let key else { return try change() }
        let before = try stored(table, rowKey)
        if let before { try check(table, rowKey, before, key: key) }
        try change()
        let after = try stored(table, rowKey)
        // No row before or after (a delete of what was never there): the seal stays as it is.
        if before == nil, after == nil { return }
        var seal = try self.seal(table, key: key)
        if let old = before?.mac {
            seal.count -= 1
            seal.digest = Self.xor(seal.digest, old)
        }
        if let after {
            let mac = Self.mac(table, after.values, key: key)
            try db.execute(
                sql: "UPDATE \(table.name) SET mac = ? WHERE \(table.keyCondition)",
                arguments: StatementArguments([Data(mac).databaseValue] + rowKey))
            seal.count += 1
            seal.digest = Self.xor(seal.digest, mac)
        }
        try save(table, seal, key: key)
    }

    /// Authenticates a row just inserted whose key the insert chose (a notification's
    /// sequence): there was none before it.
    package func inserted(_ table: Table, key value: some DatabaseValueConvertible) throws {
        let rowKey = [value.databaseValue]
        guard let key, let after = try stored(table, rowKey) else { return }
        let mac = Self.mac(table, after.values, key: key)
        try db.execute(
            sql: "UPDATE \(table.name) SET mac = ? WHERE \(table.keyCondition)",
            arguments: StatementArguments([Data(mac).databaseValue] + rowKey))
        var seal = try self.seal(table, key: key)
        seal.count += 1
        seal.digest = Self.xor(seal.digest, mac)
        try save(table, seal, key: key)
    }

    /// Whether `table`'s row `key` carries its MAC (no row: true).
    package func isAuthentic(_ table: Table, key rowKey: some DatabaseValueConvertible) throws -> Bool {
        guard let key, let row = try stored(table, [rowKey.databaseValue]) else { return true }
        return row.mac == Self.mac(table, row.values, key: key)
    }

    // MARK: - Checks where a fact is used

    /// Throws `DamagedRow` unless `table`'s row `key`, when there is one, carries its MAC.
    package func check(_ table: Table, key rowKey: some DatabaseValueConvertible) throws {
        _ = try row(table, keys: [rowKey.databaseValue])
    }

    /// `table`'s row `key` (its columns by name), once it is shown to carry its MAC: what a fact
    /// is read from where it is used, in the same read as its check. `nil` when there is none.
    /// - Throws: `DamagedRow` for a row that does not check.
    package func row(_ table: Table, key rowKey: some DatabaseValueConvertible) throws -> Row? {
        try row(table, keys: [rowKey.databaseValue])
    }

    /// `row(_:key:)` for a table whose key has several columns, bound in its `keys`' order.
    package func row(_ table: Table, keys rowKey: [DatabaseValue]) throws -> Row? {
        guard let row = try fetch(table, rowKey) else { return nil }
        if let key { try check(table, rowKey, Self.stored(table, row), key: key) }
        return row
    }

    /// Throws `DamagedRow` unless `table`'s seal checks against its rows, every one of which
    /// carries its MAC: for a small table read whole where it decides (the API keys).
    package func checkWhole(_ table: Table) throws {
        guard key != nil else { return }
        if let problem = try problems(table).first { throw DamagedRow(reason: problem.message) }
    }

    private func check(_ table: Table, _ rowKey: [DatabaseValue], _ row: Stored, key: [UInt8]) throws {
        guard row.mac == Self.mac(table, row.values, key: key) else {
            throw DamagedRow(
                reason:
                    "the \(table.describe(rowKey)) was \(row.mac == nil ? "written" : "changed") without the ledger's key "
                    + "(outside the ledger; verify reports it): it is not used")
        }
    }

    // MARK: - verify

    /// What is wrong with every authenticated table: rows whose MAC does not check, and seals
    /// that do not match their rows (a row deleted, added or put back).
    package func problems() throws -> [LedgerProblem] {
        guard key != nil else { return [] }
        return try Table.all.flatMap { try problems($0) }
    }

    private func problems(_ table: Table) throws -> [LedgerProblem] {
        guard let key else { return [] }
        var problems: [LedgerProblem] = []
        var count: Int64 = 0
        var digest = [UInt8](repeating: 0, count: 32)
        let rows = try Row.fetchCursor(
            db,
            sql:
                "SELECT \(table.columns.joined(separator: ", ")), mac FROM \(table.name) ORDER BY \(table.keys.joined(separator: ", "))"
        )
        while let row = try rows.next() {
            let values = (0..<table.columns.count).map { row[$0] as DatabaseValue }
            let stored = Self.blob(row[table.columns.count])
            if stored != Self.mac(table, values, key: key) {
                problems.append(
                    LedgerProblem(
                        transactionID: nil,
                        message:
                            "the \(table.describe(Array(values.prefix(table.keys.count)))) was \(stored == nil ? "written" : "changed") "
                            + "without the ledger's key"))
            }
            if let stored {
                count += 1
                digest = Self.xor(digest, stored)
            }
        }
        let seal = try self.seal(table, key: key, checking: false)
        if seal.count < 0 {
            problems.append(
                LedgerProblem(transactionID: nil, message: "the seal of \(table.name) is missing or damaged"))
        } else if seal.mac != Self.sealMAC(table, count: seal.count, digest: seal.digest, key: key) {
            problems.append(
                LedgerProblem(
                    transactionID: nil, message: "the seal of \(table.name) was changed without the ledger's key"))
        } else if seal.count != count || seal.digest != digest {
            problems.append(
                LedgerProblem(
                    transactionID: nil,
                    message: "\(table.name) holds \(count) authenticated rows where its seal counts \(seal.count), "
                        + "or not the same ones: a row was deleted, added or put back without the ledger's key"))
        }
        return problems
    }

    // MARK: - Migration 22

    /// Authenticates every row already there and seals each table (migration 22).
    package func adopt(_ tables: [Table]) throws {
        guard let key else { return }
        for table in tables {
            precondition(table.keys.count == 1, "adopted tables have a one-column key")
            let keyColumn = table.keys[0]
            var seal = Seal(count: 0, digest: [UInt8](repeating: 0, count: 32), mac: [])
            let columns = table.columns.joined(separator: ", ")
            let update = try db.makeStatement(sql: "UPDATE \(table.name) SET mac = ? WHERE \(keyColumn) = ?")
            // A page at a time, by key: an outbox of millions of notifications is never all in
            // memory at once.
            var after: DatabaseValue = .null
            while true {
                let page = try Row.fetchAll(
                    db,
                    sql: """
                        SELECT \(columns) FROM \(table.name) WHERE ?1 IS NULL OR \(keyColumn) > ?1
                        ORDER BY \(keyColumn) LIMIT 1000
                        """,
                    arguments: [after])
                guard let last = page.last else { break }
                for row in page {
                    let values = (0..<table.columns.count).map { row[$0] as DatabaseValue }
                    let mac = Self.mac(table, values, key: key)
                    try update.execute(arguments: [Data(mac), values[0]])
                    seal.count += 1
                    seal.digest = Self.xor(seal.digest, mac)
                }
                after = last[0]
            }
            try save(table, seal, key: key)
        }
    }

    // MARK: - Migration 25

    /// Stamps every row of `table` again, under its columns, when its MACs covered `before`'s
    /// (migration 25 keys the price increases by customer too), and seals the table again: only
    /// when the table checked whole before, so that nothing forged is vouched for. Otherwise the
    /// rows stay as they were, and the upgrade's check of its result refuses the ledger with
    /// what `verify` reports. The table holds a row per subscriber and group.
    package func restamp(_ table: Table, from before: Table) throws {
        guard let key, try problems(before).isEmpty else { return }
        var seal = Seal(count: 0, digest: [UInt8](repeating: 0, count: 32), mac: [])
        let update = try db.makeStatement(sql: "UPDATE \(table.name) SET mac = ? WHERE \(table.keyCondition)")
        for row in try Row.fetchAll(
            db, sql: "SELECT \(table.columns.joined(separator: ", ")) FROM \(table.name) WHERE mac IS NOT NULL")
        {
            let values = (0..<table.columns.count).map { row[$0] as DatabaseValue }
            let mac = Self.mac(table, values, key: key)
            try update.execute(
                arguments: StatementArguments([Data(mac).databaseValue] + values.prefix(table.keys.count)))
            seal.count += 1
            seal.digest = Self.xor(seal.digest, mac)
        }
        try save(table, seal, key: key)
    }

    // MARK: - Rows and seals

    private struct Stored {
        package let values: [DatabaseValue]
        package let mac: [UInt8]?
    }

    private func stored(_ table: Table, _ rowKey: [DatabaseValue]) throws -> Stored? {
        try fetch(table, rowKey).map { Self.stored(table, $0) }
    }

    private func fetch(_ table: Table, _ rowKey: [DatabaseValue]) throws -> Row? {
        try Row.fetchOne(db.cachedStatement(sql: table.selectByKey), arguments: StatementArguments(rowKey))
    }

    private static func stored(_ table: Table, _ row: Row) -> Stored {
        Stored(values: (0..<table.columns.count).map { row[$0] as DatabaseValue }, mac: blob(row[table.columns.count]))
    }

    private struct Seal {
        package var count: Int64
        package var digest: [UInt8]
        package var mac: [UInt8]
    }

    /// `table`'s seal; checked unless `checking` is false (verify reports a bad one itself).
    private func seal(_ table: Table, key: [UInt8], checking: Bool = true) throws -> Seal {
        guard
            let row = try Row.fetchOne(
                db.cachedStatement(sql: "SELECT row_count, digest, mac FROM record_seals WHERE table_name = ?"),
                arguments: [table.name])
        else {
            if checking {
                throw DamagedRow(reason: "the seal of \(table.name) is missing (verify reports it): nothing is written")
            }
            return Seal(count: -1, digest: [], mac: [])
        }
        // Read by type, never converted: a value of another type is a damaged seal, not a trap.
        guard case .int64(let count) = (row[0] as DatabaseValue).storage,
            case .blob(let digest) = (row[1] as DatabaseValue).storage,
            case .blob(let mac) = (row[2] as DatabaseValue).storage
        else {
            if checking {
                throw DamagedRow(
                    reason: "the seal of \(table.name) holds a value of the wrong type (verify reports it)")
            }
            return Seal(count: -1, digest: [], mac: [])
        }
        let seal = Seal(count: count, digest: [UInt8](digest), mac: [UInt8](mac))
        if checking, seal.mac != Self.sealMAC(table, count: seal.count, digest: seal.digest, key: key) {
            throw DamagedRow(
                reason: "the seal of \(table.name) was changed without the ledger's key (verify reports it): "
                    + "nothing is written")
        }
        return seal
    }

    private func save(_ table: Table, _ seal: Seal, key: [UInt8]) throws {
        try db.execute(
            sql: "INSERT OR REPLACE INTO record_seals (table_name, row_count, digest, mac) VALUES (?, ?, ?, ?)",
            arguments: [
                table.name, seal.count, Data(seal.digest),
                Data(Self.sealMAC(table, count: seal.count, digest: seal.digest, key: key)),
            ])
    }

    /// A stored MAC: a blob, else none (a value of another type is no MAC).
    private static func blob(_ value: DatabaseValue) -> [UInt8]? {
        if case .blob(let data) = value.storage { return [UInt8](data) }
        return nil
    }

    private static func xor(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
        zip(a, b).map { $0 ^ $1 }
    }
}

extension ChainEncoding {
    /// A stored value, by its type.
    package mutating func value(_ value: DatabaseValue) {
        switch value.storage {
        case .null: null()
        case .int64(let number): integer(number)
        case .double(let number): text(String(number))
        case .string(let text): self.text(text)
        case .blob(let data): blob([UInt8](data))
        }
    }
}

extension Ledger {
    /// The authenticated records of `db`'s ledger (unchained: nothing stamped or checked).
    package func records(_ db: Database) throws -> AuthenticatedRecords {
        AuthenticatedRecords(db: db, key: configuration.keepsHashChain ? try identities.eventKey(db) : nil)
    }
}
