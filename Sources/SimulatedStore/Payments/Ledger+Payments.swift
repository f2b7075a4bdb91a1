package import Foundation
import GRDB
public import LedgerModel

/// A payment to add to the ledger. The store decides its outcome and storefront in the write
/// that records it.
package struct NewPayment: Sendable, Hashable {
    package var productID: String
    package var quantity: Int
    package var appAccountToken: UUID?
    /// StoreKit 1's opaque account string (at most 1,024 bytes of UTF-8, not empty).
    package var applicationUsername: String?
    package var idempotencyKey: String?
    /// What the simulated store does with this payment; `nil` lets the store's settings decide.
    package var simulatedOutcome: SimulatedOutcome?
    /// The promotional offer the payment redeems, checked when it is added.
    package var discount: PaymentDiscount?
    /// A purchase made outside the app (a test session's `buyProduct`): it succeeds whatever
    /// the store's switches, which concern the app's payments.
    package var isOutsideTheApp = false
    /// A family member's purchase shared with the customer: never "already subscribed", since
    /// the customer's own subscription of the group is not it.
    package var isSharedByFamily = false
    /// A test purchase dated in the past; `nil`: dated when charged.
    package var backdating: BackdatedPurchase?
    /// The app's server's say on the introductory offer: a compact JWS
    /// (`introductoryOfferEligibility(compactJWS:)`), checked when the payment is added.
    package var introductoryOfferEligibility: String?
    /// The reference name of the offer code the payment redeems, checked when it is added.
    package var codeOffer: String?
    /// The identifier of the win-back offer the payment redeems, checked when it is added.
    package var winBackOffer: String?

    package init(
        productID: String, quantity: Int = 1, appAccountToken: UUID? = nil, applicationUsername: String? = nil,
        idempotencyKey: String? = nil, simulatedOutcome: SimulatedOutcome? = nil, discount: PaymentDiscount? = nil
    ) {
        self.productID = productID
        self.quantity = quantity
        self.appAccountToken = appAccountToken
        self.applicationUsername = applicationUsername
        self.idempotencyKey = idempotencyKey
        self.simulatedOutcome = simulatedOutcome
        self.discount = discount
    }
}

/// The offer a payment redeems, by type and identifier (an offer code's reference name).
private struct RedeemedOffer: Equatable {
    let type: TransactionOffer.OfferType
    let id: String
}

extension PaymentTransaction {
    /// The offer its payment redeemed; `nil` without one, or with an introductory offer (which
    /// is not redeemed).
    fileprivate var redeemedOffer: RedeemedOffer? {
        offer.flatMap { offer in
            offer.type == .introductory ? nil : offer.id.map { RedeemedOffer(type: offer.type, id: $0) }
        }
    }
}

extension NewPayment {
    /// The offer the payment asks to redeem (`validate` lets it ask for one at most).
    fileprivate var redeemedOffer: RedeemedOffer? {
        if let discount { return RedeemedOffer(type: .promotional, id: discount.offerID) }
        if let codeOffer { return RedeemedOffer(type: .code, id: codeOffer) }
        return winBackOffer.map { RedeemedOffer(type: .winBack, id: $0) }
    }
}

/// The store's payments: a payment's path from purchasing to its outcome, finishing, and the recovery at launch.
extension Ledger {
    /// The error an interrupted purchase fails with.
    package static let interruptionError = TransactionError(
        code: .unknown, message: "The purchase was interrupted: the user must resolve an issue outside the app.")

    /// Stores a new `purchasing` transaction, or returns the one its idempotency key already
    /// names (`isNew` false; nothing is written then).
    ///
    /// - Throws: `PaymentQueueError` for an empty product identifier, a quantity outside
    ///   1...10, a bad idempotency key, or a key reused for a different payment;
    ///   `UnknownProductError` for a product the catalog does not have;
    ///   `PromotionalOfferError` for a promotional offer the store refuses.
    @discardableResult
    package func addPayment(
        _ payment: NewPayment, delivery: DeliveryRecording = .notRecorded
    ) throws -> (transaction: PaymentTransaction, isNew: Bool) {
        try Self.validate(payment)
        return try write { db in try addPayment(db, payment, delivery: delivery) }
    }

    /// `addPayment(_:delivery:)` in the next group commit: payments added at the same time
    /// share a commit, and each caller returns once it is durable.
    @discardableResult
    package func addPayment(
        _ payment: NewPayment, delivery: DeliveryRecording = .notRecorded
    ) async throws -> (transaction: PaymentTransaction, isNew: Bool) {
        try Self.validate(payment)
        return try await grouped { db in try self.addPayment(db, payment, delivery: delivery) }
    }

    func addPayment(
        _ db: Database, _ payment: NewPayment, delivery: DeliveryRecording
    ) throws -> (transaction: PaymentTransaction, isNew: Bool) {
        let owner = try owner()
        if let key = payment.idempotencyKey,
            let existing = try PaymentTransaction.fetchAll(db, sql: "WHERE idempotency_key = ?", arguments: [key]).first
        {
            // Keys are the store's: another customer's payment with it is another payment.
            guard Owner(of: existing) == owner, existing.productID == payment.productID,
                existing.quantity == payment.quantity,
                existing.appAccountToken == payment.appAccountToken,
                existing.applicationUsername == payment.applicationUsername,
                existing.redeemedOffer == payment.redeemedOffer
            else { throw PaymentQueueError.idempotencyKeyReused(key: key, existingTransactionID: existing.id) }
            return (existing, false)
        }
        // One read of the settings table gives both the store's switches and its clock.
        let stored = try Self.storedSettings(db, app: owner.app)
        let settings = StoreSettings(stored: stored)
        let now = storeNow(clockOffset: stored[StoreSettingKey.clockOffset])
        let offer =
            try payment.discount.map { try redeemableOffer(db, payment, $0, settings: settings, at: now) }
            ?? payment.codeOffer.map { try redeemableCode(db, payment, referenceName: $0, at: now) }
            ?? payment.winBackOffer.map { try redeemableWinBack(db, payment, offerID: $0, at: now) }
        var row = try NewTransactionRow(
            db, productID: payment.productID, owner: owner, state: .purchasing, at: now)
        if payment.quantity > 1 { try Self.checkTotalPrice(db, payment) }
        row.quantity = payment.quantity
        row.appAccountToken = payment.appAccountToken
        row.applicationUsername = payment.applicationUsername
        row.idempotencyKey = payment.idempotencyKey
        row.storefront = try customerStorefront(db, owner.customer) ?? settings.storefront.countryCode
        try keepGroupsOriginal(db, &row, sharedByFamily: payment.isSharedByFamily)
        let decision = try decide(db, payment, settings: settings, productType: row.productType, offer: offer, at: now)
        row.planned = (decision.state, decision.error)
        row.offer = offer
        row.offerNonce = payment.discount.flatMap { $0.compactJWS.map(OfferJWS.nonce) ?? $0.signature?.nonce }
        let introductoryOffer = try payment.introductoryOfferEligibility.map {
            try checkIntroductoryOfferEligibility(db, $0, of: payment, settings: settings, at: now)
        }
        if let backdating = payment.backdating {
            try checkBackdating(
                db, backdating, productID: payment.productID, offer: offer,
                introductoryOffer: introductoryOffer?.allow, settings: settings, now: now)
        }
        let created = try writer(db, at: now, delivery: delivery).insert(row)
        try savePaymentTerms(
            db, of: created.id, backdating: payment.backdating, introductoryOffer: introductoryOffer)
        if decision.outcome == .interrupted {
            try db.run(
                sql: "INSERT INTO interrupted_purchases (transaction_id) VALUES (?)", arguments: [Int64(created.id)])
        }
        return (created, true)
    }

    /// A payment's outcome, decided in one place, in the write that records it: a purchase made
    /// outside the app succeeds; otherwise the store's switches decide (payments allowed, the
    /// payment's own simulated outcome, failing, interrupted, Ask to Buy: see
    /// `StoreSettings.plannedOutcome`); then a purchase of the subscription already active
    /// fails as "already subscribed", unless it redeems a promotional offer for its next renewal
    /// (or a family member shares it).
    private func decide(
        _ db: Database, _ payment: NewPayment, settings: StoreSettings, productType: ProductType,
        offer: TransactionOffer?, at now: Int64
    ) throws -> (outcome: PlannedOutcome, state: TransactionState, error: TransactionError?) {
        let outcome = payment.isOutsideTheApp ? .purchased : settings.plannedOutcome(payment.simulatedOutcome)
        switch outcome {
        case .purchased:
            if productType == .autoRenewable, offer == nil, !payment.isSharedByFamily,
                let error = try alreadySubscribed(db, productID: payment.productID, at: now)
            {
                return (outcome, .failed, error)
            }
            return (outcome, .purchased, nil)
        case .deferred: return (outcome, .deferred, nil)
        case .failed(let error): return (outcome, .failed, error)
        case .interrupted: return (outcome, .failed, Self.interruptionError)
        }
    }

    /// Moves a `purchasing` transaction to the outcome stored with it. A transaction that is no
    /// longer `purchasing` (another process got there first) is returned as it is.
    package func applyPlannedOutcome(
        of id: UInt64, delivery: DeliveryRecording = .notRecorded
    ) throws -> PaymentTransaction {
        try write { db in try applyPlannedOutcome(try writer(db, delivery: delivery), id: id) }
    }

    /// `applyPlannedOutcome(of:delivery:)` in the next group commit.
    package func applyPlannedOutcome(
        of id: UInt64, delivery: DeliveryRecording = .notRecorded
    ) async throws -> PaymentTransaction {
        try await grouped { db in try self.applyPlannedOutcome(try self.writer(db, delivery: delivery), id: id) }
    }

    /// A launch's recovery, in one commit: every transaction of this value's customer left
    /// `purchasing` (by a killed process) completed with its stored outcome, then their
    /// subscription renewals that fell due while the app was not running (see
    /// `renewDueSubscriptions(_:customer:)`). Both oldest first; the work grows with the
    /// customer's, not with the store's.
    package func recoverAtLaunch() throws -> (completed: [PaymentTransaction], renewed: [PaymentTransaction]) {
        try write { db in
            let select = try FastStatement(
                db, "SELECT id FROM transactions WHERE \(Owner.condition) AND state = 'purchasing' ORDER BY id")
            let owner = try owner()
            select.bind(1, owner.customer)
            select.bind(2, owner.app)
            let purchasing = try select.all { UInt64($0.int64(0)) }
            let writer = try writer(db)
            let completed = try purchasing.map { try applyPlannedOutcome(writer, id: $0) }
            return (completed, try renewDueSubscriptions(writer, customer: try customerID()))
        }
    }

    /// Finishes purchased, failed or restored transactions, all in one commit: if any id is
    /// refused, none is finished. Finishing an interrupted purchase whose issue is resolved
    /// creates its replacement purchase in the same commit.
    ///
    /// Idempotent: a transaction that is already finished is returned unchanged, with
    /// `changed` false.
    /// - Throws: `PaymentQueueError.unknownTransaction`, `.cannotFinishPurchasing`,
    ///   `.cannotFinishDeferred`.
    /// With `delivery` `.recorded`, the replacements are counted as delivered in the same commit.
    package func finish(_ ids: [UInt64], delivery: DeliveryRecording = .notRecorded) throws -> FinishResult {
        try write { db in try finish(db, ids, delivery: delivery) }
    }

    /// `finish(_:delivery:)` in the next group commit.
    package func finish(_ ids: [UInt64], delivery: DeliveryRecording = .notRecorded) async throws -> FinishResult {
        try await grouped { db in try self.finish(db, ids, delivery: delivery) }
    }

    private func finish(_ db: Database, _ ids: [UInt64], delivery: DeliveryRecording) throws -> FinishResult {
        let writer = try writer(db)
        var result = FinishResult(transactions: [], changed: [], replacements: [])
        for id in ids {
            let transaction = try existingTransaction(writer, id: id)
            if transaction.isFinished {
                result.transactions.append(transaction)
                result.changed.append(false)
                continue
            }
            switch transaction.state {
            case .purchasing: throw PaymentQueueError.cannotFinishPurchasing(id)
            case .deferred: throw PaymentQueueError.cannotFinishDeferred(id)
            case .purchased, .failed, .restored: break
            }
            result.transactions.append(try writer.finish(transaction))
            result.changed.append(true)
            // Only a failed transaction can be an interrupted purchase.
            if transaction.state == .failed, let replacement = try replaceInterruptedPurchaseIfReady(writer, id: id) {
                result.replacements.append(replacement)
            }
        }
        if delivery == .recorded { try writer.recordDelivery(ofUnfinished: &result.replacements) }
        return result
    }

    /// This value's customer's transactions (not restored copies, not payments that only
    /// changed a renewal) that history events after `afterEvent` created, moved to another
    /// state, refunded or reinstated, as stored now, oldest first; the events read are at most
    /// `events`, and `through` the last of them (`isWhole`: none followed). What another device
    /// of the customer hears of (`PaymentQueue.hearOtherDevices`).
    package func changedPurchases(
        afterEvent: Int64, events: Int
    ) throws -> (transactions: [PaymentTransaction], through: Int64, isWhole: Bool) {
        let owner = try owner()
        return try read { db in
            let window = try Int64.fetchAll(
                db, sql: "SELECT seq FROM transaction_events WHERE seq > ? ORDER BY seq LIMIT ?",
                arguments: [afterEvent, max(1, events)])
            guard let through = window.last else { return ([], afterEvent, true) }
            let changed = try PaymentTransaction.fetchAll(
                db,
                sql: """
                    WHERE \(Owner.condition) AND restored_from IS NULL AND \(Self.notARenewalChange) AND id IN (
                        SELECT transaction_id FROM transaction_events WHERE seq > ? AND seq <= ?
                          AND kind IN ('created', 'stateChanged', 'revoked', 'reinstated'))
                    ORDER BY id
                    """,
                arguments: owner.arguments + [afterEvent, through])
            return (changed, through, window.count < max(1, events))
        }
    }

    /// The largest transaction id stored (0 when there is none): where a launch's redelivery
    /// stops, so that what its own deliveries cause is not part of it.
    package func lastTransactionID() throws -> UInt64 {
        try read { db in UInt64(try Int64.fetchOne(db, sql: "SELECT MAX(id) FROM transactions") ?? 0) }
    }

    /// One batch of a launch's redelivery: records one delivery (count, date, event) of the
    /// oldest `limit` unfinished transactions with ids in `after + 1...through`, in one commit,
    /// and returns them as stored, oldest first (none: the redelivery is complete).
    package func recordDeliveryOfUnfinishedTransactions(
        after: UInt64, through: UInt64, limit: Int
    ) throws -> [PaymentTransaction] {
        let (after, through) = try Self.storedBounds(after, through, limit: limit)
        return try write { db in
            try recordDeliveryOfUnfinishedTransactions(db, after: after, through: through, limit: limit)
        }
    }

    /// `recordDeliveryOfUnfinishedTransactions(after:through:limit:)` in the next group commit.
    package func recordDeliveryOfUnfinishedTransactions(
        after: UInt64, through: UInt64, limit: Int
    ) async throws -> [PaymentTransaction] {
        let (after, through) = try Self.storedBounds(after, through, limit: limit)
        return try await grouped { db in
            try self.recordDeliveryOfUnfinishedTransactions(db, after: after, through: through, limit: limit)
        }
    }

    /// A batch's bounds as the database stores ids (ids past `Int64.max` name none).
    private static func storedBounds(_ after: UInt64, _ through: UInt64, limit: Int) throws -> (Int64, Int64) {
        precondition(limit > 0)
        return (try storedID(min(after, UInt64(Int64.max))), try storedID(min(through, UInt64(Int64.max))))
    }

    private func recordDeliveryOfUnfinishedTransactions(
        _ db: Database, after: Int64, through: Int64, limit: Int
    ) throws -> [PaymentTransaction] {
        let owner = try owner()
        // The batch's last id first: an UPDATE cannot be limited, its condition can.
        let last =
            try Int64.fetchOne(
                db,
                sql: """
                    SELECT id FROM transactions WHERE \(Owner.condition) AND is_finished = 0 AND id > ? AND id <= ?
                    ORDER BY id LIMIT 1 OFFSET ?
                    """,
                arguments: owner.arguments + [after, through, limit - 1]) ?? through
        var delivered: [PaymentTransaction] = []
        try writer(db).recordDelivery(
            where: "\(Owner.condition) AND is_finished = 0 AND id > ? AND id <= ?",
            arguments: owner.arguments + [after, last]
        ) {
            delivered.append($0)
        }
        return delivered
    }

    // MARK: - Pieces shared by the operations (each runs inside its caller's transaction)

    static func validate(_ payment: NewPayment) throws {
        guard !payment.productID.isEmpty else { throw PaymentQueueError.emptyProductIdentifier }
        guard (1...10).contains(payment.quantity) else { throw PaymentQueueError.invalidQuantity(payment.quantity) }
        // Bytes, not characters: one character may be any number of scalars.
        if let key = payment.idempotencyKey, key.isEmpty || key.utf8.count > 256 {
            throw PaymentQueueError.invalidIdempotencyKey(key)
        }
        if let name = payment.applicationUsername { try validateApplicationUsername(name) }
        if let discount = payment.discount, discount.offerID.isEmpty {
            throw PromotionalOfferError.missingParameters("no offer identifier")
        }
        if [payment.discount != nil, payment.codeOffer != nil, payment.winBackOffer != nil].filter({ $0 }).count > 1 {
            throw PromotionalOfferError.twoOffers(productID: payment.productID)
        }
        if let code = payment.codeOffer, code.isEmpty || code.utf8.count > 255 {
            throw PromotionalOfferError.unknownCode(productID: payment.productID, referenceName: code)
        }
        if let offer = payment.winBackOffer, offer.isEmpty || offer.utf8.count > 255 {
            throw PromotionalOfferError.unknownWinBackOffer(productID: payment.productID, offerID: offer)
        }
    }

    /// Refuses a purchase whose whole price (the quantity times the price) does not fit Apple's
    /// `price` field, milliunits in 64 bits: it could not be signed with its price.
    private static func checkTotalPrice(_ db: Database, _ payment: NewPayment) throws {
        guard let product = try products(db, withIDs: [payment.productID]).first else { return }
        let (_, overflow) = product.price.milliunits.multipliedReportingOverflow(by: Int64(payment.quantity))
        if overflow {
            throw PaymentQueueError.totalPriceTooLarge(productID: payment.productID, quantity: payment.quantity)
        }
    }

    /// Refuses an `applicationUsername` over 1,024 bytes. Any other string is one, "" included:
    /// Apple sets no rule on it.
    static func validateApplicationUsername(_ name: String) throws {
        guard name.utf8.count <= 1024 else { throw PaymentQueueError.invalidApplicationUsername(name) }
    }

    /// A transaction id as the database stores it. Ids are SQLite integers: one past
    /// `Int64.max` names no transaction.
    /// - Throws: `PaymentQueueError.unknownTransaction` for such an id.
    static func storedID(_ id: UInt64) throws -> Int64 {
        guard let stored = Int64(exactly: id) else { throw PaymentQueueError.unknownTransaction(id) }
        return stored
    }

    /// This value's customer's transaction `id`: another customer's is unknown to them.
    func existingTransaction(_ db: Database, id: UInt64) throws -> PaymentTransaction {
        guard let transaction = try PaymentTransaction.fetchOne(db, id: id), isOwn(transaction) else {
            throw PaymentQueueError.unknownTransaction(id)
        }
        return transaction
    }

    /// `existingTransaction` for a row `writer` will change: read once (`TransactionWriter.transaction`).
    func existingTransaction(_ writer: TransactionWriter, id: UInt64) throws -> PaymentTransaction {
        guard let transaction = try writer.transaction(id), isOwn(transaction) else {
            throw PaymentQueueError.unknownTransaction(id)
        }
        return transaction
    }

    func applyPlannedOutcome(_ writer: TransactionWriter, id: UInt64) throws -> PaymentTransaction {
        guard let (transaction, planned) = try writer.plannedPurchase(id), isOwn(transaction) else {
            throw PaymentQueueError.unknownTransaction(id)
        }
        guard transaction.state == .purchasing else { return transaction }
        return try moveState(writer, transaction, to: planned.state, error: planned.error)
    }

    func moveDeferred(
        _ writer: TransactionWriter, id: UInt64, to state: TransactionState, error: TransactionError?
    ) throws -> PaymentTransaction {
        let transaction = try existingTransaction(writer, id: id)
        guard transaction.state == .deferred else {
            throw PaymentQueueError.notDeferred(id, state: transaction.state)
        }
        return try moveState(writer, transaction, to: state, error: error)
    }

    /// Moves `transaction` to `state` by the store's rules, in the writer's commit: a purchase
    /// charged starts its subscription period (`startSubscriptionPeriod`: upgrade, downgrade
    /// and crossgrade rules; a payment that only changes the next renewal is completed as
    /// `completeRenewalChange` says) or is dated (an Ask to Buy when approved, as Apple's
    /// `purchaseDate` is; a back-dated test purchase as the test asked), and its charge is
    /// notified.
    func moveState(
        _ writer: TransactionWriter, _ transaction: PaymentTransaction, to state: TransactionState,
        error: TransactionError?
    ) throws -> PaymentTransaction {
        var charged: NotifiedEvent? = state == .purchased ? .oneTimeCharge : nil
        var dates: TransactionWriter.ChargeDates?
        if state == .purchased, transaction.productType == .autoRenewable {
            let begun: (start: SubscriptionStart, dates: TransactionWriter.ChargeDates, changing: PaymentTransaction?)?
            do {
                begun = try startSubscriptionPeriod(writer, transaction)
            } catch let refused as AlreadySubscribed {
                return try writer.changeState(transaction, to: .failed, error: refused.error)
            }
            if let begun, let subscription = begun.changing {
                return try completeRenewalChange(
                    writer, transaction, changing: subscription, start: begun.start, dates: begun.dates)
            }
            charged = begun.map { .purchase($0.start, redeeming: transaction.offer?.type) }
            dates = begun?.dates
        } else if state == .purchased, let backdated = try paymentTerms(writer.db, of: transaction.id)?.backdating {
            dates = .purchaseDate(backdated.date.ledgerMilliseconds)
        } else if state == .purchased, transaction.state == .deferred {
            dates = .purchaseDate(writer.now)
        }
        let updated = try writer.changeState(transaction, to: state, error: error, dates: dates)
        if let charged {
            try notify(writer, charged, about: updated)
            try shareWithFamily(writer.db, updated)
        }
        return updated
    }
}

/// What `Ledger.finish(_:)` did, in the order of the ids given.
public struct FinishResult: Sendable {
    /// Every transaction as it is now.
    public var transactions: [PaymentTransaction]
    /// Whether each one was finished by this call (false: it was finished already).
    public var changed: [Bool]
    /// Purchases created because an interrupted purchase was finished after its issue was resolved.
    public var replacements: [PaymentTransaction]

    /// The transactions this call finished.
    public var finished: [PaymentTransaction] {
        zip(transactions, changed).filter(\.1).map(\.0)
    }
}
