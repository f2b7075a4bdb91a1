import Foundation

/// What a restore did: the caller can tell "finished, nothing to restore" from a failure.
public struct RestoreResult: Sendable {
    public enum Outcome: Sendable {
        case finished
        case failed(any Error)
    }

    /// The new `restored` transactions, committed together; empty when nothing was restorable
    /// or the restore failed.
    public var restored: [PaymentTransaction]
    public var outcome: Outcome

    public var isFinished: Bool {
        if case .finished = outcome { return true }
        return false
    }
}

extension PaymentQueue {
    /// Restores completed purchases (`restoreCompletedTransactions(withApplicationUsername:)`):
    /// one new `restored` transaction per non-revoked purchase of a non-consumable or an
    /// auto-renewable subscription (renewals included), committed all at once, then delivered
    /// to observers, then exactly one `restoreCompletedTransactionsFinished` or
    /// `...FailedWithError`, also when nothing was restorable.
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
    public func restoreCompletedTransactions(
        applicationUsername: String? = nil, includeNonRenewing: Bool = false
    ) async -> RestoreResult {
        let request = RestoreRequest(applicationUsername: applicationUsername, includeNonRenewing: includeNonRenewing)
        if let running = runningRestore {
            let committed = await running.task.value
            if running.request == request { return RestoreResult(committed) }
        }
        let task = Task {
            Result { try ledger.restorePurchases(applicationUsername: applicationUsername, includeNonRenewing: includeNonRenewing) }
        }
        let id = UUID()
        runningRestore = (id, request, task)
        let result = await deliver(restore: await task.value)
        if runningRestore?.id == id { runningRestore = nil }
        return result
    }

    private func deliver(restore committed: Result<[PaymentTransaction], any Error>) async -> RestoreResult {
        let restored: [PaymentTransaction]
        switch committed {
        case .failure(let error):
            await notify(.restoreFailed(error))
            return RestoreResult(committed)
        case .success(let rows):
            restored = rows
        }
        // The restore is committed: if counting the delivery fails, the transactions still
        // come back at the next launch, so the restore itself finished.
        let delivered = (try? await deliver(restored)) ?? restored  // delivered even when not counted
        await notify(.restoreFinished)
        return RestoreResult(restored: delivered, outcome: .finished)
    }
}

extension RestoreResult {
    /// The result of a committed restore, as a caller that joined it sees it.
    init(_ committed: Result<[PaymentTransaction], any Error>) {
        switch committed {
        case .success(let restored): self.init(restored: restored, outcome: .finished)
        case .failure(let error): self.init(restored: [], outcome: .failed(error))
        }
    }
}

/// What one restore call asks for: calls asking the same share one restore.
struct RestoreRequest: Equatable {
    let applicationUsername: String?
    let includeNonRenewing: Bool
}
