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
    /// A restore asked for while another runs does not start a second one: it waits for the
    /// running one and returns its result.
    ///
    /// - Parameters:
    ///   - applicationUsername: restores only that account's purchases. Accounts are app
    ///     account tokens, so it must be a UUID; anything else fails the restore.
    ///   - includeNonRenewing: also restore non-renewing subscriptions (StoreKit leaves them
    ///     to the app).
    public func restoreCompletedTransactions(
        applicationUsername: String? = nil, includeNonRenewing: Bool = false
    ) async -> RestoreResult {
        if let running = runningRestoreTask { return await running.value }
        let task = Task { await performRestore(applicationUsername: applicationUsername, includeNonRenewing: includeNonRenewing) }
        runningRestoreTask = task
        let result = await task.value
        runningRestoreTask = nil
        return result
    }

    private func performRestore(applicationUsername: String?, includeNonRenewing: Bool) async -> RestoreResult {
        let restored: [PaymentTransaction]
        do {
            var token: UUID?
            if let applicationUsername {
                guard let parsed = UUID(uuidString: applicationUsername) else {
                    throw StoreControlError.invalidApplicationUsername(applicationUsername)
                }
                token = parsed
            }
            restored = try ledger.restorePurchases(appAccountToken: token, includeNonRenewing: includeNonRenewing)
        } catch {
            await notify(.restoreFailed(error))
            return RestoreResult(restored: [], outcome: .failed(error))
        }
        // The restore is committed: if counting the delivery fails, the transactions still
        // come back at the next launch, so the restore itself finished.
        let delivered = (try? await deliver(restored)) ?? restored
        await notify(.restoreFinished)
        return RestoreResult(restored: delivered, outcome: .finished)
    }
}
