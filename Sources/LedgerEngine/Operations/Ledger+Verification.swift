import Foundation
import GRDB
import LedgerModel

/// One thing wrong in a ledger, found by `Ledger.verify()`.
public struct LedgerProblem: Sendable, Hashable, CustomStringConvertible {
    /// The transaction concerned, when there is one.
    public var transactionID: UInt64?
    /// What is wrong, in words.
    public var message: String

    public var description: String {
        transactionID.map { "transaction \($0): \(message)" } ?? message
    }
}

extension Ledger {
    /// Checks the ledger's own invariants on one consistent snapshot: SQLite's integrity check;
    /// for every transaction, that its history is a legal path through the state machine that
    /// ends in its current row, and that it is not finished in a state that cannot be; that no
    /// idempotency key names two transactions; that no id is above the last one issued; and the
    /// hash chain (`chainLinkProblems`, `chainRowProblems`): every link, every row against its
    /// last event, the signed head; and the outbox of notifications (`outboxProblems`).
    /// Returns the problems found; empty when all hold.
    public func verify() throws -> [LedgerProblem] {
        // A damaged file cannot be trusted for the checks that follow: its problems are the
        // answer. (Outside a transaction: SQLite aborts a transaction on a corruption error.)
        let integrity: [LedgerProblem]
        do {
            integrity = try reader.unsafeRead { db in
                try db.ensureConnected()
                return try String.fetchAll(db, sql: "PRAGMA integrity_check")
            }
            .filter { $0 != "ok" }.map { LedgerProblem(transactionID: nil, message: "integrity check: \($0)") }
        } catch let error as DatabaseError where [.SQLITE_CORRUPT, .SQLITE_NOTADB].contains(error.resultCode) {
            return [
                LedgerProblem(transactionID: nil, message: "integrity check: \(error.message ?? "the file is damaged")")
            ]
        } catch {
            throw Self.mapError(error, path: path)
        }
        guard integrity.isEmpty else { return integrity }
        return try read { db in try Self.invariantProblems(db) }
    }

    /// `verify()`'s checks after SQLite's integrity check, on `db`'s snapshot (an upgrade runs
    /// them on the upgraded schema before it commits).
    static func invariantProblems(_ db: Database) throws -> [LedgerProblem] {
        var problems = try Self.schemaProblems(db)
        problems += try Self.chainLinkProblems(db)
        var periods = SubscriptionPeriodCheck(
            periods: try Self.productPeriods(db), offerPeriodCounts: try Self.offerPeriodCounts(db))
        // The rows and the histories, both in transaction order, merged: one transaction's
        // events in memory at a time, whatever the size of the history.
        var histories = try TransactionHistories(db)
        func noRow(_ history: TransactionHistory) {
            problems += Self.chainRowProblems(id: history.transactionID, rowDigest: nil, history: history)
            problems += Self.deletedHistoryProblems(history)
        }
        try FastStatement(db, HashChain.selectRows(where: "1")).forEachRow { columns in
            let transaction = try PaymentTransaction(columns)
            var own: TransactionHistory?
            while let history = try histories.next(upTo: transaction.id) {
                if history.transactionID == transaction.id { own = history } else { noRow(history) }
            }
            problems += Self.chainRowProblems(
                id: transaction.id, rowDigest: HashChain.rowDigest(of: columns), history: own)
            problems += Self.historyProblems(transaction, own?.events ?? [])
            problems += periods.problems(transaction, own?.events ?? []).map {
                LedgerProblem(transactionID: transaction.id, message: $0)
            }
        }
        while let history = try histories.next(upTo: .max) { noRow(history) }
        for row in try Row.fetchAll(
            db,
            sql: """
                SELECT idempotency_key, GROUP_CONCAT(id) AS ids FROM transactions
                WHERE idempotency_key IS NOT NULL GROUP BY idempotency_key HAVING COUNT(*) > 1
                """)
        {
            problems.append(
                LedgerProblem(
                    transactionID: nil,
                    message:
                        "idempotency key \(row["idempotency_key"] as String) names transactions \(row["ids"] as String)"
                ))
        }
        problems += try Self.outboxProblems(db)
        // The facts beside the chain: every row authenticated, every table's seal matching.
        problems += try AuthenticatedRecords(db: db, key: try IdentityCache().eventKey(db)).problems()
        let lastIssued =
            try Int64.fetchOne(db, sql: "SELECT value FROM ledger_counters WHERE name = 'last_transaction_id'") ?? 0
        if let highest = try Int64.fetchOne(db, sql: "SELECT MAX(id) FROM transactions"), highest > lastIssued {
            problems.append(
                LedgerProblem(
                    transactionID: UInt64(highest),
                    message: "id above the last one issued (\(lastIssued)): ids could be reused"))
        }
        return problems
    }

    /// The schema and the rules the database holds, against those this build's migrations
    /// make: a table, index or trigger dropped, added or rewritten (with `writable_schema`,
    /// say), or a row of a `rule_*` table changed, would let a writer past the ledger's rules
    /// unseen, so each is a problem.
    static func schemaProblems(_ db: Database) throws -> [LedgerProblem] {
        let expected = try expectedSchema.get()
        let found = try SchemaSnapshot(db)
        var problems: [LedgerProblem] = []
        for (name, sql) in expected.objects.sorted(by: { $0.key < $1.key }) {
            switch found.objects[name] {
            case nil: problems.append(LedgerProblem(transactionID: nil, message: "schema: \(name) is missing"))
            case sql?: break
            case _?:
                problems.append(
                    LedgerProblem(transactionID: nil, message: "schema: \(name) differs from this version's"))
            }
        }
        for name in found.objects.keys.sorted() where expected.objects[name] == nil {
            problems.append(LedgerProblem(transactionID: nil, message: "schema: \(name) is not this version's"))
        }
        for (table, rows) in expected.rules.sorted(by: { $0.key < $1.key })
        where found.rules[table].map({ $0 != rows }) ?? false {
            problems.append(
                LedgerProblem(transactionID: nil, message: "schema: the rules of \(table) differ from this version's"))
        }
        return problems
    }

    /// What this build's migrations make, once per process: they are applied to an empty
    /// database in memory.
    private static let expectedSchema = Result<SchemaSnapshot, any Error> {
        let queue = try DatabaseQueue()
        _ = try queue.writeWithoutTransaction { db in
            try SchemaUpgrade.apply(db, path: ":memory:", checkingInvariants: false)
        }
        return try queue.read { try SchemaSnapshot($0) }
    }

    /// A database's tables, indexes and triggers (`type name` to its SQL) and the rows of its
    /// rule tables.
    private struct SchemaSnapshot {
        var objects: [String: String] = [:]
        var rules: [String: [String]] = [:]

        init(_ db: Database) throws {
            for row in try Row.fetchAll(
                db,
                sql: """
                    SELECT type, name, sql FROM sqlite_schema
                    WHERE name NOT LIKE 'sqlite_%' AND type IN ('table', 'index', 'trigger', 'view')
                    """)
            {
                objects["\(row["type"] as String) \(row["name"] as String)"] = row["sql"] as String? ?? ""
            }
            for table in objects.keys.filter({ $0.hasPrefix("table rule_") }).map({
                String($0.dropFirst("table ".count))
            }) {
                // Every column as text, the rows sorted: the table's contents, whatever its shape.
                let quoted = "\"" + table.replacingOccurrences(of: "\"", with: "\"\"") + "\""
                rules[table] = try Row.fetchAll(db, sql: "SELECT * FROM \(quoted)").map { row in
                    row.databaseValues.map { $0.description }.joined(separator: "|")
                }.sorted()
            }
        }
    }

    private static func productPeriods(_ db: Database) throws -> [String: SubscriptionPeriod] {
        var periods: [String: SubscriptionPeriod] = [:]
        for row in try Row.fetchAll(
            db, sql: "SELECT id, subscription_period FROM products WHERE subscription_period IS NOT NULL")
        {
            periods[row["id"]] = SubscriptionPeriod(iso8601: row["subscription_period"])
        }
        return periods
    }

    /// How many periods one renewal at each free or pay-up-front promotional offer, offer code
    /// or win-back offer covers, by product and offer (`SubscriptionPeriodCheck.offerKey`).
    private static func offerPeriodCounts(_ db: Database) throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT id, offers FROM products WHERE offers IS NOT NULL") {
            let stored = ProductOffersColumn(json: row["offers"])
            let offers =
                (stored?.promotional ?? []).map { (TransactionOffer.OfferType.promotional, $0) }
                + (stored?.codes ?? []).map { (TransactionOffer.OfferType.code, $0.offer) }
                + (stored?.winBacks ?? []).map { (TransactionOffer.OfferType.winBack, $0.offer) }
            for (type, offer) in offers where offer.paymentMode != .payAsYouGo {
                if let id = offer.id {
                    counts[SubscriptionPeriodCheck.offerKey(row["id"], type, id)] = offer.appliedPeriodCount
                }
            }
        }
        return counts
    }

    /// A deleted transaction's history stays, ending with its `deleted` event.
    static func deletedHistoryProblems(_ history: TransactionHistory) -> [LedgerProblem] {
        let events = history.events
        if let deletion = events.firstIndex(where: { $0.kind == .deleted }) {
            return deletion == events.count - 1
                ? [] : [LedgerProblem(transactionID: history.transactionID, message: "events after its deletion")]
        }
        return [LedgerProblem(transactionID: history.transactionID, message: "events without a transaction")]
    }

    /// The problems of one transaction's history against its row.
    static func historyProblems(_ transaction: PaymentTransaction, _ events: [TransactionEvent]) -> [LedgerProblem] {
        var problems: [String] = []
        guard let first = events.first, first.kind == .created,
            TransactionRules.allowsEvent(
                .created, from: first.fromState, to: first.toState, productType: transaction.productType)
        else {
            return [LedgerProblem(transactionID: transaction.id, message: "history does not start with its creation")]
        }
        var state = first.toState
        var finished = false
        var revoked = false
        var upgraded = false
        var deliveries = 0
        for event in events.dropFirst() {
            if event.fromState != state {
                problems.append(
                    "event \(event.sequence) starts from \(event.fromState?.rawValue ?? "nothing"), not \(state.rawValue)"
                )
            }
            switch event.kind {
            case .created:
                problems.append("created twice (event \(event.sequence))")
            case .stateChanged:
                if finished
                    || !TransactionRules.allowsEvent(
                        .stateChanged, from: state, to: event.toState, productType: transaction.productType)
                {
                    problems.append(
                        "illegal change \(state.rawValue) -> \(event.toState.rawValue) (event \(event.sequence))")
                }
                state = event.toState
            case .finished:
                if finished
                    || !TransactionRules.allowsEvent(
                        .finished, from: state, to: event.toState, productType: transaction.productType)
                {
                    problems.append(
                        "finished while \(finished ? "finished" : state.rawValue) (event \(event.sequence))")
                }
                finished = true
            case .delivered:
                if !TransactionRules.allowsEvent(
                    .delivered, from: state, to: event.toState, productType: transaction.productType)
                {
                    problems.append(
                        "delivered with a change of state \(state.rawValue) -> \(event.toState.rawValue) (event \(event.sequence))"
                    )
                }
                deliveries += 1
            case .revoked:
                if revoked
                    || !TransactionRules.allowsEvent(
                        .revoked, from: state, to: event.toState, productType: transaction.productType)
                {
                    problems.append("refunded while \(revoked ? "refunded" : state.rawValue) (event \(event.sequence))")
                }
                revoked = true
            case .reinstated:
                if !revoked
                    || !TransactionRules.allowsEvent(
                        .reinstated, from: state, to: event.toState, productType: transaction.productType)
                {
                    problems.append(
                        "refund reversed while \(revoked ? state.rawValue : "not refunded") (event \(event.sequence))")
                }
                revoked = false
            case .deleted:
                problems.append("deleted in its history (event \(event.sequence)), but its row is there")
            case .expirationChanged, .upgraded:
                if !TransactionRules.allowsEvent(
                    event.kind, from: state, to: event.toState, productType: transaction.productType)
                {
                    problems.append(
                        transaction.productType == .autoRenewable
                            ? "\(event.kind.rawValue) with a change of state \(state.rawValue) -> \(event.toState.rawValue) (event \(event.sequence))"
                            : "\(event.kind.rawValue) on a \(transaction.productType.rawValue) (event \(event.sequence))"
                    )
                }
                if event.kind == .upgraded { upgraded = true }
            }
        }
        if state != transaction.state {
            problems.append("history ends in \(state.rawValue), the row is \(transaction.state.rawValue)")
        }
        if finished != transaction.isFinished {
            problems.append("history says finished \(finished), the row \(transaction.isFinished)")
        }
        if deliveries != transaction.deliveryCount {
            problems.append("history has \(deliveries) deliveries, the row counts \(transaction.deliveryCount)")
        }
        if revoked != (transaction.revocationDate != nil) {
            problems.append("refund in the history and the row disagree")
        }
        if upgraded && !transaction.isUpgraded { problems.append("upgraded in the history, not in the row") }
        if transaction.isFinished && !transaction.state.canBeFinished {
            problems.append("finished while \(transaction.state.rawValue), which cannot be finished")
        }
        return problems.map { LedgerProblem(transactionID: transaction.id, message: $0) }
    }
}

/// One transaction's events, in order, and the row digest its last one recorded.
struct TransactionHistory {
    let transactionID: UInt64
    var events: [TransactionEvent]
    var lastRowDigest: [UInt8]
}

/// Every event, one transaction's history at a time, in transaction order (the events' index
/// by transaction): what `verify` merges with the rows.
struct TransactionHistories {
    private let cursor: RowCursor
    /// The first event of the next history, read ahead.
    private var next: (event: TransactionEvent, rowDigest: [UInt8])?

    init(_ db: Database) throws {
        cursor = try Row.fetchCursor(
            db,
            sql: """
                SELECT seq, transaction_id, kind, from_state, to_state, at, detail, row_digest
                FROM transaction_events ORDER BY transaction_id, seq
                """)
        next = try Self.read(cursor)
    }

    /// The next history, if its transaction's id is at most `id`.
    mutating func next(upTo id: UInt64) throws -> TransactionHistory? {
        guard let first = next, first.event.transactionID <= id else { return nil }
        var history = TransactionHistory(
            transactionID: first.event.transactionID, events: [first.event], lastRowDigest: first.rowDigest)
        while let event = try Self.read(cursor) {
            guard event.event.transactionID == history.transactionID else {
                next = event
                return history
            }
            history.events.append(event.event)
            history.lastRowDigest = event.rowDigest
        }
        next = nil
        return history
    }

    private static func read(_ cursor: RowCursor) throws -> (event: TransactionEvent, rowDigest: [UInt8])? {
        guard let row = try cursor.next() else { return nil }
        return (try TransactionEvent(row: row), [UInt8](row["row_digest"] as Data))
    }
}
