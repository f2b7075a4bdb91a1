import Foundation
import LedgerEngine
import LedgerTestSupport
import SimulatedStore
import Testing

/// The rules of billing retry (`BillingIssue`), case by case, at their boundaries: the
/// renewals, the subscription status, the entitlements and the store controls all ask them.
@Suite struct BillingIssueRuleTests {
    static let day: Int64 = 86_400_000
    static let issue = BillingIssue(since: 1_000, graceUntil: 5_000, retryUntil: 9_000)

    @Test(arguments: [(Int64?(1_000), true), (999, false), (1_001, false), (nil, false)])
    func anIssueConcernsOnlyThePeriodThatFailedToRenew(end: Int64?, concerns: Bool) {
        #expect(Self.issue.concerns(periodEndingAt: end) == concerns)
    }

    @Test(arguments: [
        (Int64(1_000), true, true), (4_999, true, true), (5_000, true, false), (8_999, true, false),
        (9_000, false, false),
    ])
    func retriesAndTheGracePeriodEndAtTheirInstant(now: Int64, retried: Bool, keepsEntitlement: Bool) {
        #expect(Self.issue.isRetried(at: now) == retried)
        #expect(Self.issue.keepsEntitlement(at: now) == keepsEntitlement)
    }

    @Test func withoutAGracePeriodNothingKeepsTheEntitlement() {
        let issue = BillingIssue(since: 0, graceUntil: nil, retryUntil: 10)
        #expect(!issue.keepsEntitlement(at: 0) && issue.isRetried(at: 0))
    }

    /// In real time: a grace period of 6 days for a weekly subscription, 16 for the others, 60
    /// days of retries; no grace period when it is off.
    @Test(arguments: [
        (SubscriptionPeriod(value: 1, unit: .week), true, Int64?(6)),
        (SubscriptionPeriod(value: 1, unit: .month), true, 16),
        (SubscriptionPeriod(value: 1, unit: .year), true, 16), (SubscriptionPeriod(value: 1, unit: .week), false, nil),
    ])
    func aFailedRenewalIsRetriedForSixtyDays(period: SubscriptionPeriod, grace: Bool, graceDays: Int64?) {
        let since: Int64 = 1_700_000_000_000
        let issue = BillingIssue(failedRenewalAt: since, of: period, rate: .realTime, gracePeriod: grace)
        #expect(issue.since == since)
        #expect(issue.retryUntil == since + 60 * Self.day)
        #expect(issue.graceUntil == graceDays.map { since + $0 * Self.day })
    }

    /// An accelerated rate compresses the days as it compresses periods.
    @Test func anAcceleratedRateCompressesTheDays() {
        let issue = BillingIssue(
            failedRenewalAt: 0, of: SubscriptionPeriod(value: 1, unit: .month), rate: .oneMinuteIsOneDay,
            gracePeriod: true)
        #expect(issue.graceUntil == 16 * 60_000 && issue.retryUntil == 60 * 60_000)
    }

    /// The entitlements' SQL says the grace rule itself (`grace_until > now`): around each of
    /// the rule's instants, a subscription in billing retry is entitled exactly when
    /// `keepsEntitlement(at:)` says so (or its period still runs).
    @Test(arguments: [true, false])
    func theEntitlementsSQLKeepsWhatTheRuleKeeps(grace: Bool) async throws {
        try await withLedger { ledger, _ in
            var settings = StoreSettings()
            settings.billingRetryOnRenewal = true
            settings.billingGracePeriodEnabled = grace
            try ledger.setStoreSettings(settings.storedValues)
            let bought = try ledger.perform(.buyOutsideTheApp(NewPayment(productID: "monthly"))).transactions[0]
            let expiration = try #require(bought.expirationDate).ledgerMilliseconds
            let issue = BillingIssue(
                failedRenewalAt: expiration, of: SubscriptionPeriod(value: 1, unit: .month), rate: .realTime,
                gracePeriod: grace)
            var instants = [expiration - 1, expiration, expiration + 1, issue.retryUntil - 1]
            if let end = issue.graceUntil { instants += [end - 1, end, end + 1] }
            for now in instants.sorted() {
                try ledger.perform(.setClock(to: Date(ledgerMilliseconds: now)))
                let entitled = try ledger.currentEntitlements().contains { $0.productID == "monthly" }
                #expect(entitled == (now < expiration || issue.keepsEntitlement(at: now)), "at \(now - expiration) ms")
            }
            #expect(try ledger.hasBillingIssue("monthly"))
        }
    }
}
