import Foundation
import StoreLedger
import Synchronization

/// What `Product.SubscriptionInfo.Status.updates` sequences receive: a group's status each
/// time it changes (a renewal, an expiry, billing retry or its grace period beginning or
/// ending, a refund, auto-renew turned off or on, a pending change of product).
///
/// A status changes when the store changes a transaction (it hears the queue, as
/// `Transaction.updates` does), when a test control runs (`wake()`), and when time alone
/// moves it (a period or a grace period ends): while somebody listens, a task reads every
/// group's status at those moments, and at least once a second so that another process's
/// changes (the `ledger` tool's) and clock moves are seen. Before reading, it makes the
/// renewals that fell due, as the store's renewal task would: a subscription that renews is
/// never reported expired in between. Only changes are sent: a sequence starts with nothing.
/// The launch's end (`stop()`) ends the sequences and the task.
final class SubscriptionStatusUpdates: PaymentTransactionObserver, Sendable {
    /// The longest the watch sleeps between two reads.
    static let longestWait = Duration.seconds(1)

    private struct State {
        /// Each held subscription's status when last read.
        var seen: [Holding: Fingerprint] = [:]
        /// Whether the watch runs.
        var watching = false
        /// The launch ended: nothing is read or sent any more.
        var stopped = false
    }

    private let broadcast = Broadcast<Product.SubscriptionInfo.Status>()
    private let state = Mutex(State())
    private let wakes = WakeSignal()
    private let ledger: Ledger
    private let origin: Transaction.Origin

    init(ledger: Ledger, origin: Transaction.Origin) {
        self.ledger = ledger
        self.origin = origin
    }

    /// A new sequence's stream: the changes read after the call. The statuses are read first
    /// (what changed since the last read reaches the sequences already listening), so that
    /// the new one starts from now.
    func listen() -> AsyncStream<Product.SubscriptionInfo.Status> {
        guard !state.withLock({ $0.stopped }) else { return AsyncStream { $0.finish() } }
        if let now = try? statuses() { send(changesTo: now) }
        let stream = broadcast.listen()
        let start = state.withLock { state in
            defer { state.watching = true }
            return !state.watching
        }
        if start { Task { await self.watch() } }
        return stream
    }

    /// Something may have changed a status: the watch reads them now.
    func wake() {
        wakes.signal()
    }

    /// The launch ended: the sequences end, and the watch with them.
    func stop() {
        state.withLock { $0.stopped = true }
        broadcast.finishAll()
        wakes.signal()
    }

    /// Reads the statuses at every wake, and when one may change by time, until nobody listens.
    private func watch() async {
        var wait = Self.longestWait
        while true {
            await wakes.wait(atMost: wait)
            let stop = state.withLock { state in
                // Checked under the lock a new listener takes: it either sees the watch running
                // or starts a new one.
                if broadcast.isEmpty || state.stopped { state.watching = false }
                return !state.watching
            }
            if stop { return }
            wait = await readAndSendChanges()
        }
    }

    /// Sends the statuses that changed since last read; returns how long to sleep before the
    /// next read (until the next period or grace period ends, at most `longestWait`).
    private func readAndSendChanges() async -> Duration {
        do {
            try await origin.queue?.renewDueSubscriptions()
            let now = try statuses()
            send(changesTo: now)
            return try timeUntilNextChange(of: now.values)
        } catch {
            return Self.longestWait
        }
    }

    /// Sends what changed between the statuses last read and `now`, which become the last read.
    private func send(changesTo now: [Holding: SubscriptionStatus]) {
        let changed = state.withLock { state in
            let changed = now.filter { state.seen[$0.key] != Fingerprint($0.value) }
            state.seen = now.mapValues(Fingerprint.init)
            return changed.sorted { $0.key < $1.key }.map(\.value)
        }
        let origin = origin
        broadcast.send(changed.map { Product.SubscriptionInfo.Status($0, origin: origin) })
    }

    /// A subscription the customer holds: its group, and the original transaction of the
    /// family member's purchase when one is shared (`nil` for the customer's own).
    struct Holding: Hashable, Comparable {
        let groupID: String
        let sharedOriginal: UInt64?

        init(_ status: SubscriptionStatus) {
            groupID = status.groupID
            sharedOriginal = status.sharedOriginalID
        }

        /// By group, the customer's own first, then the shares newest first, as the ledger lists them.
        static func < (a: Holding, b: Holding) -> Bool {
            (a.groupID, a.sharedOriginal.map { UInt64.max - $0 } ?? 0)
                < (b.groupID, b.sharedOriginal.map { UInt64.max - $0 } ?? 0)
        }
    }

    private func statuses() throws -> [Holding: SubscriptionStatus] {
        Dictionary(try ledger.subscriptionStatuses().map { (Holding($0), $0) }) { first, _ in first }
    }

    /// How long until time alone may change one of `statuses`: a current period or a grace
    /// period ends.
    private func timeUntilNextChange(of statuses: some Sequence<SubscriptionStatus>) throws -> Duration {
        let now = try ledger.storeDate()
        let ends = statuses.compactMap { status -> Date? in
            switch status.state {
            case .subscribed: status.transaction.expirationDate
            case .inGracePeriod: status.gracePeriodExpirationDate
            default: nil
            }
        }
        guard let next = ends.filter({ $0 > now }).min() else { return Self.longestWait }
        let milliseconds = Int64((next.timeIntervalSince(now) * 1000).rounded(.up)) + 1
        return min(Self.longestWait, .milliseconds(milliseconds))
    }

    func paymentQueue(_ queue: PaymentQueue, updatedTransactions transactions: [PaymentTransaction]) async {
        if transactions.contains(where: { $0.productType == .autoRenewable }) { wake() }
    }

    func paymentQueue(_ queue: PaymentQueue, revokedTransactions transactions: [PaymentTransaction]) async {
        wake()
    }

    func paymentQueue(_ queue: PaymentQueue, reinstatedTransactions transactions: [PaymentTransaction]) async {
        wake()
    }

    /// What of a status makes a change worth sending: its own fields and which period it is
    /// of, not the bookkeeping of that period's transaction (finished, delivered, signed).
    private struct Fingerprint: Equatable {
        let state: SubscriptionStatus.RenewalState
        let willAutoRenew: Bool
        let autoRenewProductID: String
        let renewalDate: Date?
        let expirationReason: SubscriptionStatus.ExpirationReason?
        let isInBillingRetry: Bool
        let gracePeriodExpirationDate: Date?
        let transactionID: UInt64
        let expirationDate: Date?
        let revocationDate: Date?
        let offer: TransactionOffer?
        let priceIncrease: PriceIncrease.Status?
        let renewalPrice: Decimal?

        init(_ status: SubscriptionStatus) {
            state = status.state
            willAutoRenew = status.willAutoRenew
            autoRenewProductID = status.autoRenewProductID
            renewalDate = status.renewalDate
            expirationReason = status.expirationReason
            isInBillingRetry = status.isInBillingRetry
            gracePeriodExpirationDate = status.gracePeriodExpirationDate
            transactionID = status.transaction.id
            expirationDate = status.transaction.expirationDate
            revocationDate = status.transaction.revocationDate
            offer = status.transaction.offer
            priceIncrease = status.priceIncrease?.status
            renewalPrice = status.renewalPrice
        }
    }
}
