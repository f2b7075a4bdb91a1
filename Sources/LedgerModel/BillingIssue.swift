import Foundation

/// A renewal that failed on a billing issue, and the rules of billing retry, written once: the
/// renewals, the subscription status, the entitlements and the store controls all ask these
/// (the entitlements' SQL says `isRetried(at:)` as `retry_until > now` and `keepsEntitlement(at:)`
/// as `grace_until > now`).
///
/// Times are the ledger's milliseconds. `since` is the end of the period that failed to renew.
package struct BillingIssue: Sendable, Hashable {
    /// The end of the period whose renewal failed.
    package let since: Int64
    /// Until when the subscription keeps its entitlement (a grace period); `nil` without one.
    package let graceUntil: Int64?
    /// Until when the store retries; after it the subscription has expired (a billing error).
    package let retryUntil: Int64

    package init(since: Int64, graceUntil: Int64?, retryUntil: Int64) {
        self.since = since
        self.graceUntil = graceUntil
        self.retryUntil = retryUntil
    }

    /// The issue of a renewal of `period` due at `since`: in real time, a grace period (when on)
    /// of 6 days for weekly subscriptions and 16 for the others, and 60 days of retries, as
    /// Xcode's real-time rate; accelerated rates compress those days as they compress periods
    /// (a "one renewal every X" rate makes each of them X, as Xcode does for the grace period).
    package init(failedRenewalAt since: Int64, of period: SubscriptionPeriod, rate: TimeRate, gracePeriod: Bool) {
        let start = Date(ledgerMilliseconds: since)
        func after(days: Int) -> Int64 {
            rate.end(of: SubscriptionPeriod(value: days, unit: .day), startingAt: start).ledgerMilliseconds
        }
        let graceDays = period == SubscriptionPeriod(value: 1, unit: .week) ? 6 : 16
        self.init(since: since, graceUntil: gracePeriod ? after(days: graceDays) : nil, retryUntil: after(days: 60))
    }

    /// Whether the issue is the one of the period ending at `end` (a group's latest): an issue
    /// of another period (one deleted since, say) concerns nothing.
    package func concerns(periodEndingAt end: Int64?) -> Bool {
        end == since
    }

    /// Whether the store still retries the renewal at `now`.
    package func isRetried(at now: Int64) -> Bool {
        now < retryUntil
    }

    /// Whether the subscription keeps its entitlement at `now`: within its grace period.
    package func keepsEntitlement(at now: Int64) -> Bool {
        graceUntil.map { now < $0 } ?? false
    }
}
