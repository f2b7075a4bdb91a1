import Foundation
import GRDB
import LedgerModel

/// The store's one door for its controls (`StoreAction`): each control's change and what it causes, in one commit.
extension Ledger {
    /// The store's one door: commits `action` and, when `delivery` is `.recorded` (the app's
    /// observers will hear of it), one delivery of each transaction it hands them as updated
    /// (`StoreActionOutcome.deliverable`), in the same commit. A refused action changes
    /// nothing.
    /// - Throws: the action's errors: `PaymentQueueError.unknownTransaction`, `.notDeferred`,
    ///   `StoreControlError`, `UnknownProductError`, `PromotionalOfferError`; `LedgerError`.
    @discardableResult
    package func perform(_ action: StoreAction, delivery: DeliveryRecording = .notRecorded) throws -> StoreActionOutcome
    {
        try Self.validatePayment(of: action)
        return try write { db in try perform(db, action, delivery: delivery) }
    }

    /// `perform(_:delivery:)` in the next group commit (from an actor: see `grouped`).
    @discardableResult
    package func perform(
        _ action: StoreAction, delivery: DeliveryRecording = .notRecorded
    ) async throws -> StoreActionOutcome {
        try Self.validatePayment(of: action)
        return try await grouped { db in try self.perform(db, action, delivery: delivery) }
    }

    /// Refuses, before any write, the payment an action makes when it is malformed.
    private static func validatePayment(of action: StoreAction) throws {
        switch action {
        case .buyOutsideTheApp(let payment), .shareFamilyPurchase(let payment): try validate(payment)
        default: break
        }
    }

    private func perform(
        _ db: Database, _ action: StoreAction, delivery: DeliveryRecording
    ) throws -> StoreActionOutcome {
        var outcome = try actor(db, of: action).change(db, action)
        // This value's customer's devices hear of their own transactions only.
        if outcome.transactions.contains(where: { !isOwn($0) }) { outcome.notice = .none }
        if delivery == .recorded, outcome.notice == .updated {
            try writer(db).recordDelivery(ofUnfinished: &outcome.transactions)
        }
        return outcome
    }

    /// Who an action acts for: a control of one transaction (an approval, a refund, a
    /// deletion...) is the store's hand, and acts for the transaction's owner whoever this
    /// value acts for; the others, and a refund request (the customer's own), for this value's
    /// customer.
    private func actor(_ db: Database, of action: StoreAction) throws -> Ledger {
        let id: UInt64
        switch action {
        case .approveAskToBuy(let transaction), .declineAskToBuy(let transaction),
            .resolveIssue(ofTransaction: let transaction), .refund(let transaction, _, _),
            .reverseRefund(let transaction), .decideRefundRequest(let transaction, _),
            .deleteTransaction(let transaction), .revokeFamilySharing(let transaction):
            id = transaction
        default: return self
        }
        // Its owner, in its app, only: the action reads the transaction itself.
        guard
            let owner = try Row.fetchOne(
                db.cachedStatement(sql: "SELECT customer_id, app_id FROM transactions WHERE id = ?"),
                arguments: [Int64(clamping: id)])
        else { return self }
        return try forOwner(Owner(customer: owner[0], app: owner[1]), db)
    }

    /// What each action writes, and how observers hear of it.
    private func change(_ db: Database, _ action: StoreAction) throws -> StoreActionOutcome {
        switch action {
        case .approveAskToBuy(let id):
            return .updated([try moveDeferred(try writer(db), id: id, to: .purchased, error: nil)])
        case .declineAskToBuy(let id):
            return .updated([try moveDeferred(try writer(db), id: id, to: .failed, error: Self.declined)])
        case .resolveIssue(let id):
            let resolution = try resolveIssue(db, ofTransaction: id)
            let replacement = resolution.replacement.map { [$0] } ?? []
            return StoreActionOutcome(transactions: replacement, notice: resolution.isNew ? .updated : .none)
        case .resolveBillingIssue(let productID):
            return .updated([try resolveBillingIssue(db, productID: productID)])
        case .refund(let id, let reason, let prorated):
            return StoreActionOutcome(
                transactions: try refund(db, id, reason: reason, prorated: prorated), notice: .revoked)
        case .reverseRefund(let id):
            // A period that entitles again renews: the renewal task must look again.
            return StoreActionOutcome(
                transactions: try reverseRefund(db, id), notice: .reinstated, movesNextRenewal: true)
        case .requestRefund(let id, let reason):
            return StoreActionOutcome(transactions: [try requestRefund(db, id, reason: reason)], notice: .none)
        case .decideRefundRequest(let id, let decision):
            return try decideRefundRequest(db, id, decision)
        case .deleteTransaction(let id):
            _ = try existingTransaction(db, id: id)
            try writer(db).delete(where: "id = ?", arguments: [Int64(id)])
            return StoreActionOutcome(transactions: [], notice: .none)
        case .clearTransactions:
            // The customer's in the app, or the whole store's for a value that names neither.
            let condition = scopeCondition
            let count =
                try Int.fetchOne(
                    try db.cachedStatement(sql: "SELECT COUNT(*) FROM transactions WHERE \(condition.0)"),
                    arguments: condition.1) ?? 0
            try writer(db).delete(where: condition.0, arguments: condition.1)
            return StoreActionOutcome(transactions: [], notice: .none, deletedCount: count)
        case .buyOutsideTheApp(var payment):
            payment.isOutsideTheApp = true
            let created = try addPayment(db, payment, delivery: .notRecorded).transaction
            return .updated([try applyPlannedOutcome(try writer(db), id: created.id)])
        case .shareFamilyPurchase(let payment):
            return .updated([try shareFamilyPurchase(db, payment)])
        case .revokeFamilySharing(let id):
            return StoreActionOutcome(transactions: try revokeFamilySharing(db, id), notice: .revoked)
        case .forceRenewal(let productID):
            switch try forceRenewal(db, productID: productID) {
            case .renewed(let renewal): return .updated([renewal])
            case .failed(let ended): return StoreActionOutcome(transactions: [ended], notice: .none)
            }
        case .expireSubscription(let productID):
            return StoreActionOutcome(transactions: [try expireSubscription(db, productID: productID)], notice: .none)
        case .setAutoRenew(let productID, let enabled):
            try setAutoRenew(db, productID: productID, enabled: enabled)
            return StoreActionOutcome(transactions: [], notice: .none, movesNextRenewal: enabled)
        case .requestPriceIncrease(let productID, let price, let needsConsent):
            let latest = try requestPriceIncrease(db, productID: productID, price: price, needsConsent: needsConsent)
            return StoreActionOutcome(transactions: [latest], notice: .none)
        case .answerPriceIncrease(let productID, let agree):
            let latest = try answerPriceIncrease(db, productID: productID, agree: agree)
            return StoreActionOutcome(transactions: [latest], notice: .none, movesNextRenewal: agree)
        case .advanceClock(let interval):
            try advanceClock(db, by: interval)
            return StoreActionOutcome(
                transactions: try renewDueSubscriptions(try writer(db)), notice: .updated, movesNextRenewal: true)
        case .setClock(let date):
            try setClock(db, to: date)
            return StoreActionOutcome(
                transactions: try renewDueSubscriptions(try writer(db)), notice: .updated, movesNextRenewal: true)
        case .renewDueSubscriptions:
            return .updated(try renewDueSubscriptions(try writer(db)))
        }
    }

    /// The error of a purchase declined by Ask to Buy.
    private static let declined = TransactionError(
        code: .paymentCancelled, message: "The purchase was declined (Ask to Buy).")

    /// Refunds a purchased or restored transaction (finished or not): sets its revocation date
    /// and reason; its state does not change. A refund is of the purchase, so the purchase and
    /// every restored copy of it are revoked together.
    /// A prorated refund (`prorated`: the part refunded, in milliunits of a percent) revokes
    /// the same, and keeps the part with the purchase (migration 19).
    /// - Returns: the transaction asked for first, then the others the refund revoked.
    /// - Throws: `PaymentQueueError.unknownTransaction`, `StoreControlError.cannotRefund`, `.alreadyRefunded`,
    ///   `.nothingCharged`, `.invalidRefundPortion`.
    func refund(_ db: Database, _ id: UInt64, reason: Int, prorated: Int? = nil) throws -> [PaymentTransaction] {
        if let prorated, !(1...99_999).contains(prorated) { throw StoreControlError.invalidRefundPortion(prorated) }
        let writer = try writer(db)
        let transaction = try existingTransaction(writer, id: id)
        guard transaction.state.canBeRevoked else {
            throw StoreControlError.cannotRefund(id, state: transaction.state)
        }
        guard transaction.revocationDate == nil else { throw StoreControlError.alreadyRefunded(id) }
        guard try !isRenewalChange(db, transaction) else { throw StoreControlError.nothingCharged(id) }
        let purchase = transaction.restoredFromID ?? transaction.id
        let related = try otherCopies(db, of: transaction, refunded: false)
        for revoked in [transaction] + related {
            try writer.revoke(revoked, reason: reason)
            if let prorated {
                try records(db).write(.refundPortions, key: Int64(revoked.id)) {
                    try db.execute(
                        sql: "INSERT INTO refund_portions (transaction_id, percentage) VALUES (?, ?)",
                        arguments: [Int64(revoked.id), prorated])
                }
            }
        }
        // A refund request of what was refunded is granted by it.
        try settleRefundRequests(db, of: ([transaction] + related).map(\.id), as: .granted, at: writer.now)
        let refunded = try ([transaction] + related).map { try PaymentTransaction.fetchOne(db, id: $0.id)! }
        // One notification, of the purchase (a restored copy is the same purchase). A purchase
        // shared by a family member is revoked from the customer: its sharing ends.
        let shared = try sharingIsLive(db, original: transaction.originalID)
        if shared { try endSharing(db, original: transaction.originalID, at: writer.now) }
        try notify(
            writer, shared ? .familySharingRevoked : .refunded,
            about: refunded.first { $0.id == purchase } ?? refunded[0])
        // The buyer's refund ends what their family shared of it.
        if !shared { try endFamilySharing(db, of: transaction) }
        return refunded
    }

    /// Reverses the refund of transaction `id` (Apple's `REFUND_REVERSED`, after a dispute the
    /// customer raised): the purchase and the restored copies the refund revoked entitle again,
    /// with a `reinstated` event each, and a prorated refund's part goes. A subscription keeps
    /// its renewal date: a period still running renews at its end; a latest period that ended
    /// while refunded stays ended (nobody was charged meanwhile), so nothing renews for it.
    /// `REFUND_REVERSED` is notified, in the same commit. A refund request that the refund
    /// granted stays granted: it is history.
    /// - Returns: the transaction asked for first, then the others it reinstated.
    /// - Throws: `PaymentQueueError.unknownTransaction`; `StoreControlError.notRefunded`,
    ///   `.revokedByFamilySharing` (Family Sharing's end is not a refund),
    ///   `.supersededSinceRefund` (a period still running beside a later one of its subscription).
    func reverseRefund(_ db: Database, _ id: UInt64) throws -> [PaymentTransaction] {
        let writer = try writer(db)
        let transaction = try existingTransaction(writer, id: id)
        guard transaction.revocationDate != nil else { throw StoreControlError.notRefunded(id) }
        if try !familySharedOriginals(db, of: [transaction]).isEmpty {
            throw StoreControlError.revokedByFamilySharing(id)
        }
        if let later = try periodBegunDuring(db, try existingTransaction(db, id: transaction.restoredFromID ?? id)) {
            throw StoreControlError.supersededSinceRefund(id, by: later)
        }
        let purchase = transaction.restoredFromID ?? transaction.id
        let related = try otherCopies(db, of: transaction, refunded: true)
        for reinstated in [transaction] + related {
            try writer.reinstate(reinstated)
            try records(db).write(.refundPortions, key: Int64(reinstated.id)) {
                try db.execute(
                    sql: "DELETE FROM refund_portions WHERE transaction_id = ?", arguments: [Int64(reinstated.id)])
            }
        }
        if transaction.productType == .autoRenewable, let held = try heldSubscription(db, of: transaction),
            let end = transaction.expirationDate?.ledgerMilliseconds, end <= writer.now,
            let latest = try latestPeriod(db, of: held), [transaction.id, purchase].contains(latest.id)
        {
            // The subscription's latest period ended while refunded: renewals restart from now
            // on, not from it. (An older period's reversal leaves its renewals as they are.)
            var state = try renewalState(db, of: held)
            state.resumedAt = max(state.resumedAt, writer.now)
            try saveRenewalState(db, of: held, state)
        }
        let reinstated = try ([transaction] + related).map { try PaymentTransaction.fetchOne(db, id: $0.id)! }
        try notify(writer, .refundReversed, about: reinstated.first { $0.id == purchase } ?? reinstated[0])
        return reinstated
    }

    /// A later period of `period`'s subscription that began while `period` would run (from its
    /// start, before its end): bought after `period` was refunded, it would run beside it.
    private func periodBegunDuring(_ db: Database, _ period: PaymentTransaction) throws -> UInt64? {
        guard let held = try heldSubscription(db, of: period), let end = period.expirationDate?.ledgerMilliseconds
        else { return nil }
        return try Int64.fetchOne(
            db,
            sql: """
                SELECT id FROM transactions
                WHERE subscription_group_id = :group AND state = 'purchased' AND is_upgraded = 0
                  AND expiration_date > purchase_date AND purchase_date >= :start AND purchase_date < :end
                  AND id > :id AND \(HeldSubscription.transactionsCondition)
                ORDER BY purchase_date, id LIMIT 1
                """,
            arguments: [
                "group": held.group, "start": period.purchaseDate.ledgerMilliseconds, "end": end,
                "id": Int64(period.id), "shared": held.sharedKey, "customer": held.customer,
            ]
        ).map { UInt64($0) }
    }

    /// The other transactions of `transaction`'s purchase (the purchase itself and its restored
    /// copies), refunded or not, by id: a refund revokes a purchase with all its copies, and
    /// its reversal reinstates them all.
    private func otherCopies(
        _ db: Database, of transaction: PaymentTransaction, refunded: Bool
    ) throws -> [PaymentTransaction] {
        let purchase = Int64(transaction.restoredFromID ?? transaction.id)
        return try PaymentTransaction.fetchAll(
            db,
            sql: "WHERE (id = ? OR restored_from = ?) AND (revocation_date IS NOT NULL) = ? AND id <> ? ORDER BY id",
            arguments: [purchase, purchase, refunded, Int64(transaction.id)])
    }

    /// Resolves the issue of transaction `id` (Xcode's "resolve issue"): an auto-renewable
    /// subscription whose latest period failed on a billing issue renews (`resolveBillingIssue`;
    /// its renewal is new); otherwise an interrupted purchase is resolved. Its replacement is
    /// created now when its failed transaction is finished already (`isNew`), else when the
    /// app finishes it. Resolving again returns the replacement made before (or none, if it
    /// was deleted) and creates nothing.
    /// - Throws: `StoreControlError.notInterrupted` for a transaction with neither issue.
    private func resolveIssue(
        _ db: Database, ofTransaction id: UInt64
    ) throws -> (replacement: PaymentTransaction?, isNew: Bool) {
        if try !isInterruptedPurchase(db, id: id), let transaction = try PaymentTransaction.fetchOne(db, id: id),
            transaction.productType == .autoRenewable, try hasBillingIssue(db, productID: transaction.productID)
        {
            return (try resolveBillingIssue(db, productID: transaction.productID), true)
        }
        return try resolveInterruptedPurchase(db, id: id)
    }

    /// Resolves the issue of an interrupted purchase (see `resolveIssue`).
    /// - Throws: `StoreControlError.notInterrupted`.
    private func resolveInterruptedPurchase(
        _ db: Database, id: UInt64
    ) throws -> (replacement: PaymentTransaction?, isNew: Bool) {
        guard
            let row = try Row.fetchOne(
                try db.cachedStatement(
                    sql: "SELECT replacement_id FROM interrupted_purchases WHERE transaction_id = ?"),
                arguments: [try Self.storedID(id)])
        else { throw StoreControlError.notInterrupted(id) }
        if let existing = row["replacement_id"] as Int64? {
            return (try PaymentTransaction.fetchOne(db, id: UInt64(existing)), false)
        }
        try db.run(
            sql: "UPDATE interrupted_purchases SET resolved = 1 WHERE transaction_id = ?", arguments: [Int64(id)])
        let replacement = try replaceInterruptedPurchaseIfReady(try writer(db), id: id)
        return (replacement, replacement != nil)
    }

    /// Whether transaction `id` is an interrupted purchase (its failure waits for the user).
    package func isInterruptedPurchase(_ id: UInt64) throws -> Bool {
        try read { db in try isInterruptedPurchase(db, id: id) }
    }

    private func isInterruptedPurchase(_ db: Database, id: UInt64) throws -> Bool {
        guard let stored = Int64(exactly: id) else { return false }  // no transaction has it
        let lookup = try FastStatement(db, Self.interruptedLookup)
        lookup.bind(1, stored)
        return try lookup.first { _ in true } != nil
    }

    private static let interruptedLookup = LedgerSQL("SELECT 1 FROM interrupted_purchases WHERE transaction_id = ?")
    private static let replacementLookup = LedgerSQL(
        "SELECT resolved, replacement_id FROM interrupted_purchases WHERE transaction_id = ?")

    /// The ids of interrupted purchases and whether each is resolved.
    package func interruptedPurchases() throws -> [(transactionID: UInt64, resolved: Bool, replacementID: UInt64?)] {
        try read { db in
            try Row.fetchAll(
                try db.cachedStatement(
                    sql:
                        "SELECT transaction_id, resolved, replacement_id FROM interrupted_purchases ORDER BY transaction_id"
                )
            )
            .map {
                (
                    UInt64($0["transaction_id"] as Int64), $0["resolved"],
                    ($0["replacement_id"] as Int64?).map(UInt64.init)
                )
            }
        }
    }

    /// Creates the replacement of an interrupted purchase once it is finished and resolved.
    func replaceInterruptedPurchaseIfReady(_ writer: TransactionWriter, id: UInt64) throws -> PaymentTransaction? {
        let db = writer.db
        let lookup = try FastStatement(db, Self.replacementLookup)
        lookup.bind(1, Int64(id))
        guard let ready = try lookup.first({ $0.bool(0) && $0.isNull(1) }), ready,
            let interrupted = try PaymentTransaction.fetchOne(db, id: id), interrupted.isFinished
        else { return nil }
        // Through `purchasing`, like any payment, so that subscriptions follow their group's rules.
        var replacement = NewTransactionRow(copying: interrupted, state: .purchasing, at: writer.now)
        replacement.planned = (.purchased, nil)
        try keepGroupsOriginal(
            db, &replacement, sharedByFamily: !(try familySharedOriginals(db, of: [interrupted]).isEmpty))
        let replacementID = try writer.insert(replacement).id
        try db.run(
            sql: "UPDATE interrupted_purchases SET replacement_id = ? WHERE transaction_id = ?",
            arguments: [Int64(replacementID), Int64(id)])
        return try applyPlannedOutcome(writer, id: replacementID)
    }
}
