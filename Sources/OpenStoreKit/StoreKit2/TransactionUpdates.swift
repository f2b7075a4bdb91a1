import Foundation
import StoreLedger
import Synchronization

/// What `Transaction.updates` sequences receive: the store's changes to purchased and restored
/// transactions, and revocations, except what a `purchase()` call returns.
///
/// It hears the ledger's queue from the launch on (it is one of its first observers), so no
/// change committed after a sequence starts can be missed.
final class TransactionUpdates: PaymentTransactionObserver, Sendable {
    private struct State {
        /// The idempotency keys of the `purchase()` calls running now.
        var purchasesInProgress: Set<String> = []
        /// What `purchase()` calls returned, by transaction id: that version (its state, when
        /// last changed) is never emitted; a later change (an Ask to Buy approval, a refund) is,
        /// even within the same millisecond, since it changes the state.
        var returnedByPurchase: [UInt64: (state: TransactionState, updatedAt: Date)] = [:]
        /// Whether a sequence of this launch was given the unfinished transactions already.
        var replayedUnfinished = false
        /// The versions the first sequence was given from the ledger: a change committed before
        /// that read and announced after it is given once, not twice.
        var replayed: [UInt64: Version] = [:]
    }

    /// A transaction row as a sequence was given it.
    private struct Version: Equatable {
        let state: TransactionState
        let updatedAt: Date
        let isRevoked: Bool

        init(_ row: PaymentTransaction) {
            (state, updatedAt, isRevoked) = (row.state, row.updatedAt, row.revocationDate != nil)
        }
    }

    /// The start of the idempotency key of every payment a StoreKit 2 `purchase()` call makes:
    /// what tells the store's StoreKit 2 payments from StoreKit 1's.
    static let purchaseKeyPrefix = "openstorekit.purchase."

    private let broadcast = Broadcast<VerificationResult<Transaction>>()
    private let state = Mutex(State())
    private let ledger: Ledger
    private let origin: Transaction.Origin

    init(ledger: Ledger, origin: Transaction.Origin) {
        self.ledger = ledger
        self.origin = origin
    }

    /// A new sequence's stream. The first sequence of a launch starts with the unfinished
    /// transactions, as StoreKit delivers them once after launch; then every update.
    func listen() -> AsyncStream<VerificationResult<Transaction>> {
        broadcast.listen {
            let first = state.withLock { state in
                defer { state.replayedUnfinished = true }
                return !state.replayedUnfinished
            }
            guard first else { return [] }
            let unfinished = shown((try? ledger.unfinishedTransactions()) ?? [])
            state.withLock { state in
                state.replayed = Dictionary(
                    unfinished.map { ($0.id, Version($0)) }, uniquingKeysWith: { first, _ in first })
            }
            return unfinished.map(origin.result)
        }
    }

    /// `rows` without the versions the first sequence was given already (each left out once).
    private func notReplayed(_ rows: [PaymentTransaction]) -> [PaymentTransaction] {
        state.withLock { state in
            guard !state.replayed.isEmpty else { return rows }
            return rows.filter { row in
                guard state.replayed[row.id] == Version(row) else { return true }
                state.replayed[row.id] = nil
                return false
            }
        }
    }

    func beginPurchase(key: String) {
        state.withLock { _ = $0.purchasesInProgress.insert(key) }
    }

    /// The call ends, having returned `transaction` (if any).
    func endPurchase(key: String, returning transaction: PaymentTransaction?) {
        state.withLock { state in
            state.purchasesInProgress.remove(key)
            if let transaction { state.returnedByPurchase[transaction.id] = (transaction.state, transaction.updatedAt) }
        }
    }

    /// The rows StoreKit 2 shows, without what a purchase call returns or returned, nor a
    /// payment that only changed a subscription's next renewal (no transaction).
    private func shown(_ rows: [PaymentTransaction]) -> [PaymentTransaction] {
        let state = state.withLock { $0 }
        let changes = (try? ledger.renewalChanges(among: rows)) ?? []
        return rows.filter { row in
            guard HistoryPages.isShown(row), !changes.contains(row.id) else { return false }
            if let key = row.idempotencyKey, state.purchasesInProgress.contains(key) { return false }
            if let returned = state.returnedByPurchase[row.id], row.state == returned.state, row.revocationDate == nil,
                row.updatedAt <= returned.updatedAt
            {
                return false
            }
            return true
        }
    }

    func paymentQueue(_ queue: PaymentQueue, updatedTransactions transactions: [PaymentTransaction]) async {
        broadcast.send(shown(notReplayed(transactions)).map(origin.result))
        await finishAbandonedFailures(transactions, in: queue)
    }

    /// StoreKit 2 shows no failed transactions, so nobody would finish one: a StoreKit 2
    /// purchase that fails after its call returned (an Ask to Buy request declined) is finished
    /// here at once, as `purchase()` finishes the failures it returns. (Apple: "Your app doesn't
    /// receive a transaction because you declined Ask to Buy".) A StoreKit 1 payment's failure
    /// stays for the app's observer to finish, as StoreKit 1 requires. One the launch did not
    /// hear of (declined by another process, or while the app did not run, or not finished
    /// for the ledger was busy) is finished at the next launch (`finishAbandonedFailures(in:)`).
    /// Whether the failures are finished now: true when none was left or the finish succeeded,
    /// false when it failed (the ledger busy or unwritable).
    @discardableResult
    private func finishAbandonedFailures(_ transactions: [PaymentTransaction], in queue: PaymentQueue) async -> Bool {
        let inProgress = state.withLock { $0.purchasesInProgress }
        let abandoned = transactions.filter { row in
            guard row.state == .failed, !row.isFinished, let key = row.idempotencyKey else { return false }
            return key.hasPrefix(Self.purchaseKeyPrefix) && !inProgress.contains(key)
        }
        guard !abandoned.isEmpty else { return true }
        return (try? await queue.finishTransactions(abandoned.map(\.id))) != nil
    }

    /// At launch: finishes the StoreKit 2 failures left unfinished among the oldest 1,000
    /// unfinished failed transactions (a launch's work stays bounded; a later launch, once
    /// StoreKit 1 observers finished theirs, takes the next ones). A read or finish that fails
    /// (another process held the ledger longer than its busy timeout) is tried again, at most
    /// `launchAttempts` times in all, 0.1 s after the first failure, twice as long after each
    /// next one; past that the next launch tries.
    func finishAbandonedFailures(in queue: PaymentQueue) async {
        var wait = Duration.milliseconds(100)
        for attempt in 1...Self.launchAttempts {
            if let failed = try? ledger.transactions(
                matching: TransactionFilter(state: .failed, unfinishedOnly: true, limit: 1_000)),
                await finishAbandonedFailures(failed, in: queue)
            {
                return
            }
            guard attempt < Self.launchAttempts else { return }
            try? await Task.sleep(for: wait)
            wait *= 2
        }
    }

    /// How many times a launch tries to finish the StoreKit 2 failures it finds.
    static let launchAttempts = 5

    func paymentQueue(_ queue: PaymentQueue, revokedTransactions transactions: [PaymentTransaction]) async {
        broadcast.send(transactions.map(origin.result))
    }

    /// A purchase on another of the customer's devices, or a renewal the store made meanwhile
    /// (when the queue hears other devices: `PaymentQueue.startHearingOtherDevices`).
    func paymentQueue(_ queue: PaymentQueue, purchasedOnAnotherDevice transactions: [PaymentTransaction]) async {
        broadcast.send(shown(transactions).map(origin.result))
    }

    /// A reversed refund: the transaction comes again, without its revocation.
    func paymentQueue(_ queue: PaymentQueue, reinstatedTransactions transactions: [PaymentTransaction]) async {
        broadcast.send(transactions.map(origin.result))
    }
}
