import Foundation
package import Synchronization

/// The app's payment queue (`SKPaymentQueue`), on a durable ledger.
///
/// Creating a queue is a *launch*: transactions left `purchasing` by a killed process are
/// completed with the outcome stored when they were added. Every observer (or `updates()`
/// stream) added receives every unfinished transaction first, oldest first, as its own first
/// updates (one per `deliveryBatchLimit` transactions); this repeats at every launch until
/// the app finishes them. So an analytics observer added before the purchase observer does
/// not take the launch's redelivery away from it.
///
/// Every change is committed before it is returned or notified, and every observer receives
/// the changes one at a time, in commit order: a change made by an observer's own callback
/// (finishing a transaction) reaches every observer after the change being delivered.
///
/// ```swift
/// let queue = try PaymentQueue(ledger: try Ledger.open(at: path))
/// try await queue.add(observer)          // unfinished transactions arrive here
/// let transaction = try await queue.add(Payment(productID: "com.example.level1"))
/// try await queue.finish(transaction.id) // after delivering the content
/// ```
public actor PaymentQueue {
    /// The ledger this queue was launched on: its transactions, products and store settings.
    public nonisolated let ledger: Ledger
    /// The products of `ledger`, for products requests.
    public nonisolated let catalog: ProductCatalog
    /// The transactions this launch found `purchasing` and completed, oldest first.
    public nonisolated let completedAtLaunch: [PaymentTransaction]
    /// The subscription renewals that fell due while the app was not running, made at launch.
    public nonisolated let renewedAtLaunch: [PaymentTransaction]

    private var observers: [WeakObserver] = []
    private var streams: [UUID: AsyncStream<PaymentQueueUpdate>.Continuation] = [:]
    /// The observers and streams being welcomed (`welcome`), with what everyone was sent
    /// since: it reaches them once their redelivery is over.
    private var newcomers: [AnyHashable: [PaymentQueueUpdate]] = [:]
    private var outbox = Outbox()
    /// The restore being committed or delivered: its commit, which callers asking the same
    /// restore share.
    var runningRestore: (id: UUID, request: RestoreRequest, task: Task<Result<RestoreBatch, any Error>, Never>)?
    private var renewalTimer: Task<Void, Never>?
    /// What this queue heard of itself since it last looked for other devices' purchases.
    var otherDevices: OtherDevices
    /// Changes committed for this queue's app by someone who announces them to it after their
    /// commit (`announce(_:)`: OpenStoreKit's test session): while one waits, no look for
    /// other devices' purchases is made, which would take it for one of theirs.
    package nonisolated let changesToAnnounce = Atomic<Int>(0)
    /// Set once `startRenewingAutomatically` was called.
    private var renewalCheckInterval: Duration?

    /// Launches on an open ledger: completes payments left `purchasing` and makes the
    /// subscription renewals that fell due.
    /// - Throws: `LedgerError` when the launch recovery cannot be committed.
    public init(ledger: Ledger) throws {
        try self.init(ledger: ledger, observers: [])
    }

    /// Launches with observers that hear every change from the launch on. They get no first
    /// update of unfinished transactions (the queue's `transactions` lists those): a layer that
    /// must not miss a change registers this way (StoreKit 2's `Transaction.updates`).
    public init(ledger: Ledger, observers: [any PaymentTransactionObserver]) throws {
        // A queue runs on one device: a customer with several names it.
        _ = try ledger.deviceID()
        self.ledger = ledger
        self.observers = observers.map { WeakObserver(value: $0) }
        self.catalog = ProductCatalog(ledger: ledger)
        (self.completedAtLaunch, self.renewedAtLaunch) = try ledger.recoverAtLaunch()
        // What is there now, the launch's own redelivery brings (the unfinished part of it).
        self.otherDevices = OtherDevices(heardThrough: try ledger.lastEventSequence())
    }

    /// Opens the ledger at `path` and launches on it.
    public init(
        path: String, mode: Ledger.OpenMode = .existing, configuration: LedgerConfiguration = .init()
    ) throws {
        try self.init(ledger: try Ledger.open(at: path, mode: mode, configuration: configuration))
    }

    // MARK: - Observers

    /// Registers an observer (held weakly; adding it twice has no effect). Its first updates are
    /// the unfinished transactions, oldest first, at most `deliveryBatchLimit` in each (none
    /// when there are none); what the other observers are told meanwhile reaches it after them.
    /// When adding fails, the observer is not added.
    public func add(_ observer: any PaymentTransactionObserver) async throws {
        observers.removeAll { $0.value == nil }
        let key = AnyHashable(ObjectIdentifier(observer))
        guard !observers.contains(where: { $0.value === observer }), newcomers[key] == nil else { return }
        try await welcome(key, Audience(observers: [WeakObserver(value: observer)])) {
            observers.append(WeakObserver(value: observer))
        }
    }

    /// Unregisters an observer. Removing one that is not registered does nothing; observers
    /// already deallocated are dropped too.
    public func remove(_ observer: any PaymentTransactionObserver) {
        observers.removeAll { $0.value == nil || $0.value === observer }
    }

    /// The queue's changes as an `AsyncSequence`. Like an observer, each new sequence first
    /// receives every unfinished transaction.
    public func updates() async throws -> AsyncStream<PaymentQueueUpdate> {
        let id = UUID()
        let (stream, continuation) = AsyncStream<PaymentQueueUpdate>.makeStream()
        continuation.onTermination = { [weak self] _ in
            Task { await self?.removeStream(id) }
        }
        do {
            try await welcome(AnyHashable(id), Audience(streams: [continuation])) { streams[id] = continuation }
        } catch {
            continuation.finish()
            throw error
        }
        return stream
    }

    private func removeStream(_ id: UUID) {
        streams[id] = nil
    }

    /// Sends a new listener its first updates, the unfinished transactions, then what everyone
    /// was sent meanwhile (held in `newcomers`), then registers it with `join`: the redelivery
    /// takes several updates, between which other changes are committed and sent, and none of
    /// them may reach the listener before its redelivery is over.
    private func welcome(_ key: AnyHashable, _ listener: Audience, join: () -> Void) async throws {
        newcomers[key] = []
        do {
            try await deliverUnfinishedTransactions(to: listener)
        } catch {
            newcomers[key] = nil
            throw error
        }
        let held = newcomers.removeValue(forKey: key) ?? []
        join()
        // Queued together, before anything sent to everyone from now on.
        await notify(held, to: listener)
    }

    /// Delivers every unfinished transaction again, oldest first, to every observer (what an
    /// app asks for when it returns from the background), in batches of at most
    /// `deliveryBatchLimit`. Returns how many were delivered.
    @discardableResult
    public func redeliverUnfinishedTransactions() async throws -> Int {
        try await deliverUnfinishedTransactions(to: nil)
    }

    /// The most transactions one update carries when unfinished transactions are delivered
    /// again (an observer or stream added, `redeliverUnfinishedTransactions()`): more arrive
    /// as several updates, oldest first, so that a ledger of any size is delivered in bounded
    /// memory. StoreKit, too, may split `updatedTransactions` into several calls.
    public static let deliveryBatchLimit = 1_000

    /// Delivers the unfinished transactions stored now, a batch at a time, each batch's
    /// delivery committed before it is handed over. Transactions added meanwhile (by the
    /// observers' callbacks, say) are not part of it: they are delivered as they are made.
    /// When the audience is `nil`, everyone listening when each batch is sent.
    @discardableResult
    private func deliverUnfinishedTransactions(to audience: Audience?) async throws -> Int {
        let last = try ledger.lastTransactionID()
        var after: UInt64 = 0
        var count = 0
        while true {
            let batch = try await ledger.recordDeliveryOfUnfinishedTransactions(
                after: after, through: last, limit: Self.deliveryBatchLimit)
            guard let newest = batch.last else { return count }
            await notify(.updated(batch), to: audience)
            (after, count) = (newest.id, count + batch.count)
            // A short batch was the last: no write to find nothing more.
            if batch.count < Self.deliveryBatchLimit { return count }
        }
    }

    /// Performs a store action (`StoreAction`: a test control, the store's renewals) with
    /// this queue's delivery policy, then tells the observers.
    package func perform(_ action: StoreAction) async throws -> StoreActionOutcome {
        otherDevices.writesInFlight += 1
        defer { otherDevices.writesInFlight -= 1 }
        let outcome = try await ledger.perform(action, delivery: deliveryRecording)
        await announce(outcome)
        return outcome
    }

    /// Tells the observers of a committed store action, whose delivery its commit recorded:
    /// the transactions it made or moved (never a finished one: StoreKit 1 never hands one
    /// back), or those a refund revoked or its reversal reinstated; and wakes the renewal task when the next renewal may
    /// have moved.
    package func announce(_ outcome: StoreActionOutcome) async {
        switch outcome.notice {
        case .updated where !outcome.deliverable.isEmpty: await notify(.updated(outcome.deliverable))
        case .revoked where !outcome.transactions.isEmpty: await notify(.revoked(outcome.transactions))
        case .reinstated where !outcome.transactions.isEmpty: await notify(.reinstated(outcome.transactions))
        case .updated, .revoked, .reinstated, .none: break
        }
        if outcome.movesNextRenewal { rescheduleAutomaticRenewals() }
    }

    var hasObservers: Bool {
        !streams.isEmpty || !newcomers.isEmpty || observers.contains { $0.value != nil }
    }

    /// The delivery policy of a change made now: when anyone listens, what the change creates
    /// or moves is counted as delivered in the change's own commit (they are told right after).
    var deliveryRecording: DeliveryRecording {
        hasObservers ? .recorded : .notRecorded
    }

    // MARK: - Notifying, in commit order

    /// Notifies `audience` (everyone listening now, by default) of a committed change.
    ///
    /// Changes are queued and sent one at a time in the order they were queued, each to every
    /// listener of its audience before the next starts. When no delivery is running, the caller
    /// delivers (its change and any queued meanwhile) and returns once they are delivered; when
    /// one is running (a callback finishing a transaction, another task's change), the change
    /// waits in the queue for it and the caller returns at once: nobody ever waits for a
    /// delivery that may be waiting for it.
    func notify(_ update: PaymentQueueUpdate, to audience: Audience? = nil) async {
        enqueue(update, to: audience)
        await drain()
    }

    /// Notifies `audience` of several changes, queued together: nothing comes between them.
    private func notify(_ updates: [PaymentQueueUpdate], to audience: Audience) async {
        guard !updates.isEmpty else { return }
        for update in updates { enqueue(update, to: audience) }
        await drain()
    }

    private func enqueue(_ update: PaymentQueueUpdate, to audience: Audience?) {
        switch update {
        case .updated(let transactions):
            if transactions.contains(where: { $0.productType == .autoRenewable }) { rescheduleAutomaticRenewals() }
            otherDevices.heardHere(transactions)
        case .revoked(let transactions), .reinstated(let transactions), .purchasedOnAnotherDevice(let transactions):
            otherDevices.heardHere(transactions)
        case .removed, .restoreFinished, .restoreFailed: break
        }
        if audience == nil {
            for key in newcomers.keys { newcomers[key]?.append(update) }
        }
        outbox.enqueue(update, to: audience ?? Audience(observers: observers, streams: Array(streams.values)))
    }

    /// Sends the queued changes, unless a delivery is running already (it sends them).
    private func drain() async {
        guard !outbox.isDraining else { return }
        outbox.isDraining = true
        while let next = outbox.dequeue() {
            await send(next.update, to: next.audience)
        }
        outbox.isDraining = false
        outbox.resumeIdleWaiters()
    }

    /// Returns once every change committed so far has reached the observers. Not from an
    /// observer's callback (it would wait for itself).
    public func waitUntilNotified() async {
        guard outbox.isDraining else { return }
        await withCheckedContinuation { outbox.idleWaiters.append($0) }
    }

    private func send(_ update: PaymentQueueUpdate, to audience: Audience) async {
        for continuation in audience.streams { continuation.yield(update) }
        for observer in audience.observers.compactMap(\.value) {
            switch update {
            case .updated(let transactions):
                await observer.paymentQueue(self, updatedTransactions: transactions)
            case .removed(let transactions):
                await observer.paymentQueue(self, removedTransactions: transactions)
            case .revoked(let transactions):
                await observer.paymentQueue(self, revokedTransactions: transactions)
            case .reinstated(let transactions):
                await observer.paymentQueue(self, reinstatedTransactions: transactions)
            case .purchasedOnAnotherDevice(let transactions):
                await observer.paymentQueue(self, purchasedOnAnotherDevice: transactions)
            case .restoreFinished:
                await observer.paymentQueueRestoreCompletedTransactionsFinished(self)
            case .restoreFailed(let error):
                await observer.paymentQueue(self, restoreCompletedTransactionsFailedWithError: error)
            }
        }
    }

    // MARK: - Payments

    /// Adds a payment: stores it as `purchasing` (durably, before anything else), lets the
    /// simulated store process it, and returns the transaction in its processed state
    /// (purchased, failed or deferred). Observers see both changes.
    ///
    /// With an idempotency key the ledger already holds, returns that transaction and creates
    /// nothing.
    /// - Throws: `PaymentQueueError` for an empty product identifier, a quantity outside
    ///   1...10, or an idempotency key reused for a different payment; `UnknownProductError`
    ///   for a product the catalog does not have; `PromotionalOfferError` for a promotional
    ///   offer the store refuses (nothing is recorded); `LedgerError` when the ledger cannot commit.
    @discardableResult
    public func add(_ payment: Payment) async throws -> PaymentTransaction {
        try await addReportingReplay(payment).transaction
    }

    /// `add(_:)`, also telling whether the payment's idempotency key named a transaction the
    /// ledger already held (`replayed`: nothing was created or charged again).
    public func addReportingReplay(_ payment: Payment) async throws -> PaymentAddition {
        otherDevices.writesInFlight += 1
        defer { otherDevices.writesInFlight -= 1 }
        let (created, isNew) = try await ledger.addPayment(payment.newPayment, delivery: deliveryRecording)
        // A retry returns the existing transaction; one still purchasing (an earlier attempt
        // failed between its two commits) gets its stored outcome now.
        guard isNew else {
            guard created.state == .purchasing else { return PaymentAddition(transaction: created, replayed: true) }
            let processed = try await ledger.applyPlannedOutcome(of: created.id, delivery: deliveryRecording)
            await notify(.updated([processed]))
            return PaymentAddition(transaction: processed, replayed: true)
        }
        await notify(.updated([created]))
        let processed = try await ledger.applyPlannedOutcome(of: created.id, delivery: deliveryRecording)
        await notify(.updated([processed]))
        return PaymentAddition(transaction: processed, replayed: false)
    }

    /// Ask to Buy approved: a deferred transaction becomes purchased.
    /// - Throws: `PaymentQueueError.unknownTransaction`, `.notDeferred`.
    @discardableResult
    public func approve(_ id: UInt64) async throws -> PaymentTransaction {
        try await perform(.approveAskToBuy(id)).transactions[0]
    }

    /// Ask to Buy declined: a deferred transaction fails with `paymentCancelled`.
    /// - Throws: `PaymentQueueError.unknownTransaction`, `.notDeferred`.
    @discardableResult
    public func decline(_ id: UInt64) async throws -> PaymentTransaction {
        try await perform(.declineAskToBuy(id)).transactions[0]
    }

    /// Finishes transactions (purchased, failed or restored), all in one commit; observers get
    /// `removedTransactions` for those that were not finished already. Idempotent. Finishing an
    /// interrupted purchase whose issue is resolved brings its replacement purchase.
    /// - Throws: `PaymentQueueError.unknownTransaction`, `.cannotFinishPurchasing`,
    ///   `.cannotFinishDeferred`; then nothing was finished.
    @discardableResult
    public func finish(_ ids: [UInt64]) async throws -> [PaymentTransaction] {
        try await finishTransactions(ids).transactions
    }

    /// `finish(_:)`, also telling which transactions this call finished and which purchases
    /// replaced interrupted ones.
    @discardableResult
    public func finishTransactions(_ ids: [UInt64]) async throws -> FinishResult {
        otherDevices.writesInFlight += 1
        defer { otherDevices.writesInFlight -= 1 }
        let result = try await ledger.finish(ids, delivery: deliveryRecording)
        if !result.finished.isEmpty { await notify(.removed(result.finished)) }
        // A replacement is a new purchase: never finished, delivered in `finish`'s commit.
        if !result.replacements.isEmpty { await notify(.updated(result.replacements)) }
        return result
    }

    /// Finishes one transaction. See `finish(_:)` for arrays.
    @discardableResult
    public func finish(_ id: UInt64) async throws -> PaymentTransaction {
        try await finish([id])[0]
    }

    /// Finishes one transaction. See `finish(_:)` for arrays.
    @discardableResult
    public func finish(_ transaction: PaymentTransaction) async throws -> PaymentTransaction {
        try await finish([transaction.id])[0]
    }

    /// Makes the subscription renewals that are due by the store's time and delivers them.
    @discardableResult
    public func processSubscriptionRenewals() async throws -> [PaymentTransaction] {
        try await perform(.renewDueSubscriptions).transactions
    }

    /// Makes the store renew subscriptions by itself while this queue is open, as the App Store
    /// does for a running app: a task sleeps until the next renewal falls due by the store's
    /// clock (at most `interval` at a time, so that clock moves and other processes' purchases
    /// are noticed), then makes and delivers the due renewals (at most the renewal limit per
    /// wake). A subscription this queue sees change wakes the task at once. Calling it again
    /// only changes the interval; the task ends with the queue. A failure (the ledger busy or
    /// unwritable) is retried at the next wake.
    public func startRenewingAutomatically(checkingAtLeastEvery interval: Duration = .seconds(60)) {
        renewalCheckInterval = max(interval, .milliseconds(10))
        rescheduleAutomaticRenewals()
    }

    /// Wakes the renewal task now (when `startRenewingAutomatically` started one): the store's
    /// clock moved, or a subscription changed, so the next renewal may be due sooner.
    public func rescheduleAutomaticRenewals() {
        guard let longest = renewalCheckInterval else { return }
        renewalTimer?.cancel()
        renewalTimer = Task { [weak self] in
            while !Task.isCancelled {
                guard let wait = await self?.renewDueAndTimeUntilNextRenewal(longest: longest) else { return }
                try? await Task.sleep(for: wait)
            }
        }
    }

    /// Stops the renewal task (the app "quits": a relaunch in tests makes a new queue).
    public func stopRenewingAutomatically() {
        renewalCheckInterval = nil
        renewalTimer?.cancel()
        renewalTimer = nil
    }

    /// Makes and delivers the renewals due by the store's clock, if any: a read first (one
    /// indexed lookup, `Ledger.clockMayHaveSomethingDue()`), so that a call with nothing due
    /// writes nothing.
    public func renewDueSubscriptions() async throws {
        if try ledger.clockMayHaveSomethingDue() {
            try await processSubscriptionRenewals()
        }
    }

    /// One wake of the renewal task: how long to sleep next.
    private func renewDueAndTimeUntilNextRenewal(longest: Duration) async -> Duration {
        do {
            try await renewDueSubscriptions()
            guard let next = try ledger.nextRenewalDate() else { return longest }
            let seconds = next.timeIntervalSince(try ledger.storeDate())
            // A renewal still due (more than the limit fell due at once) is made right away.
            return min(longest, .milliseconds(max(1, Int64((seconds * 1000).rounded(.up)))))
        } catch {
            return longest
        }
    }

    deinit {
        renewalTimer?.cancel()
        otherDevices.timer?.cancel()
    }

    /// StoreKit 2's current entitlements (see `Ledger.currentEntitlements()`).
    public nonisolated func currentEntitlements() throws -> [PaymentTransaction] {
        try ledger.currentEntitlements()
    }

    /// The queue's transactions: the unfinished ones, oldest first.
    public nonisolated var transactions: [PaymentTransaction] {
        get throws { try ledger.unfinishedTransactions() }
    }
}

/// What `PaymentQueue.addReportingReplay(_:)` did with a payment.
public struct PaymentAddition: Sendable, Hashable {
    /// The payment's transaction, processed by the store.
    public let transaction: PaymentTransaction
    /// Whether the payment's idempotency key named a transaction the ledger already held: this
    /// is that transaction, and nothing was created.
    public let replayed: Bool
}
