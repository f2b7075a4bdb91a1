package import Foundation
import GRDB
package import LedgerModel
import LedgerSigning

/// App Store Server Notifications V2, kept in a durable outbox (migration 13). While the store
/// has a notification URL, every change the App Store notifies records its notification,
/// signed, in the commit of the change, whatever door the change came through; a sender
/// (`ledger serve`, `ledger notifications send`) takes what is due, POSTs it and records each
/// attempt. Without a URL nothing is recorded, as the App Store sends nothing.
extension Ledger {
    // MARK: - Recording, inside a change's transaction

    /// Records the notification of `event` about `transaction` (the transaction it reports; `nil`
    /// for a test notification), dated `date` (by default the writer's time) by the store's
    /// clock, when the store has a notification URL, in `writer`'s commit. `key` names an event
    /// that must be notified once only (a change made when time passes): a second notification
    /// with the same key is not recorded. A `transaction` the writer holds
    /// (`TransactionWriter.holds`) matches its history already: it is signed as it is, and, when
    /// it is its subscription's latest period, reported without reading that again; the
    /// settings the writer read (`settingsRead`) are not read again either.
    func notify(
        _ writer: TransactionWriter, _ event: NotifiedEvent, about transaction: PaymentTransaction?,
        at date: Int64? = nil, once key: String? = nil, summary: NotificationPayload.Summary? = nil,
        refundReason: RefundRequest.Reason? = nil
    ) throws {
        // The transaction's app's notification, or, for one about none, this value's app's.
        let app = try transaction?.appID ?? appID()
        let (db, now, read) = (writer.db, date ?? writer.now, writer.settingsRead(app: app))
        let vouched = transaction.map { writer.holds($0.id) } ?? false
        guard try read.map(\.notifies) ?? Self.notifies(db, app: app) else { return }
        if let key, try Bool.fetchOne(db, sql: Self.keyTaken, arguments: [key]) == true { return }
        let signer = PayloadSigner(
            identity: try identities.identity(db),
            settings: try read ?? StoreSettings(stored: try Self.storedSettings(db, app: app)))
        let settings = signer.settings
        var signedTransaction: String?
        var signedRenewal: String?
        var status: SubscriptionStatus.RenewalState?
        if let transaction {
            // Signed as the App Store Server API signs it (`signing`: with a token the server set).
            let signing =
                vouched
                ? try signing(db, vouched: [transaction], signer: signer)
                : try signing(db, [transaction], signer: signer)
            signedTransaction = try signing.sign()[0].compactSerialization
            if let held = try heldSubscription(db, of: transaction),
                var state = try subscriptionStatus(
                    db, of: held, at: now,
                    latest: try vouched && isLatestPeriod(db, transaction, of: held) ? transaction : nil)
            {
                // The period the status reports is most often the one just signed, checked then.
                if !vouched || state.transaction.id != transaction.id { try vouchForSigning(db, state.transaction.id) }
                state.transaction = try withServerAccountTokens(db, [state.transaction])[0]
                signedRenewal = try signer.sign(
                    RenewalInfoPayload(
                        state, settings: settings,
                        recentStart: try recentSubscriptionStart(db, of: held),
                        appTransactionID: signer.identity.appTransactionID(
                            ofCustomer: state.transaction.customerID, app: state.transaction.appID))
                ).compactSerialization
                status = state.state
            }
        }
        let uuid = UUID()
        let (type, subtype) = event.notification
        let payload =
            summary.map {
                NotificationPayload(
                    type: type, subtype: subtype, uuid: uuid, signedDate: now, settings: settings, summary: $0)
            }
            ?? NotificationPayload(
                type: type, subtype: subtype, uuid: uuid, signedDate: now, settings: settings,
                signedTransactionInfo: signedTransaction, signedRenewalInfo: signedRenewal, status: status,
                consumptionRequestReason: refundReason?.rawValue)
        try db.execute(
            sql: """
                INSERT INTO notifications (uuid, type, subtype, transaction_id, original_transaction_id, event_key,
                    created_at, signed_payload, status, next_attempt_at, app_id)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?)
                """,
            arguments: [
                uuid.uuidString.lowercased(), type, subtype, transaction.map { Int64($0.id) },
                transaction.map { Int64($0.originalID) }, key, now, try signer.sign(payload).compactSerialization, now,
                app,
            ])
        try records(db).inserted(.notifications, key: db.lastInsertedRowID)
    }

    /// Whether app `app` has a notification URL: one prepared lookup, as every purchase asks.
    static func notifies(_ db: Database, app: Int64) throws -> Bool {
        let lookup = try FastStatement(db, notificationURLSet)
        lookup.bind(1, app)
        return try lookup.first { _ in true } ?? false
    }

    /// The apps that have a notification URL, as a condition on a table's `app_id`.
    static let notifyingApps = "app_id IN (\(notifyingAppIDs))"
    /// The apps that have a notification URL.
    private static let notifyingAppIDs =
        "SELECT app_id FROM app_settings WHERE key = '\(StoreSettingKey.notificationURL)' AND value <> 'none'"
    private static let notificationURLSet = LedgerSQL(
        "SELECT 1 FROM app_settings WHERE app_id = ? AND key = '\(StoreSettingKey.notificationURL)' AND value <> 'none'"
    )
    private static let keyTaken = "SELECT 1 FROM notifications WHERE event_key = ?"

    /// Records what passing time made up to `now`: subscriptions that expired with auto-renew
    /// off, grace periods that ended, billing retries that ran out (renewals themselves are
    /// made, and notified, by `renewDueSubscriptions`, which runs first). Each is notified once
    /// (its event key), and only when it happened after the store got its notification URL
    /// (`reportPassingTime(_:from:)`): setting one does not report the past. Writes nothing
    /// when nothing passed. Of `holdings` only: those something may be due for (`dueHoldings`).
    func notifyPassingTime(_ db: Database, at now: Int64, holdings: [HeldSubscription]) throws {
        let writer = writer(db, at: now)
        for change in try passingTime(db, at: now, holdings: holdings) {
            try notify(writer, change.event, about: change.transaction, at: change.date, once: change.key)
        }
    }

    /// A change passing time made: what it is, about which period, when, and its event key.
    struct PassingTimeChange {
        let event: NotifiedEvent
        let transaction: PaymentTransaction
        let date: Int64
        let key: String
    }

    /// The changes passing time made to `holdings` from the mark to `now`, not notified yet;
    /// none while the store has no notification URL.
    func passingTime(_ db: Database, at now: Int64, holdings: [HeldSubscription]) throws -> [PassingTimeChange] {
        // The apps with a URL, read once for the look.
        let notifying = Set(try Int64.fetchAll(db, sql: Self.notifyingAppIDs))
        guard !notifying.isEmpty else { return [] }
        let since = try Int64.fetchOne(db, sql: Self.reportedFrom) ?? 0
        guard now > since else { return [] }
        let passed = { (date: Int64?) in date.map { $0 > since && $0 <= now } ?? false }
        var changes: [PassingTimeChange] = []
        for held in holdings {
            guard let latest = try latestPeriod(db, of: held), latest.revocationDate == nil,
                let end = latest.expirationDate?.ledgerMilliseconds, notifying.contains(latest.appID)
            else { continue }
            let state = try renewalState(db, of: held)
            // Only a billing issue or a period that ended since the mark has anything to say.
            guard state.billingIssue(of: latest) != nil || passed(end) else { continue }
            switch try lapse(db, held, state, latest: latest) {
            case .billingIssue(let issue):
                if let grace = issue.graceUntil, passed(grace) {
                    changes.append(
                        .init(event: .gracePeriodEnded, transaction: latest, date: grace, key: "grace:\(latest.id)"))
                }
                if passed(issue.retryUntil) {
                    changes.append(
                        .init(
                            event: .expiredAfterBillingRetry, transaction: latest, date: issue.retryUntil,
                            key: "expired:\(latest.id)"))
                }
            case .priceIncrease where passed(end):
                changes.append(
                    .init(
                        event: .expiredAfterPriceIncrease, transaction: latest, date: end, key: "expired:\(latest.id)"))
            case .voluntary where passed(end):
                changes.append(
                    .init(event: .expiredVoluntarily, transaction: latest, date: end, key: "expired:\(latest.id)"))
            case .priceIncrease, .voluntary, .revoked, nil:
                continue
            }
        }
        return try changes.filter { try Bool.fetchOne(db, sql: Self.keyTaken, arguments: [$0.key]) != true }
    }

    /// Makes what the store's clock made due since the last look: the renewals (and their
    /// billing failures), then the notifications of passing time (`notifyPassingTime`), in one
    /// commit (`StoreAction.renewDueSubscriptions`); nothing, and no write, when the index says
    /// nothing may be due (one indexed read, whatever the store holds: `hasDueHoldings`). What
    /// `ledger serve` runs every second, as the App Store renews whether the app runs or not.
    /// Returns whether it wrote. It blocks its thread while it waits for the write lock.
    @discardableResult
    package func settleDueChanges() throws -> Bool {
        guard try clockMayHaveSomethingDue() else { return false }
        try perform(.renewDueSubscriptions)
        return true
    }

    /// Whether the store's clock may have something due for a subscription (a renewal, an
    /// expiry, the end of a grace period or billing retry), or a holding changed since the last
    /// look and waits for its next moment: one indexed read (`hasDueHoldings`).
    package func clockMayHaveSomethingDue() throws -> Bool {
        try read { db in try hasDueHoldings(db, at: try storeNow(db)) }
    }

    /// Sets the mark from which passing time is reported: what it made before `now` is not.
    func reportPassingTime(_ db: Database, from now: Int64) throws {
        try db.execute(
            sql: "UPDATE ledger_counters SET value = ? WHERE name = 'notifications_report_time_from'", arguments: [now])
    }

    private static let reportedFrom = "SELECT value FROM ledger_counters WHERE name = 'notifications_report_time_from'"

    // MARK: - Test notifications

    /// Records a test notification (Request a Test Notification): it is sent as any other.
    /// - Throws: `NotificationError.noURL` when the store has no notification URL.
    package func requestTestNotification() throws -> ServerNotification {
        try write { db in
            guard try settings(db).notificationURL != nil else { throw NotificationError.noURL }
            let now = try storeNow(db)
            try notify(writer(db, at: now), .test, about: nil)
            return try Self.notifications(db, where: "seq = last_insert_rowid()")[0]
        }
    }

    // MARK: - Reading the outbox

    /// The notifications of the outbox in commit order, with their attempts: this value's app's
    /// (every app's for a value that names none), those with `status` (all when `nil`), from
    /// `after` on (exclusive), at most `limit`.
    package func notifications(
        status: ServerNotification.Status? = nil, after sequence: Int64 = 0, limit: Int = 1000
    ) throws -> [ServerNotification] {
        // This value's app's, or every app's for a value that names none.
        let app = appScope.id
        return try read { db in
            try Self.notifications(
                db, where: "seq > ? AND (? IS NULL OR status = ?) AND (? IS NULL OR app_id = ?) ORDER BY seq LIMIT ?",
                arguments: [sequence, status?.rawValue, status?.rawValue, app, app, limit])
        }
    }

    /// The notification with this `notificationUUID`, or `nil`.
    /// - Throws: `LedgerError` (`.corrupted`) when its record was changed outside the ledger.
    package func notification(_ uuid: UUID) throws -> ServerNotification? {
        try read { db in
            try authenticated(
                db, try Self.notifications(db, where: "uuid = ?", arguments: [uuid.uuidString.lowercased()])
            ).first
        }
    }

    /// `notifications`, each record checked: what a client is handed must be the ledger's.
    private func authenticated(_ db: Database, _ notifications: [ServerNotification]) throws -> [ServerNotification] {
        let records = try records(db)
        for notification in notifications { try records.check(.notifications, key: notification.sequence) }
        return notifications
    }

    /// The notifications of the outbox dated from `start` to `end` (exclusive) by the store's
    /// clock, in commit order, after `sequence`, at most `limit`; with `type` or `subtype`, only
    /// those; with `transactionID`, any transaction of the customer's, only the customer's (Get
    /// Notification History: "to limit the request to this one customer"): the notifications
    /// about that customer's transactions (not a test's, nor a mass extension's summary).
    /// - Throws: `LedgerError` (`.corrupted`) when a record was changed outside the ledger.
    package func notificationHistory(_ query: NotificationHistoryQuery) throws -> [ServerNotification] {
        let app = try appID()
        return try read { db in
            var customer: Int64?
            if let id = query.transactionID {
                guard
                    let owner = try Int64.fetchOne(
                        db, sql: "SELECT customer_id FROM transactions WHERE id = ? AND app_id = ?",
                        arguments: [Int64(id), app])
                else { throw PaymentQueueError.unknownTransaction(id) }
                customer = owner
            }
            return try authenticated(
                db,
                try Self.notifications(
                    db,
                    where: """
                        seq > ? AND app_id = ? AND created_at >= ? AND created_at < ? AND (? IS NULL OR type = ?)
                            AND (? IS NULL OR subtype = ?)
                            AND (? IS NULL OR transaction_id IN (SELECT id FROM transactions WHERE customer_id = ?))
                            AND (? = 0 OR status <> 'delivered')
                        ORDER BY seq LIMIT ?
                        """,
                    arguments: [
                        query.after, app, query.start.ledgerMilliseconds, query.end.ledgerMilliseconds, query.type,
                        query.type,
                        query.subtype, query.subtype, customer, customer, query.onlyFailures, query.limit,
                    ]))
        }
    }

    // MARK: - Sending

    /// The notifications due by the store's clock, at most `limit`, the longest due first (then
    /// in commit order): pending, their next attempt due. Each on its own, as Apple sends them: a
    /// failed attempt delays only its notification, and a later one of the same transaction may
    /// arrive first (a server keeps the one signed last, `signedDate`). Those of `excluding`
    /// (sequences a sender is attempting, not recorded yet) are left out.
    ///
    /// The order is the one of the index of pending notifications, so the read stops after
    /// `limit` rows (and the ones it skips) however many are pending: a running sender asks
    /// every few milliseconds. Each one's record is checked (`isAuthentic`): one changed outside
    /// the ledger is still returned, for the sender to fail rather than send or skip forever.
    package func dueNotifications(limit: Int, excluding: Set<Int64> = []) throws -> [ServerNotification] {
        let excluded = "[" + excluding.map(String.init).joined(separator: ",") + "]"
        return try read { db in
            let records = try records(db)
            return try Self.notifications(
                db,
                where: """
                    status = 'pending' AND next_attempt_at <= ? AND seq NOT IN (SELECT value FROM json_each(?))
                        AND \(Self.notifyingApps)
                    ORDER BY next_attempt_at, seq LIMIT ?
                    """, arguments: [try storeNow(db), excluded, limit]
            ).map { notification in
                var checked = notification
                checked.isAuthentic = try records.isAuthentic(.notifications, key: notification.sequence)
                return checked
            }
        }
    }

    /// Records one attempt to send the notification `sequence`, dated by the store's clock: a
    /// success delivers it; a failure plans the next attempt (`ServerNotification.retryDelay`)
    /// or, after the sixth, fails it. An attempt on a notification no longer pending changes
    /// nothing (another sender recorded it first). Returns the notification as it now stands.
    @discardableResult
    package func recordAttempt(
        _ sequence: Int64, result: SendAttemptResult, httpStatus: Int?
    ) throws -> ServerNotification {
        guard
            let notification = try read({ db in try Self.notifications(db, where: "seq = ?", arguments: [sequence]) })
                .first
        else { throw NotificationError.unknownSequence(sequence) }
        return try recordAttempts([
            NotificationAttemptOutcome(notification: notification, result: result, httpStatus: httpStatus)
        ])[0]
    }

    /// `recordAttempt` for each outcome, in one commit; returns the notifications as they now
    /// stand, in sequence order.
    /// The commit does not wait for the disk (`writeUnsynced`): a power loss may take the
    /// record back, and the notifications are then sent again, as after a killed sender.
    package func recordAttempts(_ outcomes: [NotificationAttemptOutcome]) throws -> [ServerNotification] {
        try writeUnsynced { db in
            let now = try storeNow(db)
            return try outcomes.sorted { $0.notification.sequence < $1.notification.sequence }.map { outcome in
                try Self.recordAttempt(db, outcome, at: now)
            }
        }
    }

    private static func recordAttempt(
        _ db: Database, _ outcome: NotificationAttemptOutcome, at now: Int64
    ) throws -> ServerNotification {
        var notification = outcome.notification
        let sequence = notification.sequence
        let stands = try Row.fetchOne(
            db.cachedStatement(sql: "SELECT status, attempts FROM notifications WHERE seq = ?"), arguments: [sequence])
        guard let stands else { throw NotificationError.unknownSequence(sequence) }
        // Recorded by another sender meanwhile: this attempt changes nothing.
        guard stands[0] == ServerNotification.Status.pending.rawValue, stands[1] == notification.attempts.count else {
            return try notifications(db, where: "seq = ?", arguments: [sequence])[0]
        }
        let number = notification.attempts.count + 1
        try db.cachedStatement(
            sql:
                """
                INSERT INTO notification_attempts (notification_seq, attempt, at, result, http_status, detail)
                VALUES (?, ?, ?, ?, ?, ?)
                """
        ).execute(arguments: [sequence, number, now, outcome.result.rawValue, outcome.httpStatus, outcome.detail])
        let delay = ServerNotification.retryDelay(afterAttempt: number)
        let status: ServerNotification.Status =
            outcome.result == .success ? .delivered : delay == nil ? .failed : .pending
        let next = status == .pending ? now + Int64((delay ?? 0) * 1000) : nil
        try db.cachedStatement(
            sql: "UPDATE notifications SET status = ?, attempts = ?, next_attempt_at = ? WHERE seq = ?"
        ).execute(arguments: [status.rawValue, number, next, sequence])
        notification.attempts.append(
            ServerNotification.Attempt(
                date: Date(ledgerMilliseconds: now), result: outcome.result, httpStatus: outcome.httpStatus,
                detail: outcome.detail))
        notification.status = status
        notification.nextAttemptDate = next.map(Date.init(ledgerMilliseconds:))
        return notification
    }

    // MARK: - Rows
}

/// How one attempt to send a notification ended, before it is recorded.
package struct NotificationAttemptOutcome: Sendable {
    /// The notification as it stood when it was sent.
    package let notification: ServerNotification
    package let result: SendAttemptResult
    package let httpStatus: Int?
    /// What happened, in words (`ServerNotification.Attempt.detail`), cut to its limit.
    package let detail: String?

    package init(notification: ServerNotification, result: SendAttemptResult, httpStatus: Int?, detail: String? = nil) {
        self.notification = notification
        self.result = result
        self.httpStatus = httpStatus
        var bytes = 0
        let kept = detail?.prefix { character in
            bytes += character.utf8.count
            return bytes <= ServerNotification.Attempt.detailLimit
        }
        self.detail = kept.flatMap { $0.isEmpty ? nil : String($0) }
    }
}

/// What Get Notification History asks for: a window of the store's time, filters, and where
/// the previous page ended.
package struct NotificationHistoryQuery: Sendable, Hashable {
    /// The window's start (included), by the store's clock.
    package var start: Date
    /// The window's end (excluded).
    package var end: Date
    /// Only this `notificationType`.
    package var type: String?
    /// Only this `subtype`.
    package var subtype: String?
    /// Only the notifications of this transaction's customer (any of their transactions names them).
    package var transactionID: UInt64?
    /// Only the notifications that did not reach the server (pending or failed).
    package var onlyFailures = false
    /// The last sequence of the previous page (0 for the first).
    package var after: Int64 = 0
    /// The most notifications returned.
    package var limit = 20

    /// Every notification dated from `start` to `end`, 20 at most.
    package init(start: Date, end: Date) {
        self.start = start
        self.end = end
    }
}
