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
    /// start a second one: it waits for the running one and returns its result. A different
    /// restore waits for the running one to end, then runs.
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
        while let running = runningRestore {
            if running.request == request { return await running.task.value }
            _ = await running.task.value
        }
        let task = Task {
            let result = await performRestore(applicationUsername: applicationUsername, includeNonRenewing: includeNonRenewing)
            // Cleared by the task itself, before anyone waiting for it resumes.
            runningRestore = nil
            return result
        }
        runningRestore = (request, task)
        return await task.value
    }

    private func performRestore(applicationUsername: String?, includeNonRenewing: Bool) async -> RestoreResult {
        let restored: [PaymentTransaction]
        do {
            restored = try ledger.restorePurchases(
                applicationUsername: applicationUsername, includeNonRenewing: includeNonRenewing)
        } catch {
            await notify(.restoreFailed(error))
            return RestoreResult(restored: [], outcome: .failed(error))
        }
        // The restore is committed: if counting the delivery fails, the transactions still
        // come back at the next launch, so the restore itself finished.
        let delivered = (try? await deliver(restored)) ?? restored  // delivered even when not counted
        await notify(.restoreFinished)
        return RestoreResult(restored: delivered, outcome: .finished)
    }
}

/// What one restore call asks for: calls asking the same share one restore.
struct RestoreRequest: Equatable {
    let applicationUsername: String?
    let includeNonRenewing: Bool
}
