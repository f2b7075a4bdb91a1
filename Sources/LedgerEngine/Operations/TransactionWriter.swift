import Foundation
package import GRDB
import LedgerModel

/// Whether the observers will receive what an operation writes: then each transaction it
/// creates or moves is counted as delivered (count, date, `delivered` event) in the same
/// commit, before anyone is told. Given once per operation, by the queue that will notify.
package enum DeliveryRecording: Sendable {
    case notRecorded
    case recorded
}

/// The one code that writes transactions and their history: it allocates ids, inserts rows,
/// changes states, finishes, records deliveries and revocations, moves subscription dates, and
/// appends the event each of these makes. Every path goes through it (payments, renewals,
/// restores, store controls, synthetic histories for benchmarks), inside its caller's write
/// transaction, with that transaction's store time and the operation's delivery policy.
package struct TransactionWriter {
    package let db: Database
    /// The store's time of the write, in milliseconds.
    package let now: Int64
    package let delivery: DeliveryRecording
    package let idGenerator: TransactionIDGenerator
    /// Whether events are chained (always, but in `ledger-lab bench`'s comparison).
    package var chained = true
    /// The ledger's identity, whose key authenticates the events.
    package let identities: IdentityCache
    /// What this writer read or wrote in its transaction, kept for the rest of it.
    private let held = Held()

    /// What a writer holds in its transaction. The ids of the rows it vouched for once, or
    /// wrote: only the writer changes a transaction's row, each change followed by its event,
    /// and nobody else writes while its transaction lasts, so a row it holds matches its
    /// history and is not read again to be vouched for. The store's settings, parsed at the
    /// first ask (`settings()`): nothing else changes them in the transaction but the writer's
    /// caller, which does not ask after.
    private final class Held {
        var ids: Set<UInt64> = []
        var settings: StoreSettings?
    }

    /// The store's settings as this write transaction reads them, parsed once: a purchase's
    /// rules (the time rate of its period) and its notification (the URL, what signs) share them.
    package func settings() throws -> StoreSettings {
        if let settings = held.settings { return settings }
        let settings = try StoreSettings(db)
        held.settings = settings
        return settings
    }

    /// The settings `settings()` parsed, if it was asked: a change that may use them (a
    /// notification) takes them when they are there, and asks less than all of them otherwise.
    package var settingsRead: StoreSettings? { held.settings }

    // MARK: - Ids

    /// The ledger's id counter, for the paths that take many ids at once (see `IDBlock`).
    package func ids() throws -> IDBlock {
        try IDBlock(db, generator: idGenerator)
    }

    /// The one place transaction ids are allocated: each id is after the last one issued
    /// (refused otherwise), the counter is read once and saved once per block.
    package struct IDBlock {
        private var last: UInt64
        private let generator: TransactionIDGenerator

        package init(_ db: Database, generator: TransactionIDGenerator) throws {
            last = UInt64(try FastStatement(db, Self.read).first { $0.int64(0) } ?? 0)
            self.generator = generator
        }

        package mutating func next() throws -> UInt64 {
            let next = generator.next(after: last)
            guard next > last, next <= UInt64(Int64.max) else {
                throw PaymentQueueError.idGeneratorWentBackwards(lastIssued: last, proposed: next)
            }
            last = next
            return next
        }

        /// Takes `count` ids at once when the generator issues them one after another (as the
        /// sequential one does), for copies made in one statement: returns the first. `nil`, and
        /// nothing taken, when they would not follow each other or would pass `Int64.max`
        /// (`next()` then takes them one at a time, refusing as it does).
        package mutating func contiguousRun(of count: Int) -> UInt64? {
            var probe = last
            for _ in 0..<count {
                let next = generator.next(after: probe)
                guard probe < UInt64(Int64.max), next == probe + 1 else { return nil }
                probe = next
            }
            defer { last = probe }
            return last + 1
        }

        package func save(_ db: Database) throws {
            let save = try FastStatement(db, Self.save)
            save.bind(1, Int64(last))
            try save.execute()
        }

        private static let read = LedgerSQL("SELECT value FROM ledger_counters WHERE name = 'last_transaction_id'")
        private static let save = LedgerSQL("UPDATE ledger_counters SET value = ? WHERE name = 'last_transaction_id'")
    }

    // MARK: - New transactions

    /// Inserts a new transaction with a fresh id and its `created` event (and its delivery,
    /// when the operation records them). Returns it as stored.
    package func insert(_ row: NewTransactionRow) throws -> PaymentTransaction {
        var ids = try ids()
        let id = try ids.next()
        try ids.save(db)
        let recordsDelivery = delivery == .recorded
        var created = row.transaction(id: try insert(row, id: id, recordingDelivery: recordsDelivery))
        if recordsDelivery { delivered(&created) }
        return created
    }

    /// Inserts a new transaction with an id the caller took from an `IDBlock`, and its
    /// `created` event, then its delivery when `recordingDelivery` (the bulk paths record theirs
    /// in set form): the row is read once, for both events' digests.
    package func insert(_ row: NewTransactionRow, id: UInt64, recordingDelivery: Bool = false) throws -> UInt64 {
        let original = row.original ?? (id, row.purchaseDate)
        let insert = try FastStatement(db, Self.insertTransaction)
        let slot = TransactionColumns.slots
        insert.bind(slot.id, Int64(id))
        insert.bind(slot.originalID, Int64(original.id))
        insert.bind(slot.productID, row.productID)
        insert.bind(slot.productType, row.productType.rawValue)
        insert.bind(slot.state, row.state.rawValue)
        insert.bind(slot.quantity, row.quantity)
        insert.bind(slot.purchaseDate, row.purchaseDate)
        insert.bind(slot.originalPurchaseDate, original.purchaseDate)
        insert.bind(slot.expirationDate, row.expirationDate)
        insert.bind(slot.isUpgraded, row.isUpgraded)
        insert.bind(slot.appAccountToken, row.appAccountToken?.uuidString)
        insert.bind(slot.reason, row.reason.rawValue)
        insert.bind(slot.subscriptionGroupID, row.subscriptionGroupID)
        insert.bind(slot.storefront, row.storefront)
        insert.bind(slot.environment, Ledger.environment)
        insert.bind(slot.idempotencyKey, row.idempotencyKey)
        insert.bind(slot.plannedState, row.planned?.state.rawValue)
        insert.bind(slot.plannedErrorCode, (row.planned?.error?.code.rawValue).map(Int64.init))
        insert.bind(slot.plannedErrorMessage, row.planned?.error?.message)
        insert.bind(slot.createdAt, row.createdAt)
        insert.bind(slot.updatedAt, row.createdAt)
        insert.bind(slot.restoredFrom, row.restoredFrom.map(Int64.init))
        insert.bind(slot.applicationUsername, row.applicationUsername)
        insert.bind(slot.offerType, row.offer?.type.rawValue)
        insert.bind(slot.offerID, row.offer?.id)
        insert.bind(slot.offerPaymentMode, row.offer?.paymentMode.rawValue)
        insert.bind(slot.offerPeriod, row.offer?.period.description)
        insert.bind(slot.offerNonce, row.offerNonce?.uuidString.lowercased())
        try insert.execute()
        let digests = try readBack(id, deliveredNext: recordingDelivery)
        try append(.init(transactionID: id, kind: .created, from: nil, to: row.state, at: row.createdAt), digests.row)
        held.ids.insert(id)
        if let delivered = digests.delivered { try recordDeliveryRead(id, row.state, delivered) }
        return id
    }

    /// Transaction `id` with the outcome the store planned for it when it was added (for one
    /// still purchasing; `.failed` when none is stored), read and vouched for in one statement,
    /// and held from then on; `nil` when the ledger has none.
    /// - Throws: `DamagedRow` when the row differs from what its history recorded.
    package func plannedPurchase(
        _ id: UInt64
    ) throws -> (PaymentTransaction, planned: (state: TransactionState, error: TransactionError?))? {
        let read = try PaymentTransaction.fetchWithPlan(db, id: id, vouching: chained)
        if read != nil { held.ids.insert(id) }
        return read
    }

    /// Restored copies of the `count` rows `sources` selects, made by SQLite in one statement:
    /// the n-th source (in id order) becomes `firstID + n - 1`, dated now, with its `created` event.
    /// The caller vouched for the sources (`vouch(where:arguments:)`).
    package func insertRestoredCopies(
        sources: String, arguments: StatementArguments, firstID: UInt64, count: Int
    ) throws {
        var values: [DatabaseValue] = []
        let selected = TransactionColumns.inserted.map { name in
            guard let own = TransactionColumns.restoredCopy(name, now: now, firstID: firstID) else { return name }
            values += own.values
            return own.sql
        }
        try db.execute(
            sql: "INSERT INTO transactions (" + TransactionColumns.inserted.joined(separator: ", ") + ") SELECT "
                + selected.joined(separator: ", ") + " FROM transactions NOT INDEXED WHERE \(sources) ORDER BY id",
            arguments: StatementArguments(values) + arguments)
        try appendEvents(
            .created, toRowsWhere: "id BETWEEN ? AND ?", arguments: [Int64(firstID), Int64(firstID) + Int64(count) - 1])
    }

    // MARK: - Changes

    /// The dates a charge gives a transaction, as the store's rules computed them: they may be
    /// set only until it is charged, so with its change of state.
    package enum ChargeDates {
        /// A subscription's period: its start (the purchase date, and the chain's original
        /// purchase date), its end, and the offer it is charged at.
        case period(start: Int64, end: Int64, offer: TransactionOffer?)
        /// The date a purchase is charged on, when it is not its creation's.
        case purchaseDate(Int64)
    }

    /// The one place a transaction's state changes: row and event together, with the dates
    /// the charge gives it (`dates`), and its delivery when the operation records them. What
    /// the change means for the store (a subscription's period, a notification) is the caller's
    /// (`Ledger.moveState`): the writer calls nothing above it.
    package func changeState(
        _ transaction: PaymentTransaction, to state: TransactionState, error: TransactionError?,
        dates: ChargeDates? = nil
    ) throws -> PaymentTransaction {
        precondition(transaction.state.canMove(to: state), "illegal transition \(transaction.state) -> \(state)")
        try vouch(transaction.id)
        var redated: Int64?
        switch dates {
        case .period(let start, let end, let offer):
            try startPeriod(of: transaction, startingAt: start, endingAt: end, offer: offer)
        case .purchaseDate(let date):
            try datePurchase(transaction, date)
            redated = date
        case nil:
            break
        }
        let update = try FastStatement(db, Self.updateState)
        update.bind(1, state.rawValue)
        update.bind(2, (error?.code.rawValue).map(Int64.init))
        update.bind(3, error?.message)
        update.bind(4, now)
        update.bind(5, Int64(transaction.id))
        try update.execute()
        // One read of the row after the change: its event's digest, the delivery's that follows
        // (when recorded), and a subscription's value, whose period was just set.
        let recordsDelivery = delivery == .recorded
        let digests = try readBack(
            transaction.id, deliveredNext: recordsDelivery, decoding: transaction.productType == .autoRenewable)
        try append(
            .init(transactionID: transaction.id, kind: .stateChanged, from: transaction.state, to: state, at: now),
            digests.row)
        var updated = transaction
        if let read = digests.transaction {
            updated = read
        } else {
            updated.state = state
            updated.error = error
            updated.updatedAt = Date(ledgerMilliseconds: now)
            if let redated {
                updated.purchaseDate = Date(ledgerMilliseconds: redated)
                if updated.originalID == updated.id { updated.originalPurchaseDate = updated.purchaseDate }
            }
        }
        if let delivered = digests.delivered {
            try recordDeliveryRead(transaction.id, state, delivered)
            self.delivered(&updated)
        }
        return updated
    }

    /// Dates a purchase being charged (and its chain, when it begins one) `date`.
    private func datePurchase(_ transaction: PaymentTransaction, _ date: Int64) throws {
        let dated = try FastStatement(db, Self.updatePurchaseDate)
        dated.bind(1, date)
        dated.bind(2, date)
        dated.bind(3, Int64(transaction.id))
        try dated.execute()
    }

    /// Marks a transaction finished (row and event); the caller checked that its state allows it.
    package func finish(_ transaction: PaymentTransaction) throws -> PaymentTransaction {
        try vouch(transaction.id)
        let update = try FastStatement(db, Self.updateFinished)
        update.bind(1, now)
        update.bind(2, now)
        update.bind(3, Int64(transaction.id))
        try update.execute()
        try appendEvent(id: transaction.id, kind: .finished, from: transaction.state, to: transaction.state, at: now)
        var finished = transaction
        finished.isFinished = true
        finished.finishedAt = Date(ledgerMilliseconds: now)
        finished.updatedAt = finished.finishedAt!
        return finished
    }

    /// Records one delivery of `transaction` (row and event), and in the value too.
    package func recordDelivery(of transaction: inout PaymentTransaction) throws {
        try vouch(transaction.id)
        try updateDelivery(of: transaction.id)
        try appendEvent(id: transaction.id, kind: .delivered, from: transaction.state, to: transaction.state, at: now)
        delivered(&transaction)
    }

    /// A delivery recorded in `transaction`'s value, as `updateDelivered` records it in its row.
    private func delivered(_ transaction: inout PaymentTransaction) {
        transaction.deliveryCount += 1
        transaction.lastDeliveredAt = Date(ledgerMilliseconds: now)
    }

    /// Records one delivery of transaction `id`, in `state`, right after a change whose read of
    /// the row gave the digest the delivery leaves (`HashChain.rowDigest(of:deliveredAt:)`): only
    /// the delivery's two columns change, so the row is not read again.
    private func recordDeliveryRead(_ id: UInt64, _ state: TransactionState, _ digest: [UInt8]) throws {
        try updateDelivery(of: id)
        try append(.init(transactionID: id, kind: .delivered, from: state, to: state, at: now), digest)
    }

    /// One more delivery, now, in transaction `id`'s row.
    private func updateDelivery(of id: UInt64) throws {
        let update = try FastStatement(db, Self.updateDelivered)
        update.bind(1, now)
        update.bind(2, Int64(id))
        try update.execute()
    }

    /// What one read of transaction `id`'s row, right after a change, gives: the row's digest
    /// (for the change's event), the digest one more delivery will leave when one follows
    /// (`deliveredNext`), and the row decoded when asked.
    /// - Throws: `DamagedRow` when the row is not there.
    private func readBack(
        _ id: UInt64, deliveredNext: Bool, decoding: Bool = false
    ) throws -> (row: [UInt8], delivered: [UInt8]?, transaction: PaymentTransaction?) {
        let select = try FastStatement(db, HashChain.selectRow)
        select.bind(1, Int64(id))
        let read = try select.first { columns in
            (
                row: chained ? HashChain.rowDigest(of: columns) : HashChain.noRow,
                delivered: deliveredNext
                    ? (chained ? HashChain.rowDigest(of: columns, deliveredAt: now) : HashChain.noRow) : nil,
                transaction: decoding ? try PaymentTransaction(columns) : nil
            )
        }
        guard let read else { throw DamagedRow(reason: "transaction \(id) has no row for its event") }
        return read
    }

    /// Appends one event, chained (`HashChain`), with the digest of its row after the change.
    private func append(_ event: ChainedEvent.Content, _ rowDigest: [UInt8]) throws {
        var appender = try appender()
        try appender.append(db, event, rowDigest: rowDigest)
        try appender.finish(db)
    }

    /// Records one delivery of each unfinished transaction of `transactions`, in order (what
    /// observers are handed after a change: StoreKit 1 never hands back a finished one).
    package func recordDelivery(ofUnfinished transactions: inout [PaymentTransaction]) throws {
        for index in transactions.indices where !transactions[index].isFinished {
            try recordDelivery(of: &transactions[index])
        }
    }

    /// Records one delivery (count, date, event) of every transaction `condition` selects (a
    /// launch, a restore's copies): the rows in one statement, then their events in id order.
    /// `condition` must select the same rows after the update (it must not test the delivery).
    /// `delivered`, when given, receives each row as the update left it, in id order, from the
    /// same read that digests it for its event.
    package func recordDelivery(
        where condition: String, arguments: StatementArguments = [],
        delivered: ((PaymentTransaction) throws -> Void)? = nil
    ) throws {
        // One scan before the update: each row is vouched for (`HashChain.vouch`), and its
        // digest after the update computed, since only the delivery's two columns change.
        let rows = try FastStatement(db, HashChain.selectVouching(where: condition))
        try rows.bind(arguments)
        var deliveries: [(transaction: PaymentTransaction, digest: [UInt8])] = []
        try rows.forEachRow { columns in
            if chained { try HashChain.vouch(columns) }
            var transaction = try PaymentTransaction(columns)
            transaction.deliveryCount += 1
            transaction.lastDeliveredAt = Date(ledgerMilliseconds: now)
            deliveries.append(
                (transaction, chained ? HashChain.rowDigest(of: columns, deliveredAt: now) : HashChain.noRow))
        }
        try db.execute(
            sql:
                "UPDATE transactions SET delivery_count = delivery_count + 1, last_delivered_at = ? WHERE \(condition)",
            arguments: [now] + arguments)
        var appender = try appender()
        for (transaction, digest) in deliveries {
            try appender.append(
                db,
                .init(
                    transactionID: transaction.id, kind: .delivered, from: transaction.state, to: transaction.state,
                    at: now),
                rowDigest: digest)
        }
        try appender.finish(db)
        if let delivered { for delivery in deliveries { try delivered(delivery.transaction) } }
    }

    /// Sets a refund's revocation date (now) and reason, with its `revoked` event.
    package func revoke(_ transaction: PaymentTransaction, reason: Int) throws {
        try vouch(transaction.id)
        try db.run(
            sql: "UPDATE transactions SET revocation_date = ?, revocation_reason = ?, updated_at = ? WHERE id = ?",
            arguments: [now, reason, now, Int64(transaction.id)])
        try appendEvent(
            id: transaction.id, kind: .revoked, from: transaction.state, to: transaction.state, at: now,
            detail: "reason \(reason)")
    }

    /// Clears a refund's revocation (a reversed refund), with its `reinstated` event, whose
    /// detail is the date of the refund it reverses.
    package func reinstate(_ transaction: PaymentTransaction) throws {
        try vouch(transaction.id)
        try db.run(
            sql:
                "UPDATE transactions SET revocation_date = NULL, revocation_reason = NULL, updated_at = ? WHERE id = ?",
            arguments: [now, Int64(transaction.id)])
        try appendEvent(
            id: transaction.id, kind: .reinstated, from: transaction.state, to: transaction.state, at: now,
            detail: transaction.revocationDate?.formatted(.iso8601))
    }

    /// Dates a subscription payment being charged: its period starts at `start` (now, or a
    /// back-dated test purchase's date) and ends at `end`,
    /// with the offer that applies to it. Only while it is still purchasing or deferred (the
    /// identity trigger refuses it after); the `stateChanged` event that follows records it.
    private func startPeriod(
        of transaction: PaymentTransaction, startingAt start: Int64, endingAt end: Int64, offer: TransactionOffer?
    ) throws {
        try db.run(
            sql: """
                UPDATE transactions SET purchase_date = ?, original_purchase_date = ?, expiration_date = ?,
                    offer_type = ?, offer_id = ?, offer_payment_mode = ?, offer_period = ? WHERE id = ?
                """,
            arguments: [
                start, start, Ledger.withinStoreTime(end), offer?.type.rawValue, offer?.id, offer?.paymentMode.rawValue,
                offer?.period.description, Int64(transaction.id),
            ])
    }

    /// Moves a subscription period's expiration to `date` (an expiry now, a renewal date
    /// extended), with its `expirationChanged` event.
    package func moveExpiration(of period: PaymentTransaction, to date: Int64) throws {
        let date = Ledger.withinStoreTime(date)
        try vouch(period.id)
        try db.run(
            sql: "UPDATE transactions SET expiration_date = ?, updated_at = ? WHERE id = ?",
            arguments: [date, now, Int64(period.id)])
        try appendEvent(
            id: period.id, kind: .expirationChanged, from: period.state, to: period.state, at: now,
            detail: Date(ledgerMilliseconds: date).formatted(.iso8601))
    }

    /// Marks a subscription period as replaced by an upgrade, with its `upgraded` event.
    package func markUpgraded(_ period: PaymentTransaction) throws {
        try vouch(period.id)
        try db.run(
            sql: "UPDATE transactions SET is_upgraded = 1, updated_at = ? WHERE id = ?",
            arguments: [now, Int64(period.id)])
        try appendEvent(id: period.id, kind: .upgraded, from: period.state, to: period.state, at: now)
    }

    /// Deletes transactions (the store's "clear" and "delete" controls), with their
    /// interrupted purchases. Their history stays, closed by a `deleted` event each: the hash
    /// chain has no holes.
    package func delete(where condition: String, arguments: StatementArguments = []) throws {
        try vouch(where: condition, arguments: arguments)  // a deleted row's edit would vanish with it
        let selected = try FastStatement(db, "SELECT id, state FROM transactions WHERE \(condition) ORDER BY id")
        try selected.bind(arguments)
        let deleted = try selected.all { (UInt64($0.int64(0)), $0.string(1)) }
        // The authenticated facts of the deleted transactions go through their records: each row
        // checked, its MAC taken out of its table's seal.
        let records = AuthenticatedRecords(db: db, key: chained ? try identities.eventKey(db) : nil)
        for (id, _) in deleted {
            for table in [AuthenticatedRecords.Table.chargedPrices, .refundPortions] {
                try records.write(table, key: Int64(id)) {
                    try db.execute(sql: "DELETE FROM \(table.name) WHERE transaction_id = ?", arguments: [Int64(id)])
                }
            }
        }
        try db.execute(
            sql: """
                DELETE FROM interrupted_purchases WHERE transaction_id IN (SELECT id FROM transactions WHERE \(condition));
                DELETE FROM refund_requests WHERE transaction_id IN (SELECT id FROM transactions WHERE \(condition));
                DELETE FROM payment_terms WHERE transaction_id IN (SELECT id FROM transactions WHERE \(condition));
                DELETE FROM transactions WHERE \(condition);
                """, arguments: arguments + arguments + arguments + arguments)
        var appender = try appender()
        for (id, stateName) in deleted {
            let state = try Self.state(stateName, of: id)
            try appender.append(
                db, .init(transactionID: id, kind: .deleted, from: state, to: state, at: now),
                rowDigest: HashChain.noRow)
        }
        try appender.finish(db)
    }

    // MARK: - History

    /// Appends a `kind` event to every row `condition` selects, in id order, with each row's
    /// digest read in the same scan: `created` enters the row's state, the others keep it.
    /// `each` sees every row of that scan (`TransactionColumns.names`) once its event is
    /// appended (it may still wait in the batch, inserted before this returns).
    private func appendEvents(
        _ kind: TransactionEvent.Kind, toRowsWhere condition: String, arguments: StatementArguments,
        each: (FastStatement.Columns) throws -> Void = { _ in }
    ) throws {
        let rows = try FastStatement(db, HashChain.selectRows(where: condition))
        try rows.bind(arguments)
        var appender = try appender()
        try rows.forEachRow { columns in
            let id = UInt64(bitPattern: columns.int64(TransactionColumns.positions.id))
            let state = try Self.state(columns.string(TransactionColumns.positions.state), of: id)
            try appender.append(
                db, .init(transactionID: id, kind: kind, from: kind == .created ? nil : state, to: state, at: now),
                rowDigest: chained ? HashChain.rowDigest(of: columns) : HashChain.noRow)
            try each(columns)
        }
        try appender.finish(db)
    }

    private static func state(_ name: String, of id: UInt64) throws -> TransactionState {
        guard let state = TransactionState(rawValue: name) else {
            throw DamagedRow(reason: "transaction \(id) has an unknown state \(name)")
        }
        return state
    }

    /// An appender for this write's events, chained and authenticated (`HashChain.Appender`).
    private func appender() throws -> HashChain.Appender {
        try HashChain.Appender(db, key: chained ? try identities.eventKey(db) : nil)
    }

    /// Refuses to change a row its history does not vouch for (`HashChain.vouch`), once per
    /// row in the writer's transaction (`Held`).
    private func vouch(_ id: UInt64) throws {
        guard chained, !held.ids.contains(id) else { return }
        try HashChain.vouch(db, id: id)
        held.ids.insert(id)
    }

    /// Whether this writer holds transaction `id`'s row: it wrote it, or vouched for it, in this
    /// transaction (`Held`), so the row matches its history and needs no read to show it.
    package func holds(_ id: UInt64) -> Bool {
        held.ids.contains(id)
    }

    /// `vouch(_:)` for every row `condition` selects.
    package func vouch(where condition: String, arguments: StatementArguments) throws {
        if chained { try HashChain.vouch(db, where: condition, arguments: arguments) }
    }

    /// Appends an event, chained (`HashChain`): with the digest of its transaction's row as it
    /// is now, after the change the event records (every change of a row is followed by its
    /// event, so a row always matches its last event's digest).
    package func appendEvent(
        id: UInt64, kind: TransactionEvent.Kind, from: TransactionState?, to: TransactionState, at: Int64,
        detail: String? = nil
    ) throws {
        let digest = !chained || kind == .deleted ? HashChain.noRow : try HashChain.rowDigest(db, id: id)
        guard let digest else {
            throw DamagedRow(reason: "transaction \(id) has no row for its \(kind.rawValue) event")
        }
        try append(.init(transactionID: id, kind: kind, from: from, to: to, at: at, detail: detail), digest)
    }

    // MARK: - Statements

    private static let insertTransaction = LedgerSQL(TransactionColumns.insertion)
    private static let updateState = LedgerSQL(
        "UPDATE transactions SET state = ?, error_code = ?, error_message = ?, updated_at = ? WHERE id = ?")
    private static let updatePurchaseDate = LedgerSQL(
        """
        UPDATE transactions SET purchase_date = ?,
            original_purchase_date = CASE WHEN original_id = id THEN ? ELSE original_purchase_date END WHERE id = ?
        """)
    private static let updateFinished = LedgerSQL(
        "UPDATE transactions SET is_finished = 1, finished_at = ?, updated_at = ? WHERE id = ?")
    private static let updateDelivered = LedgerSQL(
        "UPDATE transactions SET delivery_count = delivery_count + 1, last_delivered_at = ? WHERE id = ?")
}

extension Ledger {
    /// A writer for the current write transaction, at the store's time.
    package func writer(_ db: Database, delivery: DeliveryRecording = .notRecorded) throws -> TransactionWriter {
        writer(db, at: try storeNow(db), delivery: delivery)
    }

    /// A writer for the current write transaction, at a time the caller already read.
    package func writer(_ db: Database, at now: Int64, delivery: DeliveryRecording = .notRecorded) -> TransactionWriter
    {
        TransactionWriter(
            db: db, now: now, delivery: delivery, idGenerator: configuration.idGenerator,
            chained: configuration.keepsHashChain,
            identities: identities)
    }
}
