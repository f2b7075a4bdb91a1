import Foundation

/// What a restore did: the caller can tell "finished, nothing to restore" from a failure.
public struct RestoreResult: Sendable {
    /// How a restore ended.
    public enum Outcome: Sendable {
        /// The restore was committed and delivered; also when there was nothing to restore.
        case finished
        /// The restore failed with this error and restored nothing.
        case failed(any Error)
    }

    /// The new `restored` transactions, committed together; empty when nothing was restorable
    /// or the restore failed.
    public var restored: RestoredTransactions
    /// Whether the restore finished or failed, as observers are told too
    /// (`restoreCompletedTransactionsFinished` or `...FailedWithError`).
    public var outcome: Outcome

    /// `true` when `outcome` is `.finished`, also when nothing was restored.
    public var isFinished: Bool {
        if case .finished = outcome { return true }
        return false
    }
}

/// The transactions one restore created, read from the ledger when asked for: a restore of a
/// million purchases holds none of them in memory.
public struct RestoredTransactions: Sendable {
    /// How many transactions the restore created.
    public let count: Int
    let ledger: Ledger?
    let batch: RestoreBatch

    /// `true` when the restore created no transaction (nothing restorable, or it failed).
    public var isEmpty: Bool { count == 0 }

    /// Calls `body` with the transactions as stored now, in the order of the purchases they
    /// restore, at most `size` at a time (one read per page).
    /// - Throws: `LedgerError` when the ledger cannot be read.
    public func forEachPage(size: Int = pageSize, _ body: ([PaymentTransaction]) throws -> Void) throws {
        guard let ledger, let ids = batch.ids else { return }
        var pages = RestorePages(ledger: ledger, ids: ids, size: size)
        while let page = try pages.next() { try body(page) }
    }

    /// All of them, as stored now (memory grows with the restore: prefer `forEachPage`).
    public func all() throws -> [PaymentTransaction] {
        var transactions: [PaymentTransaction] = []
        try forEachPage { transactions += $0 }
        return transactions
    }

    static let none = RestoredTransactions(count: 0, ledger: nil, batch: RestoreBatch(ids: nil, count: 0))
}

extension PaymentQueue {
    /// Restores completed purchases (`restoreCompletedTransactions(withApplicationUsername:)`):
    /// one new `restored` transaction per non-revoked purchase of a non-consumable or an
    /// auto-renewable subscription (renewals included), committed all at once, then delivered
    /// to observers in pages of at most `RestoredTransactions.pageSize` (as StoreKit calls
    /// `updatedTransactions` more than once for a large restore), then exactly one
    /// `restoreCompletedTransactionsFinished` or `...FailedWithError`, also when nothing was
    /// restorable. Memory does not grow with the size of the restore.
    ///
    /// A restore asked for while the same restore (same account, same kinds) runs does not
    /// start a second one: it returns the running one's result once committed (the first
    /// caller delivers it). A different restore waits for that commit, then runs. Nobody waits
    /// for another caller's delivery, so an observer may restore from its callback.
    ///
    /// - Parameters:
    ///   - applicationUsername: restores only that account's purchases: those made with this
    ///     `applicationUsername` (any opaque string, as in StoreKit 1) or, when it is a UUID,
    ///     with this app account token. Only an empty or over-long (1,024 bytes) name fails.
    ///   - includeNonRenewing: also restore non-renewing subscriptions (StoreKit leaves them
    ///     to the app).
    /// - Returns: what the observers are told too, so that code written as for StoreKit (whose
    ///   call returns nothing) may ignore it.
    @discardableResult
    public func restoreCompletedTransactions(
        applicationUsername: String? = nil, includeNonRenewing: Bool = false
    ) async -> RestoreResult {
        let request = RestoreRequest(applicationUsername: applicationUsername, includeNonRenewing: includeNonRenewing)
        if let running = runningRestore {
            let committed = await running.task.value
            if running.request == request { return RestoreResult(committed, ledger: ledger) }
        }
        let delivery = deliveryRecording
        let task = Task { [ledger] () -> Result<RestoreBatch, any Error> in
            do {
                return .success(
                    try await ledger.restorePurchases(
                        applicationUsername: applicationUsername, includeNonRenewing: includeNonRenewing,
                        delivery: delivery))
            } catch {
                return .failure(error)
            }
        }
        let id = UUID()
        runningRestore = (id, request, task)
        let result = await deliver(restore: await task.value)
        if runningRestore?.id == id { runningRestore = nil }
        return result
    }

    private func deliver(restore committed: Result<RestoreBatch, any Error>) async -> RestoreResult {
        let batch: RestoreBatch
        switch committed {
        case .failure(let error):
            await notify(.restoreFailed(error))
            return RestoreResult(committed, ledger: ledger)
        case .success(let committed):
            batch = committed
        }
        // The restore is committed, its deliveries recorded with it: a page that cannot be read
        // (the ledger busy) comes back at the next launch, so the restore itself finished.
        // Nobody listening: nothing to read back (an observer added later gets them as
        // unfinished transactions).
        if let ids = batch.ids, hasObservers {
            var pages = RestorePages(ledger: ledger, ids: ids, size: RestoredTransactions.pageSize)
            while let page = try? pages.next() { await notify(.updated(page)) }
        }
        await notify(.restoreFinished)
        return RestoreResult(committed, ledger: ledger)
    }
}

extension RestoredTransactions {
    /// The most restored transactions one `updatedTransactions` call receives: as many as
    /// any update carries (`PaymentQueue.deliveryBatchLimit`).
    public static let pageSize = PaymentQueue.deliveryBatchLimit
}

extension RestoreResult {
    /// The result of a committed restore, as a caller that joined it sees it.
    init(_ committed: Result<RestoreBatch, any Error>, ledger: Ledger) {
        switch committed {
        case .success(let batch):
            self.init(
                restored: RestoredTransactions(count: batch.count, ledger: ledger, batch: batch), outcome: .finished)
        case .failure(let error):
            self.init(restored: .none, outcome: .failed(error))
        }
    }
}

/// A restore's transactions read back from the ledger a page at a time, in id order: what the
/// queue hands to observers and what `RestoredTransactions` reads for the caller.
struct RestorePages {
    let ledger: Ledger
    let ids: ClosedRange<UInt64>
    let size: Int
    private var after: UInt64

    init(ledger: Ledger, ids: ClosedRange<UInt64>, size: Int) {
        (self.ledger, self.ids, self.size, after) = (ledger, ids, max(1, size), ids.lowerBound - 1)
    }

    /// The next page; `nil` after the last.
    mutating func next() throws -> [PaymentTransaction]? {
        let page = try ledger.transactions(in: ids, after: after, limit: size)
        guard let last = page.last else { return nil }
        after = last.id
        return page
    }
}

/// What one restore call asks for: calls asking the same share one restore.
struct RestoreRequest: Equatable {
    let applicationUsername: String?
    let includeNonRenewing: Bool
}
