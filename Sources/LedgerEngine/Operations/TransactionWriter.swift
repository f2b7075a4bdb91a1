import Foundation
package import GRDB
import LedgerModel
import Synchronization

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
    package let chained: Bool
    /// The ledger's identity, whose key authenticates the events.
    package let identities: IdentityCache
    /// Counts the changes of `transactions` rows by all of the ledger's writers (`Held.images`).
    private let rowChanges: RowChanges
    /// What this writer read or wrote in its transaction, kept for the rest of it.
    private let held: Held

    package init(
        db: Database, now: Int64, delivery: DeliveryRecording, idGenerator: TransactionIDGenerator, chained: Bool,
        identities: IdentityCache, rowChanges: RowChanges
    ) {
        self.db = db
        self.now = now
        self.delivery = delivery
        self.idGenerator = idGenerator
        self.chained = chained
        self.identities = identities
        self.rowChanges = rowChanges
        held = Held(changesSeen: rowChanges.count)
    }

    /// What a writer holds in its transaction.
    /// - The ids of the rows it vouched for once, or wrote: only the writer changes a
    ///   transaction's row, each change followed by its event, and nobody else writes while its
    ///   transaction lasts, so a row it holds matches its history and is not read again to be
    ///   vouched for.
    /// - The image of each row it read or wrote (`RowImage`), changed as its statements change
    ///   the row: the digest after a change comes from it, without a read. Another writer of the
    ///   same transaction may change a row too (a rule may make one of its own), so the images
    ///   are dropped, and read again when needed, as soon as `rowChanges` counts a change this
    ///   writer did not make. A writer lives inside the savepoint of its change (a group commit's):
    ///   a rollback of its statements ends it too.
    /// - The store's settings, parsed at the first ask (`settings()`): nothing else changes them
    ///   in the transaction but the writer's caller, which does not ask after.
    private final class Held {
        var ids: Set<UInt64> = []
        var images: [UInt64: RowImage] = [:]
        /// `rowChanges`' count after this writer's last change, or when it last dropped its images.
        var changesSeen: UInt64
        var settings: (app: Int64, settings: StoreSettings)?

        init(changesSeen: UInt64) { self.changesSeen = changesSeen }
    }

    /// The store's settings as app `app` sees them in this write transaction, parsed once: a
    /// purchase's rules (the time rate of its period) and its notification (the URL, what
    /// signs) share them.
    package func settings(app: Int64) throws -> StoreSettings {
        if let settings = held.settings, settings.app == app { return settings.settings }
        let settings = StoreSettings(stored: try Ledger.storedSettings(db, app: app))
        held.settings = (app, settings)
        return settings
    }

    /// The settings `settings(app:)` parsed for `app`, if it was asked: a change that may use
    /// them (a notification) takes them when they are there, and asks less than all of them
    /// otherwise.
    package func settingsRead(app: Int64) -> StoreSettings? {
        held.settings.flatMap { $0.app == app ? $0.settings : nil }
    }

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
    /// in set form). The row is not read: its image is made from the values inserted.
    package func insert(_ row: NewTransactionRow, id: UInt64, recordingDelivery: Bool = false) throws -> UInt64 {
        let values = row.columnValues(id: id)
        let insert = try FastStatement(db, Self.insertTransaction)
        for (index, value) in values.enumerated() { value.bind(to: insert, at: Int32(index + 1)) }
        noteRowChange()
        try insert.execute()
        held.ids.insert(id)
        try record(
            .init(transactionID: id, kind: .created, from: nil, to: row.state, at: row.createdAt),
            of: id, image: chained ? RowImage(values) : nil, thenDelivered: recordingDelivery)
        return id
    }

    /// Transaction `id` with the outcome the store planned for it when it was added (for one
    /// still purchasing; `.failed` when none is stored), read and vouched for in one statement,
    /// and held from then on; `nil` when the ledger has none.
    /// - Throws: `DamagedRow` when the row differs from what its history recorded.
    package func plannedPurchase(
        _ id: UInt64
    ) throws -> (PaymentTransaction, planned: (state: TransactionState, error: TransactionError?))? {
        guard let read = try PaymentTransaction.fetchWithPlan(db, id: id, vouching: chained) else { return nil }
        hold(id, read.image)
        return (read.transaction, read.planned)
    }

    /// Transaction `id` as stored, `nil` when the ledger has none, read with what its history
    /// recorded: when they agree the writer holds the row and keeps its image, so that a change
    /// of it reads it no more (a row that differs is refused when it is changed, as always).
    package func transaction(_ id: UInt64) throws -> PaymentTransaction? {
        guard chained else { return try PaymentTransaction.fetchOne(db, id: id) }
        guard id <= UInt64(Int64.max) else { return nil }
        let read = try FastStatement(db, HashChain.vouchRow)
        read.bind(1, Int64(id))
        return try read.first { columns in
            let transaction = try PaymentTransaction(columns)
            let image = RowImage(columns)
            if HashChain.matchesHistory(image, columns) { hold(id, image) }
            return transaction
        }
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
        noteRowChanges()
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
        var image = try image(of: transaction.id)
        var updated = transaction
        switch dates {
        case .period(let start, let end, let offer):
            let end = Ledger.withinStoreTime(end)
            // A period that begins its chain (the group's first purchase) dates the chain too.
            let beginsItsChain = transaction.originalID == transaction.id
            let period: [ColumnValue] = [
                .integer(start), .integer(end), .text(offer?.type.rawValue), .text(offer?.id),
                .text(offer?.paymentMode.rawValue), .text(offer?.period.description),
            ]
            try change(
                transaction.id, beginsItsChain ? Self.startChain : Self.startPeriod,
                beginsItsChain ? period + [.integer(start)] : period, &image)
            updated.purchaseDate = Date(ledgerMilliseconds: start)
            updated.expirationDate = Date(ledgerMilliseconds: end)
            updated.offer = offer
            if beginsItsChain { updated.originalPurchaseDate = updated.purchaseDate }
        case .purchaseDate(let date):
            // A purchase that begins its chain dates the chain too.
            let beginsItsChain = transaction.originalID == transaction.id
            try change(
                transaction.id, beginsItsChain ? Self.dateChain : Self.datePurchase,
                beginsItsChain ? [.integer(date), .integer(date)] : [.integer(date)], &image)
            updated.purchaseDate = Date(ledgerMilliseconds: date)
            if beginsItsChain { updated.originalPurchaseDate = updated.purchaseDate }
        case nil:
            break
        }
        try change(
            transaction.id, Self.updateState,
            [
                .text(state.rawValue), .integer((error?.code.rawValue).map(Int64.init)), .text(error?.message),
                .integer(now),
            ], &image)
        updated.state = state
        updated.error = error
        updated.updatedAt = Date(ledgerMilliseconds: now)
        let recordsDelivery = delivery == .recorded
        try record(
            .init(transactionID: transaction.id, kind: .stateChanged, from: transaction.state, to: state, at: now),
            of: transaction.id, image: image, thenDelivered: recordsDelivery)
        if recordsDelivery { delivered(&updated) }
        return updated
    }

    /// Marks a transaction finished (row and event); the caller checked that its state allows it.
    package func finish(_ transaction: PaymentTransaction) throws -> PaymentTransaction {
        try change(
            transaction, Self.updateFinished, [.flag(true), .integer(now), .integer(now)], kind: .finished)
        var finished = transaction
        finished.isFinished = true
        finished.finishedAt = Date(ledgerMilliseconds: now)
        finished.updatedAt = finished.finishedAt!
        return finished
    }

    /// Records one delivery of `transaction` (row and event), and in the value too.
    package func recordDelivery(of transaction: inout PaymentTransaction) throws {
        var image = try image(of: transaction.id)
        try deliver(transaction.id, &image)
        try record(
            .init(
                transactionID: transaction.id, kind: .delivered, from: transaction.state, to: transaction.state, at: now
            ),
            of: transaction.id, image: image)
        delivered(&transaction)
    }

    /// A delivery recorded in `transaction`'s value, as `updateDelivered` records it in its row.
    private func delivered(_ transaction: inout PaymentTransaction) {
        transaction.deliveryCount += 1
        transaction.lastDeliveredAt = Date(ledgerMilliseconds: now)
    }

    /// One more delivery, now, in transaction `id`'s row and in its image.
    private func deliver(_ id: UInt64, _ image: inout RowImage?) throws {
        noteRowChange()
        let update = try FastStatement(db, Self.updateDelivered)
        update.bind(1, now)
        update.bind(2, Int64(id))
        try update.execute()
        try image?.recordDelivery(at: now)
    }

    /// Sets a refund's revocation date (now) and reason, with its `revoked` event.
    package func revoke(_ transaction: PaymentTransaction, reason: Int) throws {
        try change(
            transaction, Self.updateRevocation, [.integer(now), .integer(Int64(reason)), .integer(now)],
            kind: .revoked, detail: "reason \(reason)")
    }

    /// Clears a refund's revocation (a reversed refund), with its `reinstated` event, whose
    /// detail is the date of the refund it reverses.
    package func reinstate(_ transaction: PaymentTransaction) throws {
        try change(
            transaction, Self.updateRevocation, [.integer(nil), .integer(nil), .integer(now)], kind: .reinstated,
            detail: transaction.revocationDate?.formatted(.iso8601))
    }

    /// Moves a subscription period's expiration to `date` (an expiry now, a renewal date
    /// extended), with its `expirationChanged` event.
    package func moveExpiration(of period: PaymentTransaction, to date: Int64) throws {
        let date = Ledger.withinStoreTime(date)
        try change(
            period, Self.updateExpiration, [.integer(date), .integer(now)], kind: .expirationChanged,
            detail: Date(ledgerMilliseconds: date).formatted(.iso8601))
    }

    /// Marks a subscription period as replaced by an upgrade, with its `upgraded` event.
    package func markUpgraded(_ period: PaymentTransaction) throws {
        try change(period, Self.updateUpgraded, [.flag(true), .integer(now)], kind: .upgraded)
    }

    // MARK: - A row's change and its event

    /// Changes `transaction`'s row by one `update`, then appends its `kind` event, which keeps
    /// the transaction's state (the changes that are not a change of state).
    private func change(
        _ transaction: PaymentTransaction, _ update: RowUpdate, _ values: [ColumnValue],
        kind: TransactionEvent.Kind, detail: String? = nil
    ) throws {
        var image = try image(of: transaction.id)
        try change(transaction.id, update, values, &image)
        try record(
            .init(
                transactionID: transaction.id, kind: kind, from: transaction.state, to: transaction.state, at: now,
                detail: detail),
            of: transaction.id, image: image)
    }

    /// Runs `update` on transaction `id`'s row with `values`, and on its image.
    private func change(_ id: UInt64, _ update: RowUpdate, _ values: [ColumnValue], _ image: inout RowImage?) throws {
        noteRowChange()
        try update.run(db, id: id, values, image: &image)
    }

    /// Appends `event`, about transaction `id`, with the digest of its row as it is after the
    /// change (`image`, `nil` unchained), then, when `thenDelivered`, records the delivery that
    /// follows (row and event): only the delivery's two columns change, so the row is not read.
    /// Keeps the image for the writer's next change of the row.
    private func record(
        _ event: ChainedEvent.Content, of id: UInt64, image: RowImage?, thenDelivered: Bool = false
    ) throws {
        var image = image
        var appender = try appender()
        try appender.append(db, event, rowDigest: image?.digest ?? HashChain.noRow)
        if thenDelivered {
            try deliver(id, &image)
            try appender.append(
                db, .init(transactionID: id, kind: .delivered, from: event.to, to: event.to, at: now),
                rowDigest: image?.digest ?? HashChain.noRow)
        }
        try appender.finish(db)
        hold(id, image)
    }

    // MARK: - Many rows at once

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
            var image = chained ? try HashChain.vouch(columns) : nil
            var transaction = try PaymentTransaction(columns)
            self.delivered(&transaction)
            try image?.recordDelivery(at: now)
            deliveries.append((transaction, image?.digest ?? HashChain.noRow))
        }
        noteRowChanges()
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

    /// Deletes transactions (the store's "clear" and "delete" controls), with what is kept
    /// beside them (interrupted purchases, refund requests, payment terms; charged prices,
    /// refund portions and renewal changes through their authenticated records). Their history stays, closed by a `deleted` event each: the hash
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
            for table in [AuthenticatedRecords.Table.chargedPrices, .refundPortions, .renewalChanges] {
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
        noteRowChanges()
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
    private func appendEvents(
        _ kind: TransactionEvent.Kind, toRowsWhere condition: String, arguments: StatementArguments
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

    /// The image of transaction `id`'s row as it is now (`Held`): kept from the writer's last
    /// read or change of it, or read, and vouched for (`HashChain.vouch`) unless the writer
    /// holds the row already. Taken out of `Held` (the caller changes it, then `record` keeps
    /// it again). `nil` unchained: the digests are zeros.
    /// - Throws: `DamagedRow` when the row differs from its history, or is not there.
    private func image(of id: UInt64) throws -> RowImage? {
        guard chained else { return nil }
        dropImagesIfAnotherWriterChangedRows()
        if let image = held.images.removeValue(forKey: id) { return image }
        let holds = held.ids.contains(id)
        let read = try FastStatement(db, holds ? HashChain.selectRow : HashChain.vouchRow)
        read.bind(1, Int64(id))
        guard let image = try read.first({ holds ? RowImage($0) : try HashChain.vouch($0) }) else {
            throw DamagedRow(reason: "transaction \(id) has no row to change")
        }
        held.ids.insert(id)
        return image
    }

    /// Keeps transaction `id` as held, with its row's image when there is one.
    private func hold(_ id: UInt64, _ image: RowImage?) {
        held.ids.insert(id)
        guard let image else { return }
        dropImagesIfAnotherWriterChangedRows()
        held.images[id] = image
    }

    /// Counts a statement of this writer that changes one row, before it runs.
    private func noteRowChange() {
        dropImagesIfAnotherWriterChangedRows()
        held.changesSeen = rowChanges.increment()
    }

    /// Counts a statement of this writer that changes many rows: their images are dropped
    /// (these paths do not change them).
    private func noteRowChanges() {
        held.images.removeAll()
        held.changesSeen = rowChanges.increment()
    }

    private func dropImagesIfAnotherWriterChangedRows() {
        let count = rowChanges.count
        guard count != held.changesSeen else { return }
        held.images.removeAll()
        held.changesSeen = count
    }

    /// Whether this writer holds transaction `id`'s row: it wrote it, or vouched for it, in this
    /// transaction (`Held`), so the row matches its history and needs no read to show it.
    package func holds(_ id: UInt64) -> Bool {
        held.ids.contains(id)
    }

    /// Refuses the rows `condition` selects unless their history vouches for them (`HashChain.vouch`).
    package func vouch(where condition: String, arguments: StatementArguments) throws {
        if chained { try HashChain.vouch(db, where: condition, arguments: arguments) }
    }

    // MARK: - Statements

    private static let insertTransaction = LedgerSQL(TransactionColumns.insertion)
    private static let updateState = RowUpdate("state", "error_code", "error_message", "updated_at")
    private static let startPeriod = RowUpdate(
        "purchase_date", "expiration_date", "offer_type", "offer_id", "offer_payment_mode", "offer_period")
    private static let startChain = RowUpdate(
        "purchase_date", "expiration_date", "offer_type", "offer_id", "offer_payment_mode", "offer_period",
        "original_purchase_date")
    private static let datePurchase = RowUpdate("purchase_date")
    private static let dateChain = RowUpdate("purchase_date", "original_purchase_date")
    private static let updateFinished = RowUpdate("is_finished", "finished_at", "updated_at")
    private static let updateRevocation = RowUpdate("revocation_date", "revocation_reason", "updated_at")
    private static let updateExpiration = RowUpdate("expiration_date", "updated_at")
    private static let updateUpgraded = RowUpdate("is_upgraded", "updated_at")
    private static let updateDelivered = LedgerSQL(
        "UPDATE transactions SET delivery_count = delivery_count + 1, last_delivered_at = ? WHERE id = ?")
}

/// How many statements changing `transactions` rows the writers of one ledger ran (`TransactionWriter`'s
/// row images): one writer's changes are seen by another of the same write transaction.
package final class RowChanges: Sendable {
    private let counter = Atomic<UInt64>(0)

    package init() {}

    var count: UInt64 { counter.load(ordering: .sequentiallyConsistent) }

    /// Counts one more; returns the new count.
    func increment() -> UInt64 {
        counter.wrappingAdd(1, ordering: .sequentiallyConsistent).newValue
    }
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
            chained: configuration.keepsHashChain, identities: identities, rowChanges: rowChanges)
    }
}
